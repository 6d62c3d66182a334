"""Whether a directory's listing from the last scan (:class:`~.listing.DirListing`) still holds, so that a full scan
(:func:`~.worktree.scan`) reuses it instead of reading the directory: its names, its ``.gitignore``, its files'
``lstat`` facts.

Creating, deleting or renaming an entry changes its directory's mtime (POSIX); a rewrite of the directory's
``.gitignore`` changes its stamp, unless it is racy (:meth:`~.listing.DirListing.same_ignore_file`), in which case
:class:`IgnoreFileChanged` is raised: the verdicts below it may have changed, and the scan starts again without
listings.
"""

from __future__ import annotations

import os
import stat
from array import array

from code_trajectory.recording.ignore import GITIGNORE
from code_trajectory.recording.listing import DirListing, FileInfo, IgnoreFileStamp

__all__ = ["IgnoreFileChanged", "dir_unchanged", "ignore_file_stamp", "relisted", "unchanged"]

_STAT_DIR_FD = os.stat in os.supports_dir_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class IgnoreFileChanged(Exception):
    """A ``.gitignore`` changed under a listed directory: the verdicts below it may have too."""


def dir_unchanged(directory: str, listing: DirListing) -> bool:
    """True when the directory still has ``listing``'s names (see :meth:`~.listing.DirListing.trusted`); its files are not
    looked at (git's verdict on the stat index covers them: :func:`~.worktree.scan`).

    A directory that had no ``.gitignore`` and whose ``(mtime, inode)`` is the listing's has none now (creating one
    changes the directory's mtime), so only the directory is ``lstat``ed: one system call a directory instead of two
    (a restart at 500,000 files looks at 25,000 directories this way).

    Raises:
        IgnoreFileChanged: the directory's ``.gitignore`` is not the listing's.
    """
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    signature = (st.st_mtime_ns, st.st_ino)
    if listing.ignore_file is None and signature == listing.signature:
        return listing.trusted(directory, signature, None, st.st_ctime_ns)
    ignore_file = ignore_file_stamp(directory)
    if not listing.same_ignore_file(ignore_file):
        raise IgnoreFileChanged(directory)
    return listing.trusted(directory, signature, ignore_file, st.st_ctime_ns)


def unchanged(directory: str, listing: DirListing) -> bool:
    """True when the directory still has ``listing``'s names (see :meth:`~.listing.DirListing.trusted`) and the ``lstat``
    facts of its files pack to its :attr:`~.listing.DirListing.stats` (see :func:`~.listing.pack_stats`), taken without a
    :class:`FileInfo` per file (the cost of a restart is this loop). The names are looked up relative to the
    directory's descriptor (``fstatat``: one lookup per file instead of one per path component).

    Raises:
        IgnoreFileChanged: the directory's ``.gitignore`` is not the listing's.
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
        if not listing.same_ignore_file(ignore_file):
            raise IgnoreFileChanged(directory)
        if not listing.trusted(directory, (st.st_mtime_ns, st.st_ino), ignore_file, st.st_ctime_ns):
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


def ignore_file_stamp(directory: str) -> IgnoreFileStamp:
    try:
        st = os.lstat(os.path.join(directory, GITIGNORE))
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def relisted(directory: str, rel_dir: str, listing: DirListing) -> list[FileInfo] | None:
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
