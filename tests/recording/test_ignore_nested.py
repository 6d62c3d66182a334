"""Nested repositories and submodules are recorded as files, and no `.git` anywhere is ever touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import ignore
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.worktree import scan
from support import git, git_repo, write
from support.gitdirs import all_git_dirs, assert_untouched_but_the_exclude_line, policy_for, shadow_files


def make_nested(project: Path, tmp_path: Path) -> None:
    """A vendored clone with commits, a nested repository without commits and a submodule under an ignored
    directory, each with its own .gitignore; a tracked-but-ignored file at the top."""
    upstream = git_repo(tmp_path / "upstream", {"lib.py": "def f():\n    return 1\n", ".gitignore": "*.o\n"},
                        branch="main", commit="upstream")
    git(project, "clone", "-q", str(upstream), "third_party/clone")
    write(project, "third_party/clone/build.o", "ignored by the clone's own .gitignore")
    write(project, "third_party/clone/new.py", "an edit in vendored code")
    git(project / "third_party" / "clone", "config", "core.fsmonitor", "false")
    (project / "scratch").mkdir()
    git(project / "scratch", "init", "-q")
    write(project, "scratch/.gitignore", "tmp/\n")
    write(project, "scratch/notes.md", "no commits in this repository")
    write(project, "scratch/tmp/cache.bin", "ignored by scratch/.gitignore")
    write(project, ".gitignore", "build/\nnode_modules/\n*.log\nvendor/\n")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "-f", str(upstream), "vendor/lib")
    write(project, "vendor/lib/local.o", "ignored by the submodule's .gitignore")
    write(project, "vendor/lib/patch.py", "a local patch in the submodule")
    write(project, "vendor/other/x.js", "ignored: vendor/ and untracked")
    write(project, "build/keep.cfg", "tracked although build/ is ignored")
    git(project, "add", "-f", "build/keep.cfg")
    git(project, "commit", "-q", "-m", "nested")


EXPECTED_NESTED = {"third_party/clone/lib.py", "third_party/clone/.gitignore", "third_party/clone/new.py",
                   "scratch/.gitignore", "scratch/notes.md", "vendor/lib/lib.py", "vendor/lib/.gitignore",
                   "vendor/lib/patch.py", "build/keep.cfg", ".gitmodules"}
NEVER = {"third_party/clone/build.o", "scratch/tmp/cache.bin", "vendor/lib/local.o", "vendor/other/x.js"}


def test_nested_repositories_and_submodules_are_recorded_as_files(project: Path, tmp_path: Path) -> None:
    make_nested(project, tmp_path)
    files = set(scan(project, policy_for(project)).files)
    assert files >= EXPECTED_NESTED
    assert not files & NEVER
    assert not any(p == ".git" or p.endswith("/.git") or "/.git/" in p or p.startswith(".git/") for p in files)


def test_scanning_and_recording_never_touch_any_git_directory(project: Path, tmp_path: Path) -> None:
    make_nested(project, tmp_path)
    gits = all_git_dirs(project)
    assert set(gits) == {".git", "third_party/clone/.git", "scratch/.git", "vendor/lib/.git"}
    assert (project / "vendor/lib/.git").is_file() and (project / ".git/modules/vendor/lib").is_dir()
    os.utime(project / "build/keep.cfg")  # stat data differ from the index: an index refresh would write
    os.utime(project / "vendor/lib/lib.py")
    scan(project, policy_for(project))
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        snap = recorder.reconcile()
        recorded = shadow_files(project, snap.ref)
        assert recorded >= EXPECTED_NESTED and not recorded & NEVER
        write(project, "vendor/lib/patch.py", "patched again")
        write(project, "third_party/clone/lib.py", "def f():\n    return 2\n")
        write(project, "scratch/notes.md", "more notes")
        snap = recorder.record_paths(["vendor/lib/patch.py", "third_party/clone/lib.py", "scratch/notes.md",
                                      "vendor/lib/.git", "third_party/clone/.git", "vendor/lib", "scratch"])
        assert {c.path for c in snap.changes} == {"vendor/lib/patch.py", "third_party/clone/lib.py",
                                                  "scratch/notes.md"}
        recorder.policy.refresh_tracked()
        recorder.policy.invalidate()
        assert recorder.reconcile() is None
    finally:
        recorder.close()
    assert_untouched_but_the_exclude_line(project, gits)


def test_a_submodule_under_an_ignored_directory_is_recorded_with_its_own_rules(project: Path, tmp_path: Path) -> None:
    make_nested(project, tmp_path)
    policy = policy_for(project)
    assert policy.explain("vendor", is_dir=True) is None  # holds a tracked gitlink
    assert policy.explain("vendor/lib", is_dir=True) is None
    assert "vendor/" in policy.explain("vendor/other", is_dir=True)
    assert policy.is_recorded("vendor/lib/patch.py")
    assert "*.o" in policy.explain("vendor/lib/local.o")
    assert ".git" in policy.explain("vendor/lib/.git")


def test_removing_a_submodule_from_the_index_flips_its_directory(project: Path, tmp_path: Path) -> None:
    make_nested(project, tmp_path)
    policy = policy_for(project)
    assert policy.explain("vendor/lib", is_dir=True) is None  # the index as it was: the submodule is tracked
    git(project, "rm", "-q", "--cached", "vendor/lib")
    assert policy.refresh_tracked() == ["vendor/lib"]  # stands for the whole directory
    assert "vendor/" in policy.explain("vendor/lib", is_dir=True)
    assert not any(p.startswith("vendor/") for p in scan(project, policy).files)
    # a gitlink no rule excludes: recorded as files either way, so nothing flips
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(tmp_path / "upstream"), "libs/up")
    assert policy.refresh_tracked() == []
    assert "libs/up/lib.py" in scan(project, policy).files


def test_a_directory_judged_with_its_listing_reads_its_ignore_file_only_when_listed(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk that judges a directory once it has read it (an import's) gives the policy its names: a directory
    listed with a ``.gitignore`` has its rules read and applied, and one listed without any has no file read for it."""
    write(project, "pkg/.gitignore", "*.tmp\n")
    write(project, "other/a.py", "a = 1\n")
    policy = policy_for(project)
    reads: list[str] = []
    read_lines = ignore.read_lines
    monkeypatch.setattr(ignore, "read_lines", lambda path: reads.append(str(path)) or read_lines(path))
    assert not policy.entry_excluded("", "pkg", True, listed=[".gitignore", "m.py"])
    assert not policy.entry_excluded("", "other", True, listed=["a.py"])
    assert policy.entry_excluded("pkg", "x.tmp", False) and not policy.entry_excluded("other", "x.tmp", False)
    assert [p for p in reads if p.endswith("pkg/.gitignore")] and not [p for p in reads if "other" in p]
