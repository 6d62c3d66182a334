"""The ``code-trajectory`` command line: a thin front end over :mod:`code_trajectory.service`.

Only the standard library is imported at start; each command imports what it
needs, so ``code-trajectory recap`` starts without the MCP SDK or the watcher.
Errors print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

# argparse is imported inside build_parser(): `code-trajectory recap` must start fast. With
# postponed annotations, `argparse.Namespace` in signatures below is never evaluated.

EXIT_ERROR = 2


def _add_project(parser: argparse.ArgumentParser) -> None:  # noqa: F821
    parser.add_argument("--project", default=".", metavar="PATH",
                        help="project directory (default: the current directory)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every trajectory command (``recap`` and ``journal`` parse their own)."""
    import argparse  # imported here: `recap` must start fast and never needs it

    class Parser(argparse.ArgumentParser):
        """Usage errors as one line on stderr, exit status 2, like every other error of the CLI."""

        def error(self, message: str) -> None:  # type: ignore[override]
            self.exit(EXIT_ERROR, f"code-trajectory: error: {message} (see `{self.prog} --help`)\n")

    parser = Parser(
        prog="code-trajectory",
        description="A memory of how a codebase evolved and why, for coding agents (MCP server and CLI).")
    from code_trajectory import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    p = sub.add_parser("serve", help="run the MCP server over stdio")
    p.add_argument("--project", metavar="PATH", help="configure this project at start")
    p.add_argument("--debounce", type=float, metavar="SECONDS", help="quiet time before a snapshot (default 2.0)")
    p.add_argument("--journal-dir", type=Path, metavar="DIR", help="journal repository (default <home>/journal)")

    p = sub.add_parser("watch", help="record a project in the foreground, one line per snapshot")
    p.add_argument("path", metavar="PATH", help="project directory")
    p.add_argument("--debounce", type=float, metavar="SECONDS", help="quiet time before a snapshot (default 2.0)")
    p.add_argument("--poll", action="store_true", help="poll the file system instead of native events")

    p = sub.add_parser("log", help="recent commits across the project (get_global_trajectory)")
    _add_project(p)
    p.add_argument("--limit", type=int, default=20, help="maximum number of commits (default 20)")
    p.add_argument("--since-consolidate", action="store_true", help="go back to the last consolidation")

    p = sub.add_parser("file", help="how one file evolved (get_file_trajectory)")
    _add_project(p)
    p.add_argument("filepath", metavar="PATH", help="file path relative to the project root")
    p.add_argument("--depth", type=int, default=5, help="number of recent versions (default 5)")

    p = sub.add_parser("session", help="summary of the last session (get_session_summary)")
    _add_project(p)

    p = sub.add_parser("intent", help="set the intent recorded with the next snapshots")
    _add_project(p)
    p.add_argument("text", metavar="TEXT")

    p = sub.add_parser("consolidate", help="squash the trailing snapshots into one [CONSOLIDATE] commit")
    _add_project(p)
    p.add_argument("intent", metavar="INTENT")

    p = sub.add_parser("checkpoint", help="snapshot the project now")
    _add_project(p)
    p.add_argument("--message", "-m", help="note stored with the snapshot")

    p = sub.add_parser("status", help="shadow repository facts: branches, snapshots, size")
    _add_project(p)

    p = sub.add_parser("test", help="snapshot, run a test command, record its outcome; exits with its status",
                       usage="code-trajectory test [--project PATH] -- COMMAND [ARGS...]")
    p.add_argument("--project", metavar="PATH", help="project directory (default: found from the current directory)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="kill the command after this long")
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND", help="the test command, after --")

    p = sub.add_parser("test-history", help="recorded test runs (get_test_history)")
    _add_project(p)
    p.add_argument("--limit", type=int, default=10, help="number of runs (default 10)")

    p = sub.add_parser("since-green", help="what changed since the last green test run (diff_since_green)")
    _add_project(p)
    p.add_argument("filepath", nargs="?", metavar="PATH", help="one file relative to the project root")

    sub.add_parser("recap", help="goal, decisions, insights, risks of the current work (see `recap --help`)",
                   add_help=False)
    sub.add_parser("journal", help="the journal of what was learned (see `journal --help`)", add_help=False)
    return parser


def _session(project: str, **overrides):
    from code_trajectory.config import TrajectorySettings
    from code_trajectory.service import ProjectSession, resolve_project_root

    root = resolve_project_root(Path(project).expanduser().absolute())
    return ProjectSession(root, TrajectorySettings.load(root, **overrides))


def _watch(args: argparse.Namespace) -> int:
    import logging
    import signal
    import threading

    from code_trajectory.config import TrajectorySettings
    from code_trajectory.server import configure_logging
    from code_trajectory.service import ProjectSession, resolve_project_root

    configure_logging(logging.WARNING)
    root = resolve_project_root(Path(args.path).expanduser().absolute())
    settings = TrajectorySettings.load(root, debounce_seconds=args.debounce)

    def show(snapshot) -> None:
        print(f"{snapshot.commit[:12]} {snapshot.branch}: {snapshot.subject}", flush=True)

    session = ProjectSession(root, settings, watch=True, on_snapshot=show, force_polling=args.poll or None)
    progress = _progress_printer()
    try:
        first = session.start(progress=progress)
    finally:
        progress.close()
    if first is not None:
        show(first)
    print(f"watching {root} (debounce {settings.debounce_seconds:g} s); Ctrl-C to stop", file=sys.stderr, flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    while not done.wait(0.5):
        if session.watcher is not None and not session.watcher.running:
            print(f"watcher stopped: {session.watcher.last_error}", file=sys.stderr)
            break
    session.close()
    return 0


class _progress_printer:
    """Progress of the start-up scan on stderr with a rich progress bar (only on a terminal)."""

    def __init__(self) -> None:
        self._progress = None
        self._task = None
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


def _status(args: argparse.Namespace) -> int:
    from code_trajectory.status import project_status

    print(project_status(Path(args.project)))
    return 0


def _test(args: argparse.Namespace) -> int:  # noqa: F821
    from code_trajectory import testruns
    from code_trajectory.config import TrajectorySettings
    from code_trajectory.errors import InvalidArgumentError
    from code_trajectory.service import resolve_project_root

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise InvalidArgumentError("give the test command after --, e.g. code-trajectory test -- pytest -q")
    start = Path(args.project).expanduser().absolute() if args.project else Path.cwd()
    root = resolve_project_root(testruns.find_project_root(start) if not args.project else start)
    test_run, status = testruns.run_and_record(root, argv, TrajectorySettings.load(root), cwd=Path.cwd(),
                                               timeout=args.timeout)
    if test_run.record_error:
        print(f"code-trajectory: the run was not recorded: {test_run.record_error}", file=sys.stderr)
    else:
        print(f"code-trajectory: recorded on `{(test_run.commit or '?')[:12]}`: {test_run.summary_line()}",
              file=sys.stderr)
    return status


def run(argv: list[str]) -> int:
    """Run one command; returns the exit status."""
    if argv and argv[0] == "recap":
        from code_trajectory.recap_cli import main as recap_main

        return recap_main(argv[1:])
    if argv and argv[0] == "journal":
        from code_trajectory.journal_cli import main as journal_main

        return journal_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command != "serve":
        # file names and intents may hold bytes that are not UTF-8: show them escaped, never crash on them
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
    if args.command == "serve":
        from code_trajectory.server import serve

        return serve(args.project, debounce=args.debounce, journal_dir=args.journal_dir)
    if args.command == "watch":
        return _watch(args)
    if args.command == "status":
        return _status(args)
    if args.command == "test":
        return _test(args)
    session = _session(args.project)
    try:
        if args.command == "log":
            text = session.global_trajectory(args.limit, args.since_consolidate)
        elif args.command == "file":
            text = session.file_trajectory(args.filepath, args.depth)
        elif args.command == "session":
            recap_text = None
            try:
                from code_trajectory import recap

                recap_text = recap.recap_for_summary(session.root)
            except ImportError:
                pass
            text = session.session_summary(recap=recap_text)
        elif args.command == "intent":
            text = session.set_intent(args.text)
        elif args.command == "consolidate":
            text = session.consolidate(args.intent)
        elif args.command == "checkpoint":
            text = session.checkpoint(args.message)
        elif args.command == "test-history":
            text = session.test_history(args.limit)
        elif args.command == "since-green":
            text = session.diff_since_green(args.filepath)
        else:  # pragma: no cover - argparse rejects unknown commands
            raise AssertionError(args.command)
    finally:
        session.close()
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    from code_trajectory.errors import TrajectoryError

    try:
        return run(sys.argv[1:] if argv is None else argv)
    except TrajectoryError as exc:
        print(f"code-trajectory: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
