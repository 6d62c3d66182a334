"""The ``install`` and ``uninstall`` commands of the ``code-trajectory`` CLI.

The CLI builds one sub-parser per command, lets :func:`install_arguments` /
:func:`uninstall_arguments` add the arguments, and calls :func:`install` / :func:`uninstall` with
the parsed namespace. They print a short human text on stdout and return 0; failures are raised as
:class:`code_trajectory.core.errors.TrajectoryError` (the CLI prints them as one line and exits 2)::

    code-trajectory install CLIENT [--project P] [--hooks] [--local] [--dry-run]
    code-trajectory uninstall CLIENT [--project P] [--local] [--dry-run]

Only the standard library is imported here, so the commands start fast.
"""

from __future__ import annotations

import argparse

from code_trajectory.clients.registry import CLIENTS

_CLIENT_HELP = "the MCP client to set up: " + ", ".join(CLIENTS)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", metavar="CLIENT", choices=list(CLIENTS), help=_CLIENT_HELP)
    parser.add_argument("--project", metavar="PATH", default=None,
                        help="project directory (default: the project of the current directory, found as git finds its "
                             "repository: the top of the work tree, not a subdirectory)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the change as a unified diff and write nothing")
    parser.add_argument("--local", action="store_true",
                        help="claude-code, codex, zed: this machine's set-up in the user's own files, with the "
                             "absolute executable, instead of the shared project files (Claude Code's local scope "
                             "in ~/.claude.json and .claude/settings.local.json; ~/.codex/config.toml; Zed's user "
                             "settings.json)")


def install_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``CLIENT``, ``--project``, ``--hooks``, ``--local`` and ``--dry-run`` to ``parser``."""
    _common(parser)
    parser.add_argument("--hooks", action="store_true",
                        help="claude-code, gemini, codex: also add code-trajectory's hooks to the project's hook "
                             "settings (.claude/settings.json, .gemini/settings.json, .codex/hooks.json)")


def uninstall_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``CLIENT``, ``--project``, ``--local`` and ``--dry-run`` to ``parser``."""
    _common(parser)


def install(args: argparse.Namespace) -> int:
    """Run ``install`` for ``args`` (``client``, ``project``, ``hooks``, ``dry_run``; ``exe`` optional).

    Prints what changed where and how to undo it; returns 0.

    Raises:
        TrajectoryError: see :func:`code_trajectory.clients.install.install`.
    """
    from code_trajectory.clients import install as _install

    changes = _install.install(args.client, getattr(args, "project", None), exe=getattr(args, "exe", None),
                               hooks=bool(getattr(args, "hooks", False)), local=bool(getattr(args, "local", False)),
                               dry_run=bool(getattr(args, "dry_run", False)))
    print(_install.render(changes))
    return 0


def uninstall(args: argparse.Namespace) -> int:
    """Run ``uninstall`` for ``args`` (``client``, ``project``, ``dry_run``); print the result; return 0.

    Raises:
        TrajectoryError: see :func:`code_trajectory.clients.install.uninstall`.
    """
    from code_trajectory.clients import install as _install

    changes = _install.uninstall(args.client, getattr(args, "project", None),
                                 local=bool(getattr(args, "local", False)),
                                 dry_run=bool(getattr(args, "dry_run", False)))
    print(_install.render(changes))
    return 0
