"""MCP tool of sharing: list_trajectories (read-only; push and pull are CLI commands, never done by a model)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from code_trajectory.core.mcp_util import READ_ONLY, in_thread, tool
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.share import service


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add the sharing tools to ``mcp``; they read the project ``app`` holds."""

    @tool(mcp, READ_ONLY)
    async def list_trajectories(ctx: Context) -> str:
        """Histories you can read: ours (one per branch) and teammates' fetched with `code-trajectory pull`
        (author-id/branch), each with its last snapshot time and intent. Pass a name as `source` to the
        history tools."""
        session = await app.session_for(ctx)
        return await in_thread(lambda: service.sources_text(session.recorder.repo))
