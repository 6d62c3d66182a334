"""The watcher with a short debounce on real files: bursts, ignores, branch switches, reconfiguration."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.history import last_session
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.recording.session import ProjectSession
from support import git, git_repo, wait_for, watching, write
from support import shadow_count as count

DEBOUNCE = 0.4





def test_burst_of_writes_makes_one_snapshot_of_the_final_content(project: Path) -> None:
    with watching(project, debounce=1.5):  # long enough that a loaded machine cannot split the burst
        assert count(project) == 1
        for i in range(50):  # 50 writes within about half a second
            write(project, "src/app.py", f"def main():\n    return {i}\n")
            time.sleep(0.01)
        wait_for(lambda: count(project) == 2)
        time.sleep(3)
        assert count(project) == 2
        content = git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py")
        assert content == "def main():\n    return 49\n"


def test_created_moved_and_deleted_files_are_recorded(project: Path) -> None:
    with watching(project):
        write(project, "src/new.py", "NEW = 1\n")
        wait_for(lambda: count(project) == 2)
        (project / "src" / "new.py").rename(project / "src" / "renamed.py")
        wait_for(lambda: count(project) == 3)
        (project / "tests" / "test_app.py").unlink()
        wait_for(lambda: count(project) == 4)
        files = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
        assert "src/renamed.py" in files and "src/new.py" not in files and "tests/test_app.py" not in files


def test_ignored_shadow_and_git_changes_cause_no_snapshot(project: Path) -> None:
    with watching(project) as session:
        write(project, "node_modules/pkg/index.js", "x")
        write(project, "build/out.o", "y")
        write(project, "run.log", "z")
        write(project, ".git/scratch", "q")
        time.sleep(DEBOUNCE * 4 + 0.5)
        assert count(project) == 1
        assert not session.recorder.has_pending()


def test_branch_switch_records_on_the_new_shadow_ref(project: Path) -> None:
    for i in range(200):
        write(project, f"many/file{i}.txt", f"{i}\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "many files")
    git(project, "checkout", "-q", "-b", "feature")
    for i in range(200):
        write(project, f"many/file{i}.txt", f"feature {i}\n")
    git(project, "commit", "-q", "-am", "feature edits")
    git(project, "checkout", "-q", "main")
    with watching(project) as session:
        git(project, "checkout", "-q", "feature")  # rewrites 200 files
        wait_for(lambda: count(project, "refs/heads/shadow/feature") >= 1)
        time.sleep(DEBOUNCE * 4)
        assert count(project, "refs/heads/shadow/feature") - count(project) == 1  # one snapshot, not 200
        content = git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/feature:many/file7.txt")
        assert content == "feature 7\n"
        assert session.watcher is not None and session.watcher.last_error is None


def test_configure_same_path_keeps_watcher_and_other_path_switches(project: Path, plain_dir: Path) -> None:
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=DEBOUNCE))
    try:
        first, started = service.configure(str(project))
        assert started
        watcher = first.watcher
        again, started = service.configure(str(project) + "/")
        assert not started and again is first and again.watcher is watcher
        other, started = service.configure(str(plain_dir))
        assert started and other is not first and first.watcher is None
        write(plain_dir, "notes.txt", "changed\n")
        wait_for(lambda: count(plain_dir, "refs/heads/shadow/-no-git") == 2)
        write(project, "src/app.py", "def main():\n    return 'not watched now'\n")
        time.sleep(DEBOUNCE * 3)
        assert count(project) == 1
    finally:
        service.close()


def inotify_watches() -> int:
    total = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        with contextlib.suppress(OSError):
            total += Path(f"/proc/self/fdinfo/{fd}").read_text().count("inotify wd:")
    return total


def test_ignored_trees_are_pruned_before_watching(project: Path) -> None:
    for i in range(60):
        (project / "node_modules" / f"pkg{i}" / "lib").mkdir(parents=True)
    (project / "src" / "sub").mkdir()
    before = inotify_watches()
    with watching(project) as session:
        watched = session.watcher.watched_dirs
        # root, src, src/sub, tests, and the project's .git, .git/logs and .git/logs/refs (HEAD, index and the
        # reflogs that name git operations): never the 121 node_modules directories
        assert watched == 7
        assert inotify_watches() - before <= watched + 1


def test_directories_created_later_are_watched(project: Path) -> None:
    with watching(project):
        (project / "pkg" / "deep").mkdir(parents=True)
        write(project, "pkg/deep/early.py", "EARLY = 1\n")  # before its watch may exist
        wait_for(lambda: count(project) >= 2)
        time.sleep(DEBOUNCE * 2)
        write(project, "pkg/deep/late.py", "LATE = 1\n")  # needs the new watch
        wait_for(lambda: "pkg/deep/late.py" in git(project, "--git-dir=.trajectory", "ls-tree", "-r",
                                                    "--name-only", "refs/heads/shadow/main"))
        files = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
        assert "pkg/deep/early.py" in files


def test_directories_beyond_the_native_limit_are_polled(project: Path) -> None:
    session = ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=DEBOUNCE), watch=True,
                             max_native_dirs=1)  # as if the inotify limit allowed one watch
    session.start()
    try:
        assert session.watcher.polling and session.watcher.polled_dirs == 5  # src, tests and .git, .git/logs, .git/logs/refs
        write(project, "tests/test_more.py", "def test_more():\n    pass\n")  # a polled directory
        wait_for(lambda: count(project) == 2, timeout=20)
        summary = last_session.session_summary(session)
        assert "polled" in summary and "inotify" in summary
    finally:
        session.close()


def test_maintenance_runs_by_itself_after_quiet(project: Path) -> None:
    with watching(project) as session:
        session.watcher.maintenance.every = 2
        session.watcher.maintenance.quiet_seconds = 0.5
        for i in range(3):
            write(project, "src/app.py", f"def main():\n    return {i + 100}\n")
            wait_for(lambda i=i: count(project) == i + 2)
        wait_for(lambda: (project / ".trajectory" / "state" / "maintenance.json").exists(), timeout=20)
        assert list((project / ".trajectory" / "objects" / "info").glob("commit-graph*")) or \
            (project / ".trajectory" / "objects" / "info" / "commit-graphs").is_dir()


def test_a_directory_named_in_latin_1_does_not_stall_the_watcher(project: Path) -> None:
    # watchfiles takes UTF-8 paths only: such a directory stopped a watch group at every start, and listing it
    # stopped the group of its parent; the rebuild every 2 s held every snapshot back for max_delay_seconds (30 s),
    # so an edit that `git checkout -- file` undid within those 30 s was never recorded
    odd = os.fsencode(project) + b"/d\xe9p\xf4t"
    os.mkdir(odd)
    Path(os.fsdecode(odd + b"/readme")).write_bytes(b"latin-1\n")
    with watching(project, max_delay_seconds=60) as session:
        os.listdir(odd)  # an `ls` of it, as a scan does
        write(project, "src/app.py", "def main():\n    return 'saved'\n")
        wait_for(lambda: count(project) == 2, timeout=10)
        write(project, "src/app.py", "def main():\n    return 1\n")  # what `git checkout -- src/app.py` does
        wait_for(lambda: count(project) == 3, timeout=10)
        Path(os.fsdecode(odd + b"/readme")).write_bytes(b"edited\n")  # a polled directory
        (project / "new.py").write_text("NEW = 1\n")  # the root holds the odd name: polled too
        wait_for(lambda: count(project) == 4, timeout=10)
        shown = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
        assert "new.py" in shown.splitlines()
        readme = os.fsdecode(b"d\xe9p\xf4t/readme")
        assert git(project, "--git-dir=.trajectory", "show", f"refs/heads/shadow/main:{readme}") == "edited\n"
        assert session.watcher is not None and session.watcher.last_error is None
        assert session.watcher.polled_dirs == 2
    versions = git(project, "--git-dir=.trajectory", "log", "--format=%H", "refs/heads/shadow/main", "--",
                   "src/app.py").split()
    assert len(versions) == 3  # the edit, then its undoing: both recorded


def test_a_project_whose_path_is_not_utf_8_is_recorded(tmp_path: Path) -> None:
    # the opening's vetting wrote the project's index path into its stamp as UTF-8: `watch` died with a
    # UnicodeEncodeError traceback before recording anything
    root = git_repo(tmp_path / os.fsdecode(b"r\xe9pertoire"), {"src/app.py": "A = 1\n"}, branch="main",
                    commit="init")
    with watching(root) as session:
        write(root, "src/app.py", "A = 2\n")
        wait_for(lambda: count(root) == 2, timeout=20)
        assert session.watcher is not None and session.watcher.last_error is None
    assert git(root, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py") == "A = 2\n"
