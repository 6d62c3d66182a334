"""What a walk of the work tree learns and the next one reuses: a file's ``lstat`` facts (:class:`FileInfo`) and a
directory's listing (:class:`DirListing`), with the packed forms the stat cache stores (names, ``lstat`` facts, the
digest git's verdict is kept under). Plain data and pure functions; the walk itself is :mod:`.worktree`.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import NamedTuple

from code_trajectory.git.tree_format import git_mode

__all__ = ["CTIME_OF", "MODE_OF", "MTIME_OF", "RACY_MARGIN_NS", "REL_OF", "DirListing", "FileInfo", "IgnoreFileStamp",
           "listing_digest", "pack_names", "pack_stats"]


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


#: :class:`FileInfo`'s path, mode, mtime and ctime as getters made in C, for ``map()`` over many files at once (an
#: import's 500,000): one definition for every module that does so.
REL_OF, MODE_OF, MTIME_OF, CTIME_OF = itemgetter(0), itemgetter(1), itemgetter(3), itemgetter(4)
_STAT_FACTS = itemgetter(2, 3, 4, 5)  # a FileInfo's size, mtime, ctime and inode

#: Two seconds: the coarsest mtime resolution of common file systems (FAT; ext4 and APFS are finer). A file or
#: directory whose mtime is closer than this to the scan that saw it may change again within the same tick
#: (git's "racy clean" case, gitformat-index(5)), so what was learned about it is not trusted next time.
RACY_MARGIN_NS = 2_000_000_000
#: How far a file system's timestamps may lag the clock a scan reads its start from (Linux stamps inodes with the
#: coarse clock, one tick of up to 10 ms behind ``time.time_ns()``): a directory whose ctime is within this of a
#: scan's start may have changed after that scan read it.
CTIME_SLACK_NS = 20_000_000

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

    def with_stats(self, stats: bytes | None) -> DirListing:
        """This listing with ``stats`` (as :func:`dataclasses.replace` makes it, without its per-call look at the
        fields: an import gives 25,000 listings their stats)."""
        return DirListing(self.signature, self.scanned_ns, self.ignore_file, self.packed_files, self.subdirs,
                          self.excluded, stats, self.indexed)

    @property
    def files(self) -> tuple[str, ...]:
        """The names of the recorded files and symlinks (decoded from :attr:`packed_files` at each access)."""
        return tuple(self.packed_files.decode("utf-8", "surrogateescape").split("\0")) if self.packed_files else ()

    @property
    def file_count(self) -> int:
        """How many names :attr:`files` holds, without decoding them."""
        return self.packed_files.count(b"\0") + 1 if self.packed_files else 0

    def same_ignore_file(self, stamp: IgnoreFileStamp) -> bool:
        """True when ``stamp`` (the directory's ``.gitignore`` now) is the one this listing's verdicts were made
        with: the same ``(mtime, size, inode)``, and not racy. A rewrite of the same size in the same mtime tick
        as the one the scan saw keeps the stamp (git's "racy clean" case, gitformat-index(5)), so a ``.gitignore``
        whose mtime is within :data:`RACY_MARGIN_NS` of the scan's start is never taken as unchanged."""
        return stamp == self.ignore_file and (stamp is None or stamp[0] + RACY_MARGIN_NS <= self.scanned_ns)

    def trusted(self, directory: str, signature: tuple[int, int], ignore_file: IgnoreFileStamp,
                ctime_ns: int) -> bool:
        """True when the directory still has the names listed (same stat, not racy, same ``.gitignore``,
        its excluded subdirectories unchanged), and its ctime (``ctime_ns``, now) is older than the scan that
        listed it: a tool that puts the mtime back after adding a file (``tar``, ``rsync -t``, ``cp -p``,
        fixed-mtime package extractors) cannot put the ctime back (git's stat data compares both,
        gitformat-index(5), ``core.trustctime``)."""
        if (signature != self.signature or not self.same_ignore_file(ignore_file)
                or signature[0] + RACY_MARGIN_NS > self.scanned_ns or ctime_ns + CTIME_SLACK_NS > self.scanned_ns):
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
    try:
        return array("q", chain.from_iterable(map(_STAT_FACTS, infos))).tobytes()  # in C: 500,000 files at an import
    except OverflowError:
        return None


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
