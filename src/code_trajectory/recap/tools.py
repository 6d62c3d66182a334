"""MCP tools of the recap: ``set_goal``, ``add_entry``, ``get_recap``.

A thin layer over :mod:`code_trajectory.recap.store`: each tool resolves the current
project with the ``project_root`` callable given by the server, calls the pure
function, and answers with readable markdown plus structured content matching
the pydantic models below (the SDK validates each answer against them). Tools are
registered with :func:`code_trajectory.core.mcp_util.tool` (the docstring is the
description); errors become tool errors (``NotConfiguredError`` from
``project_root()`` included).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from code_trajectory.core.mcp_util import READ_ONLY, WRITES_IDEMPOTENT, in_thread, resource_errors, result, tool
from code_trajectory.recap import render
from code_trajectory.recap import store as recap

_TYPE_LIST = "; ".join(f"{name}: {why}" for name, why in recap.ENTRY_TYPE_HELP.items())


class RecapEntry(BaseModel):
    """One recap entry."""

    id: str = Field(description="uuid of the entry")
    timestamp: str = Field(description="when it was added, ISO-8601 UTC")
    type: recap.EntryType
    content: str


class RecapOutput(BaseModel):
    """The project's recap."""

    goal: str | None = Field(default=None, description="the goal of the current work; absent when not set")
    entries: list[RecapEntry] = Field(default=[], description="entries grouped by type as the text shows them "
                                                                "(decisions, insights...), oldest first in a type")
    filePath: str = Field(description="the JSON file holding this recap")
    projectPath: str = Field(description="the project the recap belongs to")
    warning: str | None = Field(default=None, description="set when the recap file was corrupt")


class SetGoalOutput(BaseModel):
    """Answer of set_goal."""

    success: Literal[True]
    archivedTo: str | None = Field(default=None, description="where the previous recap was archived, if any")
    unchanged: bool = Field(default=False, description="true when the goal was already set to this text")
    warning: str | None = Field(default=None, description="set when a corrupt recap file was moved aside")


class AddEntryOutput(BaseModel):
    """Answer of add_entry."""

    id: str = Field(description="uuid of the entry (of the existing one when skipped)")
    timestamp: str = Field(description="when the entry was added, ISO-8601 UTC")
    skipped: bool = Field(default=False, description="true when an identical entry already existed")
    warning: str | None = Field(default=None, description="set when a corrupt recap file was moved aside")


def _with_warning(text: str, answer: dict[str, object]) -> str:
    warning = answer.get("warning")
    return f"{text}\n\nWarning: {warning}" if warning else text


def register_recap_tools(mcp: MCPServer, project_root: Callable[[], Path]) -> None:
    """Register ``set_goal``, ``add_entry`` and ``get_recap`` on ``mcp``.

    ``project_root`` is called on every tool call; it returns the current project
    directory or raises ``NotConfiguredError`` (reported to the model as a tool error).
    """

    @tool(mcp, WRITES_IDEMPOTENT, output=SetGoalOutput, title="Set the goal")
    async def set_goal(
        goal: Annotated[str, Field(description="the goal in one or two sentences")],
    ) -> CallToolResult:
        """Record the goal of the current work (the problem being solved), once at the start of a task. A different
        goal archives the previous recap so two pieces of work never mix; repeating the current goal changes
        nothing. Returns {success: true}."""
        answer = await in_thread(lambda: recap.set_goal(project_root(), goal))
        if answer["unchanged"]:
            text = "The goal was already set to this; nothing changed."
        elif answer["archivedTo"]:
            text = f"Goal set. The previous recap was archived to {answer['archivedTo']}."
        else:
            text = f"Goal set: {goal.strip()}"
        return result(_with_warning(text, answer), answer)

    @tool(mcp, WRITES_IDEMPOTENT, output=AddEntryOutput, title="Add a recap entry")
    async def add_entry(
        type: Annotated[recap.EntryType, Field(description="the kind of entry")],
        content: Annotated[str, Field(description="the entry in one or two sentences, with the reason")],
    ) -> CallToolResult:
        """Record context that would otherwise scroll away, as it happens: a decision, insight, risk, assumption,
        fix (a later correction) or other. One or two sentences with the reason; an identical entry is skipped."""
        answer = await in_thread(lambda: recap.add_entry(project_root(), type, content))
        if answer["skipped"]:
            text = f"Skipped: the same {type} is already recorded (id {answer['id']}, {answer['timestamp']})."
        else:
            text = f"Recorded {type} {answer['id']} at {answer['timestamp']}: {content.strip()}"
        return result(_with_warning(text, answer), answer)

    @tool(mcp, READ_ONLY, output=RecapOutput, title="Read the recap")
    async def get_recap() -> CallToolResult:
        """The goal and every decision, insight, risk, assumption and fix recorded for this project: read it when
        resuming work or before a decision earlier choices may constrain."""
        answer = await in_thread(lambda: recap.get_recap(project_root()))
        return result(render.render_markdown(answer, ids=True), {**answer, "entries": render.in_text_order(
            answer["entries"])})


def register(mcp: MCPServer, app) -> None:
    """Add the recap tools and the ``trajectory://recap`` resource to ``mcp`` for the project the server records
    (``app.project_root``)."""
    register_recap_tools(mcp, app.project_root)

    @mcp.resource("trajectory://recap", name="recap", mime_type="text/markdown",
                  description="Goal, decisions, insights, risks and assumptions of the current work")
    @resource_errors
    async def recap_resource() -> str:
        return render.render_markdown(await in_thread(lambda: recap.get_recap(app.project_root())))
