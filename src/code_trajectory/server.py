"""The MCP server: composed from what each feature package registers.

``code-trajectory serve`` speaks MCP over stdio. stdout carries only JSON-RPC; logs go to stderr. Each
feature package owns its tools in ``<package>/tools.py`` with ``register(mcp, app)``; this module only
builds the server, calls them in :data:`FEATURES` order and runs it. Every tool error is an MCP tool error
(``isError``) whose text tells the model what to do next; the server never crashes on bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import threading
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from code_trajectory import __version__, wiring
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import UntrustedRepositoryError
from code_trajectory.core.logs import configure_logging
from code_trajectory.core.shutdown import StopRequest
from code_trajectory.git.gitcmd import check_git_version
from code_trajectory.recording.service import TrajectoryService

log = logging.getLogger(__name__)

#: Longest a stop may take before the process exits anyway (status 1; the next start's scan records what was
#: pending), seconds: a flush waits up to 10 s for another process's ``write.lock``.
STOP_DEADLINE_SECONDS = 15.0

#: The feature packages whose ``tools.register(mcp, app)`` make up the server, in ``tools/list`` order.
FEATURES = ("recording", "history", "restore", "testruns", "recap", "journal", "share")

INSTRUCTIONS = """\
code-trajectory records every save of the project into a shadow git history (.trajectory/) and tells you how the
code evolved and why. At the start of a conversation call get_session_summary (or use the catch-up prompt). Before
editing a file, get_file_trajectory (get_symbol_trajectory for one function). When you start or switch tasks,
set_trajectory_intent. Before a risky change, checkpoint("<name>") so restore can go back to it by name; restore
takes a safety snapshot first, so it can be undone. When a task is done and its snapshots are no longer useful one by
one, consolidate("<what was done>"): it squashes only that task's trailing snapshots. When tests fail,
diff_since_green; to find when a line appeared or went, search_trajectory.
"""


class TrajectoryMCPServer(MCPServer):
    """The SDK's server with compact tool schemas, since clients send ``tools/list`` to the model with every
    request (issue: at most ~250 tokens a tool). Without changing what is accepted or returned:

    * pydantic's generated ``title`` of every schema and property (``"title": "Filepath"``) is dropped;
    * an optional argument's ``anyOf: [{T}, {"type": "null"}], "default": null`` becomes ``{T}`` (leaving it
      out means null), and a nullable simple type ``{"type": ["string", "null"]}``;
    * output schemas are not listed: every tool's structured content is documented in the README, and the
      recap and journal tools still validate theirs against their pydantic models when they answer.
    """

    async def list_tools(self):
        tools = await super().list_tools()
        return [tool.model_copy(update={"input_schema": compact_schema(tool.input_schema), "output_schema": None})
                for tool in tools]


def compact_schema(schema, *, descriptions: bool = True, top: bool = True):
    """``schema`` without generated titles and null branches of optional values (see :class:`TrajectoryMCPServer`);
    with ``descriptions=False`` also without the descriptions below the top level."""
    if isinstance(schema, list):
        return [compact_schema(item, descriptions=descriptions, top=False) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "description" and not descriptions and not top:
            continue
        if key == "properties" and isinstance(value, dict):
            result[key] = {name: compact_schema(sub, descriptions=descriptions, top=False)
                           for name, sub in value.items()}
        else:
            result[key] = compact_schema(value, descriptions=descriptions, top=False)
    branches = result.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        if result.get("default", "absent") is None:  # optional: leaving it out means null
            result.pop("anyOf")
            result.pop("default")
            result = {**other, **result}
        elif set(other) == {"type"} and isinstance(other["type"], str):  # nullable: one type list
            result.pop("anyOf")
            result = {"type": [other["type"], "null"], **result}
    return result


def build_server(service: TrajectoryService, *, journal_dir: Path | None = None) -> MCPServer:
    """Create the MCP server with every feature's tools registered on ``service``.

    Args:
        service: the configured project (possibly none yet) shared by the tools.
        journal_dir: the journal repository (``serve --journal-dir``); None for the configured default.
    """
    wiring.install()  # the capabilities' handlers of the lower layers' hooks (idempotent; the CLI's too)
    if journal_dir is not None:
        service.journal_dir = journal_dir
    mcp = TrajectoryMCPServer("code-trajectory", instructions=INSTRUCTIONS, version=__version__, log_level="INFO")
    for feature in FEATURES:
        importlib.import_module(f"code_trajectory.{feature}.tools").register(mcp, service)
    return mcp


def serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``code-trajectory serve``."""
    parser.add_argument("--project", metavar="PATH", help="configure this project at start")
    parser.add_argument("--debounce", type=float, metavar="SECONDS", help="quiet time before a snapshot (default 2.0)")
    parser.add_argument("--journal-dir", type=Path, metavar="DIR", help="journal repository (default <home>/journal)")


def serve(args: argparse.Namespace) -> int:
    """``code-trajectory serve``: run the MCP server over stdio until the client disconnects or stops it.

    Once the server has stopped (the project closed: pending changes recorded, ``stopped_at`` noted), the process
    ends at once: the interpreter's own clean-up of the server's heap would add about half a second (measured
    after a client closed stdin, issue 22) and has nothing left to save.
    """
    _exit_now(run_server(args.project, debounce=args.debounce, journal_dir=args.journal_dir))
    return 0  # not reached


def run_server(project: str | None, *, debounce: float | None = None, journal_dir: Path | None = None,
               force_polling: bool | None = None) -> int:
    """Run the MCP server over stdio until the client disconnects or stops it; returns the exit status.

    The end of stdin (Codex CLI) ends the SDK's stdio loop; SIGINT, SIGTERM and SIGHUP (Claude Code: SIGINT then
    SIGTERM 0.1 s later; Gemini CLI: SIGTERM) are turned into the same orderly stop by :func:`_stop_on_request`.
    Either way the pending changes are snapshotted at once, ``recorder.json`` notes the stop, child processes are
    stopped, and the status is 0.
    """
    configure_logging()
    check_git_version()  # fail at start with a clear message, not at the first tool call
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=debounce),
                                force_polling=force_polling, journal_dir=journal_dir)
    mcp = build_server(service)
    stop = StopRequest()
    stop.install()
    threading.Thread(target=_stop_on_request, args=(stop, service), name="trajectory-stop", daemon=True).start()
    if project:
        # the server answers tools/list and queries while a large project is imported
        try:
            session, _ = service.configure(project, background=True)
        except UntrustedRepositoryError as exc:  # the server still answers; every tool says why, in the same line
            log.error("cannot record %s: %s", project, exc)
            service.startup_failed(exc)
        else:
            log.info("recording %s on shadow branch %s", session.root, session.branch)
    try:
        mcp.run("stdio")
        log.info("stopping: the client closed stdin")
    finally:
        service.close()
    stop.ignore()  # stopped: a late signal must not turn status 0 into death by that signal
    return 0


def _stop_on_request(stop: StopRequest, service: TrajectoryService) -> None:
    """Wait for a stop signal, then close the service (snapshotting what is pending) and end the process with
    status 0.

    The SDK's stdio loop cannot be cancelled while its reader thread blocks on an open stdin (Claude Code leaves
    it open), so the process ends with ``os._exit`` once the service is closed: that is the clean part of the
    stop. The work runs on this thread, never in the signal handler: a later signal only records that it came
    (see :class:`~code_trajectory.core.shutdown.StopRequest`) and cannot interrupt the flush.
    """
    stop.wait()
    log.info("stopping on %s", stop.reason)
    timer = threading.Timer(STOP_DEADLINE_SECONDS, _exit_late)
    timer.daemon = True
    timer.start()
    try:
        service.close()
    except Exception:  # the process ends either way
        log.exception("closing the project failed")
    _exit_now(0)


def _exit_late() -> None:
    log.error("stopping took over %.0f s; exiting without waiting further (the next start's scan records "
              "what was pending)", STOP_DEADLINE_SECONDS)
    _exit_now(1)


def _exit_now(status: int) -> None:
    """End the process with ``status`` now, after flushing stdout and stderr (no interpreter clean-up)."""
    for stream in (sys.stderr, sys.stdout):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
