"""git vouches for a restart's unchanged files (``recording/gitvouch.py``, issue 29): the stat cache's facts are also
written as a private git index, ``git diff-files`` ``lstat``s it while the tree is walked, and a directory whose
names did not change is clean without an ``lstat`` of its files unless git names one. Nothing may be missed: an
edit keeping size and mtime, the racy rewrite, a file added, removed, a hostile shadow config, a damaged, foreign or
missing stat index, a git project whose own index is clean."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.stat_index import write_stat_index
from code_trajectory.recording import gitvouch, listing_reuse, worktree
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.stat_sentinel import sentinel_at, sentinel_under
from support import age_everything, git, recorded, restart, rewrite_in_place, write

SHADOW_AND_GIT = (".git", ".trajectory")


@pytest.fixture
def tree(project: Path, monkeypatch) -> Path:
    """A project of 5 directories, recorded and settled: its stat index covers every directory."""
    monkeypatch.setattr(gitvouch, "MIN_FILES", 1)
    for i in range(4):
        write(project, f"pkg/sub{i}/mod.py", f"x = {i}\n")
        write(project, f"pkg/sub{i}/deep/data.txt", f"data {i}\n")
    settle(project)
    return project


def settle(root: Path) -> None:
    """Everything aged out of the racy window, then a scan: every listing packs its files' facts, and the stat
    index is written with every directory (checked)."""
    age_everything(root, skip=SHADOW_AND_GIT)
    time.sleep(2.1)  # and the ctimes too (utime sets the ctime to now, and nothing sets it back)
    restart(root)
    [index] = root.glob(".trajectory/state/statindex-*.index")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint(), rows=False)
        assert cached.stat_index is not None and index.name.endswith(f"{cached.stat_index}.index")
        assert all(listing.indexed == worktree.listing_digest(listing) for listing in cached.listings.values())
    finally:
        recorder.close()


@pytest.fixture
def looked_at(monkeypatch) -> dict[str, list[str]]:
    """The directories whose files this process ``lstat``ed itself, by how: ``unchanged`` (packed facts compared),
    ``relisted`` (each file's facts taken)."""
    calls: dict[str, list[str]] = {"unchanged": [], "relisted": []}
    unchanged, relisted = listing_reuse.unchanged, listing_reuse.relisted

    def spy_unchanged(directory, listing):
        calls["unchanged"].append(directory)
        return unchanged(directory, listing)

    def spy_relisted(directory, rel_dir, listing):
        calls["relisted"].append(rel_dir)
        return relisted(directory, rel_dir, listing)

    monkeypatch.setattr(listing_reuse, "unchanged", spy_unchanged)
    monkeypatch.setattr(listing_reuse, "relisted", spy_relisted)
    return calls


def changes(snap) -> set[tuple[str, str]]:
    return {(c.path, c.status) for c in snap.changes}


def test_git_vouches_for_unchanged_directories_and_an_edit_while_stopped_is_recorded(tree: Path, looked_at) -> None:
    write(tree, "pkg/sub1/mod.py", "x = 'edited while stopped'\n")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("pkg/sub1/mod.py", "M")}
    assert recorded(tree, snap.ref, "pkg/sub1/mod.py") == "x = 'edited while stopped'"
    assert looked_at["unchanged"] == []  # no directory's files were lstat-ed here: git did it
    assert looked_at["relisted"] == ["pkg/sub1"]  # but those of the one git named
    assert restart(tree) is None


def test_an_edit_that_keeps_size_and_mtime_is_recorded(tree: Path) -> None:
    target = tree / "pkg/sub3/deep/data.txt"
    rewrite_in_place(target, "DATA 3\n")  # same size and the old mtime: only the ctime tells
    snap = restart(tree)
    assert snap is not None and recorded(tree, snap.ref, "pkg/sub3/deep/data.txt") == "DATA 3"


def test_a_rewrite_in_the_same_timestamp_tick_with_the_same_size_is_recorded(tree: Path) -> None:
    target = tree / "pkg/sub0/mod.py"
    target.write_text("x = 'A'\n")
    first = restart(tree)
    assert first is not None and recorded(tree, first.ref, "pkg/sub0/mod.py") == "x = 'A'"
    rewrite_in_place(target, "x = 'B'\n")
    snap = restart(tree)
    assert snap is not None and recorded(tree, snap.ref, "pkg/sub0/mod.py") == "x = 'B'"


def test_files_added_removed_and_a_directory_removed_while_stopped(tree: Path) -> None:
    write(tree, "pkg/sub0/new.py", "new\n")
    write(tree, "pkg/fresh/made.py", "made\n")
    os.unlink(tree / "pkg/sub1/mod.py")
    for name in ("mod.py", "deep/data.txt"):
        os.unlink(tree / "pkg/sub3" / name)
    os.rmdir(tree / "pkg/sub3/deep")
    os.rmdir(tree / "pkg/sub3")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {
        ("pkg/sub0/new.py", "A"), ("pkg/fresh/made.py", "A"), ("pkg/sub1/mod.py", "D"), ("pkg/sub3/mod.py", "D"),
        ("pkg/sub3/deep/data.txt", "D")}
    assert restart(tree) is None


def test_a_file_replaced_by_a_symlink_or_made_executable_is_recorded(tree: Path) -> None:
    os.chmod(tree / "pkg/sub2/mod.py", 0o755)
    os.unlink(tree / "pkg/sub1/deep/data.txt")
    os.symlink("../mod.py", tree / "pkg/sub1/deep/data.txt")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("pkg/sub2/mod.py", "M"), ("pkg/sub1/deep/data.txt", "T")}


def test_the_shadow_config_cannot_make_git_assume_files_unchanged(tree: Path) -> None:
    for key, value in (("core.ignoreStat", "true"), ("core.trustctime", "false"), ("core.checkStat", "minimal"),
                       ("core.fileMode", "false"), ("core.preloadIndex", "false")):
        git(tree, "--git-dir=.trajectory", "config", key, value)
    target = tree / "pkg/sub2/deep/data.txt"
    rewrite_in_place(target, "DATA 2\n")  # only the ctime tells (which core.trustctime=false ignores)
    os.chmod(tree / "pkg/sub0/mod.py", 0o755)  # core.fileMode=false would hide this one
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("pkg/sub2/deep/data.txt", "M"), ("pkg/sub0/mod.py", "M")}


@pytest.mark.parametrize("damage", ["garbage", "foreign", "empty", "missing", "assume-unchanged"])
def test_a_damaged_foreign_or_missing_stat_index_misses_nothing(tree: Path, damage: str, looked_at) -> None:
    [index] = tree.glob(".trajectory/state/statindex-*.index")
    if damage == "garbage":
        index.write_bytes(b"DIRC" + os.urandom(200))
    elif damage == "foreign":  # a valid index that vouches for nothing we wrote: no sentinel
        write_stat_index(index, [], sentinel="elsewhere")
    elif damage == "empty":
        index.write_bytes(b"")
    elif damage == "assume-unchanged":  # git honours the flag: the index must be refused as not ours
        subprocess.run(["git", "update-index", "--assume-unchanged", "pkg/sub1/deep/data.txt"], cwd=tree, check=True,
                       capture_output=True, env={**os.environ, "GIT_DIR": str(tree / ".trajectory"),
                                                 "GIT_INDEX_FILE": str(index)})
    else:
        index.unlink()  # git reads a missing index as an empty one, which would report nothing
    write(tree, "pkg/sub1/deep/data.txt", "edited while the stat index was damaged\n")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("pkg/sub1/deep/data.txt", "M")}
    assert looked_at["unchanged"]  # without git's verdict, this process lstat-ed the files itself


def test_an_edit_in_a_git_project_whose_own_index_is_clean_is_recorded(tree: Path, looked_at) -> None:
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "all")
    restart(tree)  # the tracked set changed: the listings are made again
    settle(tree)
    looked_at["unchanged"].clear()
    write(tree, "pkg/sub2/mod.py", "x = 'edited and staged while stopped'\n")
    git(tree, "add", "-A")  # the user's index is fresh: git status shows nothing unstaged
    git(tree, "status", "--porcelain")  # and rewritten (a refresh): neither changes what is tracked
    assert git(tree, "diff-files", "--name-only").strip() == ""
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("pkg/sub2/mod.py", "M")}
    assert looked_at["unchanged"] == []  # the listings were kept, and git vouched for the other directories


def test_a_secret_stays_out_and_a_tracked_file_git_would_ignore_is_recorded(tree: Path, monkeypatch) -> None:
    monkeypatch.setattr(gitvouch, "STALE_SHARE", 0.0)  # the stat index is written again after every change
    write(tree, "build/keep.cfg", "tracked although build/ is ignored\n")
    write(tree, "build/out.o", "ignored\n")
    write(tree, "pkg/sub0/.env", "TOKEN=1\n")  # on the secret deny list
    git(tree, "add", "-f", "build/keep.cfg")
    git(tree, "commit", "-q", "-m", "keep")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("build/keep.cfg", "A")}
    settle(tree)
    for rel in ("build/keep.cfg", "build/out.o", "pkg/sub0/.env"):
        write(tree, rel, "edited while stopped\n")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("build/keep.cfg", "M")}


def test_the_kept_fingerprint_of_the_tracked_set_follows_the_index(tree: Path) -> None:
    write(tree, "build/made.o", "ignored by build/\n")
    restart(tree)
    settle(tree)
    cache = tree / ".trajectory/state/statcache.sqlite"
    kept = sqlite3.connect(cache).execute("SELECT value FROM meta WHERE key = 'tracked'").fetchone()[0]
    assert kept  # a restart takes it instead of running git ls-files, while the index is the same file
    git(tree, "add", "-f", "build/made.o")  # while stopped: now tracked, so recorded although ignored
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("build/made.o", "A")}


@pytest.mark.parametrize("kept", ["not json", "[[1, 2], 3]", '[["a", 2, 3], "x"]', "[[1, 2, 3], 4]"])
def test_a_damaged_kept_fingerprint_is_ignored(tree: Path, kept: str) -> None:
    with sqlite3.connect(tree / ".trajectory/state/statcache.sqlite") as db:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('tracked', ?)", (kept,))
    write(tree, "pkg/sub0/mod.py", "x = 'edited'\n")
    snap = restart(tree)
    assert snap is not None and changes(snap) == {("pkg/sub0/mod.py", "M")}


def test_a_gitignore_made_or_edited_while_stopped_in_a_directory_git_vouches_for_applies(tree: Path) -> None:
    """A directory without a ``.gitignore`` is taken as unchanged from its own ``lstat`` alone (a new file changes
    its mtime); one made there while stopped, or one edited in place (no directory's mtime changes), still
    changes what is recorded below it at the next restart."""
    write(tree, "pkg/sub1/.gitignore", "deep/\n")
    snap = restart(tree)
    assert snap is not None and ("pkg/sub1/deep/data.txt", "D") in changes(snap)
    settle(tree)
    (tree / "pkg/sub1/.gitignore").write_text("mod.py\n")  # edited in place: pkg/sub1's mtime stays
    snap = restart(tree)
    assert snap is not None and changes(snap) >= {("pkg/sub1/mod.py", "D"), ("pkg/sub1/deep/data.txt", "A")}


def test_a_sentinel_is_named_only_under_the_root(tmp_path: Path) -> None:
    """The sentinel a stat index holds is a path of git's work tree: relative to the root with ``/`` separators, a
    directory whose name merely starts with ``..`` included; a path outside the root gives none (the caller then
    writes no stat index)."""
    root = tmp_path / "p"
    assert sentinel_under(root, root / ".trajectory" / "state" / "seed-1.sentinel") == ".trajectory/state/seed-1.sentinel"
    assert sentinel_under(root, root / "..cache" / "x.sentinel") == "..cache/x.sentinel"
    assert sentinel_under(root, tmp_path / "elsewhere" / "x.sentinel") is None
    assert sentinel_under(root, tmp_path) is None
    assert sentinel_at(root, root / ".trajectory" / "state" / "statcache.sqlite", "ab") == \
        ".trajectory/state/statindex-ab.sentinel"
