"""``code-trajectory serve``'s start: recording begins before the MCP SDK is imported.

Importing the SDK and every feature's tools takes about a second of CPU (``python -X importtime``: ``mcp`` alone
0.6-1 s on this 2-core machine); the start-up scan of a restart does not need them. So the project is opened and its
start-up scan started first (in the background, or in a child process for a large project: see
:mod:`code_trajectory.recording.session`), and :mod:`code_trajectory.server` is imported and run afterwards (issue
29: a restart records what changed while stopped <= 1 s beyond ``git status``; ``initialize`` within 1 s). An
initial import of a large git project, which has nothing to catch up on, starts only once the server is built
(see :mod:`code_trajectory.recording.startup`), and so do a restart's watches (their walk would hold the
interpreter lock against the SDK's import); a project with no shadow repository yet is opened on a thread beside
the SDK's import (most of its opening waits for git). Stops (SIGINT, SIGTERM, SIGHUP) are handled from the start, by
:func:`stop_on_request`.

This module imports nothing of the SDK, and the recording capability only once :func:`serve` has started reading
the client's opening request (:mod:`code_trajectory.early_answer`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from code_trajectory import early_answer

TYPE_CHECKING = False
if TYPE_CHECKING:  # imported where used: the client's opening request is read before them (early_answer)
    from code_trajectory.core.shutdown import StopRequest
    from code_trajectory.recording.service import TrajectoryService

log = logging.getLogger("code_trajectory.server")

#: Longest a stop may take before the process exits anyway (status 1; the next start's scan records what was
#: pending), seconds: a flush waits up to 10 s for another process's ``write.lock``.
STOP_DEADLINE_SECONDS = 15.0


def serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``code-trajectory serve``."""
    parser.add_argument("--project", metavar="PATH",
                        help="record this project (default: the project of the client's first root, else of the "
                             "working directory: its git top level; followed when the client's roots change)")
    parser.add_argument("--debounce", type=float, metavar="SECONDS", help="quiet time before a snapshot (default 2.0)")
    parser.add_argument("--journal-dir", type=Path, metavar="DIR", help="journal repository (default <home>/journal)")


def serve(args: argparse.Namespace) -> int:
    """``code-trajectory serve``: run the MCP server over stdio until the client disconnects or stops it.

    Once the server has stopped (the project closed: pending changes recorded, ``stopped_at`` noted), the process
    ends at once: the interpreter's own clean-up of the server's heap would add about half a second (measured
    after a client closed stdin, issue 22) and has nothing left to save.
    """
    from code_trajectory.core.shutdown import StopRequest

    stop = StopRequest()
    stop.install()  # before the early answer: a client may stop the server as soon as it is answered
    early = early_answer.start()  # the client's opening request answered before the SDK is imported, when it can be
    exit_now(run_server(args.project, debounce=args.debounce, journal_dir=args.journal_dir, early=early, stop=stop))
    return 0  # not reached


def start_service(project: str | None, *, debounce: float | None = None, journal_dir: Path | None = None,
                  force_polling: bool | None = None,
                  import_after: threading.Event | None = None) -> tuple[TrajectoryService, StopRequest]:
    """Open the project of ``serve`` and start recording it, with stops handled; the MCP server comes next.

    Args:
        project: ``--project`` as given (None: the client's roots decide, at ``initialize``).
        debounce: ``--debounce`` seconds; journal_dir: ``--journal-dir``; force_polling: poll, not watch (tests).
        import_after: the initial import of ``project`` (none recorded yet) starts once this is set (see
            :mod:`code_trajectory.recording.startup`); None: at once. A restart's scan starts at once either way;
            its watches are set once this is set.

    Returns:
        ``(service, stop)``: the service the tools will share, and the stop request being watched.

    Raises:
        GitUnavailableError: git is missing or too old (a clear message at start, not at the first tool call).
        TrajectoryError, OSError: the project could not be opened for another reason than an untrusted shadow
            repository (which every tool then reports, :meth:`TrajectoryService.startup_failed`).
    """
    service, stop, open_project = prepare_service(project, debounce=debounce, journal_dir=journal_dir,
                                                  force_polling=force_polling, import_after=import_after)
    open_project()
    return service, stop


def prepare_service(project: str | None, *, debounce: float | None = None, journal_dir: Path | None = None,
                    force_polling: bool | None = None, import_after: threading.Event | None = None,
                    stop: StopRequest | None = None) -> tuple[TrajectoryService, StopRequest, Callable[[], None]]:
    """:func:`start_service` in two steps: the service made and stops handled here (on the main thread: signal
    handlers are set there; ``stop``: the request already installed, as :func:`serve` does before it answers the
    client's opening request), the project opened by the function returned (same arguments; it raises what
    :func:`start_service` raises), which may run on another thread."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.core.errors import UntrustedRepositoryError
    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import StopRequest
    from code_trajectory.git.gitcmd import check_git_version
    from code_trajectory.recording.service import TrajectoryService

    configure_logging()
    check_git_version()
    if project and "${" in project:  # a client that does not expand ${workspaceFolder} passes it as written
        log.warning("--project %r holds an unexpanded variable; following the client's roots instead", project)
        project = None
    elif project and os.path.isabs(project) and os.path.isdir(project):
        from code_trajectory.project import find_project_root

        project = str(find_project_root(project))  # a folder inside a repository records the repository
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=debounce),
                                force_polling=force_polling, journal_dir=journal_dir, follow_client=not project)
    if stop is None:
        stop = StopRequest()
        stop.install()
    threading.Thread(target=stop_on_request, args=(stop, service), name="trajectory-stop", daemon=True).start()

    def open_project() -> None:
        if not project:
            return
        # the server answers initialize, tools/list and queries while a large project is imported and watched (the
        # watches are set after the import, with a rescan for the gap: issue 29)
        try:
            session, _ = service.configure(project, background=True, watch_first=False, import_after=import_after)
        except UntrustedRepositoryError as exc:  # the server still answers; every tool says why, in the same line
            log.error("cannot record %s: %s", project, exc)
            service.startup_failed(exc)
        else:
            log.info("recording %s on shadow branch %s", session.root, session.branch)

    return service, stop, open_project


def run_server(project: str | None, *, debounce: float | None = None, journal_dir: Path | None = None,
               force_polling: bool | None = None, early: early_answer.EarlyAnswer | None = None,
               stop: StopRequest | None = None) -> int:
    """Run the MCP server over stdio until the client disconnects or stops it; returns the exit status.

    A restart's project is opened and its start-up scan started first (:func:`start_service`), a first import's
    project is opened beside the SDK's import (:func:`first_import`; the import itself starts once the server is
    built), then :func:`code_trajectory.server.serve_started` serves; ``early``: the client's stream as
    :func:`code_trajectory.early_answer.start` took it over (None: the SDK reads stdin); ``stop``: the stop request
    already installed (None: :func:`prepare_service` installs one).
    """
    built = threading.Event()

    def on_built() -> None:
        collect_after_start()
        built.set()

    gc.disable()  # until the server is built: see collect_after_start
    try:
        service, stop, open_project = prepare_service(project, debounce=debounce, journal_dir=journal_dir,
                                                      force_polling=force_polling, import_after=built, stop=stop)
        opening = in_background(open_project) if project and first_import(project) else None
        if opening is None:
            open_project()  # a restart: its start-up scan starts before the SDK is imported
        from code_trajectory.server import serve_started  # the SDK: imported while the start-up scan runs
        if opening is not None:
            opening()
    except BaseException:
        gc.enable()
        built.set()
        raise
    return serve_started(service, stop, journal_dir=journal_dir, started=on_built, early=early)


def first_import(project: str) -> bool:
    """True when ``project`` (as ``--project`` gives it) has no shadow repository yet: its opening (the shadow
    repository made, git asked whether ``.trajectory`` is tracked: ~0.2 s at 500,000 files, most of it waiting for
    git) runs beside the SDK's import (:func:`in_background`): nothing of a first import has to come before it (a
    large import starts once the server is built, a small one in the background; issue 29, ``initialize`` within
    1 s). A ``.trajectory`` of any kind, a dangling link included, is not a first import."""
    return not os.path.lexists(os.path.join(project, ".trajectory"))


def in_background(work: Callable[[], None]) -> Callable[[], None]:
    """Start ``work`` on a thread now; return the function that waits for it and raises what it raised."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - raised again on the waiting thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="trajectory-open", daemon=True)
    thread.start()

    def wait() -> None:
        thread.join()
        if failed:
            raise failed[0]

    return wait


def collect_after_start() -> None:
    """End the start-up's pause of the cyclic garbage collector (:func:`run_server` pauses it): freeze what the
    start-up made (modules, classes, the SDK's pydantic schemas: they live as long as the process) and collect
    again from here on.

    Importing the SDK builds hundreds of thousands of objects that live for good, and every automatic collection
    meanwhile walks them again: with the collector paused, ``python -c "import mcp"`` takes 0.69-0.80 s of CPU
    instead of 0.83-0.91 s (minimum and median of 10 runs alternating on this 2-core machine). ``gc.freeze`` keeps
    the later full collections from walking them again; the few cycles left over by the start-up stay.
    """
    gc.freeze()
    gc.enable()


def stop_on_request(stop: StopRequest, service: TrajectoryService) -> None:
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
    exit_now(0)


def _exit_late() -> None:
    log.error("stopping took over %.0f s; exiting without waiting further (the next start's scan records "
              "what was pending)", STOP_DEADLINE_SECONDS)
    exit_now(1)


def exit_now(status: int) -> None:
    """End the process with ``status`` now, after flushing stdout and stderr (no interpreter clean-up)."""
    for stream in (sys.stderr, sys.stdout):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
