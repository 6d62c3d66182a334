"""Crash leftovers: a kill while ``.trajectory`` was created, stale git locks and temporary files, and the
commit-graph after the size cap. Real git in temp dirs; a real SIGKILL where a kill is the subject."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import create, health
from code_trajectory.git.maintenance import run_maintenance
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.recorder import Recorder
from support import git, shadow_count, subprocess_env, write


def age(path: Path, seconds: float = 3600.0) -> None:
    """Make ``path`` look ``seconds`` old (as if the restart came that much later)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def start_and_record(root: Path, rel: str = "src/app.py", text: str = "def main():\n    return 'after'\n") -> None:
    """What a restart does (open + start-up reconcile), then one edit recorded with a checkpoint."""
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        recorder.reconcile()
        write(root, rel, text)
        assert recorder.checkpoint() is not None
    finally:
        recorder.close()
    assert text in git(root, "--git-dir=.trajectory", "show", f"refs/heads/shadow/main:{rel}")
    fsck = subprocess.run(["git", "--git-dir=.trajectory", "fsck", "--strict", "--no-progress"], cwd=root,
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def temp_dirs(root: Path) -> list[str]:
    return sorted(name for name in os.listdir(root) if name.startswith(".trajectory.tmp-"))


def recorded(project: Path) -> Path:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    recorder.reconcile()
    recorder.close()
    return project / ".trajectory"


# -- (a) atomic creation ------------------------------------------------------------------------------------

#: A child that creates the shadow repository and SIGKILLs itself at one step of the creation.
KILL_CHILD = """
import os, signal, sys
from pathlib import Path
from code_trajectory.git import create
from code_trajectory.git.shadow import ShadowRepo
step = sys.argv[2]
real = getattr(create, step)
def die(*args, **kwargs):
    if step == "configure":
        real(*args, **kwargs)  # the temporary repository is complete: killed just before the rename
    os.kill(os.getpid(), signal.SIGKILL)
setattr(create, step, die)
ShadowRepo(Path(sys.argv[1])).ensure()
"""


@pytest.mark.parametrize("step", ["_init", "configure"])
def test_a_kill_during_creation_leaves_no_half_repository_and_the_next_start_records(project: Path,
                                                                                     step: str) -> None:
    proc = subprocess.run([sys.executable, "-c", KILL_CHILD, str(project), step], env=subprocess_env(),
                          capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    assert not (project / ".trajectory").exists()  # nothing half-made where the repository goes
    assert len(temp_dirs(project)) == 1  # only the temporary directory of the killed creation
    assert git(project, "status", "--porcelain") == ""  # which the project's git does not list
    start_and_record(project)
    assert temp_dirs(project) == []  # removed at the next start
    assert shadow_count(project) == 2


def test_a_partial_temp_dir_of_a_dead_process_is_removed_and_never_recorded(project: Path) -> None:
    stale = project / f".trajectory.tmp-{dead_pid()}-0badc0de"
    write(stale, "objects/pack/tmp_pack_x", b"half a pack")
    write(stale, "config", "[core\n")  # no HEAD: git would not even call it a repository
    start_and_record(project)
    assert not stale.exists()
    names = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
    assert ".trajectory" not in names


@pytest.mark.parametrize("pid", [2 ** 31, 10 ** 20])
def test_a_temp_dir_naming_a_pid_no_process_can_have_is_removed(project: Path, pid: int) -> None:
    """A directory .trajectory.tmp-99999999999999999999-ab in a cloned or unpacked project made every start fail
    with a traceback (OverflowError from os.kill: the number fits no pid): no process has it, so it is stale."""
    stale = project / f".trajectory.tmp-{pid}-0badc0de"
    write(stale, "HEAD", "ref: refs/heads/shadow/-init-\n")
    assert not create.pid_running(pid)
    start_and_record(project)
    assert not stale.exists()


def test_a_temp_dir_being_built_by_a_live_process_is_kept_and_not_recorded(project: Path) -> None:
    live = project / f".trajectory.tmp-{os.getpid()}-00c0ffee"
    write(live, "HEAD", "ref: refs/heads/shadow/-init-\n")
    start_and_record(project)
    assert live.exists()  # its creator (this process) still runs
    names = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
    assert ".trajectory" not in names
    age(live)  # an hour later the pid can only have been reused
    assert create.clear_stale_temp_dirs(project / ".trajectory") == [live]


def test_an_empty_trajectory_directory_is_replaced_by_a_complete_repository(project: Path) -> None:
    (project / ".trajectory").mkdir()  # what an older release killed right after its mkdir left
    start_and_record(project)


def test_a_trajectory_symlink_to_another_disk_is_kept(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "other-disk" / "history"
    elsewhere.mkdir(parents=True)
    (project / ".trajectory").symlink_to(elsewhere, target_is_directory=True)
    start_and_record(project)
    assert (project / ".trajectory").is_symlink() and (elsewhere / "HEAD").is_file()


@pytest.mark.parametrize("damage", ["HEAD", "objects"])
def test_a_trajectory_missing_head_or_objects_does_not_block_the_start(project: Path, damage: str) -> None:
    git_dir = recorded(project)
    before = shadow_count(project)
    target = git_dir / damage
    if target.is_dir():
        import shutil

        shutil.rmtree(target)
    else:
        target.unlink()
    start_and_record(project)
    if damage == "HEAD":  # repaired in place: nothing recorded was lost
        assert shadow_count(project) == before + 1
    else:  # the history's objects are gone: moved aside, a new history started
        assert list(project.glob(".trajectory.corrupt-*"))


RACE_CHILD = """
import sys, time
from pathlib import Path
from code_trajectory.git.shadow import ShadowRepo
go = float(sys.argv[2])
while time.time() < go:
    pass
print(ShadowRepo(Path(sys.argv[1])).ensure())
"""


def test_racing_creations_make_one_repository_and_the_losers_use_it(project: Path) -> None:
    go = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-c", RACE_CHILD, str(project), str(go)], env=subprocess_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    assert sorted(out.strip() for out, _ in results) == ["False", "False", "False", "True"]
    assert temp_dirs(project) == []
    start_and_record(project)


# -- (b) stale locks and temporary files --------------------------------------------------------------------

LOCKS = ["index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "refs/heads/shadow/main.lock"]


@pytest.mark.parametrize("lock", LOCKS)
def test_a_stale_lock_is_removed_at_start(project: Path, lock: str) -> None:
    git_dir = recorded(project)
    path = write(git_dir, lock, b"")
    age(path)
    start_and_record(project)
    assert not path.exists()


@contextmanager
def held_open(path: Path, mode: str) -> Iterator[None]:
    """A child process holds ``path`` open (``open(path, mode)``) for the ``with`` body, then is killed."""
    holder = subprocess.Popen([sys.executable, "-c", f"import sys, time; f = open(sys.argv[1], {mode!r}); "
                               "print('open', flush=True); time.sleep(60)", str(path)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        yield
    finally:
        holder.kill()
        holder.communicate()


def test_a_lock_another_process_holds_open_is_kept_however_old(project: Path) -> None:
    git_dir = recorded(project)
    path = write(git_dir, "refs/heads/shadow/other.lock", b"")
    age(path)
    with held_open(path, "rb"):
        assert health.clear_leftovers(git_dir) == []
        start_and_record(project)
        assert path.exists()
    assert health.clear_leftovers(git_dir) == [path]


def test_a_recent_lock_is_kept_while_a_git_process_works_on_the_repository(project: Path) -> None:
    git_dir = recorded(project)
    path = write(git_dir, "refs/heads/shadow/other.lock", b"")
    age(path, 5)  # old enough for a dead owner, too young to be stale while git runs here
    worker = subprocess.Popen(["git", f"--git-dir={git_dir}", "hash-object", "--stdin"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        time.sleep(0.2)
        assert worker.pid in health.git_working_on(git_dir)
        assert health.clear_stale_locks(git_dir) == []
        age(path)  # an hour old: stale whatever runs
        assert health.clear_stale_locks(git_dir) == [path]
    finally:
        worker.communicate(b"x")
    assert health.git_working_on(git_dir) == []


def test_a_fresh_unheld_lock_with_no_git_running_is_removed(project: Path) -> None:
    git_dir = recorded(project)
    path = write(git_dir, "HEAD.lock", b"")
    age(path, 5)
    assert health.clear_stale_locks(git_dir) == [path]


def test_stale_temporary_files_are_removed_at_start_and_fresh_or_open_ones_kept(project: Path) -> None:
    git_dir = recorded(project)
    objects = git_dir / "objects"
    stale = [write(objects, "pack/tmp_pack_AbC123", b"pack"), write(objects, "pack/tmp_idx_AbC123", b"idx"),
             write(objects, "ab/tmp_obj_XyZ987", b"obj"), write(objects, "tmp_pack_top", b"pack"),
             write(objects, "info/commit-graphs/tmp_graph_Q1", b"graph")]
    fresh = write(objects, "pack/tmp_pack_fresh1", b"being written")
    held = write(objects, "pack/tmp_pack_held01", b"being written slowly")
    for path in [*stale, held]:
        age(path)
    with held_open(held, "ab"):
        start_and_record(project)
        assert [p for p in stale if p.exists()] == []
        assert fresh.exists() and held.exists()


def test_the_shadow_repository_is_created_in_a_directory_git_ignores(project: Path) -> None:
    ShadowRepo(project).ensure()
    assert git(project, "status", "--porcelain") == ""
    assert oct((project / ".trajectory").stat().st_mode & 0o777) == "0o700"
    assert "logallrefupdates=always" in git(project, "config", "--file", ".trajectory/config", "--list")


# -- (c) the commit-graph after the size cap ----------------------------------------------------------------

def graph_files(git_dir: Path) -> list[Path]:
    info = git_dir / "objects" / "info"
    return [p for p in [info / "commit-graph", *(info / "commit-graphs").glob("*.graph")] if p.exists()]


def test_the_commit_graph_comes_back_once_the_size_cap_boundaries_are_gone(project: Path) -> None:
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    git_dir = recorder.repo.git_dir
    try:
        recorder.reconcile()
        for i in range(3):
            write(project, "src/app.py", f"old {i}\n")
            recorder.checkpoint()
        time.sleep(3)
        write(project, "src/app.py", "new\n")
        recorder.checkpoint()
        assert run_maintenance(recorder.repo) is not None
        assert graph_files(git_dir)
        assert run_maintenance(recorder.repo, cap_bytes=1, retention_days=2 / 86400) is not None
        # git neither reads nor writes a commit-graph while .trajectory/shallow exists (commit-graph.c,
        # commit_graph_compatible()), so the cap drops it rather than leave one that lists cut-off parents
        assert (git_dir / "shallow").exists() and not graph_files(git_dir)
        assert run_maintenance(recorder.repo) is not None
        assert not graph_files(git_dir)
        # once no boundary is reachable (here: the cut branch and its reflogs are deleted) and two weeks passed
        # (maintenance's `git prune --expire=2.weeks.ago` keeps recent commits and so their shallow entries),
        # git prune drops the shallow file (prune_shallow) and the next maintenance writes the commit-graph again
        git(project, "--git-dir=.trajectory", "update-ref", "-d", "refs/heads/shadow/main")
        git(project, "--git-dir=.trajectory", "reflog", "expire", "--expire=all", "--expire-unreachable=all", "--all")
        git(project, "--git-dir=.trajectory", "prune", "--expire=now")  # what maintenance's prune does 2 weeks on
        git(project, "--git-dir=.trajectory", "update-ref", "refs/heads/shadow/other",
            git(project, "--git-dir=.trajectory", "commit-tree", "-m", "x",
                "4b825dc642cb6eb9a060e54bf8d69288fbee4904").strip())
        assert run_maintenance(recorder.repo) is not None
        assert not (git_dir / "shallow").exists()
        assert graph_files(git_dir)
    finally:
        recorder.close()
    verify = subprocess.run(["git", "--git-dir=.trajectory", "commit-graph", "verify"], cwd=project,
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr



@pytest.mark.parametrize("safety", [5, {"a": 1}, ["x"], "not a commit id"])
def test_a_restore_journal_whose_safety_snapshot_is_no_commit_id_is_ignored(project: Path, safety: object) -> None:
    """A planted restore-journal/<token>.json of a dead process whose safety_snapshot is no text made every opening
    (checkpoint, the server's start-up: the client saw 'Connection closed') fail with a traceback (TypeError: 'int'
    object is not subscriptable); its notice, shown to the agent, would name what the file says as our snapshot."""
    import json

    git_dir = recorded(project)
    (git_dir / "restore-journal").mkdir(exist_ok=True)
    planted = git_dir / "restore-journal" / "abcdef12.json"
    planted.write_text(json.dumps({"token": "abcdef12", "dirs": [""], "safety_snapshot": safety, "source": "x",
                                   "pid": dead_pid()}))
    (project / ".ct-abcdef120").write_text("a leftover of that restore, if the journal were real\n")
    start_and_record(project)
    assert planted.exists() and (project / ".ct-abcdef120").exists()  # not ours: nothing acted on


def test_a_restore_journal_whose_pid_is_infinity_is_ignored(project: Path) -> None:
    """Python's json reads Infinity: int() of it raised OverflowError, and every opening failed with a traceback."""
    git_dir = recorded(project)
    (git_dir / "restore-journal").mkdir(exist_ok=True)
    planted = git_dir / "restore-journal" / "abcdef12.json"
    planted.write_text('{"token": "abcdef12", "dirs": [""], "safety_snapshot": null, "source": "x", "pid": Infinity}')
    start_and_record(project)
    assert planted.exists()
