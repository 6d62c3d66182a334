"""CLI commands of recording: ``watch``, ``intent``, ``checkpoint``, ``consolidate``, ``status``.

Each command ``NAME`` is a pair ``NAME_arguments(parser)`` / ``NAME(args) -> int`` (see :mod:`code_trajectory.cli`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from code_trajectory.project import add_project_option

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def open_session(project_option: str | None, *, create: bool = True, read_only: bool = False, **overrides):
    """A one-shot :class:`~code_trajectory.recording.session.ProjectSession` for a command (no watcher).

    Args:
        project_option: ``--project`` as given (None: the current directory); the project is found upward.
        create: create the shadow repository when missing; False never starts a history (a
            :class:`ProjectError` says how to start recording).
        read_only: the command only reads (``log``, ``search``...): as ``create=False``, and the opening changes
            nothing, not even a damaged history, which is an error (``DamagedHistoryError``) left as it was.
        overrides: settings given on the command line.
    """
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.project import project_from_option
    from code_trajectory.recording.session import ProjectSession

    root = project_from_option(project_option)
    return ProjectSession(root, TrajectorySettings.load(root, **overrides), create=create, read_only=read_only)


def print_with_session(project_option: str | None, operation, *, create: bool = True, read_only: bool = False) -> int:
    """Open the project of ``--project``, print ``operation(session)`` (markdown), close it; return 0.

    ``create=False``: a project with no shadow repository is an error, not a new history. ``read_only=True`` for
    the commands that only read: the same, and the opening changes nothing (see :func:`open_session`).
    """
    session = open_session(project_option, create=create, read_only=read_only)
    try:
        text = operation(session)
    finally:
        session.close()
    print(text)
    return 0


def watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", nargs="?", default=None,
                        help="project directory, recorded as given (default: the project found from the current "
                             "directory, as git finds its repository)")
    parser.add_argument("--debounce", type=float, metavar="SECONDS", help="quiet time before a snapshot (default 2.0)")
    parser.add_argument("--poll", action="store_true", help="poll the file system instead of native events")


def watch(args: argparse.Namespace) -> int:
    """Record a project in the foreground, one line per snapshot, until Ctrl-C, SIGTERM, SIGHUP, or the end of
    stdin when stdin is a pipe (see :meth:`~code_trajectory.core.shutdown.StopRequest.watch_stdin`). The pending
    changes are then snapshotted at once and the status is 0.

    Raises:
        TrajectoryError: the start-up scan failed.
    """
    import logging

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import StopRequest
    from code_trajectory.project import find_project_root, resolve_project_root
    from code_trajectory.recording.session import ProjectSession

    configure_logging(logging.WARNING)
    if args.path is None:
        root = resolve_project_root(find_project_root(Path.cwd()))
    else:
        root = resolve_project_root(Path(args.path).expanduser().absolute())
    settings = TrajectorySettings.load(root, debounce_seconds=args.debounce)

    def show(snapshot) -> None:
        print(f"{snapshot.commit[:12]} {snapshot.branch}: {snapshot.subject}", flush=True)

    stop = StopRequest()
    stop.install()  # before the start-up scan: a stop during it ends the scan's child and loses nothing
    stop.watch_stdin()
    session = ProjectSession(root, settings, watch=True, on_snapshot=show, force_polling=args.poll or None)
    try:
        progress = _ProgressPrinter()
        try:
            session.start(progress=progress, background=True)
            while not session.wait_started(0.1) and not stop.requested:
                pass
        finally:
            progress.close()
        if session.import_error is not None and not stop.requested:
            raise session.import_error
        if session.startup_snapshot is not None:
            show(session.startup_snapshot)
        if not stop.requested:
            print(f"watching {root} (debounce {settings.debounce_seconds:g} s); Ctrl-C to stop", file=sys.stderr,
                  flush=True)
        while not stop.wait(0.5):
            if session.watcher is not None and not session.watcher.running:
                print(f"watcher stopped: {session.watcher.last_error}", file=sys.stderr)
                break
    finally:
        session.close()  # a second signal meanwhile is only counted: it does not interrupt the last snapshot
        stop.ignore()  # stopped: a late signal must not turn status 0 into death by that signal
    return 0


class _ProgressPrinter:
    """Progress of the start-up scan on stderr with a rich progress bar (only on a terminal)."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._progress.start()

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if self._progress is None:
            return
        label = {"scan": "scanning files", "hash": "storing contents", "write": "writing trees"}.get(phase, phase)
        if self._task is None:
            self._task = self._progress.add_task(label, total=total)
        self._progress.update(self._task, description=label, completed=done, total=total)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def intent_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("text", metavar="TEXT", nargs="+", help="the intent; several words need no quotes")


def intent(args: argparse.Namespace) -> int:
    """Set the intent recorded with the next snapshots (a running ``watch``/``serve`` picks it up). An empty one is
    refused before the project is opened (which would create ``.trajectory/`` in a project nothing recorded)."""
    from code_trajectory.recording.intent import checked_intent

    checked_intent(" ".join(args.text))
    return print_with_session(args.project, lambda session: session.set_intent(" ".join(args.text)))


def consolidate_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("intent", metavar="INTENT")


def consolidate(args: argparse.Namespace) -> int:
    """Squash the trailing snapshots into one ``[CONSOLIDATE]`` commit."""
    return print_with_session(args.project, lambda session: session.consolidate(args.intent), create=False)


def checkpoint_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("--message", "-m", help="note stored with the snapshot")


def checkpoint(args: argparse.Namespace) -> int:
    """Snapshot the project now."""
    return print_with_session(args.project, lambda session: session.checkpoint(args.message))


def status_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)


def status(args: argparse.Namespace) -> int:
    """Facts about the shadow repository: branches, snapshot counts, size, maintenance; then what the capabilities
    add (:func:`code_trajectory.recording.hooks.on_status`: what is shared where)."""
    from code_trajectory.project import project_from_option
    from code_trajectory.recording.hooks import status_lines
    from code_trajectory.recording.status import project_status

    root = project_from_option(args.project)
    print("\n".join([project_status(root), *status_lines(root)]))  # sharing: see code_trajectory.wiring
    return 0
