"""The stat cache's file rows, stored one database row per directory (:mod:`.statcache`'s ``files`` table).

A file's row is its ``lstat`` facts, the blob it held and when the scan that saw it started (:data:`Row`). Stored one
per file, an import of 100,000 files paid 0.8 s for as many SQLite rows in a table with two B-trees (issue 29: the
import <= 0.1x of ``git init && git add -A && git commit``); stored one per directory, packed, it pays for ~5,000.
A directory's row holds, in one order: its files' names (NUL-separated, as :func:`~.worktree.pack_names` packs a
listing), one letter per file for its mode, the blob ids one after the other (each of the same length), and five
64-bit integers per file (size, mtime, ctime, inode, the scan's start; all in ns but the size in bytes and the inode).

Changing a file's row rewrites its directory's row (:func:`write`, its packed columns edited where the file stands):
a watcher's snapshot touches a few directories, at a cost that grows with their size (measured on this 2-core
machine: 0.6 ms a snapshot in a directory of 1,000 files, ~7 ms at 10,000, ~110 ms at 100,000 files in one
directory, where a row per file cost ~1 ms at any size: a trade for the import's and the restart's speed).
A directory's row that does not unpack (a damaged or hostile cache: a name that is not a plain name or that is there
twice, a directory that is not a normalized relative path, columns of different lengths, a mode or blob id that is not
one) is left out as a whole: its files are then hashed again, nothing is trusted from it.
"""

from __future__ import annotations

import os
import re
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, cast

from code_trajectory.git.tree_format import MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, TreeEntry
from code_trajectory.recording.listing import MODE_OF
from code_trajectory.recording.worktree import FileInfo

if TYPE_CHECKING:
    import sqlite3

__all__ = ["COLUMNS", "TABLE", "ByDir", "Row", "RowEntries", "names", "plain_names", "read", "regroup", "unpack", "write",
           "write_rows"]

#: ``(lstat signature, blob id, scanned_ns)`` of a file, as stored.
Row = tuple[tuple[str, int, int, int, int], str, int]

#: The ``files`` table's columns, as :func:`unpack` takes them.
COLUMNS = "dir, names, modes, oids, facts"
#: The ``files`` table: a directory's row (path relative to the root, ``b""`` the root) and its files' packed rows.
TABLE = "CREATE TABLE files (dir BLOB PRIMARY KEY, names BLOB, modes TEXT, oids TEXT, facts BLOB)"

#: A directory's files in one order: their names, their ``lstat`` facts, their blob ids (see :func:`write`).
ByDir = tuple["Sequence[str] | bytes", Sequence[FileInfo], Sequence[str], "bytes | None"]

#: A file's row before it is packed: ``(mode, oid, size, mtime_ns, ctime_ns, ino, scanned_ns)``.
_Entry = tuple[str, str, int, int, int, int, int]

_CODES = {MODE_FILE: "f", MODE_EXECUTABLE: "x", MODE_SYMLINK: "l"}
_MODES = {code: mode for mode, code in _CODES.items()}
_HEX = re.compile(r"[0-9a-f]*")
_FACTS = 5  # integers per file in ``facts``
_MODE_OF, _OID_OF, _FACTS_OF = itemgetter(0), itemgetter(1), itemgetter(slice(2, None))
_INFO_FACTS = itemgetter(2, 3, 4, 5)  # of a FileInfo: its size, mtime, ctime, inode

#: :func:`os.fsencode`'s, applied inline where an import encodes 100,000 names.
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def unpack(rel_dir: bytes, packed: bytes, modes: str, oids: str, facts: bytes) -> Iterator[tuple[str, Row]]:
    """The rows of one directory's database row, ``(path relative to the root, row)``; ValueError (or TypeError)
    when it is not one this module wrote (see the module docstring): nothing of it is to be trusted."""
    directory, found, width, numbers = _columns(rel_dir, packed, modes, oids, facts)
    mode_of = _MODES
    it = iter(numbers)
    prefix = f"{directory}/" if directory else ""
    for name, code, oid_at, (size, mtime_ns, ctime_ns, ino, scanned_ns) in zip(
            found, modes, range(0, len(oids), width), zip(it, it, it, it, it)):
        yield prefix + name, ((mode_of[code], size, mtime_ns, ctime_ns, ino), oids[oid_at:oid_at + width], scanned_ns)


def _columns(rel_dir: bytes, packed: bytes, modes: str, oids: str, facts: bytes) -> tuple[str, list[str], int, array]:
    """A directory's database row checked (see :func:`unpack`): its directory, its names, the length of its blob
    ids, its facts as integers."""
    if not isinstance(rel_dir, bytes) or not isinstance(modes, str) or not isinstance(oids, str) \
            or not isinstance(facts, bytes):
        raise TypeError("not a row of the stat cache")
    directory = rel_dir.decode(_FS_ENCODING, _FS_ERRORS)
    if directory and (directory.startswith("/") or any(p in ("", ".", "..") for p in directory.split("/"))):
        raise ValueError("not a normalized relative directory")
    packed = plain_names(packed)
    found = packed.decode(_FS_ENCODING, _FS_ERRORS).split("\0") if packed else []  # as write() encoded them
    count = len(found)
    width = len(oids) // count if count else 0
    if not count or len(modes) != count or modes.strip("fxl") or width not in (40, 64) \
            or len(oids) != width * count or not _HEX.fullmatch(oids) or len(facts) != 8 * _FACTS * count:
        raise ValueError("columns of another length")
    if len(set(found)) != count:
        raise ValueError("a name twice")
    numbers = array("q")
    numbers.frombytes(facts)
    return directory, found, width, numbers


def read(found: Iterable[tuple]) -> dict[str, Row]:
    """The rows of the directories' database rows ``found`` (:data:`COLUMNS`, in that order), by path relative to the
    root; a directory whose row does not unpack is left out (a damaged or hostile cache)."""
    rows: dict[str, Row] = {}
    for columns in found:
        try:
            rows.update(list(unpack(*columns)))  # all of the directory's rows, or none
        except (ValueError, TypeError, KeyError, UnicodeError):
            continue
    return rows


def write(db: sqlite3.Connection, hashed: Iterable[tuple[FileInfo, str]], removed: Iterable[str],
          scanned_ns: int, *, by_dir: Mapping[str, ByDir] | None = None) -> None:
    """Remove the rows of ``removed`` (paths relative to the root), then set those of ``hashed`` (``(file, blob id)``,
    scanned at ``scanned_ns``), rewriting the database row of each directory they are in.

    Args:
        by_dir: ``hashed`` grouped by directory (path relative to the root -> the names, files and blob ids of its
            files in ``hashed``, in one order), each pair once: when the table is empty (an import), each directory's
            row is packed from them in C, not file by file.

    Raises:
        sqlite3.DatabaseError: as the database raises it. A file whose facts do not fit 64 bits or whose blob id is
        not as long as the others of its directory gets no row (it is hashed again at the next scan).
    """
    if by_dir is not None and db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:  # nothing to remove
        _insert(db, [row for rel_dir, files in by_dir.items()
                     if (row := _pack_files(rel_dir, *files, scanned_ns=scanned_ns))])
        return
    changes: dict[str, dict[str, _Entry | None]] = {}
    for rel in removed:
        rel_dir, _, name = rel.rpartition("/")
        changes.setdefault(rel_dir, {})[name] = None
    for (rel, mode, size, mtime_ns, ctime_ns, ino), oid in hashed:  # unpacked in C: 100,000 at an import
        rel_dir, _, name = rel.rpartition("/")
        group = changes.get(rel_dir)
        if group is None:
            group = changes[rel_dir] = {}
        group[name] = (mode, oid, size, mtime_ns, ctime_ns, ino, scanned_ns)
    _apply(db, changes)


def write_rows(db: sqlite3.Connection, rows: Iterable[tuple[str, Row]]) -> None:
    """Set the ``rows`` given by path relative to the root (rows kept from another layout of the cache)."""
    changes: dict[str, dict[str, _Entry | None]] = {}
    for rel, ((mode, size, mtime_ns, ctime_ns, ino), oid, scanned_ns) in rows:
        rel_dir, _, name = rel.rpartition("/")
        changes.setdefault(rel_dir, {})[name] = (mode, oid, size, mtime_ns, ctime_ns, ino, scanned_ns)
    _apply(db, changes)


def _apply(db: sqlite3.Connection, changes: dict[str, dict[str, _Entry | None]]) -> None:
    """Rewrite the database row of each directory of ``changes`` (directory -> name -> entry, None: no row)."""
    enc, errors = _FS_ENCODING, _FS_ERRORS
    existing: dict[bytes, tuple] = {}
    if changes and db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:  # else an import: none to read
        keys = [rel_dir.encode(enc, errors) for rel_dir in changes]
        for start in range(0, len(keys), 500):  # SQLite's limit of bound parameters: 999 before 3.32
            chunk = keys[start:start + 500]
            existing.update((row[0], row) for row in db.execute(
                f"SELECT {COLUMNS} FROM files WHERE dir IN ({','.join('?' * len(chunk))})", chunk))
    gone: list[tuple[bytes]] = []
    packed: list[tuple[bytes, bytes, str, str, bytes]] = []
    for rel_dir, group in changes.items():
        key = rel_dir.encode(enc, errors)
        entries: dict[str, _Entry | None]
        if key in existing:
            try:
                patched = _patch(existing[key], group)
            except (ValueError, TypeError, KeyError, UnicodeError, OverflowError):
                pass  # a damaged row, or a change it cannot hold as it is: unpacked and packed again
            else:
                if patched is None:
                    gone.append((key,))
                else:
                    packed.append(patched)
                continue
            try:
                entries = {rel.rpartition("/")[2]: (row[0][0], row[1], *row[0][1:], row[2])
                           for rel, row in unpack(*existing[key])}
            except (ValueError, TypeError, KeyError, UnicodeError):
                entries = {}  # a damaged row: replaced by what this scan knows
            entries.update(group)
        else:
            entries = group
        row = _pack(key, entries)
        if row is None:
            gone.append((key,))
        else:
            packed.append(row)
    if gone:
        db.executemany("DELETE FROM files WHERE dir = ?", gone)
    _insert(db, packed)


def _insert(db: sqlite3.Connection, packed: list[tuple[bytes, bytes, str, str, bytes]]) -> None:
    packed.sort(key=itemgetter(0))  # B-tree pages filled one after the other
    db.executemany(f"INSERT OR REPLACE INTO files ({COLUMNS}) VALUES (?,?,?,?,?)", packed)


def _pack_files(rel_dir: str, names: Sequence[str] | bytes, infos: Sequence[FileInfo], oids: Sequence[str],
                stats: bytes | None, *, scanned_ns: int) -> tuple[bytes, bytes, str, str, bytes] | None:
    """One directory's database row from its files (names, or as :func:`~.listing.pack_names` packs them; ``lstat``
    facts; blob ids; in one order; ``stats``, if known, their facts as :func:`~.listing.pack_stats` packed them), in
    C; None when it has none."""
    if not infos:
        return None
    key = rel_dir.encode(_FS_ENCODING, _FS_ERRORS)
    try:
        if len(set(map(len, oids))) != 1:
            raise ValueError("blob ids of different lengths")
        return _row(key, names, map(_CODES.__getitem__, map(MODE_OF, infos)), oids, _facts(infos, stats, scanned_ns))
    except (ValueError, KeyError, OverflowError):
        return _pack_each(key, ((name, (info.mode, oid, info.size, info.mtime_ns, info.ctime_ns, info.ino, scanned_ns))
                                for name, info, oid in zip(_names_of(names), infos, oids)))


def _names_of(names: Sequence[str] | bytes) -> Sequence[str]:
    return names.decode(_FS_ENCODING, _FS_ERRORS).split("\0") if isinstance(names, bytes) else names


def _facts(infos: Sequence[FileInfo], stats: bytes | None, scanned_ns: int) -> array[int]:
    """Each file's size, mtime, ctime, inode and ``scanned_ns`` as 64-bit integers: from ``stats`` (the first four,
    packed) when it holds as many files, by slices of arrays (an import: 25,000 directories, no tuple a file);
    else from ``infos``. Raises OverflowError for a number that does not fit."""
    count = len(infos)
    if stats is not None and len(stats) == 32 * count:
        known = array("q")
        known.frombytes(stats)
        facts = array("q", bytes(40 * count))
        for at in range(4):
            facts[at::5] = known[at::4]
        facts[4::5] = array("q", (scanned_ns,)) * count
        return facts
    return array("q", chain.from_iterable(map(add, map(_INFO_FACTS, infos), repeat((scanned_ns,)))))


def _row(key: bytes, names: Iterable[str] | bytes, modes: Iterable[str], oids: Iterable[str],
         facts: array) -> tuple[bytes, bytes, str, str, bytes]:
    """A directory's database row from its columns, in one order: the names joined by NUL and encoded as
    :func:`os.fsencode` encodes them (``names`` may be that already), the mode codes and blob ids joined, the
    facts as bytes."""
    packed = names if isinstance(names, bytes) else "\0".join(names).encode(_FS_ENCODING, _FS_ERRORS)
    return key, packed, "".join(modes), "".join(oids), facts.tobytes()


def _patch(row: tuple, group: dict[str, _Entry | None]) -> tuple[bytes, bytes, str, str, bytes] | None:
    """The directory's database row ``row`` with the changes of ``group`` (name -> entry, None: no row), edited in its
    packed columns: per changed file, not per file of the directory (a watcher's snapshot in a directory of 10,000
    files: ~1 ms instead of ~30). None when no file is left. Raises ValueError (or TypeError, KeyError, UnicodeError,
    OverflowError) when ``row`` does not unpack or a change cannot be stored as it is (see :func:`_pack_each`)."""
    key = row[0]
    _directory, names, width, numbers = _columns(*row)
    modes, oids = list(row[2]), [row[3][at:at + width] for at in range(0, len(row[3]), width)]
    index = dict(zip(names, range(len(names))))
    dropped: list[int] = []
    for name, entry in group.items():
        at = index.get(name)
        if entry is None:
            if at is not None:
                dropped.append(at)
                del index[name]
            continue
        mode, oid, *facts = entry
        if len(oid) != width:
            raise ValueError("a blob id of another length")
        code, packed_facts = _CODES[mode], array("q", facts)
        if at is None:
            index[name] = len(names)
            names.append(name)
            modes.append(code)
            oids.append(oid)
            numbers.extend(packed_facts)
        else:
            modes[at], oids[at] = code, oid
            numbers[at * _FACTS:(at + 1) * _FACTS] = packed_facts
    for at in sorted(dropped, reverse=True):
        del names[at], modes[at], oids[at], numbers[at * _FACTS:(at + 1) * _FACTS]
    if not names:
        return None
    return _row(key, names, modes, oids, numbers)


def _pack(key: bytes, entries: dict[str, _Entry | None]) -> tuple[bytes, bytes, str, str, bytes] | None:
    """One directory's database row from its files' entries (None entries left out); None when none is left."""
    values = list(entries.values())
    if None in values:
        entries = {name: entry for name, entry in entries.items() if entry is not None}
        values = list(entries.values())
    if not values:
        return None
    found = cast("list[_Entry]", values)  # no None left
    try:  # in C, per directory: the common case
        if len(set(map(len, map(_OID_OF, found)))) != 1:
            raise ValueError("blob ids of different lengths")
        return (key, "\0".join(entries).encode(_FS_ENCODING, _FS_ERRORS),
                "".join(map(_CODES.__getitem__, map(_MODE_OF, found))), "".join(map(_OID_OF, found)),
                array("q", chain.from_iterable(map(_FACTS_OF, found))).tobytes())
    except (ValueError, KeyError, OverflowError):
        return _pack_each(key, entries.items())  # type: ignore[arg-type]  # no None


def _pack_each(key: bytes, live: Iterable[tuple[str, _Entry]]) -> tuple[bytes, bytes, str, str, bytes] | None:
    """:func:`_pack`, leaving out the files whose row cannot be stored: a mode that is not a file's, facts that do
    not fit 64 bits, a blob id not as long as the first one."""
    kept: list[str] = []
    modes: list[str] = []
    oids: list[str] = []
    numbers = array("q")
    width = 0
    for name, (mode, oid, *facts) in live:
        width = width or len(oid)
        if len(oid) != width or mode not in _CODES:
            continue
        try:
            numbers.extend(facts)
        except OverflowError:
            del numbers[len(kept) * _FACTS:]  # what was appended before the value that does not fit
            continue
        kept.append(name)
        modes.append(_CODES[mode])
        oids.append(oid)
    if not kept:
        return None
    return _row(key, kept, modes, oids, numbers)


def names(packed: bytes) -> tuple[str, ...]:
    """The names of a packed column (a listing's, a directory's row); ValueError when one is not a plain name (a
    hostile or damaged cache)."""
    packed = plain_names(packed)
    return tuple(packed.decode("utf-8", "surrogateescape").split("\0")) if packed else ()


def plain_names(packed: bytes) -> bytes:
    """A packed column of names as stored (NUL-separated names, :func:`~.worktree.pack_names`), checked but not
    decoded: :attr:`~.worktree.DirListing.packed_files` keeps it so. ValueError when a name is not a plain name (a
    hostile or damaged cache)."""
    if not packed:
        return b""
    if not isinstance(packed, bytes) or b"/" in packed or _not_plain(packed):
        raise ValueError("not a plain name")
    return packed


def _not_plain(packed: bytes) -> bool:
    """True when one of the NUL-separated names in ``packed`` (not empty) is empty, ``.`` or ``..``.

    Substring tests (in C) rather than a regular expression: a restart of a large project checks every listing
    (25,000 at 500,000 files: 0.25-0.55 s of CPU with the pattern ``(?:^|\\0)\\.{0,2}(?:\\0|$)``, 0.06-0.08 s
    so, at the same load).
    """
    if packed[:1] not in (b".", b"\0") and not packed.endswith(b"\0") and b"\0." not in packed \
            and b"\0\0" not in packed:
        return False  # no name is empty or starts with a dot: the common case, two scans
    return (packed in (b".", b"..") or packed.startswith((b"\0", b".\0", b"..\0"))
            or packed.endswith((b"\0", b"\0.", b"\0..")) or b"\0\0" in packed or b"\0.\0" in packed
            or b"\0..\0" in packed)


class RowEntries(Mapping[str, TreeEntry]):
    """A read-only view of file rows as tree entries, built on access (100,000 rows are never copied)."""

    def __init__(self, rows: dict[str, Row]) -> None:
        self._rows = rows

    def __getitem__(self, path: str) -> TreeEntry:
        row = self._rows[path]
        return TreeEntry(row[0][0], row[1])

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, path: object) -> bool:
        return path in self._rows


def regroup(db: sqlite3.Connection) -> None:
    """The file rows of layouts 2 and 3 (one database row per file) regrouped one per directory:
    the next scan hashes no file again. A row whose path or fields are not those of a file row is dropped."""
    old = db.execute("SELECT path, mode, size, mtime_ns, ctime_ns, ino, oid, scanned_ns FROM files").fetchall()
    db.execute("DROP TABLE files")
    db.execute(TABLE)
    write_rows(db, ((os.fsdecode(r[0]), ((r[1], r[2], r[3], r[4], r[5]), r[6], r[7])) for r in old
                    if isinstance(r[0], bytes) and _plain_path(os.fsdecode(r[0])) and isinstance(r[6], str)
                    and all(isinstance(v, int) for v in r[2:6]) and isinstance(r[7], int)))


def _plain_path(rel: str) -> bool:
    return bool(rel) and not rel.startswith("/") and not any(p in ("", ".", "..") for p in rel.split("/"))
