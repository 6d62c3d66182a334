"""CLI commands of sharing: ``push``, ``pull``, ``list-trajectories``.

Each command ``NAME`` is a pair ``NAME_arguments(parser)`` / ``NAME(args) -> int`` (see :mod:`code_trajectory.cli`).
``push`` and ``pull`` exit with status 0 when they did what was asked (including "nothing to push"); a
refused push or an unreachable remote is an error (status 2, one line on stderr).
"""

from __future__ import annotations

import argparse
import sys

from code_trajectory.project import add_project_option


def _interactive() -> bool:
    """git may prompt for a password only when a person is at a terminal."""
    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()


def push_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("--remote", metavar="NAME",
                        help="the project's git remote to push to (default: the current branch's upstream "
                             "remote, else origin)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the refs and the size that would go; write nothing")
    parser.add_argument("--consolidated", action="store_true", default=None,
                        help="push each branch only up to its last [CONSOLIDATE] commit")
    parser.add_argument("--allow-secrets", action="store_true",
                        help="push even when a snapshot to send holds a token-format secret (refused otherwise)")


def push(args: argparse.Namespace) -> int:
    """Push this project's shadow history to refs/trajectory/<author-id>/<branch> on its git remote."""
    from code_trajectory.project import project_from_option
    from code_trajectory.share.push import push as run_push

    report = run_push(project_from_option(args.project), remote=args.remote, dry_run=args.dry_run,
                      consolidated=args.consolidated, interactive=_interactive(),
                      allow_secrets=args.allow_secrets)
    print(report.text())
    return 0


def pull_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)
    parser.add_argument("--remote", metavar="NAME",
                        help="the project's git remote to fetch from (default: the current branch's upstream "
                             "remote, else origin)")


def pull(args: argparse.Namespace) -> int:
    """Fetch others' trajectories into refs/remotes-trajectory/<author-id>/<branch> (read-only)."""
    from code_trajectory.project import project_from_option
    from code_trajectory.share.pull import pull as run_pull

    report = run_pull(project_from_option(args.project), remote=args.remote, interactive=_interactive())
    print(report.text())
    return 0


def list_trajectories_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_option(parser)


def list_trajectories(args: argparse.Namespace) -> int:
    """The trajectories readable here: ours and pulled ones, with last snapshot time and intent."""
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.project import project_from_option
    from code_trajectory.share.push import require_shadow_repo
    from code_trajectory.share.service import sources_text

    with ShadowRepo(project_from_option(args.project)) as repo:
        require_shadow_repo(repo)
        print(sources_text(repo))
    return 0
