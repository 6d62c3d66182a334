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
  index holds: the index's blob is the cleaned content, not the bytes in the work tree, and each of the others
  changes the size of the files it changes (an end of line, an ``$Id$``, an encoding of several bytes a
  character), so the size test sends those files to be hashed;
- no ``filter`` or ``working-tree-encoding`` attribute applies to it (a clean filter may keep the size, and so
  does an encoding of one byte a character, EBCDIC's IBM037: ``git check-attr``, asked only when an attribute
  file of the project, of the repository or of the user mentions one of them;
  :data:`~.index_prepare.SIZE_KEEPING_ATTRIBUTES`).

Secrets: the content rules of :func:`code_trajectory.core.secrets.secret_content` (private keys, npm tokens) apply
to the files a scan reads. A file taken from the index is one the user committed to their own repository; its
blob is already in the project's object store, and the shadow history is shared (``push``) only to that same
project's remote. A file only staged, never committed, is read and checked as before. Every later change of any
file is read and checked as always.

Which of them still match (issue 29: at 500,000 files the import must cost about reading the index and writing
the trees, not a Python ``lstat`` per file): git is asked, as ``git status`` is; what git vouches for is what
``git status`` would call unchanged, no more (a rewrite that keeps the size within the second git last looked at
the file, before the index was written, escapes both, as it escapes git itself when built without ``USE_NSEC``).
:class:`IndexSeed` starts the preparation (:func:`.index_prepare.prepare`) beside the walk, on a thread, or for a
large index in a child process of its own (:mod:`.index_seed_child`: the walk and the preparation are Python on
one interpreter lock otherwise). It does what needs no ``lstat``, mostly in git processes on another core: the
index file read in one pass (:mod:`code_trajectory.git.index_file`), the staged paths (``git diff-index
--cached``), the attribute check, the packs linked, the sizes and types of all the index's blobs (one ``git cat-file
--batch-check --buffer``, compared as a whole with the answer expected when all are present); the candidates are
written to a private index and ``git diff-files`` compares them with the work tree in C, on threads. The files git
is asked about are told before it is asked (:class:`~.index_prepare.Asked`), and the import makes their
objects and places them in the walk while git compares; git's verdict then takes back the changed ones
(:class:`~.index_prepare.Heard`, :meth:`IndexSeed.withdrawn`), which the walk looks at as any other file.
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
from itertools import compress
from operator import eq

from code_trajectory.git.index_entries import IndexRow
from code_trajectory.git.index_file import IndexTree
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.stat_index import IndexEntry
from code_trajectory.recording import gitvouch
from code_trajectory.recording.index_prepare import Asked, Heard, prepare
from code_trajectory.recording.index_seed_child import Columns, SeedChild, columns_of, rows_by_path
from code_trajectory.recording.listing import REL_OF
from code_trajectory.recording.statcache import StatCache
from code_trajectory.recording.tracked import TrackedFiles
from code_trajectory.recording.worktree import FileInfo

__all__ = ["IndexSeed"]

log = logging.getLogger(__name__)

_LOW32 = 0xFFFFFFFF
_NS = 1_000_000_000
#: An index file this large or larger (~80,000 entries) is read in a child process (:mod:`.index_seed_child`).
#: Measured alternating with the thread on kept trees (2026-11-26, this 2-core machine, load 1.5-2.7): 500,000 files
#: 11.42 -> 9.82 s and 10.51 -> 9.19 s (medians of 3 and 2), 100,000 files 1.74 -> 1.58 s (medians of 5). Below
#: it, the thread's work is short and a process's start-up (~0.15 s of CPU) would add to it.
CHILD_FROM_BYTES = 8 << 20
#: ``FileInfo`` from a tuple of its six fields, made in C (a named tuple's own ``__new__`` is Python: 500,000 calls)
_new_info = partial(tuple.__new__, FileInfo)


def _same_time(ns: int, index_ns: int) -> bool:
    return (ns // _NS) & _LOW32 == index_ns // _NS and ns % _NS == index_ns % _NS


class IndexSeed:
    """The blob ids the project's index vouches for, prepared while the work tree is walked: on a thread, or for a
    large index (:data:`CHILD_FROM_BYTES`) in a child process (:mod:`.index_seed_child`).

    Args:
        project: the project's repository (nothing is written to it).
        repo: the shadow repository: the project's packs and the needed loose objects are hard-linked into it.
        max_file_bytes: the size cap of recorded files (a larger file is recorded as a size note, never seeded).
        tracked: the tracked set of the recording policy: a file is vouched for only when it is in it too (the
            walk then skips the ignore rules for it, as the policy does for every tracked file).
        stat_cache: the stat cache: the private index is then named as its stat index would be, so that
            :func:`.gitvouch.refresh` can adopt it (:meth:`written`) instead of writing the same facts again.
        in_child: prepare in a child process (True), on a thread (False), or as the index's size says (None).

    :meth:`vouched` waits for the files git is asked about and gives them (the walk places them), :meth:`withdrawn`
    waits for git's verdict and names those it takes back (the walk looks at them itself). Calling the
    object with the scan's files (path relative to the project root -> what ``lstat`` said, or the vouched facts)
    returns ``{path: blob id}`` of the files it vouches for, each present in ``repo`` (see the module's rules);
    ``{}`` when the project is not a git work tree with a commit, or nothing can be reused. Never raises for git's
    or the file system's failures (logged): the scan then ``lstat``s and hashes every file, as without an index.
    """

    def __init__(self, project: ProjectRepo, repo: ShadowRepo, *, max_file_bytes: int,
                 tracked: TrackedFiles | None = None, stat_cache: StatCache | None = None,
                 in_child: bool | None = None) -> None:
        self._project, self._repo, self._max, self._tracked = project, repo, max_file_bytes, tracked
        self._stat_cache = stat_cache
        self._written: gitvouch.Written | None = None
        self._candidates: dict[str, IndexRow] = {}
        self._vouched: dict[str, FileInfo] = {}
        self._oids: dict[str, str] = {}
        self._trees: dict[str, IndexTree] = {}
        self._index_mtime_ns = 0
        self._withdrawn: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._asked = threading.Event()  # the thread took what it was told first
        self._heard: Heard | None = None  # the thread's last answer, taken on the caller's thread (_wait)
        self._child: SeedChild | None = None
        self._child_asked = False
        self._done = False
        if in_child is None:
            in_child = _index_bytes(project) >= CHILD_FROM_BYTES
        if in_child:
            try:
                self._child = SeedChild(project, max_file_bytes=max_file_bytes,
                                        stat_cache_path=stat_cache.path if stat_cache is not None else None)
                return
            except OSError as exc:
                log.info("initial import: cannot start a process to read the project's index (%s); read here", exc)
        self._thread = threading.Thread(target=self._prepare_here, name="trajectory-index-seed", daemon=True)
        self._thread.start()

    def vouched(self) -> Mapping[str, FileInfo]:
        """Wait for the files git is asked about; return them (path relative to the project root -> the index
        entry's ``lstat`` facts, git's 32 bits of seconds, size and inode). Each is a tracked regular file whose blob
        is in ``repo`` as far as known yet; the caller need not ``lstat`` it (see the module docstring). git's verdict
        may take some back: :meth:`withdrawn` waits for it and names them (they leave this very mapping then), so
        that the caller proceeds while git compares."""
        self._wait_asked()
        return self._vouched

    def withdrawn(self) -> set[str]:
        """Wait for git's verdict; return the paths :meth:`vouched` gave that it no longer vouches for: changed since
        their index entry, or their blob missing from ``repo`` (all of them when git gave no verdict or the
        preparation failed). The caller looks at those files itself."""
        self._wait()
        return self._withdrawn

    def trees(self) -> Mapping[str, IndexTree]:
        """Wait for the preparation; return git's cache-tree of the project's index (directory relative to the project
        root, ``""`` the root -> ``(entries below it, direct subdirectories, tree id)``), the trees present in
        ``repo`` only: a directory whose every file is taken from the index (same blob id and mode), as many as
        the index has below it, is that tree (:class:`~code_trajectory.git.trees.KnownTrees`)."""
        self._wait()
        return self._trees

    def written(self) -> gitvouch.Written | None:
        """The private index git vouched on, kept for :func:`.gitvouch.refresh` to adopt (the caller removes its
        file when it does not); None when there is none."""
        self._wait()
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
        self._wait()
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

    def _wait_asked(self) -> None:
        """Wait for what the preparation tells first (:class:`~.index_prepare.Asked`), taken as it comes."""
        if self._thread is not None:
            self._asked.wait()
            return
        with self._lock:
            if self._child is None or self._child_asked:
                return
            self._child_asked = True
            asked = self._child.asked()
            if asked is not None:
                self._take_asked(*asked)  # while the child waits for git's verdict

    def _wait(self) -> None:
        """Wait for the whole preparation (the thread, or the child's two answers) and take git's verdict, once."""
        self._wait_asked()
        with self._lock:
            if self._done:
                return
            self._done = True
            if self._thread is not None:
                self._thread.join()
                heard = self._heard
            else:
                child, self._child = self._child, None
                heard = child.heard() if child is not None else None
            if heard is None:
                self._reuse_nothing()
            else:
                self._take_heard(heard)

    def _prepare_here(self) -> None:
        """The thread's work: :func:`.index_prepare.prepare`, what it tells first taken at once; git's verdict is
        kept for the caller's thread (:meth:`_wait`), so that nothing changes the mapping :meth:`vouched` gave while
        the caller reads it."""
        def on_asked(asked: Asked) -> None:
            self._take_asked(columns_of(asked.files), asked.index_mtime_ns, rows_by_path(columns_of(asked.others)))
            self._asked.set()

        stat_cache, root = self._stat_cache, self._project.root
        try:
            self._heard = prepare(self._project, self._repo, max_file_bytes=self._max, on_asked=on_asked,
                                  sentinel_of=None if stat_cache is None else partial(gitvouch.sentinel, root, stat_cache))
        except Exception as exc:  # noqa: BLE001 - an optimisation: without it every file is hashed
            log.warning("not reusing the project's index for the import: %s", exc)
        finally:
            self._asked.set()

    def _reuse_nothing(self) -> None:
        """Forget what was taken of a preparation that failed half-way: every file is then looked at."""
        self._withdrawn = set(self._vouched)
        self._vouched.clear()
        self._oids, self._candidates = {}, {}

    def _take_asked(self, columns: Columns, index_mtime_ns: int, others: dict[str, IndexRow]) -> None:
        """Take the files git is asked about (``columns`` in the index's order) as vouched for until git's verdict
        says otherwise (:meth:`_take_heard`; each ``FileInfo`` made in C, in that order), but those the tracked set
        does not hold, which stay candidates with ``others``."""
        paths, modes, oids, sizes, mtimes, ctimes, inos = columns
        self._candidates, self._index_mtime_ns = others, index_mtime_ns
        kept = self._tracked.current.kept(paths) if self._tracked is not None else paths
        if kept is not paths:  # a file the tracked set does not hold (the index changed meanwhile): a candidate
            held = set(kept)
            chosen = list(map(held.__contains__, paths))
            for path, mode, oid, size, mtime_ns, ctime_ns, ino in zip(*columns):
                if path not in held:
                    others[path] = (mode, oid, size, mtime_ns, ctime_ns, ino)
            paths, modes, oids = list(compress(paths, chosen)), list(compress(modes, chosen)), list(compress(oids, chosen))
            sizes, mtimes, ctimes, inos = (list(compress(column, chosen)) for column in (sizes, mtimes, ctimes, inos))
        self._vouched = dict(zip(paths, map(_new_info, zip(paths, modes, sizes, mtimes, ctimes, inos))))
        self._oids = dict(zip(paths, oids))

    def _take_heard(self, heard: Heard) -> None:
        """Apply git's verdict to what :meth:`_take_asked` took: the changed files become candidates again, those
        whose blob is missing go, and with no verdict none is vouched for."""
        vouched, oids, candidates = self._vouched, self._oids, self._candidates
        changed = set(vouched) if heard.changed is None else heard.changed
        for path in changed | heard.missing:
            info = vouched.pop(path, None)
            oid = oids.pop(path, None)
            if info is not None:
                self._withdrawn.add(path)
            if info is not None and oid is not None and path not in heard.missing:
                candidates[path] = (info.mode, oid, info.size, info.mtime_ns, info.ctime_ns, info.ino)
        for path in heard.missing:
            candidates.pop(path, None)
        self._trees = heard.trees
        if heard.written is not None and self._stat_cache is not None and heard.changed is not None:
            index, name, checksum = heard.written
            self._written = gitvouch.Written(index, name, checksum, self._holds, self._holds_files)


def _index_bytes(project: ProjectRepo) -> int:
    """The size in bytes of the project's index file (0 when there is none)."""
    try:
        return os.stat(project.git_dir / "index").st_size if project.git_dir is not None else 0
    except OSError:
        return 0
