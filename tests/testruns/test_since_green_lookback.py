"""``diff_since_green`` for one file reads the file's newest ``LOOKBACK + 1`` versions, as ``get_file_trajectory``
does (issue 29: it read every version of the file and every commit since the green run): more than ``LOOKBACK``
since the green run are said as "more than", fewer are all listed (in process, ``LOOKBACK`` lowered to 40)."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import file_versions
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import versions as versions_module
from code_trajectory.recording.session import ProjectSession
from code_trajectory.testruns import report, store
from code_trajectory.testruns.model import TestRun
from code_trajectory.testruns.scope import Scope
from support.ui import build_history

REF = "refs/heads/shadow/main"
PATH = "src/pkg0/module_000.py"
LOOKBACK = 40  # for the test: versions_module.LOOKBACK is 300


def _green_on(root: Path, commit: str, started_at: str) -> None:
    with ShadowRepo(root) as repo:
        store.record_run(repo, TestRun(command="pytest -q", outcome="passed", exit_code=0, passed=3, runner="pytest",
                                       commit=commit, branch="main", scope=Scope.full(), started_at=started_at))


def _since_green(root: Path) -> str:
    session = ProjectSession(root, TrajectorySettings.load(root), create=False)
    try:
        return str(report.diff_since_green(session, PATH))
    finally:
        session.close()


def test_a_file_changed_more_than_lookback_times_since_the_green_run_says_more_than(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions_module, "LOOKBACK", LOOKBACK)  # 300 parsed versions would take a minute
    build_history(project, 3 * LOOKBACK, files=2)
    with ShadowRepo(project) as repo:
        versions = file_versions.file_history(repo, repo.resolve(REF), PATH)
    assert len(versions) > LOOKBACK + 1
    old = versions[-2].record.oid
    _green_on(project, old, "2026-01-10T10:00:00+00:00")  # nearly every version is newer
    answer = _since_green(project)
    assert f"the last {LOOKBACK} of more than {LOOKBACK} recorded change(s)" in answer, answer[:600]
    assert "Last green run for the full suite" in answer and old[:12] in answer, answer[:600]
    recent = versions[20].record.oid  # 20 versions since: all of them, counted
    _green_on(project, recent, "2026-01-10T11:00:00+00:00")
    answer = _since_green(project)
    assert "the last 20 of 20 change(s) to this file since the green run" in answer and recent[:12] in answer, \
        answer[:400]
