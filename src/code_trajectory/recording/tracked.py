"""The files the project's own git tracks, as a compact in-memory set that follows the index.

git keeps tracking a file that an ignore rule matches (it was added before the rule, or with
``git add -f``): ``git ls-files --cached`` lists it and ``git add -A`` stages its changes
(gitignore(5): "Files already tracked by Git are not affected"). The recording policy
therefore needs the tracked set. :class:`TrackedFiles` reads it read-only from the index of the
work tree holding the project (:meth:`code_trajectory.git.project.ProjectRepo.tracked_files`)
and reads it again only when the index file's ``(mtime_ns, size, inode)`` changed.

:class:`TrackedPaths` stores the paths as one NUL-separated ``bytes`` blob, sorted bytewise, plus an
``array`` of offsets: about ``len(path) + 5`` bytes a path (a 100 000-file project with 60-byte
paths: ~6.5 MB), a third of a ``frozenset`` of ``str``. Lookups are binary searches (~20 slice
comparisons), and "does this directory hold tracked files" is one more, so no separate set of
directories is kept.

Paths are relative to the project root, ``/``-separated, without a leading ``/``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, count, islice
from operator import add, lt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from code_trajectory.git.project import ProjectRepo

log = logging.getLogger(__name__)


def _encode(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


def _decode(rel: bytes) -> str:
    return rel.decode("utf-8", "surrogateescape")


class TrackedPaths:
    """An immutable set of paths, sorted bytewise, packed in one ``bytes`` object.

    Args:
        entries: ``(path, is_gitlink)`` pairs, ``path`` as bytes relative to the project root;
            best sorted bytewise without repeats (as the index lists them), else they are sorted.
    """

    __slots__ = ("_blob", "_offsets", "gitlinks")

    def __init__(self, entries: Iterable[tuple[bytes, bool]] = ()) -> None:
        pairs = list(entries)
        self._fill([path for path, _ in pairs], [path for path, is_gitlink in pairs if is_gitlink])

    @classmethod
    def of(cls, paths: list[bytes], gitlinks: list[bytes]) -> TrackedPaths:
        """The set of ``paths`` (best sorted bytewise without repeats, as the index lists them), ``gitlinks`` among
        them (:meth:`~code_trajectory.git.project.ProjectRepo.tracked_files`' answer): built in C."""
        tracked = cls.__new__(cls)
        tracked._fill(paths, gitlinks)
        return tracked

    def _fill(self, paths: list[bytes], gitlinks: list[bytes]) -> None:
        if not all(map(lt, paths, islice(paths, 1, None))):
            paths = sorted(set(paths))  # not the index's order (gitformat-index(5): memcmp order)
        self._blob = b"\0".join(paths) + b"\0" if paths else b""
        # each path's start: the lengths before it, plus one NUL after each
        self._offsets = array("Q" if len(self._blob) >= 2**32 else "I",
                              map(add, accumulate(map(len, paths), initial=0), count()))
        #: Gitlinks as ``str``: few, looked up for directories.
        self.gitlinks = frozenset(_decode(p) for p in gitlinks)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _at(self, i: int) -> bytes:
        return self._blob[self._offsets[i]:self._offsets[i + 1] - 1]

    def _bisect(self, key: bytes) -> int:
        """Index of the first path >= ``key``."""
        blob, offsets = self._blob, self._offsets
        lo, hi = 0, len(offsets) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[offsets[mid]:offsets[mid + 1] - 1] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def __contains__(self, rel: object) -> bool:
        if not isinstance(rel, str) or not self._blob:
            return False
        key = _encode(rel)
        i = self._bisect(key)
        return i < len(self) and self._at(i) == key

    def kept(self, paths: Sequence[str]) -> Sequence[str]:
        """Those of ``paths`` that are in the set, in their order: ``paths`` itself when they are exactly the set in
        its order (an import's common case: the index's own files; one comparison of the joined paths), else one
        pass over the set and a lookup a path, in C (500,000 paths at an import: kept in order, so that what is
        built from them later is laid out in memory as they are)."""
        blob = self._blob.decode("utf-8", "surrogateescape")  # as _decode, of each path
        if paths and len(blob) == sum(map(len, paths)) + len(paths) and blob == "\0".join(paths) + "\0":
            return paths
        members = set(blob.split("\0"))
        members.discard("")  # after the last NUL
        return list(filter(members.__contains__, paths))

    def has_under(self, rel_dir: str) -> bool:
        """True when a tracked path lies strictly below directory ``rel_dir`` (``""``: the root)."""
        if not self._blob:
            return False
        if not rel_dir:
            return True
        key = _encode(rel_dir) + b"/"
        i = self._bisect(key)
        return i < len(self) and self._at(i).startswith(key)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self)):
            yield _decode(self._at(i))

    def same_paths(self, other: TrackedPaths) -> bool:
        """True when both sets hold the same paths and gitlinks."""
        return self._blob == other._blob and self.gitlinks == other.gitlinks

    def changed(self, other: TrackedPaths) -> Iterator[str]:
        """Paths in exactly one of the two sets (a merge of the two sorted lists)."""
        i = j = 0
        n, m = len(self), len(other)
        while i < n and j < m:
            a, b = self._at(i), other._at(j)
            if a == b:
                i += 1
                j += 1
            elif a < b:
                yield _decode(a)
                i += 1
            else:
                yield _decode(b)
                j += 1
        for k in range(i, n):
            yield _decode(self._at(k))
        for k in range(j, m):
            yield _decode(other._at(k))

    @property
    def nbytes(self) -> int:
        """Memory held by the set, bytes (the blob, the offsets and the gitlinks)."""
        import sys

        return (sys.getsizeof(self._blob) + sys.getsizeof(self._offsets) + sys.getsizeof(self.gitlinks)
                + sum(sys.getsizeof(g) for g in self.gitlinks))


EMPTY = TrackedPaths()


#: ``(mtime_ns, size, inode)`` of the index file, or None when it does not exist.
IndexStamp = tuple[int, int, int] | None

#: How long a listing read for :meth:`TrackedFiles.fingerprint` is kept for :meth:`TrackedFiles.refresh`, seconds.
_SPARE_SECONDS = 60.0


class TrackedFiles:
    """The tracked set of one project, re-read when its index changes.

    Args:
        project: the project's repository (None, or one outside a work tree: nothing is tracked).

    Thread-safe. Reading the index costs one ``git ls-files`` (~60 ms for 100 000 files);
    checking whether it changed costs one ``stat``.
    """

    def __init__(self, project: ProjectRepo | None) -> None:
        self.project = project
        self._index = project.index_file if project is not None and project.work_tree is not None else None
        self._lock = threading.Lock()
        self._stamp: IndexStamp | bool = False  # False: never read
        self.paths: TrackedPaths = EMPTY
        self._fingerprint: tuple[IndexStamp, str] | None = None
        #: the listing :meth:`fingerprint` read at a stamp the paths were not read at, for :meth:`refresh` to take
        #: (one ``git ls-files`` fewer at a full scan); dropped once taken or after :data:`_SPARE_SECONDS`
        self._spare: tuple[IndexStamp, bytes, float] | None = None
        self._loaded: threading.Event | None = None  # set once a prefetch() is done

    def _stat(self) -> IndexStamp:
        if self._index is None:
            return None
        try:
            st = os.stat(self._index)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def stamp(self) -> IndexStamp:
        """The index's ``(mtime ns, size, inode)`` now, or None without one (one ``stat``)."""
        return self._stat()

    def remember(self, known: str) -> None:
        """Take ``known`` (:meth:`known` of an earlier process, as the stat cache kept it) as the fingerprint while the
        index's stamp is the one it names: a restart then runs no ``git ls-files`` for it. Not JSON of
        ``[[mtime ns, size, inode], fingerprint]``: ignored."""
        try:
            (mtime_ns, size, ino), found = json.loads(known)
        except (ValueError, TypeError):
            return
        if all(isinstance(n, int) for n in (mtime_ns, size, ino)) and isinstance(found, str):
            with self._lock:
                if self._fingerprint is None:
                    self._fingerprint = ((mtime_ns, size, ino), found)

    def known(self) -> str | None:
        """The last fingerprint computed and the stamp it was computed at, for :meth:`remember`; None: none yet."""
        with self._lock:
            if self._fingerprint is None or self._fingerprint[0] is None:
                return None
            return json.dumps([list(self._fingerprint[0]), self._fingerprint[1]])

    def prefetch(self) -> None:
        """Have git list the tracked set now, on a thread that waits for it (``git ls-files`` of 500,000 files takes
        ~0.37 s; an initial import walks meanwhile), and take its :meth:`fingerprint` (hashed without the interpreter
        lock); the listing is kept for the first :meth:`refresh`, which makes the set from it on the caller's thread
        (in Python: beside the walk, it would take the interpreter lock at each of the walk's system calls).
        :attr:`loading` is True until git has answered; :meth:`fingerprint`, :meth:`refresh` and :attr:`current`
        wait for it. Does nothing once the set was read."""
        if self._stamp is not False or self._loaded is not None:
            return
        self._loaded = loaded = threading.Event()

        def run() -> None:
            try:
                self._fingerprint_now()  # the listing is kept for the refresh that follows: one git ls-files
            except Exception as exc:  # noqa: BLE001 - read again at first use, as without a prefetch
                log.warning("cannot read the tracked set ahead (%s); read at first use", exc)
            finally:
                loaded.set()

        threading.Thread(target=run, name="trajectory-tracked-prefetch", daemon=True).start()

    @property
    def loading(self) -> bool:
        """True while :meth:`prefetch` reads the tracked set."""
        return self._loaded is not None and not self._loaded.is_set()

    def _await_prefetch(self) -> None:
        if self._loaded is not None:
            self._loaded.wait()

    def fingerprint(self) -> str:
        """A digest of the tracked paths and their modes (a gitlink is not a file), not of the index file: ``git
        status`` rewrites the index (its refresh), ``git add`` changes blob ids, and neither changes what is
        tracked. Recomputed only when the index's :meth:`stamp` changed, from one ``git ls-files`` (C: its records without
        blob ids, :meth:`~code_trajectory.git.project.ProjectRepo.tracked_listing`, hashed whole). Without an index or git's answer: the
        stamp itself."""
        self._await_prefetch()
        return self._fingerprint_now()

    def _fingerprint_now(self) -> str:
        stamp = self._stat()
        with self._lock:
            if self._fingerprint is not None and self._fingerprint[0] == stamp:
                return self._fingerprint[1]
        listing = self.project.tracked_listing() if stamp is not None and self.project is not None else None
        found = repr(stamp) if listing is None else hashlib.sha1(listing).hexdigest()
        with self._lock:
            self._fingerprint = (stamp, found)
            if listing is not None and self._stamp != stamp:
                self._spare = (stamp, listing, time.monotonic())
        return found

    @property
    def never_read(self) -> bool:
        """True until the index is first read."""
        return self._stamp is False

    @property
    def current(self) -> TrackedPaths:
        """The tracked paths, read on first use (so a policy that never asks costs no ``git ls-files``)."""
        self._await_prefetch()
        if self._stamp is False:
            self.refresh()
        with self._lock:  # a first read under way on another thread holds the lock until its paths are in
            return self.paths

    def refresh(self) -> tuple[TrackedPaths, TrackedPaths] | None:
        """Re-read the tracked set if the index changed since the last read.

        Returns:
            ``(old, new)`` when the set of paths changed, else None (also when only the
            index's stat data changed, as after a commit). A failing ``git ls-files`` keeps
            the previous set (logged) and is retried at the next change of the index.
        """
        self._await_prefetch()
        stamp = self._stat()
        with self._lock:
            if stamp == self._stamp:
                return None
            self._stamp = stamp
            old = self.paths
            if stamp is None:
                new = EMPTY
            else:
                assert self.project is not None
                spare, self._spare = self._spare, None
                listed = self.project.tracked_files(listing=spare[1] if spare is not None and spare[0] == stamp
                                                    and time.monotonic() - spare[2] < _SPARE_SECONDS else None)
                if listed is None:
                    return None
                new = TrackedPaths.of(*listed)
            if new.same_paths(old):
                return None
            self.paths = new
            return old, new
