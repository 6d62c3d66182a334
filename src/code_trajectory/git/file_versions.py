"""A file's versions across renames: read whole (:func:`file_history`) or a page at a time as a walk asks for them
(:class:`FileVersions`), and one version's patch (:func:`file_patch`).

Each path's commits come from a pathspec-limited ``git log`` (:func:`code_trajectory.git.log.read_log`) or from a
:data:`Lister` (a branch's file index, :mod:`code_trajectory.git.indexed_log`); renames are followed by hand.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from code_trajectory.core.errors import GitError
from code_trajectory.git.diffs import is_commit_id, parse_records
from code_trajectory.git.gitcmd import split_z
from code_trajectory.git.log import CommitRecord, literal, read_log
from code_trajectory.git.messages import FileChange
from code_trajectory.git.shadow import ShadowRepo, branch_of_ref

#: Lists the commits at or before a start commit that changed a path, newest first, at most a limit, as
#: ``read_log(repo, [start], paths=(path,), limit=limit, line_counts=False)`` does; None when it cannot answer
#: (``git log`` is then asked). See :mod:`code_trajectory.git.indexed_log`.
Lister = Callable[[str, str, int | None], list[CommitRecord] | None]


@dataclass
class FileVersion:
    """One commit's change to a followed file: the record, the path then, and the change."""

    record: CommitRecord
    path: str
    change: FileChange


#: Renames followed back at most (a guard against pathological rename chains).
MAX_RENAMES_FOLLOWED = 50


def file_history(repo: ShadowRepo, ref: str, path: str, *, limit: int | None = None,
                 counted: int | None = None, lister: Lister | None = None) -> list[FileVersion]:
    """Return the commits on ``ref`` that changed ``path`` (following renames), newest first.

    Args:
        repo: the shadow repository.
        ref: the ref or commit to start from.
        path: the file, relative to the project root.
        limit: at most this many versions, the newest (None: every one). git stops walking once it has found
            them, so a short read costs what the newest versions cost, not the whole history.
        counted: line counts (``FileChange.counted``) for the newest ``counted`` versions only (None: all); the
            others carry their status and blob ids (what reverts and symbols need), which cost no blob read.
        lister: lists each path's commits instead of ``git log`` where it can (a branch's file index:
            :func:`code_trajectory.git.indexed_log.open_log`); the versions are the same.

    Renames are followed by hand rather than with ``git log --follow``, which cannot use
    the commit-graph's changed-path Bloom filters: each path's history is a
    pathspec-limited ``git log`` (Bloom-accelerated after maintenance), and where the
    oldest version is an addition, that one commit is diffed with rename detection to
    find the path it came from.
    """
    versions: list[FileVersion] = []
    current, start = path, ref
    for _ in range(MAX_RENAMES_FOLLOWED):
        left = None if limit is None else limit - len(versions)
        if left is not None and left <= 0:
            break
        listed = lister(start, current, left) if lister is not None else None
        records = listed if listed is not None else read_log(repo, [start], paths=(current,), limit=left,
                                                             line_counts=False)
        if not records:
            break
        for record in records:
            match = next((c for c in record.changes if c.path == current), None)
            if match is not None:
                versions.append(FileVersion(record, current, match))
        oldest = versions[-1] if versions else None
        if oldest is None or oldest.change.status != "A" or not oldest.record.parents:
            break
        full = read_log(repo, [oldest.record.oid], limit=1)  # all of that commit's changes, renames detected
        renamed = next((c for c in (full[0].changes if full else []) if c.path == current and c.old_path), None)
        if renamed is None or renamed.old_path is None:
            renamed = moved_in_two_steps(repo, start, oldest)
        if renamed is None or renamed.old_path is None:
            break
        versions[-1] = FileVersion(oldest.record, current, renamed)
        current, start = renamed.old_path, oldest.record.parents[0]
    _add_counts(repo, versions if counted is None else versions[:counted])
    return versions


class FileVersions:
    """A file's versions newest first, as :func:`file_history` reads them, read a page at a time as they are asked
    for (pages of 64 versions, doubling up to 1,024, or 256 through a lister): a walk that stops after a few
    versions reads a few.

    Supports what a walk from the newest version uses: ``bool()`` (any version left), ``versions[i]``,
    ``versions[n:]`` (the same versions without the first n, sharing the pages read) and iteration. Versions carry
    no line counts (``counted=0``).

    Raises:
        GitError: reading a page failed (when it is asked for).
    """

    FIRST_PAGE = 64
    LAST_PAGE = 1024
    #: The largest page read through a lister (a file index): a page there costs one process, not a walk of the
    #: history, so smaller pages read fewer versions past where the walk stops.
    LAST_LISTED_PAGE = 256

    def __init__(self, repo: ShadowRepo, ref: str | None, path: str, lister: Lister | None = None) -> None:
        self._pages = _Pages(repo, (ref, path) if ref else None, self.FIRST_PAGE, lister)
        self._offset = 0

    def __bool__(self) -> bool:
        return self._pages.get(self._offset) is not None

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            if key.start is None or key.start < 0 or key.stop is not None or key.step is not None:
                raise TypeError("FileVersions takes [i] and [n:] only")
            rest = copy.copy(self)
            rest._offset = self._offset + key.start
            return rest
        found = self._pages.get(self._offset + key) if key >= 0 else None
        if found is None:
            raise IndexError(key)
        return found

    def ready(self) -> int:
        """How many versions are read already (``versions[:ready()]`` costs no git call)."""
        return max(len(self._pages.items) - self._offset, 0)

    def __iter__(self) -> Iterator[FileVersion]:
        i = self._offset
        while (found := self._pages.get(i)) is not None:
            yield found
            i += 1


@dataclass
class _Pages:
    """The pages of :class:`FileVersions` read so far, and where the next one starts (None: no more)."""

    repo: ShadowRepo
    next: tuple[str, str] | None
    size: int
    lister: Lister | None = None
    items: list[FileVersion] = field(default_factory=list)

    def get(self, position: int) -> FileVersion | None:
        while position >= len(self.items) and self.next is not None:
            start, path = self.next
            page = file_history(self.repo, start, path, limit=self.size, counted=0, lister=self.lister)
            self.items += page
            last = page[-1] if page else None
            self.next = None
            if last is not None and len(page) >= self.size and last.record.parents:
                if last.change.old_path:  # a rename (found by file_history): the old path's versions follow
                    self.next = (last.record.parents[0], last.change.old_path)
                elif last.change.status != "A":  # more versions of that path below the oldest one read
                    self.next = (last.record.parents[0], last.path)
            self.size = min(self.size * 2, FileVersions.LAST_PAGE if self.lister is None
                            else FileVersions.LAST_LISTED_PAGE)
        return self.items[position] if position < len(self.items) else None


#: How long after a file was added the deletion of another file of the same content makes the two one file moved
#: in two steps (an agent's Write of the new file, then ``rm`` of the old one, in snapshots of their own), seconds.
TWO_STEP_MOVE_SECONDS = 600
#: Smallest content taken for such a move: shorter files (an empty ``__init__.py``, ``pass``) are alike by chance.
TWO_STEP_MOVE_MIN_BYTES = 64


def moved_in_two_steps(repo: ShadowRepo, tip: str, added: FileVersion) -> FileChange | None:
    """The rename ``added`` (a file's first version on its path, with no rename in its commit) makes together with the
    deletion of another file whose last content was the same blob, in a later snapshot within
    :data:`TWO_STEP_MOVE_SECONDS` on ``tip``'s first-parent line (``git log --follow`` links only the two paths of
    one commit); None when there is none, the content is under :data:`TWO_STEP_MOVE_MIN_BYTES` bytes, or several
    files of that content were deleted, or git cannot tell (a blob a shared trajectory did not bring).
    """
    blob = added.change.new_oid
    when = int(added.record.time.timestamp())
    try:
        if not blob.strip("0") or int(repo.git.text(["cat-file", "-s", blob]).strip()) < TWO_STEP_MOVE_MIN_BYTES:
            return None
        out = repo.git.out(["log", "--first-parent", "--no-renames", "--diff-filter=D", "--raw", "-z", "--no-abbrev",
                            "--format=%H", f"--since=@{when}", f"--until=@{when + TWO_STEP_MOVE_SECONDS}",
                            "--end-of-options", tip, "--"])
    except (GitError, ValueError):  # a blob a shared trajectory did not bring: no move to tell, the history goes on
        return None
    tokens = split_z(out)
    gone: set[str] = set()
    pos = 0
    while pos < len(tokens):  # commit ids, each followed by its raw records (as _count reads diff-tree's)
        token = tokens[pos].strip(b"\n")
        pos += 1
        if is_commit_id(token) and pos < len(tokens):
            tokens[pos] = tokens[pos].removeprefix(b"\n")  # git log puts a line break before a commit's records
            changes, pos = parse_records(tokens, pos)
            gone.update(c.path for c in changes if c.status == "D" and c.old_oid == blob)
    gone.discard(added.path)
    if len(gone) != 1:
        return None
    return dataclasses.replace(added.change, status="R", old_path=gone.pop(), old_oid=blob)


def _add_counts(repo: ShadowRepo, versions: list[FileVersion]) -> None:
    """Fill in the line counts of ``versions`` (in place) with one ``git diff-tree --stdin --numstat``, and one more
    with rename detection (``-M``, both paths) for the renamed versions: a file renamed and edited in one snapshot
    has its edit's counts (it showed none, and its history no diff)."""
    plain = [v for v in versions if not v.change.counted and not v.change.old_path]
    renamed = [v for v in versions if not v.change.counted and v.change.old_path]
    if plain:
        _count(repo, plain, [], sorted({v.path for v in plain}))
    if renamed:
        _count(repo, renamed, ["-M"], sorted({p for v in renamed for p in (v.path, v.change.old_path or v.path)}))


def _count(repo: ShadowRepo, wanted: list[FileVersion], options: list[str], paths: list[str]) -> None:
    """:func:`_add_counts` for ``wanted``: ``git diff-tree`` with ``options``, limited to ``paths``."""
    feed = "".join(f"{v.record.oid}\n" for v in wanted).encode()
    out = repo.git.out(["diff-tree", "--stdin", "-r", "-z", "--no-abbrev", "--root", "--raw", "--numstat", *options,
                        "--end-of-options", "--", *literal(paths)], input=feed)
    tokens = split_z(out)
    by_commit: dict[str, list[FileChange]] = {}
    pos = 0
    while pos < len(tokens):
        token = tokens[pos].strip(b"\n")
        pos += 1
        if is_commit_id(token):
            by_commit[token.decode()], pos = parse_records(tokens, pos)
    for version in wanted:
        found = next((c for c in by_commit.get(version.record.oid, [])
                      if c.path == version.path and c.old_path == version.change.old_path), None)
        if found is not None and found.counted:
            version.change = dataclasses.replace(version.change, added=found.added, deleted=found.deleted,
                                                 counted=True)


def file_patch(repo: ShadowRepo, version: FileVersion, *, context: int = 3) -> str:
    """Return the unified diff of one file version against its parent (hunk headers name functions), with
    ``context`` lines of context around each change."""
    paths = [version.path] + ([version.change.old_path] if version.change.old_path else [])
    out = repo.git.out(["diff-tree", "-p", "-M", "--root", "--no-color", "--no-ext-diff", f"-U{int(context)}",
                        "--end-of-options", version.record.oid, "--", *literal(paths)])
    text = out.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and is_commit_id(lines[0].encode()):
        lines = lines[1:]
    return "\n".join(lines).strip("\n")


def branches_holding(repo: ShadowRepo, rel: str, branch: str) -> list[str]:
    """The recorded branches other than ``branch`` (up to 3, by name) whose newest snapshot holds ``rel`` (relative to
    the project root): a file made on a feature branch, asked about from ``main``. One ``git cat-file --batch-check`` over the
    branches' tips: a file deleted since on that branch is not found (walking each branch's history for it would
    cost seconds at 100,000 snapshots)."""
    others = sorted((ref, oid) for ref, oid in repo.shadow_refs().items() if branch_of_ref(ref) != branch)
    if not others or "\n" in rel:
        return []
    asked = "".join(f"{oid}:{rel}\n" for _ref, oid in others).encode("utf-8", "surrogateescape")
    kinds = repo.git.out(["cat-file", "--batch-check=%(objecttype)"], input=asked).decode("ascii", "replace").split("\n")
    return [branch_of_ref(ref) for (ref, _oid), kind in zip(others, kinds) if kind == "blob"][:3]
