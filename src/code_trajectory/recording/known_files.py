"""The initial import's walk places the files known beforehand (those git vouches for, :mod:`.index_seed`) without an
``lstat`` each, and looks at those taken back afterwards (git's verdict came meanwhile) as at any other file: the
two steps of :func:`~.worktree.scan`'s ``known`` and ``withdrawn``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from operator import methodcaller
from pathlib import Path

from code_trajectory.recording.listing import REL_OF, DirListing, FileInfo, pack_names

__all__ = ["known_files", "look_again"]

_IS_FILE = methodcaller("is_file", follow_symlinks=False)


def known_files(known: Mapping[str, FileInfo], prefix: str, entries: list[os.DirEntry[str]],
                names: list[str]) -> list[FileInfo | None]:
    """For each of a directory's ``entries`` (not directories; ``names``, their names), its facts in ``known``
    (paths relative to the root; ``prefix``, the directory's path and ``/``, or ``""`` at the root) when it is a
    regular file there (told by the directory entry's type, no system call where the file system fills it in),
    else None; ``[]`` when ``known`` is empty. In C: one call a directory at an import of 500,000 files."""
    if not known:
        return []
    try:
        regular = list(map(_IS_FILE, entries))
    except OSError:
        regular = list(map(_regular, entries))
    found = list(map(known.get, map(prefix.__add__, names)))
    if False in regular:
        found = [info if is_file else None for info, is_file in zip(found, regular)]
    return found


def look_again(root: Path, files: dict[str, FileInfo], known: dict[str, list[FileInfo]],
               listings: dict[str, DirListing], paths: Collection[str],
               take: Callable[[str, os.DirEntry[str], list[str]], None]) -> int:
    """Look at the files of ``paths`` (relative to the root) that the walk took from what was known of them, as the
    walk looks at any other file (``take(directory, entry, names)``): the walk's ``files`` (path -> facts), ``known``
    (the directories taken whole from what was known -> their files, :attr:`~.worktree.ScanResult.known`) and
    ``listings`` (directory -> listing) are updated in place, each listing then naming those ``take`` kept. Returns
    how many files the directories taken whole held (they are in ``files`` now, each file once, as the walk's own)."""
    moved = 0
    dirs: dict[str, set[str]] = {}
    for path in paths:
        rel_dir, _, name = path.rpartition("/")
        if rel_dir in listings:  # else in no directory the walk entered
            dirs.setdefault(rel_dir, set()).add(name)
    for rel_dir, again in dirs.items():
        taken = known.pop(rel_dir, None)
        if taken is not None:
            files.update(zip(map(REL_OF, taken), taken))
            moved += len(taken)
        listing = listings[rel_dir]
        listed = listing.files
        if again.isdisjoint(listed):  # none of them recorded (our own exclusions)
            continue
        prefix = f"{rel_dir}/" if rel_dir else ""
        entries = {entry.name: entry for entry in _entries_named(root, rel_dir, again)}
        names: list[str] = []
        for name in listed:
            if name not in again:
                names.append(name)
                continue
            files.pop(prefix + name, None)
            if name in entries:
                take(rel_dir, entries[name], names)
        listings[rel_dir] = replace(listing, packed_files=pack_names(names))
    return moved


def _entries_named(root: Path, rel_dir: str, names: set[str]) -> list[os.DirEntry[str]]:
    """The directory entries of ``names`` in directory ``rel_dir`` (relative to ``root``): those there still."""
    try:
        with os.scandir(f"{root}/{rel_dir}" if rel_dir else root) as it:
            return [entry for entry in it if entry.name in names]
    except OSError:
        return []


def _regular(entry: os.DirEntry[str]) -> bool:
    """True when ``entry`` is a regular file (not followed); False also when that cannot be told (the caller's
    ``lstat`` then reports why)."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False
