"""Test runs of shared trajectories: the runs ``push`` sends beside a branch (those ``pull`` brought are read by
:func:`code_trajectory.testruns.store.pulled_runs`).

The format and its checks are share's (:mod:`code_trajectory.share.data`: JSON objects, bounded and cleaned, each
naming a commit of the pulled history). :func:`export_runs` is registered with
:func:`code_trajectory.share.data.on_export_test_runs` by :mod:`code_trajectory.wiring`.
"""

from __future__ import annotations

from code_trajectory.core.secrets import redact
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.testruns.store import runs_for

#: Free-text fields of a run that leave the machine with ``push`` only after :func:`redact` (a test may print a
#: token; the recorder's deny list keeps secret files out of snapshots, not out of a run's output).
REDACTED_FIELDS = ("command", "output_tail", "message")


def export_runs(repo: ShadowRepo, commits: set[str]) -> list[dict]:
    """The runs recorded on ``commits`` (full ids of our own snapshots), as JSON objects, secrets redacted from their
    free text (:data:`REDACTED_FIELDS` and the failing tests' reasons)."""
    exported = []
    for runs in runs_for(repo, sorted(commits), pulled=False).values():
        for run in runs:
            data = run.to_dict()
            for name in REDACTED_FIELDS:
                if isinstance(data.get(name), str):
                    data[name] = redact(data[name])
            data["failures"] = [[test, redact(reason)] for test, reason in run.failures]
            exported.append(data)
    return exported
