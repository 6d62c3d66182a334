"""The stat cache: which blob each file held when its ``lstat`` facts were last seen.

A full scan (start-up, rescan, checkpoint) looks up every file here and hashes
only those whose mode, size, mtime, ctime or inode changed — git's own index
trick, kept in SQLite (``.trajectory/state/statcache.sqlite``) because the shadow
repository has no index. A row is trusted only when the file's mtime is at least
:data:`RACY_MARGIN_NS` older than the scan that wrote it, so a write landing in
the same timestamp tick as the hashing (git's "racy clean" case) is re-hashed.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path

from code_trajectory.recording.worktree import FileInfo

log = logging.getLogger(__name__)

#: Two seconds: the coarsest mtime resolution of common file systems (FAT; ext4 and
#: APFS are finer), so rows younger than this relative to their scan are re-checked.
RACY_MARGIN_NS = 2_000_000_000


class StatCache:
    """Maps paths to ``(lstat signature, blob id)``; safe to use from several threads.

    Args:
        path: the SQLite file; created on first use. A damaged file is replaced
            (the cache only saves work, it never decides content).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self._db = self._open()
            except sqlite3.DatabaseError as exc:
                log.warning("stat cache %s is unreadable (%s); starting a new one", self.path, exc)
                for suffix in ("", "-wal", "-shm"):
                    try:
                        os.unlink(f"{self.path}{suffix}")
                    except OSError:
                        pass
                self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS files (path BLOB PRIMARY KEY, mode TEXT, size INTEGER,"
                   " mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER, oid TEXT, scanned_ns INTEGER)")
        db.execute("SELECT count(*) FROM files").fetchone()
        return db

    def load(self) -> dict[str, tuple[tuple[str, int, int, int, int], str, int]]:
        """Return ``{path: (signature, oid, scanned_ns)}`` for every cached file."""
        with self._lock:
            try:
                rows = self._conn().execute(
                    "SELECT path, mode, size, mtime_ns, ctime_ns, ino, oid, scanned_ns FROM files").fetchall()
            except sqlite3.DatabaseError as exc:
                log.warning("stat cache unreadable (%s); every file will be hashed", exc)
                return {}
        return {os.fsdecode(r[0]): ((r[1], r[2], r[3], r[4], r[5]), r[6], r[7]) for r in rows}

    @staticmethod
    def trusted(info: FileInfo, cached: tuple[tuple[str, int, int, int, int], str, int] | None) -> str | None:
        """Return the cached blob id when ``info`` matches the row and the row is not racy."""
        if cached is None:
            return None
        signature, oid, scanned_ns = cached
        if signature != info.signature() or info.mtime_ns + RACY_MARGIN_NS > scanned_ns:
            return None
        return oid

    def replace_all(self, rows: list[tuple[FileInfo, str]], scanned_ns: int) -> None:
        """Replace the whole cache with ``rows`` of ``(file, blob id)`` seen by a scan started at ``scanned_ns``."""
        with self._lock:
            try:
                db = self._conn()
                with db:
                    db.execute("DELETE FROM files")
                    db.executemany(
                        "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)",
                        ((os.fsencode(f.rel), f.mode, f.size, f.mtime_ns, f.ctime_ns, f.ino, oid, scanned_ns)
                         for f, oid in rows))
            except sqlite3.DatabaseError as exc:
                log.warning("cannot write the stat cache (%s); the next scan will hash more files", exc)

    def close(self) -> None:
        """Close the database (idempotent)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
