"""A private git index used as a stat cache: git ``lstat``s its entries on threads, in C, for us.

A restart of a large project must tell which of its files changed while nothing recorded; that is one ``lstat`` per
file, and in Python the loop costs more than ``git status`` (issue 29). git's own loop over an index runs on
threads (``core.preloadIndex``). So a full scan writes what it learned into an index file of its own (never the
project's, never the shadow repository's ``index``) and the next scan asks ``git diff-files`` which of its entries no
longer match the work tree.

What this module guarantees, and what it leaves to the caller:

- :func:`write_stat_index` writes entries in gitformat-index(5) version 2, with the ``lstat`` facts given, the current
  user's uid and gid, and no flags (no assume-unchanged, no skip-worktree). The file's mtime is set to the epoch:
  git's racy-entry check (``is_racy_stat`` in git's ``read-cache.c``: an entry whose mtime is not older than the index
  file's is compared by content) is off when the index's timestamp is 0, so git never reads, converts or hashes a
  file's content here, whatever attributes or config say. The caller writes only entries that no change can match
  by ``lstat`` alone: git may compare whole seconds only (without ``USE_NSEC``), so an entry's ctime must be older,
  by a margin, than the moment its facts were taken (any later change sets a ctime in a later second).
- :class:`StatVerdict` runs ``git diff-files --name-only -z`` on such an index with ``core.trustctime``,
  ``core.checkStat=default``, ``core.fileMode``, ``core.symlinks`` on and ``core.ignoreStat``, the fsmonitor and the
  split index off (``-c`` wins over the repository's config), and gives the paths git reports: content or mode
  changed, or gone. A path it does not report matched its entry's mode, size, mtime, ctime (seconds, and
  nanoseconds where git is built with them), inode (low 32 bits), uid and gid.
- A missing, empty or foreign index file would make git report nothing at all (git reads a missing index as an
  empty one). So each index holds a sentinel entry, a path the caller never creates: git must report it as gone,
  and a verdict without it is no verdict. And since git honours an entry's assume-unchanged and skip-worktree flags
  (which :func:`write_stat_index` never sets) and does not verify an index's checksum on a plain read, the verdict
  also stands only when the file's SHA-1 is the one :func:`write_stat_index` returned: an index changed since
  (by hand, or by a hostile copy of the shadow directory) is no verdict either.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import os
import struct
import subprocess
from collections.abc import Iterable
from pathlib import Path

from code_trajectory.git.gitcmd import Git
from code_trajectory.git.index_file import IndexCopy

__all__ = ["IndexEntry", "StatVerdict", "VERDICT_CONFIG", "write_stat_index", "write_stat_index_copy"]

log = logging.getLogger(__name__)

#: ``(path relative to the work tree, git mode as octal text, blob id hex, size, mtime ns, ctime ns, inode)``.
IndexEntry = tuple[str, str, str, int, int, int, int]

#: Config of the ``diff-files`` call, on top of the shadow's forced config (:data:`~.gitcmd.SHADOW_CONFIG`): every
#: ``lstat`` fact is compared, nothing is assumed unchanged, no fsmonitor or untracked cache is asked.
VERDICT_CONFIG: tuple[str, ...] = (
    "core.trustctime=true", "core.checkStat=default", "core.fileMode=true", "core.symlinks=true",
    "core.ignoreStat=false", "core.preloadIndex=true", "core.splitIndex=false", "core.untrackedCache=false",
    "core.sparseCheckout=false", "index.sparse=false", "core.fsmonitor=false",
)

_U32 = 0xFFFFFFFF
_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # the sentinel's blob: git refuses to rewrite a null id
_NS = 1_000_000_000
_ENTRY = struct.Struct(">10I20sH")
_HEADER_SIZE = 12  # "DIRC", version, entry count


def write_stat_index(path: Path, entries: Iterable[IndexEntry], *, sentinel: str) -> tuple[int, str]:
    """Write ``entries`` to the index file ``path`` (replaced atomically), its mtime set to the epoch.

    Args:
        path: the index file to write.
        sentinel: a path (relative to the work tree) that never exists: written as one more entry (see the module
            docstring); give the same to :class:`StatVerdict`.
        entries: in any order; sorted here by path bytes, as git requires. A path that does not encode, or a blob id
            that is not 40 hex digits, is left out.

    Returns:
        ``(how many entries were written, the file's SHA-1 checksum in hex)``: give the checksum to
        :class:`StatVerdict`.

    Raises:
        OSError: the file cannot be written.
    """
    uid, gid = _owner()
    fromhex = bytes.fromhex
    packed: list[tuple[bytes, bytes]] = []
    for rel, mode, oid, size, mtime_ns, ctime_ns, ino in [*entries, (sentinel, "100644", _EMPTY_BLOB, 0, 0, 0, 0)]:
        try:
            name, oid_bytes, git_mode = rel.encode("utf-8", "surrogateescape"), fromhex(oid), int(mode, 8)
        except (UnicodeEncodeError, ValueError):
            continue
        if len(oid_bytes) != 20:
            continue
        packed.append((name, _entry(name, git_mode, oid_bytes, size, mtime_ns, ctime_ns, ino, uid, gid)))
    packed.sort(key=lambda e: e[0])
    parts = [b"DIRC", struct.pack(">II", 2, len(packed)), *(entry for _name, entry in packed)]
    return len(packed) - 1, _write_index(path, b"".join(parts))


def _entry(name: bytes, git_mode: int, oid: bytes, size: int, mtime_ns: int, ctime_ns: int, ino: int, uid: int,
           gid: int) -> bytes:
    """One version 2 index entry: the stat data (git's 32 bits of each), the object id, the flags (the name's length
    alone, 0xFFF when longer), the name, then 1 to 8 NULs (entries end on 8-byte boundaries)."""
    return _ENTRY.pack((ctime_ns // _NS) & _U32, ctime_ns % _NS, (mtime_ns // _NS) & _U32, mtime_ns % _NS, 0,
                       ino & _U32, git_mode, uid, gid, size & _U32, oid, min(len(name), 0xFFF)) \
        + name + bytes(8 - (62 + len(name)) % 8)


def _owner() -> tuple[int, int]:
    """The current user's uid and gid as an index entry holds them (no uid on Windows: git there does not compare
    it)."""
    return getattr(os, "getuid", lambda: 0)() & _U32, getattr(os, "getgid", lambda: 0)() & _U32


def _write_index(path: Path, body: bytes) -> str:
    """Write ``body`` and its SHA-1 (git's index checksum) to ``path`` (replaced atomically), its mtime the epoch;
    return the checksum in hex. Raises OSError."""
    checksum = hashlib.sha1(body).digest()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(body)
            f.write(checksum)
        os.utime(tmp, ns=(0, 0))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return checksum.hex()


def write_stat_index_copy(path: Path, copy: IndexCopy, *, sentinel: str) -> tuple[int, str]:
    """Write to ``path`` the entries of a project's version 2 index as they are (but those it says to skip), and the
    sentinel entry, as :func:`write_stat_index` writes its entries (same guarantees: a version 2 index, its mtime the
    epoch, the file's checksum returned).

    The entries are copied byte for byte, in their order: their stat data, uid and gid as git last wrote them, and no
    flag but the name's length (:class:`~code_trajectory.git.index_file.IndexCopy` leaves out the entries marked
    assume-unchanged, the stages of a conflict, the racy ones: git would compare a racy entry's content, but an index
    whose mtime is the epoch has none, see the module docstring). At 500,000 entries that is a few slices of bytes
    and one SHA-1, not an entry packed in Python a file.

    Args:
        path: the index file to write (replaced atomically).
        copy: the project index's entries (:attr:`~code_trajectory.git.index_file.IndexFile.copy`), their paths
            relative to the work tree git will be run on.
        sentinel: as for :func:`write_stat_index`.

    Returns:
        ``(how many entries were written besides the sentinel, the file's SHA-1 checksum in hex)``.

    Raises:
        OSError: the file cannot be written. ValueError: ``sentinel`` does not encode.
    """
    uid, gid = _owner()
    name = sentinel.encode("utf-8", "surrogateescape")
    if len(name) >= 0xFFF:
        raise ValueError("the sentinel's path is too long")
    marker = _entry(name, 0o100644, bytes.fromhex(_EMPTY_BLOB), 0, 0, 0, 0, uid, gid)
    at = bisect.bisect_left(copy.names, name)
    insert = copy.starts[at] if at < len(copy.starts) else copy.end
    data, pos, pending = memoryview(copy.data), _HEADER_SIZE, True
    parts: list[bytes | memoryview] = []
    for start, end in [*copy.skipped, (copy.end, copy.end)]:  # in the file's order; an entry start, or the end
        if pending and insert <= start:
            parts += [data[pos:insert], marker]
            pos, pending = insert, False
        parts.append(data[pos:start])
        pos = end
    count = copy.count - len(copy.skipped)
    return count, _write_index(path, b"".join([b"DIRC", struct.pack(">II", 2, count + 1), *parts]))


class StatVerdict:
    """``git diff-files`` on a stat index, started at once and read later (it runs while the caller walks).

    Args:
        git: runs git on the shadow repository with the project as its work tree.
        index: an index written by :func:`write_stat_index`.
        sentinel: the sentinel it was written with.
        checksum: the checksum :func:`write_stat_index` returned for it.

    :meth:`dirty` waits for git and returns the paths it reports (relative to the work tree), or None when git
    failed or could not start, did not report the sentinel, or the file's checksum is not ``checksum`` (logged): the
    caller then looks at every file itself.
    """

    def __init__(self, git: Git, index: Path, *, sentinel: str, checksum: str) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._sentinel, self._index, self._checksum = sentinel, index, checksum
        args = [item for key in VERDICT_CONFIG for item in ("-c", key)]
        try:
            self._proc = git.popen([*args, "diff-files", "--name-only", "-z"], stdin=subprocess.DEVNULL,
                                   env={"GIT_INDEX_FILE": str(index)})
        except OSError as exc:
            log.info("stat index: cannot run git diff-files (%s); every file is looked at", exc)

    def dirty(self) -> set[str] | None:
        """The paths whose ``lstat`` facts no longer match their entry (or that are gone); None: no verdict."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        intact = self._intact()  # hashed while git runs
        out, err = proc.communicate()
        if not intact:
            log.info("stat index: %s is not the index written (checksum); every file is looked at", self._index)
            return None
        if proc.returncode != 0:
            log.info("stat index: git diff-files failed (%s): %s", proc.returncode,
                     err.decode("utf-8", "replace").strip()[:300])
            return None
        found = {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}
        if self._sentinel not in found:
            log.info("stat index: %s is not the index written (no sentinel); every file is looked at", self._index)
            return None
        found.discard(self._sentinel)
        return found

    def _intact(self) -> bool:
        """True when the file's content hashes to its trailer and the trailer is the checksum expected."""
        digest = hashlib.sha1()
        try:
            with open(self._index, "rb") as f:
                size = os.fstat(f.fileno()).st_size - 20
                if size <= 0:
                    return False
                left = size
                while left > 0:  # by chunks: a 500,000-file index is ~50 MB, and a server must not hold it
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        return False
                    digest.update(chunk)
                    left -= len(chunk)
                trailer = f.read(20)
        except OSError:
            return False
        return trailer.hex() == self._checksum and digest.digest() == trailer

    def close(self) -> None:
        """Stop git if :meth:`dirty` was not called (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.communicate()
