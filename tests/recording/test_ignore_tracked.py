"""Files the project's git tracks are recorded even when an ignore rule matches them; secrets never are."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import DEFAULT_DENY_PATTERNS, TrajectorySettings
from code_trajectory.git.project import ProjectRepo
from code_trajectory.recording.ignore import RecordingPolicy
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.tracked import TrackedFiles, TrackedPaths
from code_trajectory.recording.watchgroups import recorded_directories
from code_trajectory.recording.worktree import scan
from support import conflict, git, write
from support.gitdirs import git_dir_fingerprint, git_view, policy_for


def shadow_files(root: Path, ref: str) -> set[str]:
    out = git(root, "--git-dir=.trajectory", "ls-tree", "-r", "-z", "--name-only", "--full-tree", ref)
    return {p for p in out.split("\0") if p}


def make_tracked_ignored(project: Path) -> None:
    """`build/` and `*.log` ignored; some files under them tracked (force-added), others not."""
    for rel in ["build/keep.cfg", "build/out.o", "build/sub/deep.cfg", "build/sub/junk.o", "build/other/x.o",
                "keep.log", "debug.log", "node_modules/pkg/index.js"]:
        write(project, rel, rel)
    git(project, "add", "-f", "build/keep.cfg", "build/sub/deep.cfg", "keep.log")
    git(project, "commit", "-q", "-m", "tracked despite the rules")


def test_tracked_files_are_recorded_despite_ignore_rules(project: Path) -> None:
    make_tracked_ignored(project)
    policy = policy_for(project)
    files = set(scan(project, policy).files)
    assert files == git_view(project)
    assert {"build/keep.cfg", "build/sub/deep.cfg", "keep.log"} <= files
    assert not files & {"build/out.o", "build/sub/junk.o", "build/other/x.o", "debug.log", "node_modules/pkg/index.js"}


def test_excluded_directories_holding_tracked_files_are_entered_but_only_tracked_files_count(project: Path) -> None:
    make_tracked_ignored(project)
    policy = policy_for(project)
    # directories: entered (reported recorded) when they hold tracked files, else excluded
    assert policy.explain("build", is_dir=True) is None
    assert policy.explain("build/sub", is_dir=True) is None
    assert "build/" in policy.explain("build/other", is_dir=True)
    assert "node_modules/" in policy.explain("node_modules", is_dir=True)
    assert not policy.entry_excluded("", "build", True)
    assert policy.entry_excluded("build", "other", True)
    # files inside them: tracked ones recorded, untracked ones excluded with a reason that says why
    assert policy.is_recorded("build/keep.cfg") and policy.is_recorded("build/sub/deep.cfg")
    reason = policy.explain("build/out.o")
    assert "build/" in reason and "only the files git tracks there are recorded" in reason
    assert "only the files git tracks" not in policy.explain("build/other/x.o")
    assert "only the files git tracks" not in policy.explain("node_modules/pkg/index.js")
    assert policy.is_recorded("keep.log") and not policy.is_recorded("debug.log")
    # the watcher watches exactly the entered directories
    watched = {Path(d).relative_to(project).as_posix() for d in recorded_directories(project, policy)}
    assert watched == {".", "src", "tests", "build", "build/sub"}


def test_a_deleted_tracked_file_under_an_ignored_directory_still_passes_the_watcher_filter(project: Path) -> None:
    make_tracked_ignored(project)
    policy = policy_for(project)
    (project / "build/keep.cfg").unlink()
    assert policy.is_recorded("build/keep.cfg")  # still in the index: its deletion must be recorded


def test_the_tracked_set_follows_the_index(project: Path) -> None:
    make_tracked_ignored(project)
    policy = policy_for(project)
    assert policy.refresh_tracked() == []
    # git rm --cached: the file is ignored again (lazily noticed by is_recorded, reported once by refresh)
    git(project, "rm", "-q", "--cached", "keep.log")
    assert not policy.is_recorded("keep.log")
    assert policy.refresh_tracked() == ["keep.log"]
    assert policy.refresh_tracked() == []
    # git add -f in an ignored directory that held no tracked file: the directory is entered from now on
    git(project, "add", "-f", "build/other/x.o")
    assert policy.refresh_tracked() == ["build/other/x.o"]
    assert not policy.entry_excluded("build", "other", True)
    assert "build/other/x.o" in scan(project, policy).files
    # adding a file no rule excludes, or a commit (the index is rewritten): no verdict flips
    write(project, "src/new.py", "x")
    git(project, "add", "src/new.py")
    git(project, "commit", "-q", "-m", "more")
    assert policy.refresh_tracked() == []
    # invalidate() (the recorder's full scan) re-reads the index too
    git(project, "rm", "-q", "--cached", "build/keep.cfg")
    policy.invalidate()
    assert "build/keep.cfg" not in scan(project, policy).files
    assert policy.refresh_tracked() == ["build/keep.cfg"]


def test_reading_the_tracked_set_writes_nothing_under_git(project: Path) -> None:
    make_tracked_ignored(project)
    os.utime(project / "build/keep.cfg")  # stat data differs from the index: a refresh would rewrite it
    before = git_dir_fingerprint(project / ".git")
    policy = policy_for(project)
    scan(project, policy)
    git_dir_index = project / ".git" / "index"
    assert policy.refresh_tracked() == [] and policy.is_recorded("build/keep.cfg")
    assert git_dir_fingerprint(project / ".git") == before
    assert git_dir_index.stat().st_mtime_ns == before[".git/index"][2]


def test_the_recorder_records_tracked_ignored_files(project: Path) -> None:
    make_tracked_ignored(project)
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        snap = recorder.reconcile()
        files = shadow_files(project, snap.ref)
        assert {"build/keep.cfg", "build/sub/deep.cfg", "keep.log"} <= files
        assert not files & {"build/out.o", "build/other/x.o", "debug.log"}
        write(project, "build/keep.cfg", "edited")
        write(project, "build/out.o", "rebuilt")
        snap = recorder.record_paths(["build/keep.cfg", "build/out.o"])
        assert [c.path for c in snap.changes] == ["build/keep.cfg"]
        # a directory event for the ignored directory rescans it: tracked files only
        snap = recorder.record_paths(["build"])
        assert snap is None
    finally:
        recorder.close()


def test_a_tracked_secret_is_never_recorded(project: Path) -> None:
    write(project, ".env", "API_KEY=hunter2")
    write(project, "certs/server.pem", "-----BEGIN")
    git(project, "add", "-f", ".env", "certs/server.pem")
    git(project, "commit", "-q", "-m", "oops, secrets")
    policy = policy_for(project, DEFAULT_DENY_PATTERNS)
    assert {".env", "certs/server.pem"} <= git_view(project)
    assert not set(scan(project, policy).files) & {".env", "certs/server.pem"}
    reason = policy.explain(".env")
    assert "secret deny list" in reason and "git tracks it" in reason
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        snap = recorder.reconcile()
        assert not shadow_files(project, snap.ref) & {".env", "certs/server.pem"}
    finally:
        recorder.close()


def test_tracked_files_in_generated_directories_and_git_dirs_stay_excluded(project: Path) -> None:
    write(project, "venv/pyvenv.cfg", "home = /usr\n")
    write(project, "venv/lib/site.py", "x")
    git(project, "add", "-f", "venv")
    policy = policy_for(project)
    assert "pyvenv.cfg" in policy.explain("venv/lib/site.py")
    assert not any(p.startswith("venv/") for p in scan(project, policy).files)


def test_a_project_outside_git_tracks_nothing(plain_dir: Path) -> None:
    policy = RecordingPolicy(plain_dir)
    assert policy.project is not None and not policy.project.is_git
    assert policy.tracked_count() == 0 and policy.refresh_tracked() == []
    assert set(scan(plain_dir, policy).files) == {"notes.txt"}
    assert RecordingPolicy(plain_dir, project=None).is_recorded("notes.txt")


def test_tracked_paths_lookups_and_memory() -> None:
    paths = sorted(f"src/pkg{i % 97}/module_{i}.py".encode() for i in range(100_000)) + [b"vendor/lib"]
    tracked = TrackedPaths((p, p == b"vendor/lib") for p in paths)
    assert len(tracked) == 100_001
    assert "src/pkg5/module_5.py" in tracked and "src/pkg5/module_6.py" not in tracked and "src" not in tracked
    assert tracked.has_under("src") and tracked.has_under("src/pkg96") and not tracked.has_under("src/pkg97")
    assert not tracked.has_under("src/pkg5/module_5.py") and tracked.has_under("")
    assert tracked.gitlinks == {"vendor/lib"}
    assert tracked.nbytes < 100_000 * (27 + 6)  # ~path length + 5 bytes a path
    smaller = TrackedPaths((p, False) for p in paths[1:] + [b"zzz"])
    assert sorted(tracked.changed(smaller)) == [paths[0].decode(), "zzz"]
    assert not smaller.same_paths(tracked) and smaller.gitlinks == frozenset()
    unordered = TrackedPaths([(b"b/x", False), (b"a", False), (b"b/x", False), (b"a-b", True)])
    assert list(unordered) == ["a", "a-b", "b/x"] and unordered.gitlinks == {"a-b"} and unordered.has_under("b")
    assert "" not in TrackedPaths() and not TrackedPaths().has_under("")


def test_tracked_paths_keep_the_given_paths_in_their_order() -> None:
    tracked = TrackedPaths.of([b"a", b"b/c\xff", b"b/d", "é".encode()], [])
    everything = ["a", "b/c\udcff", "b/d", "é"]
    assert tracked.kept(everything) is everything  # exactly the set, in its order: the list itself
    assert tracked.kept(["é", "zzz", "a", ""]) == ["é", "a"]  # any order, others left out
    assert tracked.kept(everything[:3]) == everything[:3] and tracked.kept(everything + ["x"]) == everything
    assert tracked.kept(["a\0b/d"]) == [] and tracked.kept([]) == []
    assert TrackedPaths().kept(["a", ""]) == []


def test_for_project_builds_the_same_policy(project: Path) -> None:
    make_tracked_ignored(project)
    repo = ProjectRepo.discover(project)
    policy = RecordingPolicy.for_project(repo, deny_patterns=DEFAULT_DENY_PATTERNS)
    assert policy.project is repo
    assert set(scan(project, policy).files) == git_view(project)


def test_tracked_files_cut_from_git_listing_as_git_lists_them(tmp_path: Path) -> None:
    """The tracked paths are cut out of ``git ls-files --format`` by regular expressions: a path holding a tab or a
    newline is whole, an unmerged path is listed once, a gitlink is named, a subdirectory project sees its own paths
    relative to itself; the same as git's own ``ls-files -z`` in that directory."""
    root = tmp_path / "repo"
    names = ["a\tb.py", "line\nbreak.py", "sub/x.py", "sub/y 1\tz.py", "top.py", "conflict.txt"]
    for name in names:
        write(root, name, "v = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    conflict(root, "conflict.txt")  # stages 1, 2, 3
    assert "UU conflict.txt" in git(root, "status", "--porcelain")
    head = git(root, "rev-parse", "HEAD").strip()
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{head},sub/vendored")
    for project, gitlinks in ((root, [b"sub/vendored"]), (root / "sub", [b"vendored"])):
        listed = ProjectRepo.discover(project).tracked_files()
        assert listed is not None
        expected = [p for p in dict.fromkeys(subprocess.run(["git", "ls-files", "-z"], cwd=project, capture_output=True,
                                              check=True).stdout.split(b"\0")) if p]  # each stage listed
        assert listed == (expected, gitlinks)
    everything = ProjectRepo.discover(root).tracked_files()
    assert everything is not None and everything[0].count(b"conflict.txt") == 1 and b"a\tb.py" in everything[0]
    assert b"line\nbreak.py" in everything[0]
    tracked = TrackedPaths.of(*everything)
    assert "sub/y 1\tz.py" in tracked and tracked.gitlinks == {"sub/vendored"} and len(tracked) == 7


def _slow_listing(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """git's listing of the tracked set takes 0.3 s more (as at 500,000 files); each call noted."""
    listing = ProjectRepo.tracked_listing

    def slow(self: ProjectRepo) -> bytes | None:
        calls.append(threading.current_thread().name)
        time.sleep(0.3)
        return listing(self)

    monkeypatch.setattr(ProjectRepo, "tracked_listing", slow)


def test_the_tracked_set_read_on_another_thread_is_waited_for_not_taken_empty(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While one thread reads the tracked set for the first time, another asking for it waits for that read (it
    was given the empty set before); a prefetch reads it once, and the fingerprint and the set wait for it."""
    make_tracked_ignored(project)
    calls: list[str] = []
    _slow_listing(monkeypatch, calls)
    tracked = TrackedFiles(ProjectRepo.discover(project))
    reader = threading.Thread(target=lambda: tracked.current)
    reader.start()
    time.sleep(0.1)  # the first read is under way
    assert "build/keep.cfg" in tracked.current
    reader.join()
    assert len(calls) == 1
    calls.clear()
    ahead = TrackedFiles(ProjectRepo.discover(project))
    ahead.prefetch()
    assert ahead.loading
    fingerprint = ahead.fingerprint()
    assert not ahead.loading and "build/keep.cfg" in ahead.current
    assert calls == ["trajectory-tracked-prefetch"]  # one git ls-files, for the fingerprint and the set
    assert fingerprint == TrackedFiles(ProjectRepo.discover(project)).fingerprint()


def test_an_import_walk_judges_ignored_directories_last_while_the_tracked_set_is_read(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An import's walk does not wait for git's listing of the tracked set: a directory an ignore rule matches is
    judged once the rest is walked, and it is entered exactly when it holds tracked files."""
    make_tracked_ignored(project)
    plain = scan(project, policy_for(project))
    calls: list[str] = []
    _slow_listing(monkeypatch, calls)
    policy = policy_for(project)
    waited: list[str] = []
    waits = RecordingPolicy.waits_for_tracked
    monkeypatch.setattr(RecordingPolicy, "waits_for_tracked", lambda self, parent, name: (
        waits(self, parent, name) and not waited.append(f"{parent}/{name}" if parent else name)))
    policy.tracked.prefetch()
    found = scan(project, policy, known=dict)
    assert "build" in waited  # judged after the rest, once git had listed the tracked set
    assert found.files == plain.files and "build/keep.cfg" in found.files
    assert {rel: (set(lst.subdirs), set(lst.excluded)) for rel, lst in found.listings.items()} == {
        rel: (set(lst.subdirs), set(lst.excluded)) for rel, lst in plain.listings.items()}
    assert len(calls) == 1
