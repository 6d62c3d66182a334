"""An index of the commits that changed each file, so a file's versions are found without walking the history.

``git log -- <path>`` walks every commit down to the oldest version it is asked for, Bloom filters or not: at
100,000 snapshots reading the ~850 versions an old function's history needs took 0.3-0.5 s of git alone (0.3 s
to list the commits at all, ``git rev-list``). This index keeps, per shadow branch, the branch's commits (oldest
first) and for each path the positions of the commits whose ``git log --raw --no-renames`` lists it, so the
versions of a file are the commits at those positions, read with one ``git log --no-walk --stdin -- <path>``.
A commit that changed more than :data:`WIDE_COMMIT` files (an import) is not listed under each path but kept
aside as a candidate for every path (git's ``--no-walk`` read drops it where it did not change the path).

Stored per branch (``state/file-index/<sha1 of ref>.bin``; 100,000 snapshots of 100 files: 2.6 MB): a header
(the tip it covers, a digest of ``.trajectory/shallow``, counts), the commit ids, the wide commits' positions, a
table of paths (the first 8 bytes of each path's SHA-1, sorted) with their runs of positions, the positions
(little-endian ``uint32``), and a SHA-1 of all that. It is written by maintenance (:func:`update_all`) and
covers a linear history only (each commit's one parent is the one before it: the shadow branches are; one that
is not is marked and never used). Commits newer than the index are listed by git (``git log tip ^indexed``).

The file is untrusted input like everything in ``.trajectory``: one that does not parse or whose digest does not
match is ignored; one whose tip is not an ancestor, or whose shallow digest is not the repository's, is stale.
Each version read through it is checked (:mod:`code_trajectory.git.indexed_log`): a commit that does not change
the path, a parent that is not the previous commit, a version whose older side is not the next version's newer
side make the read fall back to ``git log``; the index can hide nothing git's walk would find unless it is
rewritten consistently (which needs write access to ``.trajectory``, where the history itself lives).
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import os
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import GitError
from code_trajectory.git import branch_indexes
from code_trajectory.git.shadow import ShadowRepo

log = logging.getLogger(__name__)

MAGIC = b"CTFI1\n"
#: Changed files past which a commit is kept aside as a candidate for every path instead of listed under each
#: (an import of 500,000 files would otherwise cost 500,000 entries).
WIDE_COMMIT = 1000
_HEADER = struct.Struct("<20s20sIIII")  # tip, shallow digest, flags, commits, wide commits, paths
_ROW = struct.Struct("<8sII")  # path key, first position's index, count
_NONLINEAR = 1
_NO_SHALLOW = bytes(20)
_DIGEST = 20


#: Largest index (or ``shallow``) file read, bytes.
MAX_INDEX_BYTES = 512 * 1024 * 1024

def _index_path(repo: ShadowRepo, ref: str) -> Path:
    return repo.state_dir / "file-index" / (hashlib.sha1(ref.encode("utf-8", "surrogateescape")).hexdigest()
                                            + ".bin")


def path_key(path: bytes) -> bytes:
    """The key of a path (as git prints it, bytes) in the table: the first 8 bytes of its SHA-1."""
    return hashlib.sha1(path).digest()[:8]


def shallow_digest(repo: ShadowRepo) -> bytes:
    """SHA-1 of ``.trajectory/shallow`` (20 zero bytes when there is none): dropping old history
    (:func:`code_trajectory.git.maintenance.enforce_size_cap`) changes it, and with it what ``git log`` reaches."""
    path = repo.git_dir / "shallow"
    if not os.path.lexists(path):
        return _NO_SHALLOW
    data = read_bounded(path, MAX_INDEX_BYTES)
    return hashlib.sha1(data).digest() if data is not None else b"\xff" * 20  # unreadable: matches no index


@dataclass
class FileIndex:
    """A branch's index: commit ids by position (oldest first) and each path's positions.

    Attributes:
        tip: the commit the index covers (hex), the newest at position ``count - 1``.
        shallow: :func:`shallow_digest` when it was written.
        linear: False when the history is not a single chain of first parents (the index is then not used).
        oids: the commit ids, 20 bytes each, concatenated (position order).
        wide: positions of the commits kept aside (ascending).
        paths: path key -> its positions (ascending), for a parsed index filled in as paths are looked up
            (:meth:`runs` reads them all).
    """

    tip: str
    shallow: bytes
    linear: bool
    oids: bytes = b""
    wide: list[int] = field(default_factory=list)
    paths: dict[bytes, list[int]] = field(default_factory=dict)
    _table: memoryview | None = None  # a parsed index's rows of (key, first, count), then its positions
    _rows: int = 0
    _total: int = 0

    @property
    def count(self) -> int:
        return len(self.oids) // 20

    def oid(self, position: int) -> str:
        """The commit at ``position`` (hex)."""
        return self.oids[position * 20:position * 20 + 20].hex()

    def position(self, oid: str) -> int | None:
        """The position of commit ``oid`` (hex), or None when the index does not hold it."""
        try:
            wanted = bytes.fromhex(oid)
        except ValueError:
            return None
        if len(wanted) != 20:
            return None
        at = self.oids.rfind(wanted)  # the newest commits are asked for most
        while at >= 0 and at % 20:
            at = self.oids.rfind(wanted, 0, at + 19)
        return at // 20 if at >= 0 else None

    def _run(self, key: bytes) -> list[int]:
        """The positions listed under ``key``.

        Raises:
            ValueError: the stored run is out of order or out of range (a damaged index).
        """
        if key in self.paths or self._table is None:
            return self.paths.get(key, [])
        low, high = 0, self._rows
        while low < high:  # the rows are sorted by key
            mid = (low + high) // 2
            if bytes(self._table[mid * _ROW.size:mid * _ROW.size + 8]) < key:
                low = mid + 1
            else:
                high = mid
        run: list[int] = []
        if low < self._rows:
            found, first, length = _ROW.unpack_from(self._table, low * _ROW.size)
            if found == key:
                if first + length > self._total:
                    raise ValueError("file index run out of range")
                at = self._rows * _ROW.size + 4 * first
                run = list(struct.unpack_from(f"<{length}I", self._table, at))
                if not _ascending(run, self.count):
                    raise ValueError("file index run out of order")
        self.paths[key] = run
        return run

    def runs(self) -> dict[bytes, list[int]]:
        """Every path's positions (to extend and write the index again).

        Raises:
            ValueError: the stored table is out of order or out of range.
        """
        if self._table is not None:
            last = b""
            for row in range(self._rows):
                key = bytes(self._table[row * _ROW.size:row * _ROW.size + 8])
                if key <= last:
                    raise ValueError("file index table out of order")
                self._run(key)
                last = key
            self._table = None
        return self.paths

    def candidates(self, path: str, up_to: int) -> list[int]:
        """Positions of the commits that may have changed ``path`` (as git prints it), at or before ``up_to``,
        newest first: those listed under its key, and the wide commits.

        Raises:
            ValueError: the stored run is out of order or out of range (a damaged index).
        """
        listed = self._run(path_key(os.fsencode(path)))
        found = sorted({*listed[:bisect.bisect_right(listed, up_to)],
                        *self.wide[:bisect.bisect_right(self.wide, up_to)]})
        return found[::-1]

    def serialize(self) -> bytes:
        paths = self.runs()
        keys = sorted(paths)
        rows, runs, first = [], [], 0
        for key in keys:
            run = paths[key]
            rows.append(_ROW.pack(key, first, len(run)))
            runs.append(struct.pack(f"<{len(run)}I", *run))
            first += len(run)
        body = b"".join([MAGIC, _HEADER.pack(bytes.fromhex(self.tip), self.shallow, 0 if self.linear else _NONLINEAR,
                                             self.count, len(self.wide), len(keys)),
                         self.oids, struct.pack(f"<{len(self.wide)}I", *self.wide), *rows, *runs])
        return body + hashlib.sha1(body).digest()

    @classmethod
    def parse(cls, data: bytes) -> FileIndex:
        """Check and parse a stored index; its paths' runs are read when looked up.

        Raises:
            ValueError, struct.error: not an index (damaged, truncated, or not ours).
        """
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _HEADER.size + _DIGEST:
            raise ValueError("not a file index")
        body = memoryview(data)[:-_DIGEST]
        if hashlib.sha1(body).digest() != data[-_DIGEST:]:
            raise ValueError("file index does not match its digest")
        pos = len(MAGIC)
        tip, shallow, flags, count, wide, rows = _HEADER.unpack_from(data, pos)
        pos += _HEADER.size
        table_at = pos + 20 * count + 4 * wide
        total, rest = divmod(len(body) - table_at - _ROW.size * rows, 4)
        if total < 0 or rest:
            raise ValueError("truncated file index")
        index = cls(tip.hex(), shallow, not flags & _NONLINEAR, bytes(data[pos:pos + 20 * count]))
        index.wide = list(struct.unpack_from(f"<{wide}I", data, pos + 20 * count))
        if not _ascending(index.wide, count):
            raise ValueError("file index positions out of range")
        index._table, index._rows, index._total = body[table_at:], rows, total
        return index


def _ascending(run: list[int], count: int) -> bool:
    return all(a < b for a, b in zip(run, run[1:])) and (not run or run[-1] < count)


def load(repo: ShadowRepo, ref: str) -> FileIndex | None:
    """The stored index of ``ref``, or None (none yet, or a file that does not parse)."""
    return branch_indexes.load(_index_path(repo, ref), FileIndex.parse, limit=MAX_INDEX_BYTES,
                               what=f"file index of {ref}")


def _tokens(stream) -> Iterator[bytes]:  # type: ignore[no-untyped-def]
    """NUL-separated tokens of a stream, read 64 KiB at a time."""
    tail = b""
    while chunk := stream.read(1 << 16):
        parts = (tail + chunk).split(b"\0")
        tail = parts.pop()
        yield from parts
    if tail:
        yield tail


def _extend(repo: ShadowRepo, index: FileIndex, revs: list[str]) -> int:
    """Append the commits ``git log revs`` lists (oldest first) to ``index``; returns how many. A commit whose
    parents are not exactly the one before it marks the index non-linear.

    Raises:
        GitError: git failed or printed what is not a raw log.
    """
    proc = repo.git.popen(["log", "--reverse", "-z", "--raw", "--no-renames", "--no-abbrev", "--format=%x01%H %P",
                           "--end-of-options", *revs, "--"], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    added = 0
    oids = bytearray(index.oids)
    index.runs()
    changed: list[bytes] = []

    def close_commit() -> None:
        position = len(oids) // 20 - 1
        if len(changed) > WIDE_COMMIT:
            index.wide.append(position)
        else:
            for key in dict.fromkeys(changed):
                index.paths.setdefault(key, []).append(position)
        changed.clear()

    assert proc.stdout is not None
    with proc:
        tokens = _tokens(proc.stdout)
        for token in tokens:
            token = token.lstrip(b"\n")
            if token.startswith(b":"):  # a raw record; its path is the next token (no renames: one path)
                path = next(tokens, None)
                if path is None or len(oids) == 0:
                    raise GitError("git log --raw printed a record without a path or a commit")
                if len(changed) <= WIDE_COMMIT:
                    changed.append(path_key(path))
                continue
            fields = token[1:].split() if token.startswith(b"\x01") else []
            try:
                commit, parents = bytes.fromhex(fields[0].decode()), [bytes.fromhex(p.decode()) for p in fields[1:]]
            except (ValueError, IndexError, UnicodeDecodeError):
                raise GitError(f"unexpected git log output while indexing files: {token[:80]!r}") from None
            if len(oids):
                close_commit()
            if len(commit) != 20 or parents != ([bytes(oids[-20:])] if oids else []):
                index.linear = False
            oids += commit
            added += 1
        if oids and added:
            close_commit()
    if proc.returncode != 0:
        raise GitError(f"git log --raw failed ({proc.returncode}) while indexing the history's files")
    index.oids = bytes(oids)
    return added


def update(repo: ShadowRepo, ref: str) -> int:
    """Bring ``ref``'s index up to its tip (rebuilt whole when the ref no longer descends from the indexed tip,
    e.g. after ``consolidate``, or old history was dropped); returns the commits added.

    Raises:
        GitError: git failed.
    """
    tip = repo.resolve(ref)
    if tip is None:
        return 0
    shallow = shallow_digest(repo)
    index = load(repo, ref)
    if index is not None and index.tip == tip and index.shallow == shallow:
        return 0
    if index is not None and (index.shallow != shallow or not branch_indexes.is_ancestor(repo, index.tip, tip)):
        index = None
    if index is not None and not index.linear:
        index.tip, added = tip, 0  # never used: nothing to read
    elif index is None:
        index = FileIndex(tip, shallow, True)
        added = _extend(repo, index, [tip])
    else:
        added = _extend(repo, index, [tip, f"^{index.tip}"])
    index.tip = tip
    if not index.linear:
        index.oids, index.wide, index.paths = b"", [], {}
    path = _index_path(repo, ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, index.serialize(), fsync=False)
    return added


def update_all(repo: ShadowRepo) -> None:
    """Bring the index of every shadow ref up to date and delete those of refs that are gone; a ref that cannot be
    indexed is logged and left to ``git log`` (maintenance goes on: :func:`.branch_indexes.update_all`)."""
    branch_indexes.update_all(repo, what="file index", directory=repo.state_dir / "file-index", path_of=_index_path,
                              update=update)
