"""The initial import takes what git already knows: blob ids of unchanged tracked files from the project's index.

In a git project whose index is fresh, git has already hashed every tracked file and kept its stat data (git's
index, gitformat-index(5)). The first full scan of such a project (nothing recorded yet: the initial import) uses
that knowledge the way ``git status`` does, instead of reading, hashing and compressing every file again (issue 29:
the import of a 500,000-file project within 0.1x of ``git init && git add -A && git commit``).

A scanned file takes the index's blob id only when all of these hold, else it is read and hashed as before:

- the index entry is stage 0, and the path is not staged differently from ``HEAD`` (the blob is in a commit the
  user made, not only in the index: see below);
- it is a regular file of the same mode, and its ``lstat`` matches the index's stat data (size, mtime and ctime to
  the nanosecond, inode; git keeps 32 bits of each, so the low 32 bits are compared);
- it is not racy: its mtime is older than the index file's (git's racy-clean rule, gitformat-index(5) and
  Documentation/technical/racy-git.txt: git itself smudges an entry that was racy when the index was written, so
  its size no longer matches);
- it is not over the size cap (such a file is recorded as a size note);
- the object is in the shadow repository after :mod:`code_trajectory.git.shared_objects` linked the project's packs
  and loose objects, it is a blob, and its size equals the file's size. A clean filter or an end-of-line conversion
  (``core.autocrlf``, ``text``/``eol`` attributes, ``ident``, ``working-tree-encoding``, Git LFS) changes what the
  index holds: the index's blob is the cleaned content, not the bytes in the work tree, and every such conversion
  changes the size of the files it changes, so the size test sends those files to be hashed;
- no ``filter`` attribute applies to it (a clean filter may keep the size: ``git check-attr filter``, asked only
  when an attribute file of the project, of the repository or of the user mentions ``filter``).

Secrets: the content rules of :func:`code_trajectory.core.secrets.secret_content` (private keys, npm tokens) apply
to the files a scan reads. A file taken from the index is one the user committed to their own repository; its
blob is already in the project's object store, and the shadow history is shared (``push``) only to that same
project's remote. A file only staged, never committed, is read and checked as before. Every later change of any
file is read and checked as always.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from code_trajectory.git import shared_objects
from code_trajectory.git.project import IndexEntry, ProjectRepo
from code_trajectory.git.shadow import MODE_EXECUTABLE, MODE_FILE, ShadowRepo
from code_trajectory.recording.worktree import FileInfo

__all__ = ["seed_from_index"]

log = logging.getLogger(__name__)

_LOW32 = 0xFFFFFFFF
_NS = 1_000_000_000


def _same_time(ns: int, index_ns: int) -> bool:
    return (ns // _NS) & _LOW32 == index_ns // _NS and ns % _NS == index_ns % _NS


def seed_from_index(project: ProjectRepo, repo: ShadowRepo, files: Mapping[str, FileInfo], *,
                    max_file_bytes: int) -> dict[str, str]:
    """The blob ids the project's index vouches for, for files of a scan (see the module's rules).

    Args:
        project: the project's repository (nothing is written to it).
        repo: the shadow repository: the project's packs and the needed loose objects are hard-linked into it.
        files: the scan's files, path relative to the project root -> what ``lstat`` said.
        max_file_bytes: the size cap of recorded files.

    Returns:
        ``{path relative to the root: blob id}``, each present in ``repo``; empty when the project is not a git
        work tree with a commit, or nothing can be reused. Never raises for git's or the file system's failures
        (logged): the scan then hashes everything, as without an index.
    """
    try:
        return _seed(project, repo, files, max_file_bytes)
    except Exception as exc:  # noqa: BLE001 - an optimisation: without it every file is hashed
        log.warning("not reusing the project's index for the import: %s", exc)
        return {}


def _filters_possible(project: ProjectRepo, *, root: Path, entries: list[IndexEntry]) -> bool:
    """True when an attribute file that applies mentions ``filter`` (a tracked ``.gitattributes`` as the work tree
    has it, the repository's ``info/attributes``, the user's or the system's attribute file), or when the project
    is a subdirectory of its work tree (the ``.gitattributes`` above it are not looked at: ``check-attr`` is)."""
    if project.prefix:
        return True
    files = [root / e.path for e in entries if e.path == ".gitattributes" or e.path.endswith("/.gitattributes")]
    for path in [*files, *project.attribute_files()]:
        try:
            if b"filter" in path.read_bytes():
                return True
        except OSError:
            return True  # unreadable: assume the worst
    return False


def _seed(project: ProjectRepo, repo: ShadowRepo, files: Mapping[str, FileInfo], max_file_bytes: int
          ) -> dict[str, str]:
    index_file, objects = project.index_file, project.objects_dir
    if index_file is None or objects is None or not files:
        return {}
    try:
        index_mtime_ns = os.stat(index_file).st_mtime_ns
    except OSError:
        return {}
    entries = project.index_with_stat()
    if not entries:
        return {}
    oid_length = len(repo.empty_tree())
    candidates: dict[str, str] = {}
    for entry in entries:
        info = files.get(entry.path)
        if (info is None or entry.mode not in (MODE_FILE, MODE_EXECUTABLE) or info.mode != entry.mode
                or len(entry.oid) != oid_length or info.size > max_file_bytes
                or info.size & _LOW32 != entry.size or info.ino & _LOW32 != entry.ino
                or not _same_time(info.mtime_ns, entry.mtime_ns) or not _same_time(info.ctime_ns, entry.ctime_ns)
                or info.mtime_ns >= index_mtime_ns):
            continue
        candidates[entry.path] = entry.oid
    if candidates and _filters_possible(project, root=project.root, entries=entries):
        filtered = project.attribute_values(sorted(candidates), "filter")
        if filtered is None:
            return {}
        for path in filtered:
            candidates.pop(path, None)
    if not candidates:
        return {}
    packs = shared_objects.link_packs(objects, repo.git_dir / "objects")
    loose = shared_objects.link_loose_objects(objects, repo.git_dir / "objects", candidates.values())
    sizes = shared_objects.object_sizes(repo.git, candidates.values())  # all present now: no lookup misses
    seeded = {path: oid for path, oid in candidates.items()
              if sizes.get(oid) == ("blob", files[path].size)}
    log.info("initial import: %d of %d files taken from the project's index (%d packs, %d loose objects linked)",
             len(seeded), len(files), packs, loose)
    return seeded
