"""Reading the project's work tree: what is there, as git would store it.

:func:`scan` walks the whole tree, pruning directories the
:class:`~code_trajectory.recording.ignore.RecordingPolicy` excludes before descending into
them; :func:`probe` looks at one path for the watcher. Neither follows symlinks:
a symlink is recorded as a symlink (its target string), so loops and links that
point outside the project are harmless. FIFOs, sockets and devices are skipped.

Why one module just over 450 lines: it is one job, the walk, with what it reuses from the last one
(:class:`DirListing`, its packed names, ``lstat`` facts and digest) beside the loops that read them; the stat cache
that stores the listings lives in :mod:`.statcache`, git's verdict on them in :mod:`.gitvouch`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import time
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from code_trajectory.git.shadow import git_mode
from code_trajectory.recording.ignore import WalkPolicy, never_entered

log = logging.getLogger(__name__)


class FileInfo(NamedTuple):
    """A recordable file: path relative to the root and the ``lstat`` facts the stat cache compares.

    A named tuple (made in C): an import makes one per file, 500,000 of them (a frozen dataclass costs 3x as much).
    """

    rel: str
    mode: str
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int

    @classmethod
    def from_stat(cls, rel: str, st: os.stat_result) -> FileInfo | None:
        mode = git_mode(st)
        if mode is None:
            return None
        return cls(rel, mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def signature(self) -> tuple[str, int, int, int, int]:
        return (self.mode, self.size, self.mtime_ns, self.ctime_ns, self.ino)


#: Two seconds: the coarsest mtime resolution of common file systems (FAT; ext4 and APFS are finer). A file or
#: directory whose mtime is closer than this to the scan that saw it may change again within the same tick
#: (git's "racy clean" case, gitformat-index(5)), so what was learned about it is not trusted next time.
RACY_MARGIN_NS = 2_000_000_000

#: ``(mtime ns, size, inode)`` of a directory's ``.gitignore``, or None when it has none.
IgnoreFileStamp = tuple[int, int, int] | None


@dataclass(frozen=True, slots=True)
class DirListing:
    """What a scan found in one directory, reused by the next scan while the directory is unchanged.

    Creating, deleting or renaming an entry changes its directory's mtime (POSIX), so while
    ``signature`` holds and the listing is not racy, the names are still those of the directory and
    only their ``lstat`` is needed (git's untracked cache rests on the same rule, git-update-index(1)
    ``--untracked-cache``). The verdicts behind the names also depend on the ignore rules: the
    directory's own ``.gitignore`` (``ignore_file``) and the policy's
    :meth:`~code_trajectory.recording.ignore.RecordingPolicy.rules_fingerprint`.

    The file names are kept packed (:func:`pack_names`, as the stat cache stores them) and decoded on access
    (:attr:`files`): a server's full scan of a large project holds every directory's listing at once, and a tuple
    of ``str`` costs ~60 bytes a name more (500,000 files in 25,000 directories: 56 MiB of listings instead of 27;
    issue 29, ``serve`` <= 150 MB at 500,000 files, its peak included).
    """

    signature: tuple[int, int]  #: the directory's ``(mtime ns, inode)`` before it was read
    scanned_ns: int  #: ``time.time_ns()`` when the scan that read it started
    ignore_file: IgnoreFileStamp
    packed_files: bytes  #: names of the recorded files and symlinks, :func:`pack_names` (see :attr:`files`)
    subdirs: tuple[str, ...]  #: names of the subdirectories entered
    #: ``(name, mtime ns)`` of the subdirectories not entered: one that changes (a virtual environment's
    #: ``pyvenv.cfg`` removed) may have to be entered now, without a change of this directory's mtime
    excluded: tuple[tuple[str, int], ...] = ()
    #: :func:`pack_stats` of ``files`` when the stat cache held a row (blob id, out of the racy window) for each
    #: of them, else None; while the files' ``lstat`` facts still pack to it, none of them changed
    stats: bytes | None = None
    #: :func:`listing_digest` of this listing when the stat index (:mod:`.gitvouch`) was written with ``stats``
    #: as its files' entries, else None
    indexed: bytes | None = None
    #: :func:`listing_digest`'s answer, kept once computed (a restart's scan asks twice per directory: the walk and
    #: :func:`.gitvouch.refresh`); never copied by :func:`dataclasses.replace`, never compared
    _digest: bytes | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def files(self) -> tuple[str, ...]:
        """The names of the recorded files and symlinks (decoded from :attr:`packed_files` at each access)."""
        return tuple(self.packed_files.decode("utf-8", "surrogateescape").split("\0")) if self.packed_files else ()

    @property
    def file_count(self) -> int:
        """How many names :attr:`files` holds, without decoding them."""
        return self.packed_files.count(b"\0") + 1 if self.packed_files else 0

    def trusted(self, directory: str, signature: tuple[int, int], ignore_file: IgnoreFileStamp) -> bool:
        """True when the directory still has the names listed (same stat, not racy, same ``.gitignore``,
        its excluded subdirectories unchanged)."""
        if (signature != self.signature or ignore_file != self.ignore_file
                or signature[0] + RACY_MARGIN_NS > self.scanned_ns):
            return False
        for name, mtime_ns in self.excluded:
            try:
                if os.lstat(os.path.join(directory, name)).st_mtime_ns != mtime_ns:
                    return False
            except OSError:
                return False
        return True


def pack_names(names: Iterable[str]) -> bytes:
    """File names (plain names: no ``/``, no NUL) as :attr:`DirListing.packed_files` holds them: each encoded as
    :func:`os.fsencode` does on Linux (UTF-8, undecodable bytes kept by ``surrogateescape``), joined by NUL."""
    return "\0".join(names).encode("utf-8", "surrogateescape")


def pack_stats(infos: Iterable[FileInfo]) -> bytes | None:
    """The ``lstat`` facts that tell a file changed (size, mtime, ctime, inode, in ns and bytes), packed as
    64-bit integers in the order given; None when one does not fit. The mode is left out: ``chmod`` sets the
    ctime (POSIX), so a change of mode changes the packed facts too."""
    packed = array("q")
    try:
        for info in infos:
            packed.extend((info.size, info.mtime_ns, info.ctime_ns, info.ino))
    except OverflowError:
        return None
    return packed.tobytes()


def listing_digest(listing: DirListing) -> bytes | None:
    """A digest of ``listing``'s file names and packed ``lstat`` facts (None without them): equal digests, the same
    files with the same facts (see :attr:`DirListing.indexed`)."""
    if listing.stats is None:
        return None
    digest = listing._digest
    if digest is None:
        digest = hashlib.blake2b(listing.stats + b"\0" + listing.packed_files, digest_size=16).digest()
        object.__setattr__(listing, "_digest", digest)  # a cache of a frozen listing's own fields
    return digest


def _dir_unchanged(directory: str, listing: DirListing) -> bool:
    """True when the directory still has ``listing``'s names (see :meth:`DirListing.trusted`); its files are not
    looked at (git's verdict on the stat index covers them: :func:`scan`).

    A directory that had no ``.gitignore`` and whose ``(mtime, inode)`` is the listing's has none now (creating one
    changes the directory's mtime), so only the directory is ``lstat``ed: one system call a directory instead of two
    (a restart at 500,000 files looks at 25,000 directories this way).

    Raises:
        _IgnoreFileChanged: the directory's ``.gitignore`` is not the listing's.
    """
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    signature = (st.st_mtime_ns, st.st_ino)
    if listing.ignore_file is None and signature == listing.signature:
        return listing.trusted(directory, signature, None)
    ignore_file = _ignore_file_stamp(directory)
    if ignore_file != listing.ignore_file:
        raise _IgnoreFileChanged(directory)
    return listing.trusted(directory, signature, ignore_file)


def _unchanged(directory: str, listing: DirListing) -> bool:
    """True when the directory still has ``listing``'s names (see :meth:`DirListing.trusted`) and the ``lstat``
    facts of its files pack to its :attr:`DirListing.stats` (see :func:`pack_stats`), taken without a
    :class:`FileInfo` per file (the cost of a restart is this loop). The names are looked up relative to the
    directory's descriptor (``fstatat``: one lookup per file instead of one per path component).

    Raises:
        _IgnoreFileChanged: the directory's ``.gitignore`` is not the listing's.
    """
    if not _STAT_DIR_FD:
        return False
    try:
        fd = os.open(directory, _DIR_FLAGS)
    except OSError:
        return False
    packed = array("q")
    add = packed.extend
    try:
        st = os.fstat(fd)
        try:
            ignore = os.lstat(".gitignore", dir_fd=fd)
            ignore_file: IgnoreFileStamp = (ignore.st_mtime_ns, ignore.st_size, ignore.st_ino)
        except FileNotFoundError:
            ignore_file = None
        if ignore_file != listing.ignore_file:
            raise _IgnoreFileChanged(directory)
        if not listing.trusted(directory, (st.st_mtime_ns, st.st_ino), ignore_file):
            return False
        lstat = os.lstat
        for name in listing.files:
            st = lstat(name, dir_fd=fd)
            add((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    except (OSError, OverflowError):
        return False
    finally:
        os.close(fd)
    return packed.tobytes() == listing.stats


_STAT_DIR_FD = os.stat in os.supports_dir_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass
class ScanResult:
    """Outcome of a full scan: recordable files by path, plus what was skipped and why.

    ``listings`` holds every directory entered (relative to the root, ``""`` for the root), for the
    next scan; ``reused`` counts the directories whose earlier listing was used instead of reading them.
    ``clean`` holds the directories whose files are all unchanged since their listing's
    :attr:`DirListing.stats` (only when the scan was asked to skip them): their files are not in ``files``.
    """

    files: dict[str, FileInfo]
    skipped: list[tuple[str, str]]
    directories: list[str]
    listings: dict[str, DirListing] = field(default_factory=dict)
    reused: int = 0
    clean: dict[str, DirListing] = field(default_factory=dict)

    def count(self) -> int:
        """How many recordable files the scan found, those of ``clean`` directories included."""
        return len(self.files) + sum(listing.file_count for listing in self.clean.values())


def _ignore_file_stamp(directory: str) -> IgnoreFileStamp:
    try:
        st = os.lstat(os.path.join(directory, ".gitignore"))
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _relisted(directory: str, rel_dir: str, listing: DirListing) -> list[FileInfo] | None:
    """The listed files' current ``lstat`` facts, or None when one is gone or changed kind (read it again)."""
    found = []
    for name in listing.files:
        try:
            info = FileInfo.from_stat(f"{rel_dir}/{name}" if rel_dir else name,
                                      os.lstat(f"{directory}/{name}"))
        except OSError:
            return None
        if info is None:
            return None
        found.append(info)
    return found


class _IgnoreFileChanged(Exception):
    """A ``.gitignore`` changed under a listed directory: the verdicts below it may have too."""


class _VerdictUnusable(Exception):
    """A directory git's verdict sent back to be looked at has lost a listed file: scan without the verdict."""


#: The paths whose ``lstat`` no longer matches the stat index (relative to the root), None: no verdict.
Verdict = Callable[[], "set[str] | None"]


def scan(root: Path, policy: WalkPolicy, *, progress: Callable[[int], None] | None = None,
         listings: Mapping[str, DirListing] | None = None, skip_clean: bool = False,
         verdict: Verdict | None = None, known: Callable[[], Mapping[str, FileInfo]] | None = None) -> ScanResult:
    """Walk the work tree under ``root`` and return every recordable file.

    Args:
        root: the project root.
        policy: decides what is recorded; excluded directories are never entered.
        progress: called now and then with the number of files found so far.
        listings: the ``listings`` of an earlier scan with the same policy inputs (see
            :class:`DirListing`); an unchanged directory is then not read again nor its entries
            judged again, only its files' ``lstat`` taken. A changed ``.gitignore`` anywhere makes
            the scan start over without them.
        skip_clean: a trusted listing whose files' ``lstat`` facts still pack to its
            :attr:`DirListing.stats` goes to ``clean``, its files left out of ``files``.
        verdict: with ``skip_clean``, git's verdict on the stat index (:mod:`.gitvouch`), called once after the
            walk: a trusted listing whose :attr:`DirListing.indexed` is its :func:`listing_digest` is clean without
            an ``lstat`` of its files unless the verdict names one of them (or gives None).
        known: called once the directories are walked (their files are looked at after it answers, so that the
            walk proceeds while it is prepared): regular files git tracks whose ``lstat`` facts are already known
            (the initial import's files that git vouches for, :meth:`~.index_seed.IndexSeed.vouched`). Found in a
            directory as a regular file, such a file is neither ``lstat``ed nor matched against ignore rules
            (``tracked=True``, see :meth:`~.ignore.RecordingPolicy.entry_excluded`); its facts are taken as given.

    Unreadable directories are skipped (logged, listed in ``skipped``).
    """
    try:
        try:
            return _scan(root, policy, progress, listings or {}, skip_clean, verdict if skip_clean else None, known)
        except _VerdictUnusable:
            return _scan(root, policy, progress, listings or {}, skip_clean, None, known)
    except _IgnoreFileChanged:
        return _scan(root, policy, progress, {}, False, None, known)


def _scan(root: Path, policy: WalkPolicy, progress: Callable[[int], None] | None,
          listings: Mapping[str, DirListing], skip_clean: bool, verdict: Verdict | None,
          later: Callable[[], Mapping[str, FileInfo]] | None) -> ScanResult:
    started_ns = time.time_ns()
    result = ScanResult({}, [], [])
    files, skipped = result.files, result.skipped
    #: with ``later``: the directories read, their files still to be looked at (once ``later`` answered)
    waiting: list[tuple[str, tuple[int, int], IgnoreFileStamp, tuple[str, ...], tuple[tuple[str, int], ...],
                       list[os.DirEntry[str]]]] = []

    def take(rel_dir: str, entry: os.DirEntry[str], names: list[str]) -> None:
        """Record the file ``entry`` of directory ``rel_dir`` in ``files`` and its name in ``names``, unless the
        policy skips it (or it cannot be looked at: noted in ``skipped``)."""
        name = entry.name
        rel = f"{rel_dir}/{name}" if rel_dir else name
        try:
            if policy.entry_excluded(rel_dir, name, False):
                return
            info = FileInfo.from_stat(rel, entry.stat(follow_symlinks=False))
        except OSError as exc:
            skipped.append((rel, f"cannot stat: {exc.strerror or exc}"))
            return
        if info is None:
            skipped.append((rel, "not a regular file or symlink (FIFO, socket or device)"))
            return
        files[rel] = info
        names.append(name)
        if progress is not None and len(files) % 5000 == 0:
            progress(len(files))

    by_git: dict[str, DirListing] = {}  # clean on git's verdict, still to be heard
    stack: list[tuple[str, bool]] = [("", False)]  # (directory, whether its parent's listing was reused)
    while stack:
        rel_dir, parent_reused = stack.pop()
        directory = f"{root}/{rel_dir}" if rel_dir else str(root)
        old = listings.get(rel_dir)
        git_vouches = (verdict is not None and old is not None and old.indexed is not None
                       and old.indexed == listing_digest(old))
        if skip_clean and old is not None and old.stats is not None and (
                _dir_unchanged(directory, old) if git_vouches else _unchanged(directory, old)):
            if git_vouches:
                by_git[rel_dir] = old
            result.directories.append(rel_dir)
            result.listings[rel_dir] = result.clean[rel_dir] = old
            result.reused += 1
            stack.extend((f"{rel_dir}/{name}" if rel_dir else name, True) for name in old.subdirs)
            continue
        try:
            st = os.lstat(directory)
        except OSError as exc:
            skipped.append((rel_dir, f"unreadable directory: {exc.strerror or exc}"))
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        signature, ignore_file = (st.st_mtime_ns, st.st_ino), _ignore_file_stamp(directory)
        if old is not None and ignore_file != old.ignore_file:
            raise _IgnoreFileChanged(rel_dir)
        if old is not None and old.trusted(directory, signature, ignore_file):
            relisted = _relisted(directory, rel_dir, old)
            if relisted is not None:
                result.directories.append(rel_dir)
                result.listings[rel_dir] = old
                result.reused += 1
                files.update((info.rel, info) for info in relisted)
                stack.extend((f"{rel_dir}/{name}" if rel_dir else name, True) for name in old.subdirs)
                continue
        if parent_reused:  # its parent judged it before it changed (a new pyvenv.cfg makes it generated)
            parent, _, name = rel_dir.rpartition("/")
            if policy.entry_excluded(parent, name, True):
                continue
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            skipped.append((rel_dir, f"unreadable directory: {exc.strerror or exc}"))
            log.warning("skipping unreadable directory %s: %s", rel_dir or ".", exc)
            continue
        result.directories.append(rel_dir)
        names: list[str] = []
        subdirs: list[str] = []
        excluded: list[tuple[str, int]] = []
        others: list[os.DirEntry[str]] = []
        for entry in entries:
            name = entry.name
            try:
                if not entry.is_dir(follow_symlinks=False):
                    others.append(entry)
                elif not policy.entry_excluded(rel_dir, name, True):
                    stack.append((f"{rel_dir}/{name}" if rel_dir else name, False))
                    subdirs.append(name)
                elif not never_entered(name):  # .git's mtime moves with every git command: not watched
                    excluded.append((name, entry.stat(follow_symlinks=False).st_mtime_ns))
            except OSError as exc:
                skipped.append((f"{rel_dir}/{name}" if rel_dir else name, f"cannot stat: {exc.strerror or exc}"))
        if later is not None:
            waiting.append((rel_dir, signature, ignore_file, tuple(subdirs), tuple(excluded), others))
            continue
        for entry in others:
            take(rel_dir, entry, names)
        result.listings[rel_dir] = DirListing(signature, started_ns, ignore_file, pack_names(names), tuple(subdirs),
                                                 tuple(excluded))
    if waiting:
        assert later is not None
        known = later()
        for rel_dir, signature, ignore_file, subdir_names, excluded_dirs, others in waiting:
            names = []
            prefix = f"{rel_dir}/" if rel_dir else ""
            try:  # d_type tells a regular file without a system call (where the file system fills it in)
                given = [known.get(prefix + entry.name) if entry.is_file(follow_symlinks=False) else None
                         for entry in others] if known else []
            except OSError:
                given = [known.get(prefix + entry.name) if _regular(entry) else None for entry in others]
            # the tracked files whose facts are known are judged together, one call a directory
            skip = set(policy.tracked_files_excluded(rel_dir, [info.rel[len(prefix):] for info in given if info]))
            for entry, info in zip(others, given) if given else ((entry, None) for entry in others):
                if info is None:
                    take(rel_dir, entry, names)
                elif entry.name not in skip:
                    files[info.rel] = info
                    names.append(entry.name)
                    if progress is not None and len(files) % 5000 == 0:
                        progress(len(files))
            result.listings[rel_dir] = DirListing(signature, started_ns, ignore_file, pack_names(names), subdir_names,
                                                     excluded_dirs)
    if by_git and verdict is not None:
        _hear_verdict(root, result, by_git, verdict())
    return result


def _regular(entry: os.DirEntry[str]) -> bool:
    """True when ``entry`` is a regular file (not followed); False also when that cannot be told (the caller's
    ``lstat`` then reports why)."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _hear_verdict(root: Path, result: ScanResult, by_git: Mapping[str, DirListing], dirty: set[str] | None) -> None:
    """Look at the files of the directories ``dirty`` names (or of all of them, when git gave no verdict) that
    the walk took as clean on git's word (``by_git``): a directory with a changed file leaves ``clean``.

    Raises:
        _VerdictUnusable: a listed file is gone from a directory whose names did not change (it changed during
            the scan): the caller scans again without the verdict.
    """
    dirty_dirs = None if dirty is None else {p.rpartition("/")[0] for p in dirty}
    for rel_dir, listing in by_git.items():
        if rel_dir not in result.clean:
            continue  # the walk found the directory itself changed
        directory = f"{root}/{rel_dir}" if rel_dir else str(root)
        if dirty_dirs is None:
            if _unchanged(directory, listing):
                continue
        elif rel_dir not in dirty_dirs:
            continue
        relisted = _relisted(directory, rel_dir, listing)
        if relisted is None:
            raise _VerdictUnusable(rel_dir)
        del result.clean[rel_dir]
        result.files.update((info.rel, info) for info in relisted)


def probe(root: Path, rel: str) -> FileInfo | str | None:
    """Look at one path: a :class:`FileInfo`, ``"dir"`` for a real directory, or None when absent/unrecordable."""
    try:
        st = os.lstat(root / rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        log.debug("cannot stat %s: %s", rel, exc)
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return FileInfo.from_stat(rel, st)
