"""Test runs of shared trajectories: the runs ``push`` sends beside a branch (those ``pull`` brought are read by
:func:`code_trajectory.testruns.store.pulled_runs`).

The format and its checks are share's (:mod:`code_trajectory.share.data`: JSON objects, bounded and cleaned, each
naming a commit of the pulled history). :func:`export_runs` is registered with
:func:`code_trajectory.share.data.on_export_test_runs` by :mod:`code_trajectory.wiring`.
"""

from __future__ import annotations

from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.testruns.store import redacted, runs_for


def export_runs(repo: ShadowRepo, commits: set[str]) -> list[dict]:
    """The runs recorded on ``commits`` (full ids of our own snapshots), as JSON objects, secrets redacted from their
    free text (:func:`~code_trajectory.testruns.store.redacted`: runs are stored redacted, and those stored before
    are redacted here)."""
    return [redacted(run).to_dict() for runs in runs_for(repo, sorted(commits), pulled=False).values()
            for run in runs]
