"""The start of recording in the recent log: its changes (every file of the project) are read only when few; a large
one is counted from its tree (at 500,000 files the changes took 0.5 GB of Python objects), and its heading still
says how many files it holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import log
from code_trajectory.git.shadow import shadow_ref
from code_trajectory.history import recent
from code_trajectory.recording.recorder import Recorder
from support import subprocess_env, write


def recorded(project: Path) -> Recorder:
    for i in range(5):
        write(project, f"src/m{i}.py", f"VALUE = {i}\n")
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()  # the start of recording: 5 files
    write(project, "src/m0.py", "VALUE = 10\n")
    recorder.reconcile()
    return recorder


def test_a_large_root_is_counted_not_read(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = recorded(project)
    try:
        repo, ref = recorder.repo, shadow_ref(recorder.project.current_branch())
        records = log.read_log(repo, [ref], root_changes=False)
        assert [len(r.changes) for r in records] == [1, 0]
        files = len(log.read_log(repo, [records[-1].oid], limit=1)[0].changes)  # the project's files and src/m*
        assert files >= 5
        monkeypatch.setattr(log, "ROOT_CHANGES_READ", files - 1)
        log.read_root_changes(repo, records)
        root = records[-1]
        assert root.changes == [] and root.files_not_read == files and root.change_count == files
        text = recent.render(records, "main", 4000, since_consolidate=False, reached_consolidation=False,
                             more_available=False)
        assert f"start of recording: {files} file(s)" in text and "src/m3.py" not in text
    finally:
        recorder.close()


def test_a_small_root_is_read_and_listed(project: Path) -> None:
    recorder = recorded(project)
    try:
        repo, ref = recorder.repo, shadow_ref(recorder.project.current_branch())
        records = log.read_log(repo, [ref], root_changes=False)
        log.read_root_changes(repo, records)
        paths = {c.path for c in records[-1].changes}
        assert paths >= {f"src/m{i}.py" for i in range(5)} and records[-1].files_not_read is None
    finally:
        recorder.close()
    done = subprocess.run([sys.executable, "-m", "code_trajectory", "log", "--project", str(project)],
                          capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"start of recording: {len(paths)} file(s)" in done.stdout, done.stdout
