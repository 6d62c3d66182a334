"""Storage and concurrency faults: two recorders, held and stale locks, a deleted or damaged
.trajectory, a removed project, a full disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import ProjectError, StorageError
from code_trajectory.git import health
from code_trajectory.history import last_session
from code_trajectory.history import service as history_service
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.session import ProjectSession
from support import git, write

DEBOUNCE = 0.3


def wait_for(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def count(root: Path, ref: str = "refs/heads/shadow/main") -> int:
    return int(git(root, "--git-dir=.trajectory", "rev-list", "--count", ref, check=False).strip() or 0)


def fsck(root: Path) -> None:
    proc = subprocess.run(["git", "--git-dir=.trajectory", "fsck", "--strict", "--no-progress"], cwd=root,
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if not k.startswith("GIT_")})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def session(root: Path, **settings) -> ProjectSession:
    s = ProjectSession(root, TrajectorySettings.load(root, debounce_seconds=DEBOUNCE, **settings), watch=True)
    s.start()
    return s


def test_two_servers_one_records_the_other_takes_over(project: Path) -> None:
    first = session(project)
    second = session(project)
    try:
        assert first.role == "recorder" and second.role == "follower" and second.watcher is None
        assert "another code-trajectory process records" in last_session.session_summary(second)
        write(project, "src/app.py", "def main():\n    return 'one writer'\n")
        wait_for(lambda: count(project) == 2)
        time.sleep(DEBOUNCE * 4)
        assert count(project) == 2  # one snapshot, not one per server
        assert "one writer" in history_service.global_trajectory(second, 5) or "src/app.py" in history_service.global_trajectory(second, 5)
        first.close()
        wait_for(lambda: second.role == "recorder" and second.watcher is not None)
        write(project, "src/app.py", "def main():\n    return 'taken over'\n")
        wait_for(lambda: count(project) == 3)
        fsck(project)
    finally:
        first.close()
        second.close()


def test_concurrent_tool_calls_in_one_server_are_safe(project: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    s = session(project)
    try:
        def work(i: int) -> str:
            write(project, f"src/mod{i % 5}.py", f"VALUE = {i}\n")
            if i % 3 == 0:
                return s.checkpoint(f"cp {i}")
            if i % 3 == 1:
                return history_service.global_trajectory(s, 5)
            return history_service.file_trajectory(s, f"src/mod{i % 5}.py", 3)

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(work, range(40)))
        assert len(answers) == 40
        fsck(project)
        subjects = git(project, "--git-dir=.trajectory", "log", "--format=%s", "refs/heads/shadow/main").splitlines()
        assert len(subjects) == len(set(git(project, "--git-dir=.trajectory", "rev-list",
                                            "refs/heads/shadow/main").split()))
    finally:
        s.close()


@pytest.mark.slow
def test_a_held_ref_lock_delays_the_snapshot_which_is_then_written(project: Path) -> None:
    s = session(project)
    lock = project / ".trajectory" / "refs" / "heads" / "shadow" / "main.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; f = open(sys.argv[1], 'w'); "
                               "print('held', flush=True); time.sleep(10)", str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        write(project, "src/app.py", "def main():\n    return 'while locked'\n")
        time.sleep(4)
        assert count(project) == 1 and s.recorder.has_pending()
        assert "snapshot failed, will retry" in (s.watcher.last_error or "")
        holder.wait(20)
        lock.unlink()  # the holder exits without cleaning up, like a killed git: young, so removed by hand here
        wait_for(lambda: count(project) == 2, timeout=40)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
        s.close()


def test_a_stale_lock_is_detected_logged_and_cleared(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    lock = project / ".trajectory" / "refs" / "heads" / "shadow" / "main.lock"
    lock.write_text("left by a killed git")
    old = time.time() - health.STALE_LOCK_SECONDS - 5
    os.utime(lock, (old, old))
    write(project, "src/app.py", "def main():\n    return 'after a crash'\n")
    recorder.note_changes(["src/app.py"])
    snap = recorder.flush()  # the dead lock is noticed, logged and removed; the snapshot is written
    assert snap is not None and any(c.path == "src/app.py" for c in snap.changes)
    assert not lock.exists()
    assert "stale lock" in caplog.text
    recorder.close()


def delete_while_running(path: Path) -> None:
    """``rm -rf`` of a directory the running server still writes into (its stat cache's journal, its request
    directory): a file created there between the listing and the last ``rmdir`` makes one pass fail ("Directory not
    empty"), so delete again until it is gone, as a user repeating the command would."""
    for _ in range(100):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} could not be deleted")


def test_trajectory_deleted_while_running_is_recreated_and_the_loss_reported(project: Path) -> None:
    s = session(project)
    try:
        delete_while_running(project / ".trajectory")
        write(project, "src/app.py", "def main():\n    return 'after the loss'\n")
        wait_for(lambda: (project / ".trajectory" / "HEAD").exists() and count(project) >= 1)
        summary = last_session.session_summary(s)
        assert "was deleted while recording" in summary and "history is lost" in summary
        files = git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py")
        assert "after the loss" in files
        fsck(project)
    finally:
        s.close()


@pytest.mark.parametrize("damage", ["broken ref", "truncated object"])
def test_damaged_trajectory_is_moved_aside_and_a_new_one_started(project: Path, damage: str) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    snap = recorder.reconcile()
    recorder.close()
    if damage == "broken ref":
        (project / ".trajectory" / "refs" / "heads" / "shadow" / "main").write_text("garbage\n")
    else:
        obj = project / ".trajectory" / "objects" / snap.commit[:2] / snap.commit[2:]
        obj.chmod(0o644)
        obj.write_bytes(obj.read_bytes()[:10])
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        moved = [p.name for p in project.iterdir() if p.name.startswith(".trajectory.corrupt-")]
        assert len(moved) == 1
        assert recorder.notices and "moved to .trajectory.corrupt-" in recorder.notices[0]
        snap = recorder.reconcile()
        assert snap is not None and not any(c.path.startswith(".trajectory") for c in snap.changes)
        assert (project / moved[0] / ".gitignore").read_text().splitlines()[-1] == "*"  # invisible to git status
        assert ".trajectory" not in git(project, "status", "--porcelain", "--untracked-files=all")
        fsck(project)
    finally:
        recorder.close()


def test_removed_project_stops_the_watcher_and_tools_answer_with_an_error(tmp_path: Path) -> None:
    root = tmp_path / "doomed"
    root.mkdir()
    write(root, "a.txt", "a\n")
    s = session(root)
    try:
        # as ``rm -rf`` would: the import may still be writing its state files meanwhile (a file made in a directory
        # being removed leaves it not empty), so the removal is retried until the project is gone
        wait_for(lambda: shutil.rmtree(root, ignore_errors=True) or not root.exists())
        wait_for(lambda: not s.watcher.running)
        assert "no longer exists" in s.watcher.last_error
        with pytest.raises(ProjectError, match="no longer exists"):
            history_service.global_trajectory(s, 5)
    finally:
        s.close()


@pytest.mark.slow
def test_disk_full_reports_clearly_keeps_the_repository_and_resumes(small_disk: Path) -> None:
    root = small_disk / "project"
    root.mkdir()
    write(root, "notes.txt", "start\n")
    s = ProjectSession(root, TrajectorySettings.load(root, debounce_seconds=3), watch=True)
    s.start()
    try:
        write(root, "notes.txt", "".join(f"line {i}\n" for i in range(2000)))  # the edit, while there is room
        filler = root.parent / "filler.bin"
        with open(filler, "wb", buffering=0) as f:  # fill the disk, outside the project
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        with pytest.raises(StorageError, match="No space left"):
            s.checkpoint("on a full disk")
        wait_for(lambda: s.watcher.last_error and "No space left" in s.watcher.last_error)
        assert count(root, "refs/heads/shadow/-no-git") == 1 and s.recorder.has_pending()
        assert "No space left" in last_session.session_summary(s)
        fsck(root)
        filler.unlink()
        write(root, "notes.txt", "space is back\n")
        wait_for(lambda: "space is back" in git(root, "--git-dir=.trajectory", "show",
                                                "refs/heads/shadow/-no-git:notes.txt", check=False))
        fsck(root)
    finally:
        s.close()


def test_a_config_lock_left_by_a_kill_during_creation_does_not_block_the_restart(project: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    recorder.close()
    subprocess.run(["git", "config", "--file", str(project / ".trajectory" / "config"), "--unset",
                    "core.logAllRefUpdates"], check=True, capture_output=True)
    (project / ".trajectory" / "config.lock").write_bytes(b"")  # fresh: the restart comes right after the kill
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        write(project, "src/app.py", "def main():\n    return 'restarted'\n")
        assert recorder.checkpoint() is not None
        assert not (project / ".trajectory" / "config.lock").exists()
    finally:
        recorder.close()


def test_a_full_disk_keeps_the_stat_cache(small_disk: Path) -> None:
    """The stat cache cannot be opened on a full disk (SQLite's ``-wal`` and ``-shm`` files): it is kept for when
    space returns, not deleted as if damaged (the next scan of a large project would hash every file again)."""
    import sqlite3

    from code_trajectory.recording.statcache import StatCache

    root = small_disk / "project"
    root.mkdir()
    write(root, "notes.txt", "start\n")
    first = ProjectSession(root, TrajectorySettings.load(root))
    first.start()
    first.close()
    cache = root / ".trajectory" / "state" / "statcache.sqlite"
    assert cache.is_file() and not Path(f"{cache}-wal").exists()
    kept = cache.read_bytes()
    with open(small_disk / "filler.bin", "wb", buffering=0) as f:  # fill the disk, outside the project
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 4096)
    with pytest.raises(sqlite3.OperationalError, match="disk"):
        StatCache(cache)._conn()
    assert cache.read_bytes() == kept
