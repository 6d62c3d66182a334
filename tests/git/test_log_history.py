"""A file's history read in part: ``limit`` stops the walk at the newest versions, ``counted`` counts lines only for
the newest ones; both give what the full read gives for those versions, across renames too."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import file_versions
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.recorder import Recorder
from support import write
from support.ui import build_history

REF = "refs/heads/shadow/main"


def _key(version: file_versions.FileVersion) -> tuple:
    change = version.change
    return version.record.oid, version.path, change.status, change.old_path, change.old_oid, change.new_oid


def test_a_limited_read_is_the_newest_part_of_the_full_one_over_a_long_history(project: Path) -> None:
    build_history(project, 600, files=6, chunk=200, loose=True)  # three fast-import runs, loose objects
    with ShadowRepo(project) as repo:
        path = "src/pkg1/module_001.py"
        full = file_versions.file_history(repo, REF, path)
        assert len(full) > 60 and all(v.change.counted for v in full)
        for limit in (1, 10, 37):
            part = file_versions.file_history(repo, REF, path, limit=limit)
            assert [_key(v) for v in part] == [_key(v) for v in full[:limit]]
            assert [v.change.counts() for v in part] == [v.change.counts() for v in full[:limit]]
        assert len(file_versions.file_history(repo, REF, path, limit=10_000)) == len(full)
        counted = file_versions.file_history(repo, REF, path, counted=5)
        assert [_key(v) for v in counted] == [_key(v) for v in full]  # every version, blob ids and all
        assert [v.change.counts() for v in counted[:5]] == [v.change.counts() for v in full[:5]]
        assert not any(v.change.counted for v in counted[5:])
        assert full[-1].change.status == "A" and full[-1].record.is_import


def test_a_limited_read_follows_a_rename_only_when_it_needs_older_versions(project: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        recorder.reconcile()
        body = "def load(path):\n    with open(path) as f:\n        return f.read()\n" + "# padding line\n" * 20
        for i in range(4):
            write(project, "src/old_name.py", body + f"VERSION = {i}\n")
            recorder.record_paths(["src/old_name.py"])
        (project / "src" / "old_name.py").rename(project / "src" / "new_name.py")
        recorder.record_paths(["src/old_name.py", "src/new_name.py"])
        for i in range(3):
            write(project, "src/new_name.py", body + f"VERSION = {10 + i}\n")
            recorder.record_paths(["src/new_name.py"])
        repo = recorder.repo
        full = file_versions.file_history(repo, REF, "src/new_name.py")
        assert [v.path for v in full] == ["src/new_name.py"] * 4 + ["src/old_name.py"] * 4
        assert full[3].change.old_path == "src/old_name.py"
        for limit in (2, 4, 5, 8):
            part = file_versions.file_history(repo, REF, "src/new_name.py", limit=limit)
            assert [_key(v) for v in part] == [_key(v) for v in full[:limit]], limit
    finally:
        recorder.close()


def test_file_versions_read_page_by_page_are_the_full_history(project: Path, monkeypatch) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        recorder.reconcile()
        for i in range(5):
            write(project, "src/a.py", "def f():\n    return 0\n" + "# pad\n" * 20 + f"V = {i}\n")
            recorder.record_paths(["src/a.py"])
        (project / "src" / "a.py").rename(project / "src" / "b.py")
        recorder.record_paths(["src/a.py", "src/b.py"])
        for i in range(6):
            write(project, "src/b.py", "def f():\n    return 0\n" + "# pad\n" * 20 + f"V = {10 + i}\n")
            recorder.record_paths(["src/b.py"])
        full = file_versions.file_history(recorder.repo, REF, "src/b.py")
        assert len(full) == 12 and full[6].change.old_path == "src/a.py"
        for first in (1, 2, 3):  # with 1: pages 1, 2, 4 end on the rename (the 7th version)
            monkeypatch.setattr(file_versions.FileVersions, "FIRST_PAGE", first)
            assert [_key(v) for v in file_versions.FileVersions(recorder.repo, REF, "src/b.py")] == [_key(v) for v in full]
        paged = file_versions.FileVersions(recorder.repo, REF, "src/b.py")
        assert _key(paged[11]) == _key(full[11]) and bool(paged[11:]) and not paged[12:]
        rest = paged[3:]
        assert [_key(v) for v in rest] == [_key(v) for v in full[3:]] and _key(rest[0]) == _key(full[3])
        assert not file_versions.FileVersions(recorder.repo, None, "src/b.py")
    finally:
        recorder.close()
