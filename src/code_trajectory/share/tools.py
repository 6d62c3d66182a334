"""MCP tool of sharing: list_trajectories (read-only; push and pull are CLI commands, never done by a model).

:mod:`code_trajectory.share.service` is imported when the tool first runs, not when the server starts (issue 29:
``initialize`` within 1 s)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.mcpserver import Context, MCPServer

from code_trajectory.core.answer import Answer, message, table, when
from code_trajectory.core.mcp_util import READ_ONLY, in_thread, tool
from code_trajectory.recording.service import TrajectoryService

if TYPE_CHECKING:
    from code_trajectory.git.shadow import ShadowRepo

#: Columns of a source's row in ``list_trajectories``' structured content: the name to pass as ``source``, whose
#: it is (``ours``, or the remote it was pulled from), its last snapshot's time, its latest intent.
SOURCE_COLUMNS = ["name", "whose", "t", "intent"]


def sources_answer(repo: ShadowRepo) -> Answer:
    """``list_trajectories``' answer: the text of :func:`service.sources_text` and ``sources``, rows of ``cols``
    (:data:`SOURCE_COLUMNS`) in its order; ``more``: sources past the listed ones."""
    from code_trajectory.share import service

    text = service.sources_text(repo)
    sources = service.list_sources(repo)
    if not sources:
        return message(text)
    cols, rows = table([{"name": s.name, "whose": "ours" if s.ours else s.pulled_from or "pulled",
                         "t": when(s.time) if s.time else None,
                         "intent": s.intent} for s in sources[:service.MAX_LISTED]], SOURCE_COLUMNS)
    return Answer(text, {"cols": cols, "sources": rows, "more": max(0, len(sources) - service.MAX_LISTED) or None})


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add the sharing tools to ``mcp``; they read the project ``app`` holds."""

    @tool(mcp, READ_ONLY)
    async def list_trajectories(ctx: Context) -> str:
        """Histories you can read: ours (one per branch) and teammates' fetched with `code-trajectory pull`
        (author-id/branch), each with its last snapshot time and intent. Pass a name as `source` to the
        history tools."""
        session = await app.session_for(ctx)
        return await in_thread(lambda: sources_answer(session.recorder.repo))
