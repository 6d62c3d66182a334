"""A recording start that finds the history damaged never pulls it from under a process that records it, nor moves
aside a history that only looked damaged for a moment (a ref being rewritten, ``git pack-refs`` at work): real
processes, real git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import health
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.liveness import recording_now
from code_trajectory.recording.opening import identity, open_shadow_repository
from code_trajectory.recording.recorder import Recorder
from support import git, server_command, shadow_count, subprocess_env, wait_for, write


def moved_aside(project: Path) -> list[str]:
    return sorted(p.name for p in project.iterdir() if p.name.startswith(".trajectory.corrupt-"))


def test_a_checkpoint_and_a_second_server_leave_a_damaged_history_a_watch_records_in_place(project: Path) -> None:
    watch = subprocess.Popen([*server_command(), "watch", str(project), "--debounce", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        wait_for(lambda: (project / ".trajectory").is_dir() and recording_now(project / ".trajectory")
                 and shadow_count(project) > 0, timeout=60)
        recorded_in = identity(project / ".trajectory")
        before = shadow_count(project)
        (project / ".trajectory" / "refs" / "heads" / "shadow" / "other").write_text("garbage\n")  # real damage

        cli = subprocess.run([*server_command(), "checkpoint", "-m", "while damaged", "--project", str(project)],
                             env=subprocess_env(), capture_output=True, text=True, timeout=60)
        assert cli.returncode == 0 and 'Named point "while damaged"' in cli.stdout, cli.stderr
        assert "looks damaged" in cli.stderr and "left in place" in cli.stderr
        serve = subprocess.run([*server_command(), "serve", "--project", str(project)], input="",
                               env=subprocess_env(), capture_output=True, text=True, timeout=60)
        assert "looks damaged" in serve.stderr and "Traceback" not in serve.stderr

        assert moved_aside(project) == []
        assert identity(project / ".trajectory") == recorded_in  # the watch keeps its directory
        write(project, "src/app.py", "def main():\n    return 7\n")
        wait_for(lambda: "return 7" in git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py",
                                            check=False), timeout=30)
        assert shadow_count(project) == before + 1  # the save, on the history recorded so far: nothing lost
        assert identity(project / ".trajectory") == recorded_in
    finally:
        watch.terminate()
        _, err = watch.communicate(timeout=60)
    assert "deleted while recording" not in err and "Traceback" not in err


HOLD_AND_REPAIR = """
import sys, time, filelock
ref, good, ready = sys.argv[1], sys.argv[2], sys.argv[3]
with filelock.FileLock(sys.argv[4], timeout=10, thread_local=False):
    open(ready, "w").close()
    time.sleep(1.5)
    open(ref, "w").write(good + "\\n")
"""


def test_a_history_damaged_only_while_a_writer_holds_the_write_lock_is_not_moved_aside(project: Path,
                                                                                      tmp_path: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    snap = recorder.reconcile()
    recorder.close()
    assert snap is not None
    ref = project / ".trajectory" / "refs" / "heads" / "shadow" / "main"
    ref.write_text("garbage\n")  # what verify sees while the writer is half way
    ready = tmp_path / "ready"
    writer = subprocess.Popen([sys.executable, "-c", HOLD_AND_REPAIR, str(ref), snap.commit, str(ready),
                               str(project / ".trajectory" / "write.lock")])
    try:
        wait_for(ready.exists)
        repo, notices = open_shadow_repository(project, create=True)
        repo.close()
    finally:
        writer.wait(timeout=30)
    assert moved_aside(project) == [] and notices == []
    assert git(project, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main").strip() == snap.commit


def test_a_recorder_whose_write_failed_on_damage_another_writer_repairs_keeps_its_history(project: Path,
                                                                                          tmp_path: Path) -> None:
    """The running recorder's own recovery (a write failed, the history looks damaged) takes the same second look
    under ``write.lock`` before it moves anything: a ref broken only while another writer holds the lock stays."""
    from code_trajectory.core.errors import GitError

    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        snap = recorder.reconcile()
        assert snap is not None
        ref = project / ".trajectory" / "refs" / "heads" / "shadow" / "main"
        ref.write_text("garbage\n")
        ready = tmp_path / "ready"
        writer = subprocess.Popen([sys.executable, "-c", HOLD_AND_REPAIR, str(ref), snap.commit, str(ready),
                                   str(project / ".trajectory" / "write.lock")])
        try:
            wait_for(ready.exists)
            assert recorder._recover(GitError("fatal: bad object refs/heads/shadow/main")) is False
        finally:
            writer.wait(timeout=30)
        assert moved_aside(project) == [] and not recorder.notices
        assert git(project, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main").strip() == snap.commit
        ref.write_text("garbage\n")  # damage that stays: moved aside, a new history
        assert recorder._recover(GitError("fatal: bad object refs/heads/shadow/main")) is True
        assert len(moved_aside(project)) == 1
    finally:
        recorder.close()


def test_damage_that_stays_with_nothing_recording_is_still_moved_aside(project: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    recorder.close()
    (project / ".trajectory" / "refs" / "heads" / "shadow" / "main").write_text("garbage\n")
    repo, notices = open_shadow_repository(project, create=True)
    repo.close()
    assert len(moved_aside(project)) == 1 and "moved to .trajectory.corrupt-" in notices[0]


def test_a_loose_ref_packed_away_while_verify_reads_it_is_not_damage(project: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    recorder.close()
    git(project, "--git-dir=.trajectory", "pack-refs", "--all", "--no-prune")  # in packed-refs and loose: as
    real = health.read_bounded                                                  # pack-refs has it before pruning

    def pruned_first(path, limit):  # git pack-refs prunes the loose ref between the listing and the read
        Path(path).unlink(missing_ok=True)
        return real(path, limit)

    monkeypatch.setattr(health, "read_bounded", pruned_first)
    with ShadowRepo(project) as repo:
        assert health.verify(repo) is None
