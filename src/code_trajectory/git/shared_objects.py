"""Objects the project's own repository already holds, made available to the shadow repository by hard links.

The initial import of a git project whose index is fresh need not read, hash and compress the files git already
stored (issue 29: import what git already has). The shadow repository reuses the index's blob ids; the objects
behind them are made present in ``.trajectory/objects`` by hard links to the project's own files:

- every pack (``objects/pack/pack-<id>.pack`` with its ``.idx``, and ``.rev`` when present) is linked under the
  same name: a pack and its index never change once written (gitformat-pack(5)), and a hard link is a second name
  of the same inode, so the user's ``git gc --prune=now``, ``repack -ad`` or a history rewrite, which delete or
  replace *their* names, leave ours whole. No ``objects/info/alternates`` is written: an alternate breaks as soon
  as the other repository prunes;
- a loose object (``objects/<2 hex>/<38 hex>``) a reused blob needs is linked the same way.

Links are made only within one file system (``os.link``; ``EXDEV`` and every other failure leave the object to be
hashed from the work tree instead) and never follow a symlink (a pack that is a symlink is not linked). What is
linked is data that git validates when it reads it (pack checksums, object ids); nothing in it can run a program.
The linked packs hold the project's whole history, at no extra disk cost while the project's own packs exist; the
shadow's own maintenance (``git gc`` of ``.trajectory``) keeps only what the shadow history reaches.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from code_trajectory.core.errors import GitError
from code_trajectory.git.file_output import run_to_files
from code_trajectory.git.gitcmd import Git

__all__ = ["blobs_of_size", "link_loose_objects", "link_packs", "objects_are", "trees_present"]

log = logging.getLogger(__name__)

#: The suffixes of a pack's files that are linked (the pack first: an index without its pack is never left).
PACK_SUFFIXES = (".pack", ".rev", ".idx")


def _link(source: Path, target: Path) -> bool:
    """Hard-link ``source`` (a regular file, not through a symlink) as ``target``; False when it cannot be."""
    try:
        if not stat.S_ISREG(os.lstat(source).st_mode):
            return False
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        return True
    except OSError as exc:
        log.debug("cannot link %s: %s", source, exc)
        return False
    return True


def link_packs(source_objects: Path, target_objects: Path) -> int:
    """Hard-link every pack of ``source_objects`` (a git ``objects`` directory) into ``target_objects``.

    A pack is linked whole or not at all: its ``.pack`` (and ``.rev``) first, the ``.idx`` last (git only looks
    at packs through their index), and a pack whose ``.idx`` cannot be linked has its other links removed.

    Returns:
        How many packs are now present in ``target_objects`` that came from ``source_objects``.
    """
    source_dir, target_dir = source_objects / "pack", target_objects / "pack"
    try:
        names = sorted(entry.name for entry in os.scandir(source_dir) if entry.name.endswith(".idx"))
    except OSError:
        return 0
    target_dir.mkdir(parents=True, exist_ok=True)
    linked = 0
    for idx in names:
        stem = idx[:-len(".idx")]
        if not stem.startswith("pack-") or (source_dir / f"{stem}.promisor").exists():
            continue  # a promisor pack belongs to a partial clone: its objects may be missing on purpose
        made: list[Path] = []
        complete = True
        for suffix in PACK_SUFFIXES:
            source = source_dir / f"{stem}{suffix}"
            if suffix == ".rev" and not source.exists():
                continue
            target = target_dir / f"{stem}{suffix}"
            if target.exists() or _link(source, target):
                made.append(target)
            else:
                complete = False
                break
        if complete:
            linked += 1
        else:
            for target in made:
                with contextlib.suppress(OSError):
                    target.unlink()
    return linked


def link_loose_objects(source_objects: Path, target_objects: Path, oids: Iterable[str]) -> int:
    """Hard-link those of the objects ``oids`` that ``source_objects`` holds as loose objects into
    ``target_objects`` (an object not loose there, or already present, is skipped).

    Returns:
        How many were linked.
    """
    source_root, target_root = os.fspath(source_objects), os.fspath(target_objects)
    try:  # a packed repository (a clone, after gc) has no fan-out directory: nothing to look up per object
        heads = {name for name in os.listdir(source_root) if len(name) == 2 and not name.strip("0123456789abcdef")}
    except OSError:
        return 0
    listed: dict[str, set[str]] = {}  # per fan-out directory: the names in it (one listing, not a lstat an object)
    linked = 0
    for oid in oids if heads else ():
        if len(oid) < 4 or oid.strip("0123456789abcdef") or oid[:2] not in heads:
            continue
        head, tail = oid[:2], oid[2:]
        names = listed.get(head)
        if names is None:
            try:
                names = listed[head] = set(os.listdir(os.path.join(source_root, head)))
            except OSError:
                names = listed[head] = set()
            if names:
                os.makedirs(os.path.join(target_root, head), exist_ok=True)
        if tail not in names:
            continue
        source = os.path.join(source_root, head, tail)
        try:
            if not stat.S_ISREG(os.lstat(source).st_mode):
                continue
            os.link(source, os.path.join(target_root, head, tail), follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError:
            continue  # not loose there (packed, or missing): found in a pack, or hashed from the work tree
        linked += 1
    return linked


def blobs_of_size(git: Git, oids: Sequence[str], sizes: Sequence[int]) -> list[bool]:
    """For each blob id of ``oids`` and size in bytes of ``sizes`` (as many): True when ``git``'s repository holds a
    blob of that id and exactly that size (see :func:`objects_are`; git's whole answer when all are present is built
    by joins, not a line a blob: 500,000 of them at an import).

    Raises:
        GitError: git failed.
    """
    if not oids:
        return []
    expected = ("blob " + "\nblob ".join(map(str, sizes)) + "\n").encode("ascii")
    return objects_are(git, "%(objecttype) %(objectsize)", oids, expected, lambda i: b"blob %d" % sizes[i])


def trees_present(git: Git, oids: Sequence[str]) -> list[bool]:
    """For each of ``oids``: True when ``git``'s repository holds a tree of that id (see :func:`objects_are`).

    Raises:
        GitError: git failed.
    """
    return objects_are(git, "%(objecttype)", oids, b"tree\n" * len(oids), lambda _i: b"tree")


def objects_are(git: Git, answer_format: str, oids: Sequence[str], expected: bytes,
                answer: Callable[[int], bytes]) -> list[bool]:
    """For each of ``oids``: True when git describes the object as ``answer(its position)`` in ``answer_format``
    (``git cat-file --batch-check`` format atoms, e.g. ``%(objecttype) %(objectsize)``); ``expected`` is git's whole
    answer when every object is as expected (each answer and a newline).

    One ``git cat-file --batch-check --buffer`` over all of them (read-only; ``--buffer``: one write of the answers
    instead of a flush per object, 5x faster at 100,000 objects). git answers each line of its input in order
    (the format, or ``<name> missing``), so its whole answer when all are as expected is known beforehand: when
    git's is exactly it (an import's common case), nothing is parsed per object (500,000 objects: one comparison
    of bytes).

    Raises:
        GitError: git failed.
    """
    if not oids:
        return []
    out = _batch_check(git, answer_format, ("\n".join(oids) + "\n").encode("ascii"))
    if out == expected:
        return [True] * len(oids)
    answers = out.split(b"\n")
    if len(answers) != len(oids) + 1:  # not one answer a line: trust none
        log.warning("git cat-file gave %d answers for %d objects", len(answers) - 1, len(oids))
        return [False] * len(oids)
    return [found == answer(i) for i, found in enumerate(answers[:-1])]


def _batch_check(git: Git, answer_format: str, asked: bytes) -> bytes:
    """git's answer to ``asked`` (object names, a line each) from ``git cat-file --batch-check --buffer``.

    The names are given to git as a file, and its answer read from one (:mod:`.file_output`), not through pipes: a
    pipe is fed and read from Python a few KiB at a time, each write or read waiting for the interpreter lock, which
    the import's other thread holds most of the time (500,000 names, 20 MB; their answers, 5 MB).

    Raises:
        GitError: git failed, or could not be started.
    """
    args = ["cat-file", f"--batch-check={answer_format}", "--buffer"]
    try:
        with tempfile.TemporaryFile() as names:
            names.write(asked)
            names.seek(0)
            proc = run_to_files(git.argv(args), cwd=git.cwd, env=git.env, timeout=600, stdin=names)
            out, err = proc.stdout, proc.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git cat-file failed to run: {exc}", args_=tuple(args)) from exc
    if proc.returncode != 0:
        raise GitError(f"git cat-file failed: {err.decode('utf-8', 'replace').strip()[:300]}", args_=tuple(args),
                       returncode=proc.returncode, stderr=err.decode("utf-8", "replace"))
    return out
