"""Maintenance: packing, commit-graph, and the size cap that drops old history but never a branch tip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.maintenance import enforce_size_cap, last_report, repository_bytes, run_maintenance
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.status import project_status
from support import git, shadow, write


def test_maintenance_packs_and_writes_a_commit_graph(project: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    for i in range(30):
        write(project, "src/app.py", f"def main():\n    return {i}\n")
        recorder.record_paths(["src/app.py"])
    for i in range(3):  # a few bigger snapshots, each written as a pack
        for j in range(20):
            write(project, f"gen{i}/f{j}.py", f"X = {i * j}\n")
        recorder.record_paths([f"gen{i}"])
    packs_before = recorder.repo.pack_count()
    assert packs_before >= 3
    report = run_maintenance(recorder.repo)
    assert report is not None and last_report(recorder.repo) == report
    assert report.loose_before > 30 and report.loose_after == 0
    assert recorder.repo.pack_count() < packs_before
    info = project / ".trajectory" / "objects" / "info"
    assert (info / "commit-graphs").is_dir() or (info / "commit-graph").exists()
    fsck = subprocess.run(["git", "--git-dir=.trajectory", "fsck", "--strict", "--no-progress"], cwd=project,
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    recorder.close()


def test_size_cap_drops_old_snapshots_but_keeps_every_branch_tip(project: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    for i in range(10):
        write(project, "src/app.py", f"def main():\n    return {i}\n" + "x = 1\n" * i)
        recorder.record_paths(["src/app.py"])
    git(project, "checkout", "-q", "-b", "side")
    write(project, "side.txt", "side branch\n")
    recorder.record_paths(["side.txt"])
    tips = {ref: shadow(project, "rev-parse", ref).strip() for ref in ("refs/heads/shadow/main",
                                                                        "refs/heads/shadow/side")}
    assert repository_bytes(recorder.repo) > 0
    time.sleep(1.1)
    assert enforce_size_cap(recorder.repo, cap_bytes=10**12, retention_days=0) == 0  # under the cap: untouched
    dropped = enforce_size_cap(recorder.repo, cap_bytes=1, retention_days=0)
    assert dropped >= 1
    for ref, tip in tips.items():
        assert shadow(project, "rev-parse", ref).strip() == tip
        assert shadow(project, "rev-list", "--count", ref).strip() == "1"
    assert shadow(project, "show", "refs/heads/shadow/main:src/app.py").startswith("def main():\n    return 9")
    fsck = subprocess.run(["git", "--git-dir=.trajectory", "fsck", "--no-progress"], cwd=project,
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if not k.startswith("GIT_")})
    assert fsck.returncode == 0, fsck.stderr
    write(project, "side.txt", "after pruning\n")
    assert recorder.record_paths(["side.txt"]) is not None  # recording goes on on top of the boundary
    recorder.close()


def test_maintenance_as_the_watcher_runs_it_keeps_a_long_history_near_git_gc_aggressive(tmp_path: Path) -> None:
    """Loose snapshots packed every 200 (the watcher's rhythm), packs rolled up with their deltas recomputed: the
    objects stay within 1.5x of what ``git gc --aggressive`` makes of the same history (issue 29's disk target)."""
    from support.ui import build_history

    root = tmp_path / "project"
    root.mkdir()

    def maintain(_done: int) -> None:
        with ShadowRepo(root) as repo:
            assert run_maintenance(repo) is not None

    build_history(root, 1000, files=20, chunk=200, loose=True, between=maintain, max_functions=30)
    copy = tmp_path / "copy.git"
    shutil.copytree(root / ".trajectory", copy)
    git(tmp_path, f"--git-dir={copy}", "gc", "-q", "--aggressive", "--prune=now")

    def pack_bytes(git_dir: Path) -> int:
        return sum(p.stat().st_size for p in (git_dir / "objects" / "pack").iterdir())

    assert not list((root / ".trajectory" / "objects").glob("[0-9a-f][0-9a-f]/*"))  # nothing left loose
    assert pack_bytes(root / ".trajectory") <= 1.5 * pack_bytes(copy)


@pytest.mark.parametrize("planted", [
    {"seconds": "x", "loose_before": 1, "loose_after": 0, "finished_at": "2026-01-01T00:00:00+00:00"},
    {"seconds": 1.5, "loose_before": [1], "loose_after": {}, "finished_at": "2026-01-01T00:00:00+00:00"},
    {"seconds": 1.5, "loose_before": 1, "loose_after": 0, "finished_at": 5},
    {"seconds": True, "loose_before": 1, "loose_after": 0, "finished_at": "2026-01-01T00:00:00+00:00"},
])
def test_a_planted_maintenance_report_of_the_wrong_types_is_no_report(project: Path, planted: dict) -> None:
    """maintenance.json is untrusted: a text where the seconds are made `code-trajectory status` fail with a
    traceback (ValueError: Unknown format code 'f' for object of type 'str')."""
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        recorder.reconcile()
        (recorder.repo.state_dir / "maintenance.json").write_text(json.dumps(planted))
        assert last_report(recorder.repo) is None
        assert "Last maintenance: never" in project_status(project)
    finally:
        recorder.close()
