"""The stat cache's file rows, one database row per directory (:mod:`code_trajectory.recording.statrows`): what is
written is read back exactly, a change rewrites only its directory's rows, removals reach everything below a path,
and a cache of the older layout (one database row per file) keeps its rows, so nothing is hashed again."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import fullscan, statcache, statrows
from code_trajectory.recording.listing import DirListing, listing_digest, pack_names, pack_stats
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.statcache import PAGE_SIZE, CachedScan, StatCache
from code_trajectory.recording.worktree import FileInfo
from support import age_everything, restart, write

OID_A, OID_B = "a" * 40, "b" * 40


def info(rel: str, mode: str = "100644", n: int = 1) -> FileInfo:
    return FileInfo(rel, mode, 10 * n, 1_700_000_000_000_000_000 + n, 1_700_000_000_500_000_000 + n, 1000 + n)


def rows_of(cache: StatCache) -> dict:
    return cache.rows_outside(())


def test_rows_read_back_exactly_and_a_change_rewrites_its_directory_only(tmp_path: Path) -> None:
    cache = StatCache(tmp_path / "statcache.sqlite")
    files = [info("top.py", n=1), info("pkg/a.py", n=2), info("pkg/run.sh", "100755", 3), info("pkg/link", "120000", 4),
             info("pkg/deep/x.txt", n=5), info("odd\udcff name/y", n=6), info("pkg/\udcfe\nz.bin", n=7)]
    cache.save(CachedScan(), hashed=[(f, OID_A) for f in files], removed=[], listings={}, fingerprint="f",
               tree=None, scanned_ns=7)
    expected = {f.rel: (f.signature(), OID_A, 7) for f in files}
    assert rows_of(cache) == expected
    assert cache.rows_outside({"pkg", ""}) == {rel: row for rel, row in expected.items()
                                              if rel.rpartition("/")[0] not in ("pkg", "")}
    # a watcher's snapshot: one file changed, one removed, one added, in two directories
    changed, added = info("pkg/a.py", n=20), info("pkg/new.py", n=21)
    cache.note_recorded(hashed=[(changed, OID_B), (added, OID_B)], removed=["pkg/run.sh", "top.py"], base=None,
                        tree="t", scanned_ns=9)
    expected.update({changed.rel: (changed.signature(), OID_B, 9), added.rel: (added.signature(), OID_B, 9)})
    del expected["pkg/run.sh"], expected["top.py"]
    assert rows_of(cache) == expected
    cache.close()
    assert rows_of(StatCache(tmp_path / "statcache.sqlite")) == expected  # as stored, read by a new process


def test_a_removed_directory_takes_every_row_below_it_and_a_new_file_there_wins(tmp_path: Path) -> None:
    cache = StatCache(tmp_path / "statcache.sqlite")
    files = [info("pkg/a.py"), info("pkg/sub/b.py"), info("pkg/sub/deeper/c.py"), info("pkg/subway.py"),
             info("pkg/sub-x/d.py"), info("other/e.py")]
    cache.save(CachedScan(), hashed=[(f, OID_A) for f in files], removed=[], listings={}, fingerprint="f",
               tree=None, scanned_ns=7)
    cache.note_recorded(hashed=[(info("pkg/sub/again.py", n=3), OID_B)], removed=["pkg/sub"], base=None,
                        tree="t", scanned_ns=8)
    assert sorted(rows_of(cache)) == ["other/e.py", "pkg/a.py", "pkg/sub-x/d.py", "pkg/sub/again.py", "pkg/subway.py"]
    cache.note_recorded(hashed=[], removed=["pkg/a.py", "pkg/sub/again.py"], base=None, tree="t", scanned_ns=9)
    assert sorted(rows_of(cache)) == ["other/e.py", "pkg/sub-x/d.py", "pkg/subway.py"]


def test_a_file_whose_facts_do_not_fit_gets_no_row_and_its_neighbours_keep_theirs(tmp_path: Path) -> None:
    cache = StatCache(tmp_path / "statcache.sqlite")
    huge = FileInfo("pkg/huge.bin", "100644", 1, 1, 1, 2**64 - 1)  # an inode beyond 63 bits
    cache.save(CachedScan(), hashed=[(info("pkg/a.py"), OID_A), (huge, OID_A), (info("pkg/b.py", n=2), OID_A)],
               removed=[], listings={}, fingerprint="f", tree=None, scanned_ns=7)
    assert sorted(rows_of(cache)) == ["pkg/a.py", "pkg/b.py"]


def test_a_cache_of_the_older_layout_keeps_its_rows(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        write(project, f"pkg/sub{i}/mod.py", f"x = {i}\n")
    age_everything(project, skip=(".git", ".trajectory"))
    restart(project)
    path = project / ".trajectory/state/statcache.sqlite"
    cache = StatCache(path)
    before = rows_of(cache)
    cache.close()
    assert len(before) == 6  # the project's three files and ours
    with sqlite3.connect(path) as db:  # as layout 3 stored them: one database row per file
        db.execute("DROP TABLE files")
        db.execute("CREATE TABLE files (path BLOB PRIMARY KEY, mode TEXT, size INTEGER, mtime_ns INTEGER,"
                   " ctime_ns INTEGER, ino INTEGER, oid TEXT, scanned_ns INTEGER, dir BLOB)")
        db.execute("CREATE INDEX files_dir ON files (dir)")
        db.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)", [
            (rel.encode(), *row[0], row[1], row[2], rel.rpartition("/")[0].encode()) for rel, row in before.items()]
            + [(b"../outside.txt", "100644", 1, 1, 1, 1, "0" * 40, 1, b"..")])  # a hostile row: dropped
        db.execute("PRAGMA user_version = 3")
    db.close()
    assert rows_of(StatCache(path)) == before
    write(project, "pkg/sub1/mod.py", "x = 'edited while stopped'\n")
    hashed: list[str] = []
    real = fullscan.write_blobs
    monkeypatch.setattr(fullscan, "write_blobs", lambda repo, root, infos, *args, **kwargs:
                        hashed.extend(i.rel for i in infos) or real(repo, root, infos, *args, **kwargs))
    snap = restart(project)
    assert snap is not None and [c.path for c in snap.changes] == ["pkg/sub1/mod.py"]
    assert hashed == ["pkg/sub1/mod.py"]  # the kept rows vouch for every other file


def test_blob_ids_of_different_lengths_in_one_directory_keep_only_those_as_long_as_the_first(tmp_path: Path) -> None:
    cache = StatCache(tmp_path / "statcache.sqlite")
    cache.save(CachedScan(), hashed=[(info("pkg/a.py"), "a" * 39), (info("pkg/b.py", n=2), "b" * 41),
                                     (info("pkg/c.py", n=3), "c" * 39)],
               removed=[], listings={}, fingerprint="f", tree=None, scanned_ns=7)
    assert rows_of(cache) == {}  # stored as written (39 each), read as no blob id: nothing trusted
    cache.save(CachedScan(), hashed=[(info("pkg/a.py"), OID_A), (info("pkg/b.py", n=2), "b" * 64)],
               removed=[], listings={}, fingerprint="f", tree=None, scanned_ns=7)
    assert sorted(rows_of(cache)) == ["pkg/a.py"]


def test_an_imports_rows_packed_per_directory_are_those_written_file_by_file(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The import hands its rows grouped by directory (``by_dir``): the rows read back are exactly those the file by
    file path writes, a file too large to record (its size note), a symlink, an executable, odd names and nested
    directories included (only the scans' start differs)."""
    root = tmp_path / "project"
    for rel, text in {"top.py": "t = 1\n", "pkg/a.py": "a = 1\n", "pkg/deep/er/b.txt": "b\n", "pkg/run.sh": "run\n",
                      "big/huge.bin": "x" * 6000, "big/small.txt": "s\n", os.fsdecode(b"odd\nname-\xff.txt"): "o\n"}.items():
        write(root, rel, text)
    os.chmod(root / "pkg" / "run.sh", 0o755)
    os.symlink("a.py", root / "pkg" / "link.py")
    age_everything(root, skip=(".trajectory",))
    packed: list[str] = []
    pack_files = statrows._pack_files
    monkeypatch.setattr(statrows, "_pack_files", lambda rel_dir, *args, **kwargs: packed.append(rel_dir)
                        or pack_files(rel_dir, *args, **kwargs))

    def imported(*, grouped: bool) -> dict:
        shutil.rmtree(root / ".trajectory", ignore_errors=True)
        with monkeypatch.context() as patch:
            if not grouped:
                save = StatCache.save
                patch.setattr(StatCache, "save", lambda cache, *args, by_dir=None, **kwargs: save(cache, *args, **kwargs))
            settings = dataclasses.replace(TrajectorySettings.load(root), max_file_bytes=4096)
            recorder = Recorder.open(root, settings)
            try:
                assert recorder.reconcile(with_intent=False) is not None
                rows = recorder.stat_cache.rows_outside(())
            finally:
                recorder.close()
        return {rel: row[:2] for rel, row in rows.items()}

    by_file = imported(grouped=False)
    assert packed == []
    assert imported(grouped=True) == by_file
    assert sorted(packed) == ["", "big", "pkg", "pkg/deep/er"]
    assert {"pkg/link.py", "pkg/run.sh", "big/small.txt", "big/huge.bin"} <= set(by_file)  # huge.bin: a size note
    assert by_file["pkg/run.sh"][0][0] == "100755" and by_file["pkg/link.py"][0][0] == "120000"


def test_a_damaged_directory_row_is_not_trusted_and_a_change_there_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "statcache.sqlite"
    cache = StatCache(path)
    cache.save(CachedScan(), hashed=[(info("pkg/a.py"), OID_A), (info("pkg/b.py", n=2), OID_A),
                                     (info("other/c.py", n=3), OID_A)],
               removed=[], listings={}, fingerprint="f", tree=None, scanned_ns=7)
    cache.close()
    with sqlite3.connect(path) as db:  # pkg's row names a.py twice (and b.py no more)
        db.execute("UPDATE files SET names = ? WHERE dir = ?", (b"a.py\0a.py", b"pkg"))
    db.close()
    cache = StatCache(path)
    assert sorted(rows_of(cache)) == ["other/c.py"]
    cache.note_recorded(hashed=[(info("pkg/a.py", n=9), OID_B)], removed=[], base=None, tree="t", scanned_ns=8)
    assert rows_of(cache) == {"other/c.py": (info("other/c.py", n=3).signature(), OID_A, 7),
                              "pkg/a.py": (info("pkg/a.py", n=9).signature(), OID_B, 8)}


def test_a_new_cache_has_larger_pages_and_one_of_the_default_size_keeps_working(tmp_path: Path) -> None:
    """A new cache is made with :data:`~code_trajectory.recording.statcache.PAGE_SIZE` pages (one directory's row no
    longer leaves most of a 4 KiB page empty); a cache made with SQLite's default pages is read and written as before
    (a page size cannot change once a database in WAL mode has tables)."""
    cache = StatCache(tmp_path / "new.sqlite")
    cache.save(CachedScan(), hashed=[(info("pkg/a.py"), OID_A)], removed=[], listings={}, fingerprint="f", tree=None,
               scanned_ns=7)
    cache.close()
    with sqlite3.connect(tmp_path / "new.sqlite") as db:
        assert db.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE > 4096
    db.close()
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:  # made by an earlier version: SQLite's default page size
        db.execute("PRAGMA journal_mode=WAL")
        statcache._create_schema(db)
    db.close()
    cache = StatCache(old)
    cache.save(CachedScan(), hashed=[(info("pkg/a.py"), OID_A), (info("pkg/b.py", n=2), OID_A)], removed=[],
               listings={}, fingerprint="f", tree=None, scanned_ns=7)
    assert sorted(rows_of(cache)) == ["pkg/a.py", "pkg/b.py"]
    cache.close()
    with sqlite3.connect(old) as db:
        assert db.execute("PRAGMA page_size").fetchone()[0] == 4096
    db.close()


def test_an_imports_save_is_copied_into_the_database_file_aside_and_close_waits_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An import's save (rows grouped by directory) commits without a checkpoint on the caller's thread: a thread with
    its own connection makes it, the connection's automatic checkpoints come back for later writes, and ``close``
    leaves the database file whole (no write-ahead log left) with every row."""
    path = tmp_path / "statcache.sqlite"
    files = [info(f"pkg/m{i}.py", n=i) for i in range(1, 400)]
    threads: list[str] = []
    checkpoint_aside = StatCache._checkpoint_aside
    monkeypatch.setattr(StatCache, "_checkpoint_aside", lambda cache: threads.append("aside") or checkpoint_aside(cache))
    cache = StatCache(path)
    cache.save(CachedScan(), hashed=[(f, OID_A) for f in files], removed=[], listings={}, fingerprint="f", tree=None,
               scanned_ns=7, by_dir={"pkg": ([f.rel[4:] for f in files], files, [OID_A] * len(files), None)})
    assert threads == ["aside"]
    assert cache._conn().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000  # later writes: as before
    cache.save(CachedScan(), hashed=[(info("other/x.py"), OID_B)], removed=[], listings={}, fingerprint="f",
               tree=None, scanned_ns=8)  # file by file: no checkpoint aside
    assert threads == ["aside"]
    cache.close()
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    reopened = StatCache(path)
    rows = rows_of(reopened)
    reopened.close()
    assert len(rows) == len(files) + 1 and rows["pkg/m7.py"][1] == OID_A and rows["other/x.py"][1] == OID_B


def test_a_stat_index_named_with_the_listings_only_when_no_other_process_wrote(tmp_path: Path) -> None:
    """An import names the stat index its git verdict was made on in the save of its listings: the listings then
    carry their digests and the index is the cache's; when another process wrote since the import loaded the cache,
    nothing is named and only that index's file goes (another named one stays)."""
    path = tmp_path / "statcache.sqlite"
    files = [info(f"pkg/m{i}.py", n=i) for i in range(1, 4)]
    listing = DirListing((1, 2), 3, None, pack_names(f.rel[4:] for f in files), (), (), pack_stats(files))
    token, other = "a" * 32 + "-" + "b" * 40, "c" * 32 + "-" + "d" * 40
    cache = StatCache(path)
    for name in (token, other):
        cache.index_path(name).write_bytes(b"index")
    loaded = cache.load("f")
    cache.save(loaded, hashed=[(f, OID_A) for f in files], removed=[], listings={"pkg": listing}, fingerprint="f",
               tree=None, scanned_ns=7, stat_index=(token, {"pkg": listing_digest(listing)}))
    assert cache.stat_index_token() == token and not cache.index_path(other).exists()
    assert cache.load("f").listings["pkg"].indexed == listing_digest(listing)
    cache.index_path(other).write_bytes(b"index")
    stale = cache.load("f")
    cache.save(cache.load("f"), hashed=[], removed=[], listings={"pkg": listing}, fingerprint="f", tree=None,
               scanned_ns=8)  # another writer, as far as ``stale`` knows
    cache.save(stale, hashed=[], removed=[], listings={"pkg": listing}, fingerprint="f", tree=None, scanned_ns=9,
               stat_index=(other, {"pkg": listing_digest(listing)}))
    assert cache.stat_index_token() == token and cache.index_path(token).exists()
    assert not cache.index_path(other).exists()
    cache.close()
