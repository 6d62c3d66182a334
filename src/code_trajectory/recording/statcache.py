"""The stat cache: what the last full scan learned, so the next one does little more than ``lstat``.

It holds three things, in SQLite (``.trajectory/state/statcache.sqlite``) because the shadow
repository has no index:

- per file, the blob it held when its ``lstat`` facts were last seen: a scan hashes only files whose
  mode, size, mtime, ctime or inode changed (git's own index trick). A row is trusted only when the
  file's mtime is at least :data:`~code_trajectory.recording.worktree.RACY_MARGIN_NS` older than the
  scan that wrote it, so a write landing in the same timestamp tick as the hashing (git's "racy
  clean" case, gitformat-index(5)) is re-hashed;
- per directory, its :class:`~code_trajectory.recording.worktree.DirListing`, kept only under the
  same ignore rules (the policy's ``rules_fingerprint``);
- the tree the file rows describe exactly, so a scan compares with the last snapshot without listing
  its tree (``git ls-tree -r``) when that snapshot is the branch's tip.

Several processes (a server and a CLI ``checkpoint``) may scan the same project: a row is a fact about
a file whichever process wrote it, but listings and the tree are only trusted when no other process
wrote in between (a generation number, checked in the write's transaction).

The file rows are stored one database row per directory (:mod:`.statrows`, which packs them), the listings too
(:mod:`.statdirs`); the private git index written from them lives in :mod:`code_trajectory.git.stat_index`, its
use in :mod:`.gitvouch`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from code_trajectory.core.bounded_read import drop_planted_cache
from code_trajectory.core.transactions import immediate_transaction
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.recording import statdirs, statrows
from code_trajectory.recording.statrows import ByDir, Row, RowEntries
from code_trajectory.recording.worktree import RACY_MARGIN_NS, DirListing, FileInfo

if TYPE_CHECKING:
    import sqlite3

__all__ = ["PAGE_SIZE", "SCHEMA_VERSION", "ByDir", "CachedScan", "Row", "RowEntries", "StatCache", "unchanged_checker"]

log = logging.getLogger(__name__)

#: The layout of the tables (``PRAGMA user_version``); a cache of another layout is dropped and rebuilt.
#: 2: each file row names its directory (``dir``, indexed) and each listing packs its files' ``lstat`` facts
#: (``stats``), so a restart reads only the rows of directories that changed.
#: 3: each listing notes the digest of what the stat index holds for it (``indexed``, :mod:`.gitvouch`) and the
#: meta table names the stat index (``stat_index``); a layout 2 cache gains the column and keeps its rows.
#: 4: the file rows are stored one database row per directory (:mod:`.statrows`); those of layouts 2 and 3 are kept,
#: regrouped.
SCHEMA_VERSION = 4

#: The page size of a new cache, in bytes (SQLite's default is 4,096). A row holds one directory's files (~2.5 KB
#: for 25 files): a 4 KiB page holds one such row and leaves the rest empty. Measured writing an import's cache of
#: 500,000 files in 20,000 directories (``bench/import_scale.py``'s tree): 111 MB in 0.78 s with 4 KiB pages, 81 MB
#: in 0.41 s with 16 KiB pages (64 KiB: 75 MB in 0.34 s, but a saved file then rewrites 64 KiB a page it touches).
PAGE_SIZE = 16_384

#: SQLite's default ``wal_autocheckpoint`` (pages), set again after an import's save (:meth:`StatCache.save`).
_AUTOCHECKPOINT_PAGES = 1000

#: Finds what a cache of ours never holds and SQLite would run for us: a view (a ``files`` view over an endless
#: recursive query froze every opening), a trigger, a virtual table.
_NOT_OURS = ("SELECT 1 FROM sqlite_master WHERE type IN ('view', 'trigger') "
             "OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL%') LIMIT 1")

#: A stat index's token, as written by :meth:`StatCache.save_index`: a random name, then the file's SHA-1 checksum.
_TOKEN = re.compile(r"[0-9a-f]{32}-[0-9a-f]{40}")


@dataclass
class CachedScan:
    """What :meth:`StatCache.load` found: file rows, directory listings, the tree the rows describe."""

    rows: dict[str, Row] = field(default_factory=dict)
    listings: dict[str, DirListing] = field(default_factory=dict)
    tree: str | None = None
    generation: str | None = None
    #: the stat index the listings' :attr:`~.worktree.DirListing.indexed` digests describe (a token), if any
    stat_index: str | None = None

    def entries(self) -> RowEntries:
        """The rows as tree entries (path relative to the root -> mode and blob id): :attr:`tree`'s content."""
        return RowEntries(self.rows)

    @staticmethod
    def trusted(info: FileInfo, cached: Row | None) -> str | None:
        """Return the cached blob id when ``info`` matches the row and the row is not racy."""
        if cached is None:
            return None
        signature, oid, scanned_ns = cached
        if signature != info.signature() or info.mtime_ns + RACY_MARGIN_NS > scanned_ns:
            return None
        return oid


def unchanged_checker(root: Path, rows: Mapping[str, Row]) -> Callable[[str, TreeEntry], bool]:
    """A check that a file still holds a recorded entry, by its ``lstat`` alone where the stat cache vouches.

    Args:
        root: the project root; paths given to the check are relative to it.
        rows: :attr:`CachedScan.rows`.

    Returns:
        ``check(path, entry)``: True when ``path``'s row names ``entry``'s blob and the file's ``lstat`` facts are
        the row's, out of the racy window (see :meth:`CachedScan.trusted`). False means "not known", not "changed".
    """
    def check(rel: str, entry: TreeEntry) -> bool:
        row = rows.get(rel)
        if row is None or row[1] != entry.oid:
            return False
        try:
            info = FileInfo.from_stat(rel, os.lstat(f"{root}/{rel}"))
        except OSError:
            return False
        return info is not None and CachedScan.trusted(info, row) == entry.oid

    return check


class StatCache:
    """The stat cache of one shadow repository; safe to use from several threads and processes.

    Args:
        path: the SQLite file; created on first use. A damaged file is replaced
            (the cache only saves work, it never decides content).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._checkpointing: threading.Thread | None = None

    def _conn(self) -> sqlite3.Connection:
        import sqlite3  # here: a hook recording one file never opens the cache, nor pays for the import

        if self._db is None:
            try:
                self._db = self._open()
            except sqlite3.OperationalError:
                raise  # a full disk, a read-only directory, a lock: the cache is kept for when it can be opened
            except sqlite3.DatabaseError as exc:
                log.warning("stat cache %s is unreadable (%s); starting a new one", self.path, exc)
                for suffix in ("", "-wal", "-shm"):
                    with contextlib.suppress(OSError):
                        os.unlink(f"{self.path}{suffix}")
                self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        self.path.parent.mkdir(parents=True, exist_ok=True)
        drop_planted_cache(self.path)  # a symlink or a FIFO in a copied .trajectory: SQLite would follow or block
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        if db.execute(_NOT_OURS).fetchone() is not None:  # a planted cache's code, run by our reads and writes
            db.close()
            raise sqlite3.DatabaseError("it holds a view, a trigger or a virtual table, which a cache of ours never does")
        db.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new database's only: an existing one keeps its own
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            with immediate_transaction(db):  # another process may be upgrading too: check again, inside
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version in (2, 3):
                    if version == 2:
                        db.execute("ALTER TABLE dirs ADD COLUMN indexed BLOB")
                    statrows.regroup(db)
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                elif version != SCHEMA_VERSION:
                    _create_schema(db)
        db.execute("SELECT count(*) FROM files").fetchone()
        return db

    def load(self, fingerprint: str | Callable[[], str], *, rows: bool = True) -> CachedScan:
        """Everything cached; the listings only when made under ``fingerprint``.

        Args:
            fingerprint: :meth:`~code_trajectory.recording.ignore.RecordingPolicy.rules_fingerprint` now, or what
                gives it: called only when the cache holds listings made under some rules (an import need not wait
                for it).
            rows: also load the file rows (else :attr:`CachedScan.rows` is empty: see :meth:`rows_outside`).

        An unreadable cache loads as empty (every file is then hashed, every directory read). A listing whose
        names are not plain names (a ``/``, ``.``, ``..``: a hostile cache) is left out.
        """
        import sqlite3

        with self._lock:
            try:
                db = self._conn()
                db.execute("BEGIN")
                try:
                    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
                    found_rows = db.execute(f"SELECT {statrows.COLUMNS} FROM files").fetchall() if rows else []
                    dirs = (db.execute(f"SELECT {statdirs.COLUMNS} FROM dirs").fetchall()
                            if meta.get("rules") and meta.get("rules") == (
                                fingerprint() if callable(fingerprint) else fingerprint) else [])
                finally:
                    db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                log.warning("stat cache unreadable (%s); every file will be hashed", exc)
                return CachedScan()
        token = meta.get("stat_index")
        found = CachedScan(tree=meta.get("tree") or None, generation=meta.get("generation"),
                           stat_index=token if isinstance(token, str) and _TOKEN.fullmatch(token) else None)
        found.rows = statrows.read(found_rows)
        found.listings = statdirs.read(dirs, indexed=found.stat_index is not None)
        return found

    def rows_outside(self, clean: Collection[str]) -> dict[str, Row]:
        """The file rows, but those of the directories in ``clean`` (paths relative to the root, ``""`` the root).

        A directory's rows that do not unpack are left out (a hostile cache, :func:`.statrows.read`). An unreadable
        cache gives no rows (every file is then hashed).
        """
        import sqlite3

        with self._lock:
            try:
                db = self._conn()
                db.execute("BEGIN")
                try:
                    if not clean:
                        found = db.execute(f"SELECT {statrows.COLUMNS} FROM files").fetchall()
                    else:
                        wanted = [d for (d,) in db.execute("SELECT dir FROM files")
                                  if isinstance(d, bytes) and os.fsdecode(d) not in clean]
                        found = []
                        for d in wanted:
                            found += db.execute(f"SELECT {statrows.COLUMNS} FROM files WHERE dir = ?", (d,)).fetchall()
                finally:
                    db.execute("COMMIT")
            except (sqlite3.DatabaseError, UnicodeError, TypeError) as exc:
                log.warning("stat cache unreadable (%s); every file will be hashed", exc)
                return {}
        return statrows.read(found)

    def save(self, loaded: CachedScan, *, hashed: Iterable[tuple[FileInfo, str]], removed: list[str],
             listings: dict[str, DirListing], fingerprint: str, tree: str | None, scanned_ns: int,
             tracked: str | None = None, by_dir: Mapping[str, ByDir] | None = None,
             stat_index: tuple[str, Mapping[str, bytes]] | None = None) -> None:
        """Write what a scan learned, touching only what changed since ``loaded``.

        Args:
            loaded: what :meth:`load` returned before the scan.
            hashed: ``(file, blob id)`` of the files the scan hashed (rows it trusted stay as they are).
            removed: paths (relative to the project root) whose rows must go: gone, excluded, too large.
            listings: the scan's :attr:`~code_trajectory.recording.worktree.ScanResult.listings`.
            fingerprint: the rules the listings were made under.
            tree: the tree whose entries are now exactly the file rows (the scanned state), if built.
            scanned_ns: ``time.time_ns()`` when the scan started (the racy check compares mtimes with it).
            tracked: :meth:`~.tracked.TrackedFiles.known`, kept for the next process (:meth:`tracked_hint`).
            by_dir: ``hashed`` again, grouped by directory (path relative to the root -> names, files, blob ids in
                one order), every pair once: an import's rows are then packed per directory (:func:`.statrows.write`).
            stat_index: ``(token, digests)``: the stat index to name in the same transaction, as :meth:`save_index`
                names it (its file in place already; an import adopts the one its git verdict was made on); named
                only when no other process wrote meanwhile, else its file is removed.

        When another process wrote since ``loaded``, the listings are dropped and no tree is claimed
        (its rows, facts about files, are kept). Errors are logged, never raised: the next scan does more.
        """
        import sqlite3

        same_rules = bool(loaded.listings) or not listings
        changed = [(rel, lst) for rel, lst in listings.items() if loaded.listings.get(rel) is not lst]
        gone = [rel for rel in loaded.listings if rel not in listings]
        aside = by_dir is not None  # an import's rows: its pages are copied into the database file on a thread
        with self._lock:
            try:
                db = self._conn()
                if aside:
                    db.execute("PRAGMA wal_autocheckpoint = 0")
                try:
                    with immediate_transaction(db):
                        row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
                        alone = (row[0] if row else None) == loaded.generation
                        statrows.write(db, hashed, removed, scanned_ns, by_dir=by_dir)
                        if not alone or not same_rules:
                            db.execute("DELETE FROM dirs")
                            changed, gone = (list(listings.items()), []) if alone else ([], [])
                        token, digests = stat_index if stat_index is not None and alone else (None, {})
                        named = token is not None
                        statdirs.write(db, changed, gone, digests=digests if named else None)
                        meta = {"generation": os.urandom(16).hex(), "rules": fingerprint if alone else "",
                                "tree": tree if alone and tree else "", "tracked": tracked or ""}
                        if token is not None:
                            meta["stat_index"] = token
                        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
                finally:
                    if aside:
                        db.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT_PAGES}")
                if aside:
                    self._checkpoint_aside()
            except (sqlite3.DatabaseError, UnicodeEncodeError) as exc:
                log.warning("cannot write the stat cache (%s); the next scan will hash more files", exc)
                named = False
        if stat_index is not None and named:
            self._keep_index_files(stat_index[0])
        elif stat_index is not None:  # not named: its file goes (another process's named one stays)
            self.index_path(stat_index[0]).unlink(missing_ok=True)

    def _keep_index_files(self, token: str) -> None:
        """Remove the stat index files but the one named ``token``."""
        for old in self.path.parent.glob("statindex-*.index"):
            if old.name != self.index_path(token).name:
                with contextlib.suppress(OSError):
                    old.unlink()

    def _checkpoint_aside(self) -> None:
        """Copy the write-ahead log's pages into the database file on a thread with its own connection (a passive
        checkpoint: writers go on meanwhile); :meth:`close` waits for it. An import's save commits ~80 MB of pages at
        500,000 files: copying them again took 0.17-0.2 s of the import's own thread."""
        def run() -> None:
            import sqlite3

            try:
                db = sqlite3.connect(self.path, timeout=30)
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                finally:
                    db.close()
            except sqlite3.Error as exc:
                log.info("stat cache: checkpoint failed (%s); the next write makes one", exc)

        self._checkpointing = threading.Thread(target=run, name="trajectory-statcache-checkpoint", daemon=True)
        self._checkpointing.start()

    def note_recorded(self, *, hashed: list[tuple[FileInfo, str]], removed: list[str], base: str | None,
                      tree: str, scanned_ns: int, pinned: Mapping[str, TreeEntry] | None = None) -> None:
        """Write what a snapshot of changed paths learned (the watcher's, a hook's), so later full scans trust it.

        Args:
            hashed: ``(file, blob id)`` of the files read and hashed, their ``lstat`` taken before the read.
            removed: paths (relative to the project root) no longer recorded, each with everything below it.
            base: the tree the snapshot was built on; tree: the tree it built (``base`` plus these changes).
            scanned_ns: ``time.time_ns()`` before the files were looked at (the racy check compares with it).
            pinned: entries recorded from content read earlier, not from the work tree (a hand-over's): their rows
                name that blob with facts no file has and a scan time of 0, never trusted, so that the rows still
                describe ``tree`` and a full scan reads each such file again (or sees it gone). Without a row, a
                file deleted after its hand-over stayed in every later snapshot.

        When the rows described ``base``, they now describe ``tree``; otherwise no tree is claimed. Errors are
        logged, never raised.
        """
        import sqlite3

        with self._lock:
            try:
                db = self._conn()
                with immediate_transaction(db):
                    for rel in removed:
                        key = os.fsencode(rel)
                        # the rows of the directory rel and of those below it; rel's own row goes in write()
                        db.execute("DELETE FROM files WHERE dir = ? OR (dir > ? AND dir < ?)",
                                   (key, key + b"/", key + b"0"))  # "0" follows "/": everything below rel
                        db.execute("UPDATE dirs SET stats = NULL WHERE path = ? OR (path > ? AND path < ?)",
                                   (key, key + b"/", key + b"0"))
                    statrows.write(db, hashed, removed, scanned_ns)
                    statrows.write(db, [(FileInfo(rel, entry.mode, 0, 0, 0, 0), entry.oid)
                                        for rel, entry in (pinned or {}).items()], [], 0)
                    # the rows of these directories changed: their listings' packed facts no longer vouch for them
                    db.executemany("UPDATE dirs SET stats = NULL WHERE path = ?", {
                        (os.fsencode(rel.rpartition("/")[0]),)
                        for rel in [*removed, *(f.rel for f, _ in hashed), *(pinned or ())]})
                    row = db.execute("SELECT value FROM meta WHERE key = 'tree'").fetchone()
                    claimed = tree if base is not None and row is not None and row[0] == base else ""
                    db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                   (("tree", claimed), ("generation", os.urandom(16).hex())))
            except (sqlite3.DatabaseError, UnicodeEncodeError) as exc:
                log.warning("cannot write the stat cache (%s); the next scan will hash more files", exc)

    def _meta(self, key: str) -> str | None:
        """The ``meta`` table's text value of ``key``, read alone; None when there is none (or not text), or the
        cache is unreadable."""
        import sqlite3

        with self._lock:
            try:
                row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError:
                return None
        return row[0] if row and isinstance(row[0], str) else None

    def tracked_hint(self) -> str | None:
        """What :meth:`save` kept as ``tracked`` (None: nothing, or an unreadable cache)."""
        return self._meta("tracked") or None

    def stat_index_token(self) -> str | None:
        """The token of the stat index now named (see :meth:`save_index`), read alone; None when there is none."""
        token = self._meta("stat_index")
        return token if token is not None and _TOKEN.fullmatch(token) else None

    def index_path(self, token: str) -> Path:
        """The file of the stat index named ``token`` (a token :meth:`load` or :meth:`stat_index_token` gave)."""
        return self.path.with_name(f"statindex-{token}.index")

    def save_index(self, token: str, digests: Mapping[str, bytes]) -> bool:
        """Name the stat index ``token`` (its file written already) and note, per directory (path relative to the
        root), the :func:`~.worktree.listing_digest` it was written from; every other directory's digest goes.
        Stat index files named by no token are removed afterwards. Returns False when the cache cannot be written
        (logged)."""
        import sqlite3

        with self._lock:
            try:
                db = self._conn()
                with immediate_transaction(db):
                    db.execute("UPDATE dirs SET indexed = NULL WHERE indexed IS NOT NULL")  # no row rewritten in vain
                    db.executemany("UPDATE dirs SET indexed = ? WHERE path = ?",
                                   ((digest, os.fsencode(rel)) for rel, digest in digests.items()))
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('stat_index', ?)", (token,))
            except (sqlite3.DatabaseError, UnicodeEncodeError) as exc:
                log.warning("cannot write the stat cache (%s); the next scan will lstat every file", exc)
                return False
        self._keep_index_files(token)
        return True

    def close(self) -> None:
        """Close the database, once a checkpoint running aside is done (idempotent)."""
        if self._checkpointing is not None:
            self._checkpointing.join()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _create_schema(db: sqlite3.Connection) -> None:
    """Make the tables of :data:`SCHEMA_VERSION`, dropping those of another layout (an older cache: its files are
    hashed once more at the next scan)."""
    for table in ("files", "dirs", "meta"):
        db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute(statrows.TABLE)
    db.execute(statdirs.TABLE)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
