"""MCP tools of recording: configure_project, set_trajectory_intent, checkpoint, consolidate."""

from __future__ import annotations

import contextlib
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from code_trajectory.core.answer import Answer
from code_trajectory.core.mcp_util import WRITES, in_thread, tool
from code_trajectory.recording import answers
from code_trajectory.recording.service import TrajectoryService, wait_briefly_for_import


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add the recording tools to ``mcp``; they record the project ``app`` holds."""

    @tool(mcp, WRITES)
    async def configure_project(
        path: Annotated[str, Field(description="Absolute path of the project directory to record")],
        ctx: Context,
    ) -> str:
        """Start recording a project: call first, with the project's absolute path. Configuring the path that is
        already recorded keeps the running recorder; another path stops it and starts the new one."""
        session, started = await in_thread(lambda: app.configure(path, background=True))
        app.follow_client = False  # an explicit choice: the client's roots no longer move the project
        if not started:
            return Answer(f"Already recording {session.root}; nothing was restarted.",
                          {"root": str(session.root), "restarted": False})
        # a small project's import ends within the first answer's short wait; a large one keeps importing in the
        # background while every tool answers from what is recorded so far
        await wait_briefly_for_import(session)
        if session.importing:
            phase, done, total = session.import_progress
            with contextlib.suppress(Exception):  # progress is best effort (no token, closed stream)
                await ctx.report_progress(done, total, f"start-up scan: {phase}")
            phase, done, total = session.import_progress
            return Answer(f"Recording {session.root} on shadow branch `{session.branch}`. The start-up scan of a "
                          f"large project is still running in the background ({phase}: {done}"
                          f"{f' of {total}' if total else ''}); queries answer meanwhile from what is recorded, and "
                          "edits are queued, not lost.", {"root": str(session.root), "branch": session.branch,
                                                          "scan": [phase, done, total]})
        if session.import_error is not None:
            raise session.import_error
        snap = session.startup_snapshot
        first = f" Start-up snapshot: {snap.subject}" if snap else " The work tree matches the last snapshot."
        return Answer(f"Recording {session.root} on shadow branch `{session.branch}` (history in "
                      f"{session.root / '.trajectory'}; debounce {session.settings.debounce_seconds:g} s).{first}",
                      {"root": str(session.root), "branch": session.branch,
                       "debounce_s": session.settings.debounce_seconds,
                       "startup": snap and {"id": snap.commit[:12], "msg": snap.subject}})

    @tool(mcp, WRITES)
    async def set_trajectory_intent(
        intent: Annotated[str, Field(description="Short description of the current task, e.g. 'Fix login retry'")],
        ctx: Context,
    ) -> str:
        """Say what you are working on; every following snapshot records this intent (the why of the changes).
        Call when you start or switch tasks."""
        session = await app.session_for(ctx)
        return await in_thread(lambda: answers.intent(session.set_intent(intent), session.recorder.intent.get()))

    @tool(mcp, WRITES)
    async def consolidate(
        intent: Annotated[str, Field(description="Summary of the work done, e.g. 'Implemented login feature'")],
        ctx: Context,
    ) -> str:
        """Squash the recent automatic snapshots into one [CONSOLIDATE] commit named after the finished work.
        Only the shadow history changes; the project's git is never touched."""
        session = await app.session_for(ctx)
        return await in_thread(lambda: session.consolidate(intent))

    @tool(mcp, WRITES)
    async def checkpoint(
        ctx: Context,
        message: Annotated[str | None, Field(description="Optional note stored with the snapshot")] = None,
    ) -> str:
        """Snapshot the project right now, without waiting for the debounce: before a risky change or to be sure
        the latest edits are recorded."""
        session = await app.session_for(ctx)

        def take() -> Answer:
            before = session.recorder.latest_commit(session.branch)
            return answers.checkpoint(session.recorder.repo, session.branch, before,
                                      session.take_checkpoint(message))

        return await in_thread(take)
