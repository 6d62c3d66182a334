"""The composition of the capabilities: the built-in handlers of the hooks the lower layers declare.

Dependencies run one way (see the README's architecture section; ``pyproject.toml``'s ``[tool.importlinter]``
contract checks it): a lower package declares a hook (:mod:`code_trajectory.recording.hooks`,
:mod:`code_trajectory.history.hooks`), a higher one provides the handler, and this module, above them all,
registers the handlers. :func:`install` is called once per process by :func:`code_trajectory.cli.run` (every
command, ``serve`` included) and by :func:`code_trajectory.server.build_server` (a server built in-process), so the
one-shot commands, ``watch``, the hooks and the MCP server behave the same.

Each handler imports its capability when it first runs: installing costs a command nothing it does not use
(``code-trajectory recap`` and the client hooks start without the watcher or the MCP SDK).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from code_trajectory.history import hooks as history_hooks
from code_trajectory.recording import hooks as recording_hooks
from code_trajectory.share import hooks as share_hooks

if TYPE_CHECKING:
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.recording.session import ProjectSession


def install() -> None:
    """Register the built-in handlers (idempotent).

    * a consolidation carries the last squashed snapshot's test runs to the new commit, then pushes when
      ``[share] auto_push = true``;
    * ``code-trajectory status`` adds what is shared where;
    * the file and global trajectories mark snapshots with their test runs (pulled ones' too) and with the named
      points of pulled trajectories, and the session summary shows the ``## Tests`` section (a shared
      trajectory's for ``source``);
    * ``push`` sends the test runs of the pushed snapshots beside each branch.
    """
    recording_hooks.on_consolidated(_carry_test_runs)
    recording_hooks.on_consolidated(_auto_push)
    recording_hooks.on_status(_share_status)
    history_hooks.on_commit_marks(_test_marks)
    history_hooks.on_commit_marks(_shared_point_marks)
    history_hooks.on_summary_section(_tests_section)
    history_hooks.on_source_summary_section(_source_tests_section)
    share_hooks.on_export_test_runs(_export_test_runs)


def _carry_test_runs(event: recording_hooks.Consolidated) -> None:
    from code_trajectory.testruns.store import carry_runs

    carry_runs(event)


def _auto_push(event: recording_hooks.Consolidated) -> None:
    from code_trajectory.share.push import push_after_consolidation

    push_after_consolidation(event)


def _share_status(root: Path) -> list[str]:
    from code_trajectory.share.service import share_status_lines

    return share_status_lines(root)


def _test_marks(repo: ShadowRepo, commits: list[str]) -> dict[str, str]:
    from code_trajectory.testruns.store import marks_for

    return marks_for(repo, commits)


def _tests_section(session: ProjectSession) -> str | None:
    from code_trajectory.testruns.report import tests_section

    return tests_section(session)


def _shared_point_marks(repo: ShadowRepo, commits: list[str]) -> dict[str, str]:
    from code_trajectory.share.data import point_marks

    return point_marks(repo, commits)


def _source_tests_section(session: ProjectSession, source: str) -> str | None:
    from code_trajectory.testruns.report import tests_section

    return tests_section(session, source=source)


def _export_test_runs(repo: ShadowRepo, commits: set[str]) -> list[dict]:
    from code_trajectory.testruns.shared import export_runs

    return export_runs(repo, commits)
