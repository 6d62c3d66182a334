"""The shadow git repository in ``<project>/.trajectory``: layout, objects, refs.

The shadow repository is an ordinary git repository whose git dir is
``.trajectory/`` and whose work tree is the project root. Snapshots are commits
on ``refs/heads/shadow/<branch>``, one ref per branch of the project. New blobs and
trees are written together as one pack per snapshot (:meth:`ShadowRepo.batch`,
:mod:`code_trajectory.git.packs`), the commit as a loose object, and everything is
read through a long-running ``git cat-file --batch``, so writing a snapshot costs
two file creations, a diff and one ``update-ref``, independent of the project's
size. The repository keeps no index: the tree of
each snapshot is edited from the previous one (see :mod:`code_trajectory.git.trees`).

Layout of ``.trajectory/`` (mode 0700)::

    HEAD, config, objects/, refs/, logs/   the git repository
    .gitignore                             ``*``: the project's git never sees the shadow repository
    .git/                                  an empty bare repository: git clean/stash skip a nested repository
                                           (see :mod:`code_trajectory.git.nested`)
    info/exclude                           ``*``: a stray ``git status`` here lists nothing
    info/attributes                        diff drivers by file extension (hunk labels)
    write.lock                             held while a snapshot ref is updated
    state/                                 code-trajectory's own state (stat cache, intent, checkpoint
                                           requests to the recording process)

:class:`ShadowRepo` is the one reader of the shadow repository's objects and refs (with the cat-file process and
the tree cache they share) and the front of its writers; what is not that job lives beside it (creation in
:mod:`.create`, writing objects and packs in :mod:`.object_writer` and :mod:`.packs`, batched cat-file answers in
:mod:`.cat_batch`, the tree object's format in :mod:`.tree_format`, editing trees in :mod:`.trees`, the size cap's
note in :mod:`.oversize`, health in :mod:`.health`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import IO

from code_trajectory.core.errors import GitError, LockContentionError, ObjectTooLargeError, StorageError
from code_trajectory.core.paths import SHADOW_DIR_NAME
from code_trajectory.git import cat_batch, gitcmd, packs, untrusted
from code_trajectory.git.gitcmd import BatchProcess, Git, read_exact, read_line
from code_trajectory.git.object_writer import ObjectWriter
from code_trajectory.git.tree_format import EMPTY_TREE_OID, TreeEntry, parse_tree, tree_body

__all__ = ["MAX_CACHED_TREE_ENTRIES", "MAX_OBJECT_BYTES", "SHADOW_REF_PREFIX", "ZERO_OID", "ShadowRepo", "branch_of_ref",
           "shadow_ref"]

log = logging.getLogger(__name__)

SHADOW_REF_PREFIX = "refs/heads/shadow/"
#: Where a shadow ref is moved when a new branch's ref needs its name as a directory or the reverse (``fix`` after
#: ``fix/a`` was deleted: git keeps ``refs/heads/shadow/fix/a`` and cannot create ``refs/heads/shadow/fix``).
MOVED_REF_PREFIX = "refs/trajectory-moved/"
ZERO_OID = "0" * 40
#: Lock file (in ``.trajectory/``) held while a test run's note is read, extended and written
#: (:mod:`code_trajectory.testruns.store`), and while a late hand-over's origin is added to the tip it finds with no
#: note (:mod:`code_trajectory.recording.handover_tag`); taken after ``write.lock`` when both are held.
TEST_RUNS_LOCK = "tests.lock"
#: Entries of parsed trees kept in memory (least recently used dropped first): ~250 bytes each, so ~5 MB.
#: Snapshots edit trees along the changed paths, whose trees stay cached; an initial import of 100,000 files
#: would otherwise keep all of them (~20 MB measured with tracemalloc).
MAX_CACHED_TREE_ENTRIES = 20_000
#: Largest object read into memory by default, bytes (:attr:`ShadowRepo.max_object_bytes`). The recorder stores
#: files up to ``max_file_bytes`` (5 MiB unless configured), so a larger object came from a history recorded with
#: a larger setting, or was planted: a blob of 4 GiB of zeros compresses to 4 MiB in a pack.
MAX_OBJECT_BYTES = 256 * 1024 * 1024

_OID_RE = re.compile(r"^[0-9a-f]{40}$")


def shadow_ref(branch: str) -> str:
    """Return the shadow ref of a project branch: ``refs/heads/shadow/<branch>``."""
    return SHADOW_REF_PREFIX + branch


def branch_of_ref(ref: str) -> str:
    """Inverse of :func:`shadow_ref`."""
    return ref[len(SHADOW_REF_PREFIX):] if ref.startswith(SHADOW_REF_PREFIX) else ref


class ShadowRepo:
    """The shadow repository of one project.

    Args:
        project_root: the project root (absolute); the git dir is ``<root>/.trajectory``.

    Raises:
        UntrustedRepositoryError: an existing ``.trajectory`` is not this user's own (see
            :func:`code_trajectory.git.untrusted.vet`, which also reduces its config).

    All methods are thread-safe (the batch processes serialise their requests).
    """

    def __init__(self, project_root: Path) -> None:
        self.root = Path(project_root)
        self.git_dir = self.root / SHADOW_DIR_NAME
        #: What the user must hear about the repository as found (config keys removed by the vetting).
        self.notices: list[str] = []
        if self.exists():  # an existing .trajectory is untrusted input: vetted before any git command runs
            try:
                removed = untrusted.vet(self.git_dir)
            except LockContentionError as exc:  # a config.lock (maybe a killed process's): ensure() retries;
                log.warning("%s; the shadow repository's config is checked later", exc)  # gitcmd's overrides hold
                removed = []
            if removed:
                self.notices.append(untrusted.removed_notice(removed))
        self.git = Git(self.git_dir, self.root, isolated=True)
        self._cat = BatchProcess(self.git, ["cat-file", "--batch"], "cat-file")
        #: Objects larger than this are refused, not read (see :data:`MAX_OBJECT_BYTES`); the recorder raises it to
        #: its ``max_file_bytes`` when that is larger.
        self.max_object_bytes = MAX_OBJECT_BYTES
        self._tree_cache: OrderedDict[str, dict[bytes, TreeEntry]] = OrderedDict()
        self._tree_cache_lock = threading.Lock()
        self._tree_cache_entries = 0
        self.state_dir = self.git_dir / "state"
        self._empty_tree_written = False
        #: Writes objects, loose or as packs (:mod:`code_trajectory.git.object_writer`).
        self.objects = ObjectWriter(self.git_dir / "objects")

    # -- layout ----------------------------------------------------------------------------

    def exists(self) -> bool:
        """True when ``.trajectory/`` holds a git repository (a ``HEAD`` that is a link or a FIFO counts: the
        opening's vetting refuses it rather than a new history being written over it)."""
        return os.path.lexists(self.git_dir / "HEAD") and (self.git_dir / "objects").is_dir()

    def ensure(self) -> bool:
        """Create the shadow repository if needed (atomically, see :mod:`code_trajectory.git.create`) and
        (re)write its config and info files.

        Returns:
            True when the repository was created by this call.

        Raises:
            StorageError: ``.trajectory`` exists but is not a directory, or cannot be written.
            GitError: ``git init`` failed.
        """
        from code_trajectory.git.create import ensure_repository

        return ensure_repository(self.git_dir)

    def reset_caches(self) -> None:
        """Forget cached trees and processes (after ``.trajectory`` was replaced under us)."""
        self._cat.close()
        self.forget_trees()
        self._empty_tree_written = False

    @property
    def cached_trees(self) -> tuple[int, int]:
        """The parsed trees kept in memory: ``(trees, entries of them all)``; the entries stay within
        ``MAX_CACHED_TREE_ENTRIES`` unless one tree alone is larger."""
        with self._tree_cache_lock:
            return len(self._tree_cache), self._tree_cache_entries

    def forget_trees(self) -> None:
        """Drop the parsed trees kept in memory (they are read again on demand)."""
        with self._tree_cache_lock:
            self._tree_cache.clear()
            self._tree_cache_entries = 0

    def close(self) -> None:
        """Stop the long-running git processes."""
        self._cat.close()

    def __enter__(self) -> ShadowRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- refs -------------------------------------------------------------------------------

    def resolve(self, rev: str) -> str | None:
        """Return the commit id ``rev`` names, or None when it does not exist."""
        proc = self.git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
                            check=False)
        out = proc.stdout.decode().strip()
        return out if proc.returncode == 0 and _OID_RE.match(out) else None

    def shadow_refs(self) -> dict[str, str]:
        """Return ``{ref: commit id}`` for every shadow ref."""
        return self.refs_under(SHADOW_REF_PREFIX)

    def refs_under(self, prefix: str) -> dict[str, str]:
        """Return ``{ref: object id}`` for every ref under ``prefix`` (``refs/...``, as ``for-each-ref`` takes it).

        Raises:
            GitError: git failed.
        """
        out = self.git.out(["for-each-ref", "--format=%(objectname) %(refname)", prefix])
        refs = {}
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            oid, _, ref = line.partition(" ")
            refs[ref] = oid
        return refs

    def update_ref(self, ref: str, new: str, old: str | None, reason: str) -> None:
        """Move ``ref`` to ``new`` if it still points at ``old`` (None: if it does not exist yet).

        The compare-and-swap is git's own (``update-ref <ref> <new> <old>``); lock
        contention is retried (see :meth:`Git.run`).

        Raises:
            LockContentionError: the ref lock stayed held.
            GitError: the ref moved since ``old`` was read (or another failure).
        """
        if old is None and ref.startswith(SHADOW_REF_PREFIX):
            self._make_room(ref)
        self.git.run(["update-ref", "-m", reason, "--end-of-options", ref, new, old or ZERO_OID])

    def _make_room(self, ref: str) -> None:
        """Move the shadow refs whose names clash with the new ``ref`` (one is the other's directory: git stores
        refs as paths) to :data:`MOVED_REF_PREFIX`, history kept. The project cannot hold both branches at once
        (its own refs clash the same way), so the moved one is a branch deleted in the project."""
        clashing = {other: oid for other, oid in self.refs_under(SHADOW_REF_PREFIX).items()
                    if other != ref and (other.startswith(ref + "/") or ref.startswith(other + "/"))}
        for other, oid in clashing.items():
            moved = MOVED_REF_PREFIX + other[len("refs/heads/"):]
            self.git.run(["update-ref", "-m", f"code-trajectory: make room for {ref}", "--end-of-options", moved,
                          oid])
            self.git.run(["update-ref", "-d", "--end-of-options", other, oid])
            log.warning("the shadow history of %s is kept as %s: its name clashes with %s (a branch deleted in "
                        "the project, then one named like it)", other, moved, ref)

    # -- objects ---------------------------------------------------------------------------

    def _cat_file(self, name: str) -> tuple[str, str, bytes] | None:
        """Ask the running ``cat-file --batch`` for ``name``: ``(object id, type, content)`` or None if missing."""

        def reader(stream: IO[bytes]) -> tuple[str, str, bytes] | None:
            header = read_line(stream).decode("utf-8", "replace")
            parts = header.split()
            if len(parts) == 2 and parts[1] == "missing":
                return None
            if len(parts) != 3 or not parts[2].isdigit():
                raise EOFError(f"unexpected cat-file header {header!r}")
            cat_batch.check_size(parts[0], int(parts[2]), self.max_object_bytes)  # raising restarts cat-file
            return parts[0], parts[1], read_exact(stream, int(parts[2]) + 1)[:-1]

        try:
            return self._cat.request(name.encode() + b"\n", reader)
        except GitError as exc:
            if isinstance(exc.__cause__, cat_batch.TooLarge):
                raise ObjectTooLargeError(str(exc.__cause__)) from None
            raise

    def read_object(self, oid: str) -> tuple[str, bytes] | None:
        """Return ``(type, content)`` of an object, or None when it is missing.

        Raises:
            ValueError: ``oid`` is not an object id.
            ObjectTooLargeError: the object is larger than :attr:`max_object_bytes` (not read).
            GitError: ``cat-file`` failed.
        """
        if not _OID_RE.match(oid):
            raise ValueError(f"not an object id: {oid!r}")
        found = self._cat_file(oid)
        return None if found is None else (found[1], found[2])

    def read_blob_or_none(self, oid: str) -> bytes | None:
        """The content of blob ``oid`` for an answer to show; None when it is missing, not a blob, or larger than
        :attr:`max_object_bytes` (an answer shows no content it cannot hold, rather than failing).

        Raises:
            ValueError: ``oid`` is not an object id.
            GitError: ``cat-file`` failed.
        """
        try:
            found = self.read_object(oid)
        except ObjectTooLargeError as exc:
            log.warning("%s", exc)
            return None
        return found[1] if found is not None and found[0] == "blob" else None

    #: Objects asked for in one round trip by :meth:`each_object`: their requests (41 bytes each) must fit the
    #: pipe's buffer (64 KiB on Linux), written before any answer is read.
    BATCH = 256

    def each_object(self, oids: list[str], visit: Callable[[tuple[str, bytes] | None], None]) -> None:
        """Read objects in round trips of :data:`BATCH` to the running ``cat-file --batch`` (one request per
        object costs a round trip each: 0.3 s for 700 blobs at 100,000 snapshots), calling ``visit`` with each
        one's ``(type, content)`` (None when missing), in order; no content is kept.

        Raises:
            ValueError: an id is not 40 hex digits.
            ObjectTooLargeError: an object is larger than :attr:`max_object_bytes` (not read; the rest of its
                round trip is not visited).
            GitError: the cat-file process failed.
        """
        for oid in oids:
            if not _OID_RE.match(oid):
                raise ValueError(f"not an object id: {oid!r}")
        for start in range(0, len(oids), self.BATCH):
            chunk = oids[start:start + self.BATCH]

            try:
                failed = self._cat.request("".join(f"{oid}\n" for oid in chunk).encode(),
                                           functools.partial(cat_batch.read_answers, count=len(chunk), visit=visit,
                                                             max_size=self.max_object_bytes))
            except GitError as exc:
                if isinstance(exc.__cause__, cat_batch.TooLarge):
                    raise ObjectTooLargeError(str(exc.__cause__)) from None
                raise
            if failed is not None:
                raise failed  # visit's own error, once every answer was read (the stream stays in step)

    def read_tree(self, oid: str | None) -> dict[bytes, TreeEntry]:
        """Return the entries of tree ``oid`` by name (bytes); None or the empty tree give ``{}``.

        Raises:
            StorageError: the object is missing or not a tree (a damaged repository).
        """
        if oid is None or oid == EMPTY_TREE_OID:
            return {}
        with self._tree_cache_lock:
            cached = self._tree_cache.get(oid)
            if cached is not None:
                self._tree_cache.move_to_end(oid)
                return cached
        obj = self.read_object(oid)
        if obj is None or obj[0] != "tree":
            raise StorageError(f"tree {oid} is missing from the shadow repository (damaged .trajectory?)")
        entries = parse_tree(obj[1])
        self._cache_tree(oid, entries)
        return entries

    def _cache_tree(self, oid: str, entries: dict[bytes, TreeEntry]) -> None:
        """Keep a parsed tree, dropping the least recently used beyond :data:`MAX_CACHED_TREE_ENTRIES` entries."""
        with self._tree_cache_lock:
            old = self._tree_cache.pop(oid, None)
            self._tree_cache_entries += len(entries) - (len(old) if old is not None else 0)
            self._tree_cache[oid] = entries
            while self._tree_cache_entries > MAX_CACHED_TREE_ENTRIES and len(self._tree_cache) > 1:
                self._tree_cache_entries -= len(self._tree_cache.popitem(last=False)[1])

    def commit_tree_oid(self, commit: str) -> str:
        """Return the tree id of ``commit``.

        Raises:
            StorageError: the commit is missing.
        """
        obj = self.read_object(commit)
        if obj is None or obj[0] != "commit":
            raise StorageError(f"commit {commit} is missing from the shadow repository")
        first = obj[1].split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise StorageError(f"commit {commit} is malformed")
        return first[5:].decode("ascii")

    def write_object(self, kind: bytes, body: bytes) -> str:
        """Write an object and return its id (:meth:`ObjectWriter.write_object`: loose, or into the current
        :meth:`batch`)."""
        return self.objects.write_object(kind, body)

    def batch(self) -> contextlib.AbstractContextManager[None]:
        """Collect the objects written inside the block and write them as one pack at its end
        (:meth:`ObjectWriter.batch`)."""
        return self.objects.batch()

    def write_blob(self, data: bytes) -> str:
        """Write ``data`` as a blob (into the current :meth:`batch` when there is one)."""
        return self.objects.write_object(b"blob", data)

    def add_deflated_blob(self, oid: str, body: packs.Deflated) -> str:
        """Add a blob compressed elsewhere to the current :meth:`batch` (:meth:`ObjectWriter.add_deflated`)."""
        return self.objects.add_deflated(oid, body)

    def pack_count(self) -> int:
        """Number of pack files in the repository."""
        try:
            return sum(1 for name in os.listdir(self.git_dir / "objects" / "pack") if name.endswith(".pack"))
        except OSError:
            return 0

    def write_tree(self, entries: dict[bytes, TreeEntry]) -> str:
        """Write a tree object from ``{name: entry}`` and return its id.

        Entries are sorted as git sorts them (byte order, a tree's name compared as if
        it ended in ``/``).
        """
        if not entries:
            return self.empty_tree()
        oid = self.write_object(b"tree", tree_body(entries))
        self._cache_tree(oid, dict(entries))
        return oid

    def empty_tree(self) -> str:
        """Return the empty tree's id, writing the object once (git does not always have it on disk)."""
        if not self._empty_tree_written:
            with self.objects.loose():  # so it exists even outside a batch
                self.objects.write_object(b"tree", b"")
            self._empty_tree_written = True
        return EMPTY_TREE_OID

    def hash_bytes(self, data: bytes) -> str:
        """Write ``data`` as a blob and return its id."""
        return self.git.text(["hash-object", "-w", "--no-filters", "--stdin"], input=data)

    def commit_tree(self, tree: str, parents: list[str], message: str, *, when: tuple[int, str]) -> str:
        """Write a commit object with the fixed identity and return its id.

        Args:
            tree: the tree id.
            parents: parent commit ids (empty for a root commit).
            message: the full commit message (UTF-8).
            when: ``(unix seconds, "+HHMM" offset)`` used as author and committer date.
        """
        ident = f"{gitcmd.IDENTITY_NAME} <{gitcmd.IDENTITY_EMAIL}> {when[0]} {when[1]}"
        lines = [f"tree {tree}"] + [f"parent {p}" for p in parents] + [f"author {ident}", f"committer {ident}"]
        text = "\n".join(lines) + "\n\n" + message
        try:
            body = text.encode("utf-8", "surrogateescape")  # a path's undecodable bytes, as they were
        except UnicodeEncodeError:  # a lone surrogate no bytes stand for (free text cleans them; this is the floor)
            body = text.encode("utf-8", "replace")
        return self.write_object(b"commit", body)

    def resolve_ref(self, ref: str) -> str | None:
        """Return the commit a ref points at, or None — through the running ``cat-file`` (no new process)."""
        if not ref.startswith("refs/") or "\n" in ref or " " in ref:
            return self.resolve(ref)
        found = self._cat_file(ref)
        return found[0] if found is not None and found[1] == "commit" else None
