"""The stat cache's directory listings, one database row per directory (:mod:`.statcache`'s ``dirs`` table).

A row is a :class:`~.listing.DirListing`: the directory's ``(mtime, inode)`` before it was read, when the scan that
read it started, its ``.gitignore``'s stamp (JSON), the names of its recorded files and of the subdirectories
entered (packed as :func:`~.listing.pack_names` packs them), the subdirectories not entered with their mtimes
(JSON), its files' packed ``lstat`` facts and the digest the stat index holds for it (:mod:`.gitvouch`). A row
that does not read as a listing (a damaged or hostile cache: a name that is not a plain name, a field of another
type) is left out: that directory is read again.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from code_trajectory.recording import statrows
from code_trajectory.recording.listing import DirListing, pack_names

if TYPE_CHECKING:
    import sqlite3

__all__ = ["COLUMNS", "TABLE", "read", "write"]

log = logging.getLogger(__name__)

#: The ``dirs`` table's columns, as :func:`read` takes them.
COLUMNS = "path, mtime_ns, ino, scanned_ns, ignore_file, files, subdirs, excluded, stats, indexed"
TABLE = ("CREATE TABLE dirs (path BLOB PRIMARY KEY, mtime_ns INTEGER, ino INTEGER, scanned_ns INTEGER,"
         " ignore_file TEXT, files BLOB, subdirs BLOB, excluded TEXT, stats BLOB, indexed BLOB)")

_UPSERT = ("INSERT INTO dirs (" + COLUMNS + ") VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (path) DO UPDATE SET"
           " mtime_ns = excluded.mtime_ns, ino = excluded.ino, scanned_ns = excluded.scanned_ns, ignore_file ="
           " excluded.ignore_file, files = excluded.files, subdirs = excluded.subdirs, excluded = excluded.excluded,"
           " stats = excluded.stats")


def read(found: Iterable[tuple], *, indexed: bool) -> dict[str, DirListing]:
    """The listings of the ``dirs`` rows ``found`` (:data:`COLUMNS`), by directory (relative to the root, ``""`` the
    root); with ``indexed`` False (no stat index is named) their :attr:`~.listing.DirListing.indexed` digests are
    left out. A row that does not read as a listing is left out (logged at debug level)."""
    listings: dict[str, DirListing] = {}
    for path, mtime_ns, ino, scanned_ns, ignore_file, files, subdirs, excluded, stats, digest in found:
        try:
            listings[os.fsdecode(path)] = DirListing(
                (mtime_ns, ino), scanned_ns, tuple(json.loads(ignore_file)) if ignore_file else None,
                statrows.plain_names(files), statrows.names(subdirs),
                tuple((n, m) for n, m in json.loads(excluded)) if excluded != "[]" else (),
                stats if isinstance(stats, bytes) else None,
                digest if isinstance(digest, bytes) and indexed else None)
        except (ValueError, TypeError):
            log.debug("stat cache: listing of %r is not one; that directory will be read", path)
    return listings


def write(db: sqlite3.Connection, changed: Iterable[tuple[str, DirListing]], gone: Iterable[str], *,
          digests: Mapping[str, bytes] | None = None) -> None:
    """Remove the listings of ``gone`` and write those of ``changed`` (``(directory, listing)``, directories relative
    to the root), in ``db``'s open transaction.

    A listing's ``indexed`` digest stays as it is (it names what the named stat index vouches for), unless
    ``digests`` is given (a stat index is named now): then every digest is cleared first, and those of ``changed``
    are ``digests``' (none where it has none).
    """
    db.executemany("DELETE FROM dirs WHERE path = ?", ((os.fsencode(p),) for p in gone))
    if digests is not None:
        db.execute("UPDATE dirs SET indexed = NULL WHERE indexed IS NOT NULL")
    found = digests or {}
    db.executemany(_UPSERT + (", indexed = excluded.indexed" if digests is not None else ""), (
        (os.fsencode(rel), lst.signature[0], lst.signature[1], lst.scanned_ns,
         json.dumps(lst.ignore_file) if lst.ignore_file else None, lst.packed_files, pack_names(lst.subdirs),
         json.dumps(lst.excluded) if lst.excluded else "[]", lst.stats, found.get(rel))
        for rel, lst in changed))
