"""CLI commands of the history: ``log``, ``file``, ``session``, ``symbol``, ``search``, ``compare``.

Each command ``NAME`` is a pair ``NAME_arguments(parser)`` / ``NAME(args) -> int`` (see :mod:`code_trajectory.cli`).
"""

from __future__ import annotations

import argparse

from code_trajectory.project import add_project_option, typed_path
from code_trajectory.recording.commands import print_with_session


def add_source_option(parser: argparse.ArgumentParser) -> None:
    """``--source NAME``: read a shared trajectory (``code-trajectory list-trajectories`` lists them)."""
    parser.add_argument("--source", metavar="NAME",
                        help="a shared trajectory to read instead of ours, e.g. alice@example.com/main "
                             "(list-trajectories lists them)")


def _branch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--branch", metavar="BRANCH", help="a recorded branch (default: the current one)")
    add_source_option(parser)


def log_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    _branch_option(parser)
    parser.add_argument("--limit", type=int, default=20, help="maximum number of commits (default 20)")
    parser.add_argument("--since-consolidate", action="store_true", help="go back to the last consolidation")
    parser.add_argument("--before", metavar="SNAPSHOT", help="page back: the snapshots older than this one (id, "
                        "checkpoint name, ~N or a time)")


def log(args: argparse.Namespace) -> int:
    """Recent commits across the project (``get_global_trajectory``)."""
    from code_trajectory.history import service

    return print_with_session(args.project, lambda s: service.global_trajectory(s, args.limit, args.since_consolidate,
                                                                                      args.branch, args.source,
                                                                                      args.before),
                              read_only=True)


def file_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("filepath", metavar="PATH", help="file path, relative to the current directory in the project (as git reads it), else to its root")
    parser.add_argument("--depth", type=int, default=5, help="number of recent versions (default 5)")
    _branch_option(parser)


def file(args: argparse.Namespace) -> int:
    """How one file evolved (``get_file_trajectory``)."""
    from code_trajectory.history import service

    return print_with_session(args.project, lambda s: service.file_trajectory(
        s, typed_path(s.root, args.filepath), args.depth, args.branch, args.source), read_only=True)


def session_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    add_source_option(parser)


def session(args: argparse.Namespace) -> int:
    """Summary of the last session (``get_session_summary``)."""
    from code_trajectory.history import last_session

    return print_with_session(args.project, lambda s: last_session.full_session_summary(s, args.source), read_only=True)


def symbol_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("filepath", metavar="PATH", help="file path, relative to the current directory in the project (as git reads it), else to its root")
    parser.add_argument("symbol", metavar="SYMBOL", help="function, class or method, e.g. Serializer.loads")
    parser.add_argument("--depth", type=int, default=10, help="number of changes (default 10)")
    parser.add_argument("--baseline", action="store_true",
                        help="show the symbol's body as first recorded (default: one line, its size and first line)")
    parser.add_argument("--diffs", type=int, default=None, metavar="N",
                        help="newest changes shown with their lines (default 1); older ones are one line each")
    _branch_option(parser)


def symbol(args: argparse.Namespace) -> int:
    """How one function, class or method changed (``get_symbol_trajectory``)."""
    from code_trajectory.history import render_symbol, service

    diffs = render_symbol.DEFAULT_DIFFS if args.diffs is None else args.diffs
    return print_with_session(args.project, lambda s: service.symbol_trajectory(
        s, typed_path(s.root, args.filepath), args.symbol, args.depth, args.branch, args.source,
        show_baseline=args.baseline, diffs=diffs), read_only=True)


def search_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("query", metavar="TEXT", help="text to find (a regular expression with --regex)")
    parser.add_argument("--regex", action="store_true", help="treat TEXT as a regular expression (git log -G)")
    parser.add_argument("--path", metavar="PATH", help="only this file or directory")
    parser.add_argument("--since", metavar="TIME", help="ISO 8601 time or '2 hours ago'")
    parser.add_argument("--limit", type=int, default=20, help="number of snapshots (default 20)")
    _branch_option(parser)


def search(args: argparse.Namespace) -> int:
    """Snapshots that added or removed matching text (``search_trajectory``)."""
    from code_trajectory.history import service

    return print_with_session(args.project, lambda s: service.search_trajectory(
        s, args.query, args.regex, args.path and typed_path(s.root, args.path), args.since, args.limit, args.branch,
        args.source), read_only=True)


def compare_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("from_snapshot", metavar="FROM", help="commit id (abc1234~2 counts back from it), checkpoint "
                                                              "message, ~N, 'start of recording' or a time")
    parser.add_argument("to_snapshot", metavar="TO", nargs="?", default="now", help="the same, or now (default)")
    parser.add_argument("--file", dest="filepath", metavar="PATH", help="one file, relative to the current directory in the project (as git reads it), else to its root")
    add_source_option(parser)


def compare(args: argparse.Namespace) -> int:
    """The change between two snapshots or a snapshot and the work tree (``compare``)."""
    from code_trajectory.history import service

    return print_with_session(args.project, lambda s: service.compare(
        s, args.from_snapshot, args.to_snapshot, args.filepath and typed_path(s.root, args.filepath), args.source),
        read_only=True)
