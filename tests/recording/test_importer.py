"""The start-up import of a project runs in a child process (its memory goes back to the system when it exits)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import StorageError
from code_trajectory.recording import importer
from code_trajectory.recording.session import ProjectSession
from support import git, shadow_count, write


def test_the_import_of_a_new_project_is_written_by_a_child_process(project: Path, monkeypatch) -> None:
    children: list[subprocess.Popen] = []
    real = importer.import_in_child
    monkeypatch.setattr(importer, "import_in_child", lambda recorder, progress=None, started=None: real(
        recorder, progress, started=lambda proc: (children.append(proc), started and started(proc))))
    phases: list[str] = []
    session = ProjectSession(project, TrajectorySettings.load(project), watch=False)
    try:
        session.start(background=True, progress=lambda phase, done, total: phases.append(phase))
        assert session.wait_started(60) and session.import_error is None
        assert {"hash", "write"} <= set(phases)  # the child's progress reached the parent
        snap = session.startup_snapshot
        assert snap is not None and snap.kind == "import" and snap.changes == []
        assert len(children) == 1 and children[0].returncode == 0
        tip = git(project, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main").strip()
        assert tip == snap.commit and shadow_count(project) == 1
        write(project, "src/app.py", "print('after the import')\n")  # the parent records on top of it
        later = session.recorder.record_paths(["src/app.py"])
        assert later is not None and [c.path for c in later.changes] == ["src/app.py"]
    finally:
        session.close()


def test_a_project_already_recorded_is_reconciled_in_process(project: Path, monkeypatch) -> None:
    first = ProjectSession(project, TrajectorySettings.load(project), watch=False)
    first.start(background=False)
    first.close()
    monkeypatch.setattr(importer, "import_in_child", lambda *a, **k: (_ for _ in ()).throw(AssertionError("child")))
    write(project, "src/app.py", "print('edited while stopped')\n")
    session = ProjectSession(project, TrajectorySettings.load(project), watch=False)
    try:
        session.start(background=True)
        assert session.wait_started(60) and session.import_error is None
        assert [c.path for c in session.startup_snapshot.changes] == ["src/app.py"]
    finally:
        session.close()


def test_a_failing_child_is_reported_and_nothing_is_half_written(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(importer.sys, "executable", "/bin/false")  # the child starts and fails at once
    session = ProjectSession(project, TrajectorySettings.load(project), watch=False)
    try:
        session.start(background=True)
        assert session.wait_started(60)
        assert isinstance(session.import_error, StorageError) and "start-up scan failed" in str(session.import_error)
        assert shadow_count(project) == 0
    finally:
        session.close()
