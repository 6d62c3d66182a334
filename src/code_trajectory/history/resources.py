"""MCP resources and prompts of the narratives: views a client can attach, and ready-made requests.

Resources (read-only, markdown): ``trajectory://session`` (the session summary with tests and recap) and the
template ``trajectory://file/{+path}`` (a file's trajectory, ``path`` relative to the project root). Prompts:
``catch-up`` (what happened in the last session and where to continue) and ``explain-file`` (how and why a file
evolved).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from code_trajectory.core.mcp_util import in_thread, resource_errors
from code_trajectory.history import last_session, service
from code_trajectory.project import confine
from code_trajectory.recording.service import TrajectoryService


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add the narrative resources and prompts to ``mcp`` (they read the project ``app`` holds)."""

    @mcp.resource("trajectory://session", name="session-summary", mime_type="text/markdown",
                  description="The last session: branches, intents, files, tests and recap")
    @resource_errors
    async def session_resource() -> str:
        session = await app.session_for(None)
        return str(await in_thread(lambda: last_session.full_session_summary(session)))

    @mcp.resource("trajectory://file/{+path}", name="file-trajectory", mime_type="text/markdown",
                  description="How one file evolved (path relative to the project root)")
    @resource_errors
    async def file_resource(path: str) -> str:
        session = await app.session_for(None)
        return str(await in_thread(lambda: service.file_trajectory(session, path)))

    @mcp.prompt(name="catch-up", description="What happened in the last session and where to continue")
    def catch_up() -> str:
        return ("Catch up on this project before working: call get_session_summary, then get_recap. Tell me in a "
                "few lines what the last session did on each branch, the intent it ended with, whether the tests "
                "were green, and what is left to do; then propose where to continue. Before editing a file, call "
                "get_file_trajectory on it.")

    @mcp.prompt(name="explain-file", description="How and why a file evolved")
    async def explain_file(path: str) -> str:
        session = await app.session_for(None)
        path = confine(session.root, path)  # as get_file_trajectory would refuse it (too long, outside the project)
        return (f"Explain how `{path}` evolved and why: call get_file_trajectory(filepath={path!r}, depth=20), and "
                "get_symbol_trajectory for the functions that changed most. Summarise the changes in order with "
                "their intents, point out reverts and what the tests said, and say what the newest change did.")
