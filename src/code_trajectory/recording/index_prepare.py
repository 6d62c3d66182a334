"""What the project's index vouches for, worked out (the rules: :mod:`.index_seed`): the index read, its regular
files whose blob is in the shadow repository, and git's verdict on which of them are unchanged.

:func:`prepare` runs on the import's thread for a small index, in a child process for a large one
(:mod:`.index_seed_child`): either way it tells plain data in two steps, the files git is asked about
(:class:`Asked`, before git is asked, so that the caller makes its objects while git compares) and git's
verdict (:class:`Heard`), which :class:`~.index_seed.IndexSeed` turns into the files it vouches for.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import and_, ge, methodcaller, not_
from pathlib import Path

from code_trajectory.core.bounded_read import PATTERN_FILE_LIMIT, read_bounded
from code_trajectory.git import project_index, shared_objects
from code_trajectory.git.index_entries import IndexEntries
from code_trajectory.git.index_file import IndexCopy, IndexTree
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.stat_index import StatVerdict, write_stat_index, write_stat_index_copy
from code_trajectory.git.tree_format import EMPTY_TREE_OID, MODE_EXECUTABLE, MODE_FILE
from code_trajectory.recording.stat_sentinel import sentinel_under

__all__ = ["Asked", "Heard", "prepare"]

log = logging.getLogger(__name__)

_LOW32 = 0xFFFFFFFF
_NS = 1_000_000_000
_REGULAR = frozenset((int(MODE_FILE, 8), int(MODE_EXECUTABLE, 8)))
#: The attributes of a conversion that can make the work tree's bytes differ from the index's blob while keeping
#: their size, which the size test of :mod:`.index_seed` would not catch: a clean filter, and a
#: ``working-tree-encoding`` of one byte a character (IBM037: ASCII text turned into EBCDIC, byte for byte). A file
#: with either is read and hashed.
SIZE_KEEPING_ATTRIBUTES = ("filter", "working-tree-encoding")


@dataclass
class Asked:
    """What :func:`prepare` tells first, before git compares (paths relative to the project root, as bytes: as the
    index holds them, what :func:`os.fsencode` makes of a path).

    Attributes:
        index_mtime_ns: the index file's mtime when it was read.
        files: the regular files of the index, with their blob in the shadow repository as far as known yet, that
            git is asked about (see :class:`Heard`), in the index's order, with their index entries' facts (git's
            low 32 bits of seconds, size, inode).
        others: the other such files git is not asked about (racy ones, or all when git cannot be asked).
    """

    index_mtime_ns: int = 0
    files: IndexEntries = field(default_factory=IndexEntries.empty)
    others: IndexEntries = field(default_factory=IndexEntries.empty)


@dataclass
class Heard:
    """What :func:`prepare` tells last.

    Attributes:
        changed: the files of :attr:`Asked.files` git found changed since their index entry; None: git gave no
            verdict (it vouches for none of them).
        missing: files of :attr:`Asked.files` and :attr:`Asked.others` whose blob is not in the shadow repository
            with the size the index recorded (none of them is taken from the index).
        trees: the cache-tree's directories whose tree is ``HEAD``'s there and is in the shadow repository.
        written: ``(file, name, checksum)`` of the private index git vouched on, kept for the stat cache to adopt
            (see :class:`~.gitvouch.Written`), or None (none kept).
    """

    changed: set[str] | None = None
    missing: set[str] = field(default_factory=set)
    trees: dict[str, IndexTree] = field(default_factory=dict)
    written: tuple[Path, str, str] | None = None


def prepare(project: ProjectRepo, repo: ShadowRepo, *, max_file_bytes: int,
            sentinel_of: Callable[[str], str | None] | None, on_asked: Callable[[Asked], None]) -> Heard:
    """The index's regular files whose blob is in ``repo`` with the size the index recorded for the file (no
    conversion) and no filter attribute, and which of them git finds unchanged (see :mod:`.index_seed`).

    Args:
        project: the project's repository (nothing is written to it).
        repo: the shadow repository: the project's packs and the needed loose objects are hard-linked into it.
        max_file_bytes: the size cap of recorded files.
        sentinel_of: the sentinel path (relative to the root) of the private index named by a random name, to be
            kept for the stat cache (:func:`.gitvouch.sentinel`); None: the private index is removed afterwards.
        on_asked: called once with the files git is asked about and the others (an empty :class:`Asked` when there
            are none), before the private index is written and git compares and checks the blobs: the caller makes
            its own objects from them meanwhile, and walks on with them before git's verdict.

    Returns:
        git's verdict and what else was learnt meanwhile.

    Raises:
        GitError, OSError: git or the file system failed (the caller then reuses nothing).
    """
    told: list[Asked] = []

    def tell(asked: Asked) -> None:
        told.append(asked)
        on_asked(asked)

    heard = Heard()
    objects = project.objects_dir
    if objects is not None:
        with ThreadPoolExecutor(2, thread_name_prefix="trajectory-index-prepare") as background:
            heard = _prepare(project, repo, objects, background, max_file_bytes, sentinel_of, tell)
    if not told:
        on_asked(Asked())
    return heard


def _prepare(project: ProjectRepo, repo: ShadowRepo, objects: Path, background: ThreadPoolExecutor,
             max_file_bytes: int, sentinel_of: Callable[[str], str | None] | None,
             tell: Callable[[Asked], None]) -> Heard:
    heard = Heard()
    oid_length = len(EMPTY_TREE_OID)  # the shadow repository's object format (SHA-1)
    found = project_index.index_with_stat(project, oid_bytes=oid_length // 2)
    if not found:
        return heard
    index_mtime_ns, copy = found.mtime_ns, found.copy
    candidates = _regular_files(found.entries, oid_length, max_file_bytes)
    if candidates and _conversions_possible(project, root=project.root, paths=candidates.names):
        filtered = project_index.attribute_values(project, sorted(map(os.fsdecode, candidates.names)),
                                                  *SIZE_KEEPING_ATTRIBUTES)
        if filtered is None:
            return heard
        candidates = candidates.without(set(map(os.fsencode, filtered)))
    if not candidates:
        return heard
    packs = shared_objects.link_packs(objects, repo.git_dir / "objects")
    loose = shared_objects.link_loose_objects(objects, repo.git_dir / "objects", _oid_texts(candidates))
    settled, others = _settled(candidates, copy, index_mtime_ns)
    # told first: the caller makes its objects while the private index is written, git compares and cat-file checks
    # the blobs (each of those competes with the caller for the CPU; told after them, the caller waited ~1 s longer
    # at 500,000 files on 2 cores); the cache-tree is parsed after it too (~0.1 s)
    tell(Asked(index_mtime_ns, settled, others))
    # then git lists HEAD's trees (~0.15 s of CPU at 25,000 directories: not while the caller walks on the other
    # core) and cat-file answers, while git compares
    heads_listed = background.submit(project_index.head_trees, project)
    present_checked = background.submit(
        shared_objects.blobs_of_size, repo.git, candidates.oid_texts(), candidates.sizes)
    asked = _ask_git(project, repo, settled, copy, sentinel_of) if settled else None  # git lstats
    del copy  # the index file's bytes
    try:
        trees = found.trees
        heads = heads_listed.result() if trees else None  # a cache-tree node is used only when HEAD's
        trees = {path: tree for path, tree in trees.items() if heads is not None and heads.get(path) == tree[2]}
        loose += shared_objects.link_loose_objects(objects, repo.git_dir / "objects",
                                                   (tree[2] for tree in trees.values()))
        present = present_checked.result()
        if not all(present):
            heard.missing = {os.fsdecode(path) for path, there in zip(candidates.names, present) if not there}
        heard.trees = dict(compress(trees.items(), shared_objects.trees_present(
            repo.git, [tree[2] for tree in trees.values()])))
        log.info("initial import: %d files and %d directories of the project's index usable (%d packs, %d loose"
                 " objects linked)", len(candidates) - len(heard.missing), len(heard.trees), packs, loose)
        if asked is not None:
            heard.changed = asked[0].dirty()
            if heard.changed is not None:
                log.info("initial import: git vouches for %d files of the project's index (%d changed)",
                         len(settled) - len(heard.changed), len(heard.changed))
                if sentinel_of is not None:
                    heard.written = asked[1], asked[2], asked[3]
    finally:
        if asked is not None:
            asked[0].close()
            if heard.written is None:
                asked[1].unlink(missing_ok=True)
    return heard


def _oid_texts(entries: IndexEntries) -> Iterator[str]:
    """The blob ids of ``entries`` in hex (:meth:`~code_trajectory.git.index_entries.IndexEntries.oid_texts`), made
    only once the first is asked for: a packed repository asks for none."""
    yield from entries.oid_texts()


def _settled(candidates: IndexEntries, copy: IndexCopy | None, index_mtime_ns: int,
             ) -> tuple[IndexEntries, IndexEntries]:
    """``(the candidates git is asked about, the others)``, each in the candidates' order: those whose mtime and ctime
    are in a second before the index file's (see :mod:`.index_seed`; the others are racy). With ``copy`` (the
    project index's entries, paths relative to the root), those the private index copied from it holds: all but
    the racy ones, those marked assume-unchanged and gitlinks (:class:`~code_trajectory.git.index_file.IndexCopy`)."""
    if copy is not None:
        left_out = copy.left_out
        if not left_out:
            return candidates, IndexEntries.empty(candidates.oid_bytes)
        chosen = [path not in left_out for path in candidates.names]
    else:
        written_s = (index_mtime_ns // _NS) & _LOW32
        chosen = [mtime // _NS < written_s and ctime // _NS < written_s
                  for mtime, ctime in zip(candidates.mtimes_ns, candidates.ctimes_ns)]
    return candidates.select(chosen), candidates.select(map(not_, chosen))


def _ask_git(project: ProjectRepo, repo: ShadowRepo, settled: IndexEntries, copy: IndexCopy | None,
             sentinel_of: Callable[[str], str | None] | None) -> tuple[StatVerdict, Path, str, str] | None:
    """Start ``git diff-files`` on a private index of the ``settled`` candidates (see :func:`_settled`): ``(the
    running verdict, the private index file, its name, its checksum)``, or None when it cannot be written. With
    ``copy`` (the project index's entries), the private index is the project's entries copied as they are (all but
    those :func:`_settled` leaves out: :func:`~code_trajectory.git.stat_index.write_stat_index_copy`); entries that
    are not candidates then stay in it, and git's verdict on them is not used."""
    for stale in repo.state_dir.glob("seed-*.index"):  # left by an import that was killed
        stale.unlink(missing_ok=True)
    name = os.urandom(16).hex()
    index = repo.state_dir / f"seed-{name}.index"
    sentinel = (sentinel_of(name) if sentinel_of is not None
                else sentinel_under(project.root, repo.state_dir / f"seed-{name}.sentinel"))
    if sentinel is None:
        return None
    try:
        _count, checksum = (write_stat_index_copy(index, copy, sentinel=sentinel) if copy is not None
                            else write_stat_index(index, ((os.fsdecode(path), *row) for path, row in
                                                          settled.rows().items()), sentinel=sentinel))
    except (OSError, ValueError) as exc:
        log.info("initial import: cannot write the private index (%s); every file is looked at", exc)
        index.unlink(missing_ok=True)
        return None
    return StatVerdict(repo.git, index, sentinel=sentinel, checksum=checksum), index, name, checksum


def _regular_files(entries: IndexEntries, oid_length: int, max_bytes: int) -> IndexEntries:
    """The ``entries`` of regular files with a blob id of ``oid_length`` hex digits and at most ``max_bytes``:
    ``entries`` itself when all are (each told in C: 500,000 at an import)."""
    if 2 * entries.oid_bytes != oid_length:
        return IndexEntries.empty(oid_length // 2)
    if set(entries.modes) <= _REGULAR and max(entries.sizes, default=0) <= max_bytes:
        return entries
    return entries.select(map(and_, map(_REGULAR.__contains__, entries.modes), map(ge, repeat(max_bytes),
                                                                                   entries.sizes)))


def _conversions_possible(project: ProjectRepo, *, root: Path, paths: Iterable[bytes]) -> bool:
    """True when an attribute file that applies mentions one of :data:`SIZE_KEEPING_ATTRIBUTES` (a tracked
    ``.gitattributes`` as the work tree has it, the repository's ``info/attributes``, the user's or the system's
    attribute file), or when the project is a subdirectory of its work tree (the ``.gitattributes`` above it are not
    looked at: ``check-attr`` is)."""
    if project.prefix:
        return True
    files = [root / os.fsdecode(p) for p in filter(methodcaller("endswith", b".gitattributes"), paths)  # in C
             if p == b".gitattributes" or p.endswith(b"/.gitattributes")]
    users = project_index.attribute_files(project)  # the user's own and the system's: followed when links
    for path in [*files, *users]:
        if not os.path.lexists(path):
            continue
        data = read_bounded(path, PATTERN_FILE_LIMIT, follow_symlinks=path in users)
        if data is None or any(name.encode() in data for name in SIZE_KEEPING_ATTRIBUTES):
            return True  # unreadable, a symlink, a FIFO or too large: assume the worst
    return False
