"""Test runs of shared trajectories: the runs ``push`` sends beside a branch, and the runs ``pull`` brought.

The format and its checks are share's (:mod:`code_trajectory.share.data`: JSON objects, bounded and cleaned, each
naming a commit of the pulled history); a run read back is rebuilt with :meth:`TestRun.from_dict`, which keeps only
fields of the right type. :func:`export_runs` is registered with
:func:`code_trajectory.share.data.on_export_test_runs` by :mod:`code_trajectory.wiring`.
"""

from __future__ import annotations

from collections.abc import Iterable

from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.share.data import pulled_test_runs
from code_trajectory.testruns.model import TestRun


def export_runs(repo: ShadowRepo, commits: set[str]) -> list[dict]:
    """The runs recorded on ``commits`` (full ids of our own snapshots), as JSON objects."""
    from code_trajectory.testruns.store import runs_for

    return [run.to_dict() for runs in runs_for(repo, sorted(commits), pulled=False).values() for run in runs]


def pulled_runs(repo: ShadowRepo, commits: Iterable[str] | None = None) -> dict[str, list[TestRun]]:
    """``{commit: runs}`` (oldest first) that pulled sources recorded on ``commits`` (all when None)."""
    result: dict[str, list[TestRun]] = {}
    for commit, items in pulled_test_runs(repo, commits).items():
        runs = []
        for item in items:
            try:
                run = TestRun.from_dict(item)
            except ValueError:
                continue
            run.commit = commit
            runs.append(run)
        if runs:
            result[commit] = runs
    return result
