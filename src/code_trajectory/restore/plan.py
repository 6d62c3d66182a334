"""Checking a restore before anything is written: what a snapshot may put in the work tree, and whether it can.

A restore is all or nothing, so every reason it could stop half-way is looked for first:

* :func:`refuse_unsafe`: a recorded path git itself would refuse to check out (``.git``, ``.trajectory`` in any
  spelling, gitlinks...: :mod:`code_trajectory.git.pathcheck`), or a file and a directory at one path;
* :func:`not_recorded`: files whose recorded "content" is the size-cap note (the file was over the cap): they are
  never written over a file, and never removed or overwritten when the state before holds only that note
  (the restore could not be undone). A dry run reads the snapshot's small blobs here; a restore tells them
  from the blobs it reads to write anyway (:func:`code_trajectory.restore.apply.write_entries`);
* :func:`check_writable`: a name longer than the file system allows, a symlink or a file where a directory is
  needed, a directory holding other files where a file goes, a directory that cannot be written, not enough free
  space.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Collection, Mapping
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError, StorageError
from code_trajectory.core.text import format_size
from code_trajectory.git.messages import display_path
from code_trajectory.git.oversize import OVERSIZE_MARKER, oversize_size
from code_trajectory.git.pathcheck import unsafe_reason
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import MODE_SYMLINK, TreeEntry
from code_trajectory.restore.apply import read_blobs

#: Paths an error lists by name at most.
NAMED = 10
#: Sizes a size-cap note can have, bytes (:func:`code_trajectory.git.oversize.oversize_blob`): only blobs of such
#: a size are read to tell.
_NOTE_SIZES = range(len(OVERSIZE_MARKER) + 60, 201)
#: Space kept free beyond the restored files (file system blocks, the [RESTORE] snapshot), bytes.
SPARE_BYTES = 4 * 1024 * 1024


def _named(paths: Collection[str]) -> str:
    shown = ", ".join(f"`{display_path(p)}`" for p in sorted(paths)[:NAMED])
    return shown + (f" and {len(paths) - NAMED} more" if len(paths) > NAMED else "")


def refuse_unsafe(entries: Mapping[str, TreeEntry], source: str) -> None:
    """Refuse a restore whose files ``entries`` (path relative to the root -> entry) hold a path that must not be
    written (see :func:`code_trajectory.git.pathcheck.unsafe_reason`) or a path that is both a file and a
    directory's prefix (a hand-made tree: writing both would go through the file, or a link).

    Raises:
        InvalidArgumentError: naming the paths and why; nothing has been written.
    """
    bad = {p: why for p, e in entries.items() if (why := unsafe_reason(p, e.mode))}
    dirs = {p[:i] for p in entries if "/" in p for i in _slashes(p)}
    bad.update((p, "it is a file and also a directory in the snapshot") for p in entries if p in dirs)
    if bad:
        first = sorted(bad)[0]
        raise InvalidArgumentError(
            f"snapshot {source[:12]} holds {len(bad)} path(s) a restore must never write, {_named(bad)}: "
            f"`{first}`: {bad[first]}. Nothing was written. Restore other files by naming them (paths=[...]); "
            "a snapshot holding such paths was built by hand or pulled from someone else")


def _slashes(path: str) -> list[int]:
    """The positions of ``/`` in ``path``."""
    found, at = [], path.find("/")
    while at != -1:
        found.append(at)
        at = path.find("/", at + 1)
    return found


def blob_sizes(repo: ShadowRepo, oids: Collection[str]) -> dict[str, int]:
    """The size in bytes of each blob of ``oids``, from one ``git cat-file --batch-check``.

    Raises:
        StorageError: a blob is missing (a damaged shadow repository).
    """
    if not oids:
        return {}
    out = repo.git.out(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                       input="".join(f"{oid}\n" for oid in oids).encode("ascii"))
    sizes = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] != "blob":
            raise StorageError(f"blob {parts[0] if parts else '?'} is missing from the shadow repository")
        sizes[parts[0]] = int(parts[2])
    return sizes


def not_recorded(repo: ShadowRepo, entries: Mapping[str, TreeEntry], sizes: Mapping[str, int]) -> set[str]:
    """The paths of ``entries`` whose blob is the recorder's size-cap note (the file's content was not recorded),
    told by the note's exact form (:func:`code_trajectory.git.oversize.oversize_size`); ``sizes`` holds the size of
    every blob of ``entries``."""
    maybe = [(p, e.oid) for p, e in entries.items() if e.mode != MODE_SYMLINK and sizes.get(e.oid) in _NOTE_SIZES]
    found = set()
    for (path, _oid), data in zip(maybe, read_blobs(repo, [oid for _p, oid in maybe])):
        if oversize_size(data) is not None:
            found.add(path)
    return found


def _name_max(root: Path) -> int:
    try:
        return os.pathconf(root, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def check_writable(root: Path, writes: Mapping[str, TreeEntry], removes: Collection[str],
                   sizes: Mapping[str, int]) -> None:
    """Check that every file of ``writes`` (path relative to ``root`` -> entry) can be written once ``removes``
    are removed, without writing anything: names within the file system's limit (``NAME_MAX``, 255 bytes on
    Linux), no symlink on the way (a link could lead out of the project), no file where a directory is needed
    unless it is removed first, no directory where a file goes unless it holds only removed files, writable
    directories, and the files' total size (``sizes``: blob id -> bytes) free on the disk.

    Raises:
        InvalidArgumentError: a path cannot be written as it stands (what to do is said).
        StorageError: a directory is not writable or the disk lacks space.
    """
    name_max = _name_max(root)
    removed = set(removes)
    seen: dict[str, str] = {}  # directory (relative) -> "dir", "missing"
    listed: dict[str, set[str]] = {}  # directory (relative) -> its subdirectories' names
    problems: dict[str, str] = {}
    for rel in writes:
        names = rel.split("/")
        long = [n for n in names if len(os.fsencode(n)) > name_max]
        if long:
            problems[rel] = f"a name is {len(os.fsencode(long[0]))} bytes, over the file system's {name_max}"
            continue
        parent = ""
        for name in names[:-1]:
            parent = f"{parent}/{name}" if parent else name
            if parent not in seen:
                seen[parent] = _dir_state(root, parent, removed)
            if seen[parent] not in ("dir", "missing"):
                problems[rel] = f"`{parent}` {seen[parent]}"
                break
        else:
            if seen.get(parent) == "missing" or names[-1] not in _subdirs(root, parent, listed):
                continue
            others = _files_under(root, rel, removed)  # a directory stands where the file goes
            if others:
                problems[rel] = (f"a directory stands there, holding {len(others)} file(s) the snapshot does "
                                 f"not remove ({_named(others)})")
    if problems:
        first = sorted(problems)[0]
        raise InvalidArgumentError(f"cannot restore {len(problems)} file(s), {_named(problems)}: `{first}`: "
                                   f"{problems[first]}. Nothing was written; move what is in the way, or restore "
                                   "other files by naming them (paths=[...])")
    _check_permissions(root, writes, seen)
    _check_space(root, writes, sizes)


def _subdirs(root: Path, rel: str, listed: dict[str, set[str]]) -> set[str]:
    """The names of the real directories (not links) in the directory ``rel``, read once per restore."""
    if rel not in listed:
        try:
            with os.scandir(root / rel if rel else root) as found:
                listed[rel] = {e.name for e in found if e.is_dir(follow_symlinks=False)}
        except OSError:
            listed[rel] = set()
    return listed[rel]


def _dir_state(root: Path, rel: str, removed: set[str]) -> str:
    """``dir`` (a real directory), ``missing`` (created by the restore) or why a directory cannot be there."""
    try:
        st = os.lstat(root / rel)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    if rel in removed and not stat.S_ISDIR(st.st_mode):
        return "missing"  # a recorded file or link the restore removes first
    if stat.S_ISLNK(st.st_mode):
        return ("is a symlink now (writing through it could leave the project): remove the link to restore what "
                "the snapshot has under it")
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "is a file now, where the snapshot has a directory"


def _files_under(root: Path, rel: str, removed: set[str]) -> list[str]:
    """Files (and links) under the directory ``rel`` that the restore does not remove (symlinks not followed)."""
    others = []
    for dirpath, _dirs, files in os.walk(root / rel):
        for name in files:
            path = Path(dirpath, name).relative_to(root).as_posix()
            if path not in removed:
                others.append(path)
    return others


def _check_permissions(root: Path, writes: Mapping[str, TreeEntry], seen: Mapping[str, str]) -> None:
    """Every directory a file is written into (or the nearest existing one, where directories are created) must be
    writable and searchable."""
    denied = set()
    for parent in {rel.rpartition("/")[0] for rel in writes}:
        while parent and seen.get(parent) == "missing":
            parent = parent.rpartition("/")[0]
        if not os.access(root / parent if parent else root, os.W_OK | os.X_OK):
            denied.add(parent or ".")
    if denied:
        raise StorageError(f"cannot restore: {len(denied)} director(ies) are not writable, {_named(denied)}. "
                           "Nothing was written; fix their permissions and restore again")


def _check_space(root: Path, writes: Mapping[str, TreeEntry], sizes: Mapping[str, int]) -> None:
    """The files' bytes, and for each file not there yet its whole blocks and an inode, must be free on the disk
    of ``root`` (1,500 new files of 10 bytes take 6 MB of 4 KiB blocks, not 15 KB)."""
    vfs = _statvfs(root)
    block = vfs.f_frsize if vfs is not None and vfs.f_frsize > 0 else 1
    need, new_files = SPARE_BYTES, 0
    for rel, entry in writes.items():
        size = sizes.get(entry.oid, 0)
        if not os.path.lexists(root / rel):
            new_files += 1
            size = -(-size // block) * block
        need += size
    free = shutil.disk_usage(root).free
    if need > free:
        raise StorageError(f"cannot restore: the files take {format_size(need - SPARE_BYTES)} and only "
                           f"{format_size(free)} is free on the disk of {root}. Nothing was written; free some space "
                           "and restore again")
    if vfs is not None and vfs.f_files > 0 and new_files > vfs.f_favail:
        raise StorageError(f"cannot restore: {new_files} files are created and the disk of {root} has room for "
                           f"{vfs.f_favail} more (no free inodes). Nothing was written; remove some files and restore "
                           "again")


def _statvfs(root: Path) -> os.statvfs_result | None:
    """The file system's block size and inode counts (None where there is no ``statvfs``, Windows)."""
    try:
        return os.statvfs(root) if hasattr(os, "statvfs") else None
    except OSError:
        return None
