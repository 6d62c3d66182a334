"""The restart path of the stat cache: a directory whose files' ``lstat`` facts still pack to what its listing
noted is skipped whole (issue 29), without ever missing a change made while nothing recorded: the racy case,
an edit that keeps size and mtime, rows changed by snapshots of changed paths, a damaged or hostile cache."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import fullscan
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.worktree import scan
from support import age_everything, git, recorded, restart, rewrite_in_place, write
from support.gitdirs import policy_for

#: Left alone by age_everything: git's and the shadow repository's own files.
SHADOW_AND_GIT = (".git", ".trajectory")


@pytest.fixture
def tree(project: Path) -> Path:
    for i in range(4):
        write(project, f"pkg/sub{i}/mod.py", f"x = {i}\n")
        write(project, f"pkg/sub{i}/deep/data.txt", f"data {i}\n")
    age_everything(project, skip=SHADOW_AND_GIT)
    return project


@pytest.fixture
def hashed(monkeypatch) -> list[list[str]]:
    """The paths each full scan read and hashed, one list per scan."""
    calls: list[list[str]] = []
    real = fullscan.write_blobs

    def spy(repo, root, infos, *args, **kwargs):
        calls.append(sorted(i.rel for i in infos))
        return real(repo, root, infos, *args, **kwargs)

    monkeypatch.setattr(fullscan, "write_blobs", spy)
    return calls


def settle(root: Path) -> None:
    """Two reconciles, then everything aged out of the racy window: the next scan trusts every directory."""
    restart(root)
    age_everything(root, skip=SHADOW_AND_GIT)
    restart(root)  # rows and listings now out of the racy window: every listing packs its files' facts


def test_unchanged_directories_are_skipped_and_an_edit_while_stopped_is_recorded(tree: Path, hashed) -> None:
    settle(tree)
    policy = policy_for(tree)
    recorder = Recorder.open(tree, TrajectorySettings.load(tree))
    try:
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint(), rows=False)
        assert cached.listings["pkg/sub1"].stats is not None
        skipped = scan(tree, policy, listings=cached.listings, skip_clean=True)
        assert "pkg/sub1" in skipped.clean and "pkg/sub1/mod.py" not in skipped.files
        assert skipped.count() == len(scan(tree, policy).files)
    finally:
        recorder.close()
    hashed.clear()
    write(tree, "pkg/sub2/mod.py", "x = 'edited while stopped'\n")
    snap = restart(tree)
    assert snap is not None and [c.path for c in snap.changes] == ["pkg/sub2/mod.py"]
    assert hashed == [["pkg/sub2/mod.py"]]  # nothing else read
    assert recorded(tree, snap.ref, "pkg/sub2/mod.py") == "x = 'edited while stopped'"
    assert restart(tree) is None


def test_a_rewrite_in_the_same_timestamp_tick_with_the_same_size_is_recorded(tree: Path) -> None:
    # the racy case (gitformat-index(5)): the file is scanned within the tick of its last write, then rewritten
    # with content of the same size and its mtime set back to what the scan saw
    settle(tree)
    target = tree / "pkg/sub0/mod.py"
    target.write_text("x = 'A'\n")
    first = restart(tree)
    assert first is not None and recorded(tree, first.ref, "pkg/sub0/mod.py") == "x = 'A'"
    st = target.stat()
    rewrite_in_place(target, "x = 'B'\n")
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    snap = restart(tree)
    assert snap is not None and recorded(tree, snap.ref, "pkg/sub0/mod.py") == "x = 'B'"


def test_an_edit_that_keeps_size_and_mtime_out_of_the_racy_window_is_recorded(tree: Path) -> None:
    settle(tree)
    target = tree / "pkg/sub3/deep/data.txt"
    rewrite_in_place(target, "DATA 3\n")  # same size and the old mtime: only the ctime tells
    snap = restart(tree)
    assert snap is not None and recorded(tree, snap.ref, "pkg/sub3/deep/data.txt") == "DATA 3"


def test_rows_changed_by_snapshots_of_changed_paths_are_not_vouched_for_by_old_listings(tree: Path) -> None:
    settle(tree)
    recorder = Recorder.open(tree, TrajectorySettings.load(tree))
    try:
        write(tree, "pkg/sub1/added.py", "added\n")
        write(tree, "pkg/sub2/mod.py", "x = 'saved'\n")
        past = time.time() - 10
        for rel in ("pkg/sub1/added.py", "pkg/sub2/mod.py"):
            os.utime(tree / rel, (past, past))
        assert recorder.record_paths(["pkg/sub1/added.py", "pkg/sub2/mod.py"]) is not None  # as the watcher does
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint(), rows=False)
        assert cached.listings["pkg/sub1"].stats is None and cached.listings["pkg/sub2"].stats is None
    finally:
        recorder.close()
    os.unlink(tree / "pkg/sub1/added.py")  # while stopped
    age_everything(tree, skip=SHADOW_AND_GIT)
    snap = restart(tree)
    assert snap is not None and {(c.path, c.status) for c in snap.changes} == {("pkg/sub1/added.py", "D")}
    assert restart(tree) is None


def test_a_directory_removed_while_stopped_removes_its_files(tree: Path) -> None:
    settle(tree)
    for name in ("mod.py", "deep/data.txt"):
        os.unlink(tree / "pkg/sub3" / name)
    os.rmdir(tree / "pkg/sub3/deep")
    os.rmdir(tree / "pkg/sub3")
    snap = restart(tree)
    assert snap is not None
    assert {(c.path, c.status) for c in snap.changes} == {("pkg/sub3/mod.py", "D"), ("pkg/sub3/deep/data.txt", "D")}


def test_a_damaged_cache_is_replaced_and_nothing_is_missed(tree: Path) -> None:
    settle(tree)
    cache = tree / ".trajectory/state/statcache.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    cache.write_bytes(b"not a database" * 100)
    write(tree, "pkg/sub0/mod.py", "x = 'edited while the cache was damaged'\n")
    snap = restart(tree)
    assert snap is not None and [c.path for c in snap.changes] == ["pkg/sub0/mod.py"]
    assert restart(tree) is None


@pytest.mark.parametrize("rows_describe_the_tip", [True, False])
def test_a_hostile_cache_is_ignored_safely(tree: Path, tmp_path: Path, rows_describe_the_tip: bool) -> None:
    settle(tree)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret outside the project\n")
    cache = tree / ".trajectory/state/statcache.sqlite"
    db = sqlite3.connect(cache)
    with db:
        # names that climb out of their directory, rows outside the project, a bogus blob id, garbage stats,
        # a bogus mode, columns of different lengths, a row of a directory that names a file of a subdirectory
        rel_out = os.path.relpath(outside, tree / "pkg/sub0")
        db.execute("UPDATE dirs SET files = ?, stats = ? WHERE path = ?",
                   (b"mod.py\0" + os.fsencode(rel_out), os.urandom(64), b"pkg/sub0"))
        db.execute("UPDATE dirs SET stats = ? WHERE path = ?", (12345, b"pkg/sub1"))
        facts = os.urandom(40)
        db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?)", (b"..", b"outside.txt", "f", "0" * 40, facts))
        db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?)", (b"pkg", b"../x", "f", "0" * 40, facts))
        db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?)", (b"/etc", b"passwd", "f", "0" * 40, facts))
        db.execute("UPDATE files SET oids = 'not an oid' || substr(oids, 11) WHERE dir = ?", (b"pkg/sub1",))
        db.execute("UPDATE files SET modes = '5' WHERE dir = ?", (b"pkg/sub0",))
        db.execute("UPDATE files SET names = names || ? WHERE dir = ?", (b"\0other.py", b"pkg/sub2"))
        db.execute("UPDATE files SET names = ? WHERE dir = ?", (b"deep/data.txt", b"pkg/sub3"))
        if not rows_describe_the_tip:  # then the clean directories' files are taken from their rows
            db.execute("UPDATE meta SET value = '' WHERE key = 'tree'")
    db.close()
    write(tree, "pkg/sub1/mod.py", "x = 'edited'\n")
    snap = restart(tree)
    assert snap is not None and [c.path for c in snap.changes] == ["pkg/sub1/mod.py"]
    files = git(tree, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", snap.ref).split()
    assert not any(".." in p or "outside" in p for p in files)
    assert {"pkg/sub2/mod.py", "pkg/sub0/mod.py", "pkg/sub3/mod.py", "pkg/sub3/deep/data.txt"} <= set(files)
    assert restart(tree) is None


@pytest.mark.parametrize(("names", "kept"), [
    (b"mod.py\0..", False), (b"..\0mod.py", False), (b"mod.py\0.\0x", False), (b"mod.py\0\0x", False),
    (b"mod.py\0", False), (b"\0mod.py", False), (b".", False), (b"a/../b", False),
    (b".x\0...\0a..b\0mod.py", True), (b"mod.py", True)])
def test_a_listing_naming_a_parent_or_an_empty_name_is_not_loaded(tree: Path, names: bytes, kept: bool) -> None:
    """The names a listing keeps (packed, as stored) are plain names or the listing is left out (that directory is
    read again): no empty name, no ``.``, ``..``, ``/``, wherever they stand in the column."""
    settle(tree)
    db = sqlite3.connect(tree / ".trajectory/state/statcache.sqlite")
    with db:
        db.execute("UPDATE dirs SET files = ? WHERE path = ?", (names, b"pkg/sub1"))
    db.close()
    recorder = Recorder.open(tree, TrajectorySettings.load(tree))
    try:
        listings = recorder.stat_cache.load(recorder.policy.rules_fingerprint()).listings
    finally:
        recorder.close()
    assert ("pkg/sub1" in listings) is kept and "pkg/sub2" in listings
    if kept:
        assert listings["pkg/sub1"].packed_files == names


def test_a_planted_cache_with_views_or_triggers_is_replaced_not_run(tree: Path) -> None:
    """A copied .trajectory's statcache.sqlite is a program SQLite runs: a ``files`` view over an endless recursive
    query froze every opening of the cache (checkpoint, the server's start-up) at full CPU, and a trigger runs on our
    writes. A cache holding any view, trigger or virtual table is not ours: it is replaced, and the edit recorded.
    (The view here ends, so that the code before the fix fails instead of hanging in SQLite, out of pytest-timeout's
    reach.)"""
    settle(tree)
    cache = tree / ".trajectory/state/statcache.sqlite"
    db = sqlite3.connect(cache)
    with db:
        db.execute("DROP TABLE files")
        db.execute("CREATE VIEW files AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50) "
                   "SELECT x AS dir, x AS names, '' AS modes, '' AS oids, x AS facts FROM c")
        db.execute("CREATE TRIGGER grow AFTER INSERT ON meta BEGIN INSERT INTO dirs (path) VALUES (randomblob(8)); END")
    db.close()
    write(tree, "pkg/sub0/mod.py", "x = 'edited under a planted cache'\n")
    snap = restart(tree)
    assert snap is not None and [c.path for c in snap.changes] == ["pkg/sub0/mod.py"]
    db = sqlite3.connect(cache)
    try:
        assert db.execute("SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger')").fetchall() == []
    finally:
        db.close()
    assert restart(tree) is None
