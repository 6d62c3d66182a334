"""CLI command of restore: ``restore [--project P] [--dry-run] [--force] SNAPSHOT [PATH...]``."""

from __future__ import annotations

import argparse

from code_trajectory.project import add_project_option, typed_path


def restore_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("--dry-run", action="store_true", help="show the diff that would be applied; write nothing")
    parser.add_argument("--force", action="store_true", help="restore even during a merge, rebase or cherry-pick")
    parser.add_argument("snapshot", metavar="SNAPSHOT",
                        help="commit id (abc1234~2 counts back from it), checkpoint message, ~N (N snapshots "
                             "back), 'start of recording' or a time ('10 minutes ago')")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files, directories or globs (default: all), "
                                                                  "relative to the current directory")


def restore(args: argparse.Namespace) -> int:
    """Restore files (or the whole project) from a snapshot; prints what changed and the safety snapshot."""
    from code_trajectory.recording.commands import print_with_session
    from code_trajectory.restore import service

    return print_with_session(args.project, lambda s: service.restore(s, args.snapshot,
                                                                      [typed_path(s.root, p) for p in args.paths]
                                                                      or None,
                                                                      dry_run=args.dry_run, force=args.force).text,
                              create=False)
