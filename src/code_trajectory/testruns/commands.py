"""CLI commands of test status: ``test``, ``test-history``, ``since-green``.

Each command ``NAME`` is a pair ``NAME_arguments(parser)`` / ``NAME(args) -> int`` (see :mod:`code_trajectory.cli`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from code_trajectory.project import add_project_option, typed_path
from code_trajectory.recording.commands import print_with_session


def test_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "code-trajectory test [--project PATH] [--timeout SECONDS] [--full-suite] -- COMMAND [ARGS...]"
    add_project_option(parser)
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="kill the command after this long")
    parser.add_argument("--full-suite", action="store_true",
                        help="the command runs the whole suite (a script of the project's own, ./run_tests.sh): a "
                             "pass proves the snapshot green; a selection read from the command still wins")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND", help="the test command, after --")


def test(args: argparse.Namespace) -> int:
    """Snapshot, run the test command (output passed through), record its outcome; exit with its status."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.core.errors import InvalidArgumentError
    from code_trajectory.project import project_from_option
    from code_trajectory.testruns.service import run_and_record

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise InvalidArgumentError("give the test command after --, e.g. code-trajectory test -- pytest -q")
    if args.timeout is not None and not 0 < args.timeout < float("inf"):  # NaN too: not a time to wait
        raise InvalidArgumentError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    root = project_from_option(args.project)
    test_run, status = run_and_record(root, argv, TrajectorySettings.load(root), cwd=Path.cwd(),
                                      timeout=args.timeout, full_suite=args.full_suite)
    if test_run.record_error:
        print(f"code-trajectory: the run was not recorded: {test_run.record_error}", file=sys.stderr)
    else:
        # partial: said in the line; a run that never started (a command not found...) has no scope worth a hint
        started = not (test_run.outcome == "error" and test_run.exit_code == 127)
        scope = "" if test_run.scope.kind == "partial" or not started else f" ({test_run.scope.label()})"
        print(f"code-trajectory: recorded on `{(test_run.commit or '?')[:12]}`{scope}: {test_run.summary_line()}",
              file=sys.stderr)
    return status


def _branch_option(parser: argparse.ArgumentParser) -> None:
    from code_trajectory.history.commands import add_source_option

    parser.add_argument("--branch", metavar="BRANCH", help="a recorded branch (default: the current one)")
    add_source_option(parser)


def test_history_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("--limit", type=int, default=10, help="number of runs (default 10)")
    _branch_option(parser)


def test_history(args: argparse.Namespace) -> int:
    """Recorded test runs (``get_test_history``)."""
    from code_trajectory.testruns import report

    return print_with_session(args.project, lambda s: report.test_history(s, args.limit, args.branch, args.source), read_only=True)


def since_green_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("filepath", nargs="?", metavar="PATH", help="one file, relative to the current directory in the project (as git reads it), else to its root")
    _branch_option(parser)
    parser.add_argument("--scope", metavar="SCOPE", help="'full' (default) or pytest selection arguments relative "
                                                         "to the project root, e.g. 'tests/test_api.py -k login'")


def since_green(args: argparse.Namespace) -> int:
    """What changed since the last snapshot green for ``--scope`` (default: the full suite; ``diff_since_green``)."""
    from code_trajectory.testruns import report

    return print_with_session(args.project, lambda s: report.diff_since_green(
        s, args.filepath and typed_path(s.root, args.filepath), args.branch, args.scope, args.source), read_only=True)
