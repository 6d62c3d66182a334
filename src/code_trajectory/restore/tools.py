"""MCP tool of restore: ``restore`` (destructive: it writes the user's files, after a safety snapshot).

:mod:`code_trajectory.restore.service` is imported when the tool first runs, not when the server starts (issue 29:
``initialize`` within 1 s)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from code_trajectory.core.mcp_util import DESTRUCTIVE, in_thread, tool
from code_trajectory.recording.service import TrajectoryService


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add ``restore`` to ``mcp``; it works on the project ``app`` holds, coordinated with its watcher."""

    @tool(mcp, DESTRUCTIVE)
    async def restore(
        snapshot: Annotated[str, Field(description="Commit id, checkpoint message, '~N', 'start of recording' or a time")],
        ctx: Context,
        paths: Annotated[list[str] | None, Field(description="Files, directories or globs; default all")] = None,
        dry_run: Annotated[bool, Field(description="Only show the diff; write nothing")] = False,
        force: Annotated[bool, Field(description="Even during a merge or rebase")] = False,
    ) -> str:
        """Put files back as a snapshot had them. A safety snapshot is taken first: restoring it undoes this.
        Use dry_run to see the diff first."""
        from code_trajectory.restore import service

        session = await app.session_for(ctx)
        return await in_thread(lambda: service.restore(session, snapshot, paths, dry_run=dry_run,
                                                       force=force).answer())
