"""The MCP server: thin tool wrappers over :mod:`code_trajectory.service`.

``code-trajectory serve`` speaks MCP over stdio. stdout carries only JSON-RPC;
logs go to stderr. Every tool error is an MCP tool error (``isError``) whose
text tells the model what to do next; the server never crashes on bad input.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlparse

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ClientCapabilities, RootsCapability, ToolAnnotations
from pydantic import Field

from code_trajectory import __version__
from code_trajectory.config import TrajectorySettings
from code_trajectory.errors import NotConfiguredError
from code_trajectory.gitcmd import check_git_version
from code_trajectory.mcp_util import tool_errors
from code_trajectory.service import MAX_DEPTH, MAX_LIMIT, ProjectSession, TrajectoryService

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
code-trajectory records every save of the project into a shadow git history (.trajectory/) and tells you how the
code evolved and why. Start with get_session_summary to catch up; get_file_trajectory before editing a file you did
not write recently; get_global_trajectory to see what changed across the project; set_trajectory_intent when you
start a task so snapshots carry the why; checkpoint before a risky change; consolidate when a piece of work is done.
"""

#: How long configure_project waits for the start-up scan before answering (the scan goes on), seconds.
CONFIGURE_WAIT_SECONDS = 20.0

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


def configure_logging(level: int = logging.INFO) -> None:
    """Send log records to stderr, one line each (stdout belongs to JSON-RPC)."""
    root = logging.getLogger()
    if not any(getattr(h, "_code_trajectory", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._code_trajectory = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs every batch at INFO


def _root_from_uri(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def build_server(service: TrajectoryService, *, journal_dir: Path | None = None) -> MCPServer:
    """Create the MCP server with every tool registered on ``service``."""
    mcp = MCPServer("code-trajectory", instructions=INSTRUCTIONS, version=__version__, log_level="INFO")

    async def project(ctx: Context | None) -> ProjectSession:
        """The configured project; configured from the client's first MCP root when it offers roots."""
        try:
            return service.project()
        except NotConfiguredError:
            if ctx is None or not ctx.session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
                raise
        try:
            roots = (await ctx.session.list_roots()).roots
        except Exception as exc:  # noqa: BLE001 - roots are a convenience
            log.info("client roots unavailable: %s", exc)
            roots = []
        for root in roots:
            path = _root_from_uri(str(root.uri))
            if path is not None and path.is_dir():
                log.info("configuring the project from the client's root %s", path)
                session, _ = await anyio.to_thread.run_sync(lambda: service.configure(str(path), background=True))
                return session
        return service.project()

    async def run(fn: Callable[[], str]) -> str:
        return await anyio.to_thread.run_sync(fn)

    @mcp.tool(annotations=WRITES)
    @tool_errors
    async def configure_project(
        path: Annotated[str, Field(description="Absolute path of the project directory to record")],
        ctx: Context,
    ) -> str:
        """Start recording a project: call first, with the project's absolute path. Configuring the path that is
        already recorded keeps the running recorder; another path stops it and starts the new one."""
        session, started = await anyio.to_thread.run_sync(lambda: service.configure(path, background=True))
        if not started:
            return f"Already recording {session.root}; nothing was restarted."
        # report progress while the start-up scan runs; a large project keeps importing in the background
        deadline = anyio.current_time() + CONFIGURE_WAIT_SECONDS
        while session.importing and anyio.current_time() < deadline:
            await anyio.sleep(0.5)
            phase, done, total = session.import_progress
            try:
                await ctx.report_progress(done, total, f"start-up scan: {phase}")
            except Exception:  # noqa: BLE001 - progress is best effort (no token, closed stream)
                pass
        if session.importing:
            phase, done, total = session.import_progress
            return (f"Recording {session.root} on shadow branch `{session.branch}`. The start-up scan of a large "
                    f"project is still running in the background ({phase}: {done}{f' of {total}' if total else ''}"
                    "); queries answer meanwhile from what is recorded, and edits are queued, not lost.")
        if session.import_error is not None:
            raise session.import_error
        snap = session.startup_snapshot
        first = f" Start-up snapshot: {snap.subject}" if snap else " The work tree matches the last snapshot."
        return (f"Recording {session.root} on shadow branch `{session.branch}` (history in "
                f"{session.root / '.trajectory'}; debounce {session.settings.debounce_seconds:g} s).{first}")

    @mcp.tool(annotations=WRITES)
    @tool_errors
    async def set_trajectory_intent(
        intent: Annotated[str, Field(description="Short description of the current task, e.g. 'Fix login retry'")],
        ctx: Context,
    ) -> str:
        """Say what you are working on; every following snapshot records this intent (the why of the changes).
        Call when you start or switch tasks."""
        session = await project(ctx)
        return await run(lambda: session.set_intent(intent))

    @mcp.tool(annotations=READ_ONLY)
    @tool_errors
    async def get_file_trajectory(
        filepath: Annotated[str, Field(description="File path relative to the project root")],
        ctx: Context,
        depth: Annotated[int, Field(description=f"Number of recent snapshots of the file, 1 to {MAX_DEPTH}")] = 5,
    ) -> str:
        """How one file evolved: its last `depth` recorded versions, oldest to newest, with time, message, intent,
        diffs labelled by function, renames followed and reverts detected. Use before editing a file."""
        session = await project(ctx)
        return await run(lambda: session.file_trajectory(filepath, depth))

    @mcp.tool(annotations=READ_ONLY)
    @tool_errors
    async def get_global_trajectory(
        ctx: Context,
        limit: Annotated[int, Field(description=f"Maximum number of commits, 1 to {MAX_LIMIT}")] = 20,
        since_consolidate: Annotated[bool, Field(description="Go back to the last [CONSOLIDATE] commit instead")]
        = False,
    ) -> str:
        """What changed across the project recently: commits oldest to newest with files and +/- line counts.
        Use to see ripple effects or what happened while you were away."""
        session = await project(ctx)
        return await run(lambda: session.global_trajectory(limit, since_consolidate))

    @mcp.tool(annotations=READ_ONLY)
    @tool_errors
    async def get_session_summary(ctx: Context) -> str:
        """Catch up at the start of a conversation: whether a new session starts now (gap over an hour) and what
        the last session did (span, snapshots, files most changed, intents, final state, recap)."""
        session = await project(ctx)

        def summary() -> str:
            recap_text = None
            try:
                from code_trajectory import recap

                recap_text = recap.recap_for_summary(session.root)
            except ImportError:
                pass
            except Exception as exc:  # noqa: BLE001 - the summary still answers without the recap
                log.warning("recap unavailable for the summary: %s", exc)
            return session.session_summary(recap=recap_text)

        return await run(summary)

    @mcp.tool(annotations=WRITES)
    @tool_errors
    async def consolidate(
        intent: Annotated[str, Field(description="Summary of the work done, e.g. 'Implemented login feature'")],
        ctx: Context,
    ) -> str:
        """Squash the recent automatic snapshots into one [CONSOLIDATE] commit named after the finished work.
        Only the shadow history changes; the project's git is never touched."""
        session = await project(ctx)
        return await run(lambda: session.consolidate(intent))

    @mcp.tool(annotations=WRITES)
    @tool_errors
    async def checkpoint(
        ctx: Context,
        message: Annotated[str | None, Field(description="Optional note stored with the snapshot")] = None,
    ) -> str:
        """Snapshot the project right now, without waiting for the debounce: before a risky change or to be sure
        the latest edits are recorded."""
        session = await project(ctx)
        return await run(lambda: session.checkpoint(message))

    @mcp.tool(annotations=WRITES)
    @tool_errors
    async def record_test_result(
        command: Annotated[str, Field(description="The test command you ran, e.g. 'pytest -q tests'")],
        ctx: Context,
        passed: Annotated[int | None, Field(description="Tests that passed", ge=0)] = None,
        failed: Annotated[int | None, Field(description="Tests that failed", ge=0)] = None,
        errors: Annotated[int | None, Field(description="Tests that errored", ge=0)] = None,
        skipped: Annotated[int | None, Field(description="Tests skipped", ge=0)] = None,
        failing_tests: Annotated[list[str] | None, Field(
            description="Ids of failing tests, optionally 'test_id: short reason'")] = None,
        duration_seconds: Annotated[float | None, Field(description="Wall time of the run, seconds", ge=0)] = None,
        exit_code: Annotated[int | None, Field(description="The command's exit status")] = None,
    ) -> str:
        """Record a test run you performed yourself against the current state (snapshotted first), so later
        trajectories show which snapshot was green and what broke since."""
        session = await project(ctx)
        failures = None
        if failing_tests is not None:
            failures = [tuple(part.strip() for part in item.split(": ", 1)) if ": " in item else item
                        for item in failing_tests]
        return await run(lambda: session.record_test_result(
            command=command, passed=passed, failed=failed, errors=errors, skipped=skipped,
            failing_tests=failures, duration_seconds=duration_seconds, exit_code=exit_code))

    @mcp.tool(annotations=READ_ONLY)
    @tool_errors
    async def get_test_history(
        ctx: Context,
        limit: Annotated[int, Field(description=f"Number of runs, 1 to {MAX_LIMIT}")] = 10,
    ) -> str:
        """Recorded test runs on the current branch, newest first: when, on which snapshot, counts and failing
        tests. Use to see when tests were last green."""
        session = await project(ctx)
        return await run(lambda: session.test_history(limit))

    @mcp.tool(annotations=READ_ONLY)
    @tool_errors
    async def diff_since_green(
        ctx: Context,
        filepath: Annotated[str | None, Field(description="One file relative to the project root; omit for the "
                                                          "whole project")] = None,
    ) -> str:
        """What changed since the last snapshot whose tests passed (one file or the project): use when tests
        fail to find what broke without re-running anything."""
        session = await project(ctx)
        return await run(lambda: session.diff_since_green(filepath))

    _register_extensions(mcp, service, journal_dir)
    return mcp


def _register_extensions(mcp: MCPServer, service: TrajectoryService, journal_dir: Path | None) -> None:
    """Register the recap and journal tools when their modules are present."""
    try:
        from code_trajectory.recap_tools import register_recap_tools
    except ImportError:
        log.debug("recap tools not available")
    else:
        register_recap_tools(mcp, service.project_root)
    try:
        from code_trajectory.journal_tools import register_journal_tools
    except ImportError:
        log.debug("journal tools not available")
    else:
        register_journal_tools(mcp, journal_dir)


def serve(project: str | None, *, debounce: float | None = None, journal_dir: Path | None = None,
          force_polling: bool | None = None) -> int:
    """Run the MCP server over stdio until the client disconnects; returns the exit status."""
    configure_logging()
    check_git_version()  # fail at start with a clear message, not at the first tool call
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=debounce),
                                force_polling=force_polling)
    mcp = build_server(service, journal_dir=journal_dir)
    if project:
        # the server answers tools/list and queries while a large project is imported
        session, _ = service.configure(project, background=True)
        log.info("recording %s on shadow branch %s", session.root, session.branch)
    try:
        mcp.run("stdio")
    finally:
        service.close()
    return 0
