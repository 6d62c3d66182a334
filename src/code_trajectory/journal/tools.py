"""The journal's MCP tools: ``journal_search``, ``journal_read``, ``journal_toc``,
``journal_list_entries``, ``journal_write`` and ``journal_synthesize_conflict``.

Register them on a server with :func:`register_journal_tools` (each with
:func:`code_trajectory.core.mcp_util.tool`: its docstring is its description).
Every tool returns readable text plus structured content in the shapes of
``journal-design.md`` (the pydantic models below, which the SDK validates each
answer against; ``tools/list`` does not list them), without null or empty fields
(:mod:`code_trajectory.core.answer`: a field left out has its default); bad ids, paths and arguments
become tool errors (``isError``) with a message the model can act on.

Write protection: ``journal_write(path, ...)`` is allowed only after
``journal_read(path)`` in the same MCP session, and only while the section is
still at the version that read saw (the version is the last commit that changed
the section's file); otherwise it fails with a merge error asking the model to
re-read and retry. A successful write moves the session's record to the new
version, so a session can write several entries in a row. The session is the
MCP connection: on handshake-era connections (stdio, SSE, streamable HTTP with a
session id) the reads are kept in that connection's ``state`` and vanish with
it; the 2026-07-28 protocol is stateless (every request carries its own
envelope and gets a fresh connection), so there the reads are kept per server
process (for stdio, one process serves one client, so that is the session).
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from code_trajectory.core.errors import InvalidArgumentError, JournalConflictError
from code_trajectory.core.mcp_util import (
    READ_ONLY,
    READ_ONLY_SAMPLING,
    WRITES,
    bounded,
    connection_state,
    in_thread,
    result,
    tool,
)
from code_trajectory.journal import LIST_LENGTH_RANGE, LIST_START_RANGE, SALIENCE_RANGE, TOC_DEPTH_RANGE
from code_trajectory.journal.model import UNCHECKED
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.text import normalize_path

if TYPE_CHECKING:  # imported when the journal is first opened, not when the server starts (issue 29)
    from code_trajectory.journal.service import Journal

log = logging.getLogger(__name__)

_STATE_KEY = "code_trajectory.journal.reads"
SAMPLING_MAX_TOKENS = 4000
SAMPLING_TIMEOUT_SECONDS = 120.0

SettingsSource = JournalSettings | Callable[[], JournalSettings] | str | os.PathLike[str] | None


# --------------------------------------------------------------------------- structured content

class SearchHitModel(BaseModel):
    id: str = Field(description="Entry id 'path#sha'")
    path: str
    content: str = Field("", description="The entry text (the commit message)")
    work_context_score: float
    content_score: float
    combined_score: float
    salience: float = Field(description="Temporal salience in [minimum_salience, 1]")
    timestamp: str
    cut_for_search: bool = Field(False, description="The entry is longer than what semantic search reads of it: "
                                                    "only its beginning was searched")


class SearchOutput(BaseModel):
    ranking: Literal["semantic", "lexical"]
    ranking_note: str = ""
    salience_threshold: float
    entries_considered: int
    results: list[SearchHitModel] = []


class ReadOutput(BaseModel):
    id: str
    type: Literal["overview", "entry"]
    path: str
    content: str = ""
    exists: bool | None = None
    version: str | None = None
    entry_count: int | None = None
    last_updated: str | None = None
    pending_conflict: dict[str, Any] | None = None
    timestamp: str | None = None
    summary: str | None = None
    work_context: str | None = None
    author: str | None = None


class TocNode(BaseModel):
    id: str = Field("", description="The section; absent for the root")
    type: Literal["root", "section", "group"]
    last_updated: str | None = None
    entry_count: int
    section_count: int | None = None
    subsection_count: int | None = None
    subsections: list[TocNode] | None = None


class ListedEntry(BaseModel):
    id: str
    timestamp: str
    summary: str = ""


class ListOutput(BaseModel):
    path: str
    total: int
    start: int
    entries: list[ListedEntry] = []


class WriteOutput(BaseModel):
    id: str
    path: str
    version: str
    entry_count: int
    overview_updated: bool
    created: bool
    timestamp: str
    duplicate: bool = Field(False, description="true when the section already held this entry: nothing written")


class SynthesisOutput(BaseModel):
    section: str
    method: Literal["sampling", "prompt"]
    synthesis: str | None = Field(None, description="The merged overview (sampling), or null")
    model: str | None = None
    prompt: str | None = Field(None, description="The merge prompt to act on when no synthesis was produced")
    note: str


# --------------------------------------------------------------------------- the toolset

class JournalToolset:
    """State behind the tools: the journal (opened on first use) and the stateless-session reads."""

    def __init__(self, settings: SettingsSource) -> None:
        self._source = settings
        self._journal: Journal | None = None
        self._lock = threading.Lock()
        self._stateless_reads: dict[str, str | None] = {}

    @property
    def journal(self) -> Journal:
        with self._lock:
            if self._journal is None:
                from code_trajectory.journal.service import Journal

                self._journal = Journal(_resolve_settings(self._source))
            return self._journal

    def reads(self, ctx: Context | None) -> dict[str, str | None]:
        """The ``{section path: version read}`` map of the caller's MCP connection (per process when stateless)."""
        state = connection_state(ctx)
        if state is None:
            return self._stateless_reads
        key = f"{_STATE_KEY}:{self.journal.settings.journal_data_path}"
        return state.setdefault(key, {})


def _resolve_settings(source: SettingsSource) -> JournalSettings:
    if isinstance(source, JournalSettings):
        return source
    if source is None:
        return JournalSettings.load()
    if isinstance(source, (str, os.PathLike, Path)):
        return JournalSettings.load(journal_dir=source)
    if callable(source):
        value = source()
        if not isinstance(value, JournalSettings):
            return _resolve_settings(value)
        return value
    raise TypeError(f"journal settings must be JournalSettings, a path or a factory, not {type(source).__name__}")


def register_journal_tools(mcp: MCPServer, settings: SettingsSource = None) -> JournalToolset:
    """Add the six journal tools to ``mcp``.

    Args:
        mcp: the server.
        settings: the journal settings: a :class:`JournalSettings`, a zero-argument
            factory returning one (called on the first tool call, so a bad config
            surfaces as a tool error rather than a failed start), a journal directory
            (``serve --journal-dir``; the rest comes from the config), or None for
            ``JournalSettings.load()``.

    Returns:
        The toolset (its ``journal`` property gives the open journal, e.g. for tests).
    """
    toolset = JournalToolset(settings)

    @tool(mcp, READ_ONLY, output=SearchOutput)
    async def journal_search(
        work_context: Annotated[str, Field(description="Kind of work, e.g. 'debugging memory retrieval'")],
        content: Annotated[str, Field(description="What is sought")],
        salience_threshold: Annotated[float | None, bounded("Minimum score (default 0.5)", *SALIENCE_RANGE)] = None,
    ) -> CallToolResult:
        """Search journal entries by work context and content (semantic when the model is installed, lexical
        otherwise); recent entries rank higher among similar matches."""
        text, data = await in_thread(lambda: toolset.journal.search(work_context, content, salience_threshold))
        return result(text, data)

    @tool(mcp, READ_ONLY, output=ReadOutput)
    async def journal_read(
        id: Annotated[str, Field(description="'section/path' (overview) or 'section/path#sha' (entry)")],
        ctx: Context,
    ) -> CallToolResult:
        """Read a journal overview ('path') or a specific entry ('path#sha'). Reading a section's overview is
        required before journal_write to it."""
        text, data, version = await in_thread(lambda: toolset.journal.read(id))
        if version is not UNCHECKED:
            assert version is None or isinstance(version, str)  # an overview's version (UNCHECKED: an entry read)
            toolset.reads(ctx)[data["path"]] = version
        return result(text, data)

    @tool(mcp, READ_ONLY, output=TocNode)
    async def journal_toc(
        id: Annotated[str, Field(description="Section to start from; '' for the root")] = "",
        depth: Annotated[int, bounded("Levels to descend (1: the start only)", *TOC_DEPTH_RANGE)] = 1,
    ) -> CallToolResult:
        """Get the table of contents showing journal sections and subsections."""
        text, data = await in_thread(lambda: toolset.journal.toc(id, depth))
        return result(text, data)

    @tool(mcp, READ_ONLY, output=ListOutput)
    async def journal_list_entries(
        path: Annotated[str, Field(description="Journal section path")],
        start: Annotated[int, bounded("Starting index (0 = most recent)", *LIST_START_RANGE)] = 0,
        length: Annotated[int, bounded("Number of entries to return", *LIST_LENGTH_RANGE)] = 10,
    ) -> CallToolResult:
        """List entries for a specific journal section, newest first, with paging."""
        text, data = await in_thread(lambda: toolset.journal.list_entries(path, start, length))
        return result(text, data)

    @tool(mcp, WRITES, output=WriteOutput)
    async def journal_write(
        path: Annotated[str, Field(description="Section path; a new one is created")],
        entry: Annotated[str, Field(description="The entry; first line 'work_context: <kind of work>'")],
        ctx: Context,
        overview: Annotated[str | None, Field(description="New overview, when understanding shifted")] = None,
        summary: Annotated[str | None, Field(description="Brief summary for the commit")] = None,
    ) -> CallToolResult:
        """Add a new journal entry and optionally update the overview synthesis. Allowed only after journal_read
        of the section in this session; if the section changed since, re-read and retry."""
        section = normalize_path(path)
        reads = toolset.reads(ctx)
        if section not in reads:
            raise JournalConflictError(
                f"write refused: section {section!r} was not read in this session. Call journal_read('{section}') "
                "first (it shows the current overview, so your entry and overview build on it), then journal_write.")
        text, data, version = await in_thread(lambda: toolset.journal.write(section, entry, overview, summary,
                                                                             expected_version=reads[section]))
        reads[section] = version  # our own commit: a later write by someone else still conflicts
        return result(text, data)

    @tool(mcp, READ_ONLY_SAMPLING, output=SynthesisOutput)
    async def journal_synthesize_conflict(
        section: Annotated[str, Field(description="The journal section whose overviews conflict")],
        version_a: Annotated[str, Field(description="One version of the overview")],
        version_b: Annotated[str, Field(description="The other version of the overview")],
        work_context: Annotated[str, Field(description="What kind of work led to this conflict")],
        ctx: Context,
    ) -> CallToolResult:
        """Synthesize conflicting journal overviews: asks the client's model through MCP sampling when the
        client supports it, otherwise returns a merge prompt to act on."""
        section = normalize_path(section)
        if not (version_a or "").strip() or not (version_b or "").strip():
            raise InvalidArgumentError("version_a and version_b must both be non-empty overviews")
        from code_trajectory.journal.service import merge_prompt

        prompt = merge_prompt(section, version_a, version_b, work_context or "")
        synthesis, model, failure = await _sample(ctx, prompt)
        if synthesis:
            data = {"section": section, "method": "sampling", "synthesis": synthesis, "model": model,
                    "prompt": None, "note": "Review the synthesis, then journal_read the section and journal_write "
                                            "it as the overview with an entry explaining the merge."}
            text = (f"Synthesised overview of {section} (by {model or 'the client model'} via MCP sampling):\n\n"
                    f"{synthesis}\n\n{data['note']}")
            return result(text, data)
        note = (f"{failure} Merge the two versions yourself following the prompt, then journal_read('{section}') "
                f"and journal_write('{section}', entry=<why and how they were merged>, overview=<merged>).")
        data = {"section": section, "method": "prompt", "synthesis": None, "model": None, "prompt": prompt,
                "note": note}
        return result(f"# Merge prompt for {section}\n\n{note}\n\n{prompt}", data)

    return toolset


async def _sample(ctx: Context, prompt: str) -> tuple[str | None, str | None, str]:
    """Ask the client's model; returns ``(text or None, model or None, why not)``."""
    from mcp.types import ClientCapabilities, SamplingCapability, SamplingMessage, TextContent

    try:
        session = ctx.session
        supported = session.check_client_capability(ClientCapabilities(sampling=SamplingCapability()))
        can_send = getattr(session, "can_send_request", True)
    except Exception:  # noqa: BLE001 - no request context, or an SDK without these helpers
        return None, None, "The client's model could not be asked (no MCP session)."
    if not supported:
        return None, None, "The client does not support MCP sampling."
    if not can_send:
        return None, None, "This connection cannot carry a server-to-client request (stateless protocol)."
    try:
        import anyio

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with anyio.fail_after(SAMPLING_TIMEOUT_SECONDS):
                answer = await session.create_message(
                    messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
                    max_tokens=SAMPLING_MAX_TOKENS,
                    system_prompt="You merge two versions of a knowledge overview into one, losing nothing.",
                    temperature=0.2,
                )
    except Exception as exc:  # noqa: BLE001 - any client failure falls back to the prompt
        log.info("journal sampling failed: %s", exc)
        return None, None, f"The client's model did not answer ({type(exc).__name__}: {exc})."
    content = answer.content
    text = getattr(content, "text", None)
    if text is None and isinstance(content, list):
        text = "\n".join(getattr(c, "text", "") for c in content).strip()
    if not text or not text.strip():
        return None, None, "The client's model answered with no text."
    return text.strip(), getattr(answer, "model", None), ""


def register(mcp: MCPServer, app) -> JournalToolset:
    """Add the journal tools to ``mcp`` with the journal directory of the server's options (``app.journal_dir``)."""
    return register_journal_tools(mcp, app.journal_dir)
