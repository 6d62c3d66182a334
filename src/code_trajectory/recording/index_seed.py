"""The initial import takes what git already knows: blob ids of unchanged tracked files from the project's index.

In a git project whose index is fresh, git has already hashed every tracked file and kept its stat data (git's
index, gitformat-index(5)). The first full scan of such a project (nothing recorded yet: the initial import) uses
that knowledge the way ``git status`` does, instead of reading, hashing and compressing every file again (issue 29:
the import of a 500,000-file project within 0.1x of ``git init && git add -A && git commit``).

A scanned file takes the index's blob id only when all of these hold, else it is read and hashed as before:

- the index entry is stage 0, and the path is not staged differently from ``HEAD`` (the blob is in a commit the
  user made, not only in the index: see below);
- it is a regular file of the same mode, and its ``lstat`` matches the index's stat data: as ``git diff-files``
  compares them (mode, size, mtime and ctime in whole seconds, inode, uid and gid: see below), or, for the files git
  was not asked about, as this process's ``lstat`` gives them (size, mtime and ctime to the nanosecond, inode; git
  keeps 32 bits of each, so the low 32 bits are compared);
- it is not racy: its mtime is older than the index file's (git's racy-clean rule, gitformat-index(5) and
  Documentation/technical/racy-git.txt: git itself smudges an entry that was racy when the index was written, so
  its size no longer matches); for git's comparison, its mtime and ctime are in a second before the index file's;
- it is in the recording policy's tracked set (then no ignore rule applies to it, only our own exclusions);
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

Which of them still match (issue 29: at 500,000 files the import must cost about reading the index and writing
the trees, not a Python ``lstat`` per file): git is asked, as ``git status`` is; what git vouches for is what
``git status`` would call unchanged, no more (a rewrite that keeps the size within the second git last looked at
the file, before the index was written, escapes both, as it escapes git itself when built without ``USE_NSEC``). :class:`IndexSeed` starts on a
thread and does what needs no ``lstat``, mostly in git processes on another core: the index file read in one pass
(:mod:`code_trajectory.git.index_file`), the staged paths (``git diff-index --cached``), the attribute check, the
packs linked, the sizes and types of all the index's blobs (one ``git cat-file --batch-check --buffer``,
compared as a whole with the answer expected when all are present); then the
candidates are written to a private index and ``git diff-files`` compares them with the work tree in C, on threads.
The project's index is never used as is, so none of its extensions (the fsmonitor's, the untracked cache, a split
index) count: a version 2 index has its entries copied byte for byte into the private one, but those whose flags
would make git skip them (assume-unchanged) or that git would not compare by ``lstat`` (racy, gitlinks), which are
left out (:func:`~code_trajectory.git.stat_index.write_stat_index_copy`: a few slices of bytes, not an entry packed
in Python a file); another version has its candidates written entry by entry
(:func:`~code_trajectory.git.stat_index.write_stat_index`, no flags). The comparison runs under the shadow's own
config (:class:`~code_trajectory.git.stat_index.StatVerdict`: every ``lstat`` fact compared, no program of the
project's config run). The walk of the work tree then
neither ``lstat``s nor judges by ignore rules the files git vouches for (:meth:`IndexSeed.vouched`, see
:func:`~code_trajectory.recording.worktree.scan`): their ``lstat`` facts are the index's. git compares whole
seconds (without ``USE_NSEC``, as this machine's git is built), so an entry whose mtime or ctime falls in the
second the index was written, or later, is left out of the private index (git's racy-clean rule, counted in
seconds), exactly as ``git status`` would trust or check it. Candidates git does not vouch for (changed, or git
could not be asked) are compared after the walk with the walk's ``lstat``, in nanoseconds (see above).

Trees: git's cache-tree (the index's ``TREE`` extension: per directory, the tree id of the index's entries below it
and how many there are, :attr:`~code_trajectory.git.index_file.IndexFile.trees`) names the trees git wrote at its
last commit or ``write-tree``. A directory of the import whose every file (at any depth) was taken from the index
by the rules above (the index's blob id; its mode is the index's, which both ``git diff-files`` and the comparison
above check), with as many files below it and as many direct subdirectories as the cache-tree counts, holds
exactly the index's entries there, so its tree is that id (:class:`~code_trajectory.git.trees.KnownTrees`): not
written again (at 500,000 files, 25,000 trees). Any other content (an untracked or changed file, a symlink or a
submodule, which the index holds apart, a tracked file our policy leaves out) changes a count or is not taken from
the index, and the directory's tree is written from its files. The cache-tree is only what the index file says, so
a node is used only when its tree is ``HEAD``'s tree at that path (``git ls-tree -r -d HEAD``: named by a commit,
content-addressed from it; a stale or planted node naming another tree with the same counts is not taken), and that
tree is in the shadow repository (linked with the packs, or as a loose object; one ``git cat-file --batch-check``).
A directory whose every file is the index's, as many as ``HEAD``'s tree there holds, has exactly that tree's files.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from operator import and_, eq, ge, itemgetter
from pathlib import Path

from code_trajectory.core.bounded_read import PATTERN_FILE_LIMIT, read_bounded
from code_trajectory.git import project_index, shared_objects
from code_trajectory.git.index_file import IndexCopy, IndexRow, IndexTree
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.stat_index import IndexEntry, StatVerdict, write_stat_index, write_stat_index_copy
from code_trajectory.git.tree_format import EMPTY_TREE_OID, MODE_EXECUTABLE, MODE_FILE
from code_trajectory.recording import gitvouch
from code_trajectory.recording.listing import REL_OF
from code_trajectory.recording.statcache import StatCache
from code_trajectory.recording.tracked import TrackedFiles
from code_trajectory.recording.worktree import FileInfo

__all__ = ["IndexSeed"]

log = logging.getLogger(__name__)

_LOW32 = 0xFFFFFFFF
_NS = 1_000_000_000
_REGULAR = frozenset((MODE_FILE, MODE_EXECUTABLE))
_OID = itemgetter(1)  # an index row's blob id
_FACTS_AT = (0, 2, 3, 4, 5)  # an index row's mode, size, mtime, ctime, inode: FileInfo's fields after rel
#: ``FileInfo`` from a tuple of its six fields, made in C (a named tuple's own ``__new__`` is Python: 500,000 calls)
_new_info = partial(tuple.__new__, FileInfo)


def _same_time(ns: int, index_ns: int) -> bool:
    return (ns // _NS) & _LOW32 == index_ns // _NS and ns % _NS == index_ns % _NS


class IndexSeed:
    """The blob ids the project's index vouches for, prepared on a thread while the work tree is walked.

    Args:
        project: the project's repository (nothing is written to it).
        repo: the shadow repository: the project's packs and the needed loose objects are hard-linked into it.
        max_file_bytes: the size cap of recorded files (a larger file is recorded as a size note, never seeded).
        tracked: the tracked set of the recording policy: a file is vouched for only when it is in it too (the
            walk then skips the ignore rules for it, as the policy does for every tracked file).
        stat_cache: the stat cache: the private index is then named as its stat index would be, so that
            :func:`.gitvouch.refresh` can adopt it (:meth:`written`) instead of writing the same facts again.

    :meth:`vouched` waits for the thread and gives the files git found unchanged (before the walk). Calling the
    object with the scan's files (path relative to the project root -> what ``lstat`` said, or the vouched facts)
    returns ``{path: blob id}`` of the files it vouches for, each present in ``repo`` (see the module's rules);
    ``{}`` when the project is not a git work tree with a commit, or nothing can be reused. Never raises for git's
    or the file system's failures (logged): the scan then ``lstat``s and hashes every file, as without an index.
    """

    def __init__(self, project: ProjectRepo, repo: ShadowRepo, *, max_file_bytes: int,
                 tracked: TrackedFiles | None = None, stat_cache: StatCache | None = None) -> None:
        self._project, self._repo, self._max, self._tracked = project, repo, max_file_bytes, tracked
        self._stat_cache = stat_cache
        self._written: gitvouch.Written | None = None
        self._candidates: dict[str, IndexRow] = {}
        self._vouched: dict[str, FileInfo] = {}
        self._oids: dict[str, str] = {}
        self._trees: dict[str, IndexTree] = {}
        self._index_mtime_ns = 0
        self._thread = threading.Thread(target=self._prepare_logged, name="trajectory-index-seed", daemon=True)
        self._thread.start()

    def vouched(self) -> Mapping[str, FileInfo]:
        """Wait for the thread; return the files git found unchanged since the index's entry (path relative to the
        project root -> the entry's ``lstat`` facts, git's 32 bits of seconds, size and inode). Each is a tracked
        regular file whose blob is in ``repo``; the caller need not ``lstat`` it (see the module docstring)."""
        self._thread.join()
        return self._vouched

    def trees(self) -> Mapping[str, IndexTree]:
        """Wait for the thread; return git's cache-tree of the project's index (directory relative to the project
        root, ``""`` the root -> ``(entries below it, direct subdirectories, tree id)``), the trees present in
        ``repo`` only: a directory whose every file is taken from the index (same blob id and mode), as many as
        the index has below it, is that tree (:class:`~code_trajectory.git.trees.KnownTrees`)."""
        self._thread.join()
        return self._trees

    def written(self) -> gitvouch.Written | None:
        """The private index git vouched on, kept for :func:`.gitvouch.refresh` to adopt (the caller removes its
        file when it does not); None when there is none."""
        self._thread.join()
        return self._written

    def _holds(self, entry: IndexEntry) -> bool:
        """True when the private index holds ``entry`` (a file git vouched for, with these very facts: each vouched
        file's entry is written from the same index row as its :class:`FileInfo` and blob id)."""
        rel, mode, oid, *facts = entry
        return self._holds_files([_new_info((rel, mode, *facts))], [oid])

    def _holds_files(self, infos: Sequence[FileInfo], oids: Sequence[str | None]) -> bool:
        """True when the private index holds each of ``infos`` with the blob id at the same place of ``oids``:
        :meth:`_holds` for a directory's files at once, compared in C (500,000 files at an import)."""
        if None in oids:
            return False
        rels = list(map(REL_OF, infos))
        return all(map(eq, infos, map(self._vouched.get, rels))) and all(map(eq, oids, map(self._oids.get, rels)))

    def __call__(self, files: Mapping[str, FileInfo]) -> dict[str, str]:
        self._thread.join()
        seeded = self._oids  # those vouched for by git (a file the walk did not keep is never looked up)
        index_mtime_ns, candidates = self._index_mtime_ns, self._candidates
        for path, (mode, oid, size, mtime_ns, ctime_ns, ino) in candidates.items():
            info = files.get(path)
            if (info is None or info.mode != mode or info.size != size
                    or info.ino & _LOW32 != ino or info.mtime_ns >= index_mtime_ns
                    or not _same_time(info.mtime_ns, mtime_ns) or not _same_time(info.ctime_ns, ctime_ns)):
                continue
            seeded[path] = oid
        if candidates or seeded:
            log.info("initial import: blob ids of %d files known from the project's index (%d of them vouched for by"
                     " git), %d files scanned", len(seeded), len(self._vouched), len(files))
        return seeded

    def _prepare_logged(self) -> None:
        try:
            self._prepare()
        except Exception as exc:  # noqa: BLE001 - an optimisation: without it every file is hashed
            log.warning("not reusing the project's index for the import: %s", exc)
            self._candidates, self._vouched, self._oids, self._trees = {}, {}, {}, {}

    def _prepare(self) -> None:
        """Fill :attr:`_candidates`: the index's regular files whose blob is in the shadow repository with the
        size the index recorded for the file (no conversion), and no filter attribute."""
        project, repo = self._project, self._repo
        objects = project.objects_dir
        if objects is None:
            return
        oid_length = len(EMPTY_TREE_OID)  # the shadow repository's object format (SHA-1)
        found = project_index.index_with_stat(project, oid_bytes=oid_length // 2)
        if not found:
            return
        rows, self._index_mtime_ns, trees, copy = found
        candidates = _regular_files(rows, oid_length, self._max)
        if candidates and _filters_possible(project, root=project.root, paths=candidates):
            filtered = project_index.attribute_values(project, sorted(candidates), "filter")
            if filtered is None:
                return
            for path in filtered:
                candidates.pop(path, None)
        if not candidates:
            return
        packs = shared_objects.link_packs(objects, repo.git_dir / "objects")
        loose = shared_objects.link_loose_objects(objects, repo.git_dir / "objects",
                                                  (row[1] for row in candidates.values()))
        heads = project_index.head_trees(project) if trees else None  # a cache-tree node is used only when HEAD's
        trees = {path: tree for path, tree in trees.items() if heads is not None and heads.get(path) == tree[2]}
        loose += shared_objects.link_loose_objects(objects, repo.git_dir / "objects",
                                                   (tree[2] for tree in trees.values()))
        asked = self._ask_git(candidates, copy)  # git lstats on its threads while cat-file answers
        del copy  # the index file's bytes
        try:
            rows_now = list(candidates.values())
            present = shared_objects.blobs_of_size(repo.git, list(map(_OID, rows_now)),
                                                   list(map(itemgetter(2), rows_now)))
            complete = all(present)
            self._candidates = candidates if complete else dict(compress(candidates.items(), present))
            self._trees = dict(compress(trees.items(), shared_objects.trees_present(
                repo.git, [tree[2] for tree in trees.values()])))
            log.info("initial import: %d files and %d directories of the project's index usable (%d packs, %d loose"
                     " objects linked)", len(self._candidates), len(self._trees), packs, loose)
            if asked is not None:
                self._hear_git(*asked, every_blob=complete)
        finally:
            if asked is not None:
                asked[1].close()
                if self._written is None:
                    asked[2].unlink(missing_ok=True)

    def _ask_git(self, candidates: Mapping[str, IndexRow],
                 copy: IndexCopy | None) -> tuple[list[str], StatVerdict, Path, str, str] | None:
        """Start ``git diff-files`` on a private index of the ``candidates`` whose mtime and ctime are in a second
        before the index file's (see the module docstring): ``(those paths, the running verdict, the private
        index file)``, or None when there are none. With ``copy`` (the project index's entries, paths relative to
        the root), the private index is the project's entries copied as they are (all but the racy ones, those
        marked assume-unchanged and gitlinks: :func:`~code_trajectory.git.stat_index.write_stat_index_copy`);
        entries that are not candidates then stay in it, and git's verdict on them is not used."""
        repo = self._repo
        if copy is not None:
            left_out = {path.decode("utf-8", "surrogateescape") for path in copy.left_out}
            settled = [path for path in candidates if path not in left_out]
        else:
            written_s = (self._index_mtime_ns // _NS) & _LOW32
            settled = [path for path, row in candidates.items()
                       if row[3] // _NS < written_s and row[4] // _NS < written_s]
        for stale in repo.state_dir.glob("seed-*.index"):  # left by an import that was killed
            stale.unlink(missing_ok=True)
        name = os.urandom(16).hex()
        index = repo.state_dir / f"seed-{name}.index"
        sentinel = (gitvouch.sentinel(self._project.root, self._stat_cache, name) if self._stat_cache is not None
                    else os.path.relpath(repo.state_dir / f"seed-{name}.sentinel", self._project.root))
        if not settled or sentinel is None or sentinel.startswith(".."):
            return None
        sentinel = sentinel.replace(os.sep, "/")
        try:
            _count, checksum = (write_stat_index_copy(index, copy, sentinel=sentinel) if copy is not None
                                else write_stat_index(index, ((path, *candidates[path]) for path in settled),
                                                      sentinel=sentinel))
        except (OSError, ValueError) as exc:
            log.info("initial import: cannot write the private index (%s); every file is looked at", exc)
            index.unlink(missing_ok=True)
            return None
        return settled, StatVerdict(repo.git, index, sentinel=sentinel, checksum=checksum), index, name, checksum

    def _hear_git(self, settled: list[str], verdict: StatVerdict, index: Path, name: str, checksum: str, *,
                  every_blob: bool) -> None:
        """Move the ``settled`` candidates that git found unchanged, that are still candidates (all are with
        ``every_blob``: no candidate's blob was missing) and that the tracked set holds into :attr:`_vouched` and
        :attr:`_oids`. Nothing moves when git gives no verdict (logged by
        :class:`StatVerdict`)."""
        candidates = self._candidates
        dirty = verdict.dirty()
        if dirty is None:
            return
        vouched, oids = self._vouched, self._oids
        # kept in the index's order, in C (500,000 files at an import): the objects made from them below are then
        # laid out in memory in the order the walk and the stat cache read them (in a hash set's order, the same
        # passes took 2x as long here)
        paths = self._tracked.current.kept(settled) if self._tracked is not None else settled
        if not every_blob or dirty:  # candidates whose blob is missing, or changed files
            paths = [path for path in paths if path in candidates and path not in dirty]
        rows = list(map(candidates.pop, paths))  # (mode, oid, size, mtime_ns, ctime_ns, ino)
        columns = [list(map(itemgetter(at), rows)) for at in _FACTS_AT]  # FileInfo's fields after rel, a list each
        vouched.update(zip(paths, map(_new_info, zip(paths, *columns))))
        oids.update(zip(paths, map(_OID, rows)))
        log.info("initial import: git vouches for %d files of the project's index (%d changed)", len(vouched),
                 len(dirty))
        if self._stat_cache is not None:
            self._written = gitvouch.Written(index, name, checksum, self._holds, self._holds_files)


def _regular_files(rows: dict[str, IndexRow], oid_length: int, max_bytes: int) -> dict[str, IndexRow]:
    """The ``rows`` of regular files with a blob id of ``oid_length`` hex digits and at most ``max_bytes``: ``rows``
    itself when all are (each told in C: 500,000 at an import), else a new dict of those."""
    values = list(rows.values())
    fit = list(map(and_, map(_REGULAR.__contains__, map(itemgetter(0), values)),
                   map(ge, repeat(max_bytes), map(itemgetter(2), values))))
    if all(fit) and set(map(len, map(_OID, values))) <= {oid_length}:
        return rows
    return {path: row for path, row in rows.items()
            if row[0] in _REGULAR and len(row[1]) == oid_length and row[2] <= max_bytes}


def _filters_possible(project: ProjectRepo, *, root: Path, paths: Mapping[str, object]) -> bool:
    """True when an attribute file that applies mentions ``filter`` (a tracked ``.gitattributes`` as the work tree
    has it, the repository's ``info/attributes``, the user's or the system's attribute file), or when the project
    is a subdirectory of its work tree (the ``.gitattributes`` above it are not looked at: ``check-attr`` is)."""
    if project.prefix:
        return True
    files = [root / p for p in paths if p == ".gitattributes" or p.endswith("/.gitattributes")]
    users = project_index.attribute_files(project)  # the user's own and the system's: followed when links
    for path in [*files, *users]:
        if not os.path.lexists(path):
            continue
        data = read_bounded(path, PATTERN_FILE_LIMIT, follow_symlinks=path in users)
        if data is None or b"filter" in data:
            return True  # unreadable, a symlink, a FIFO or too large: assume the worst
    return False
