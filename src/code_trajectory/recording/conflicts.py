"""A conflict git leaves and its resolution: git's writes are git's, the resolution is the user's.

When a rebase (a merge, a cherry-pick, a revert, ``am``) stops on a conflict, git writes the conflicted files with
its ``<<<<<<<`` markers and leaves them unmerged in the index (stages 1-3, no stage 0). Those writes are git's,
although no reflog entry names them (a merge's conflict) and they match no staged content (so
:func:`code_trajectory.recording.gitops.operation_paths` cannot tell them): :class:`Conflicts` names them
(``[REBASE] conflict left by rebase in calc.py``). What is written to such a file afterwards, until git goes on
(``git rebase --continue``), is the user's resolution, with the current intent, also when it lands in the window of
the operation that goes on (the resolved content is staged by then, so it matches the index like git's writes): git's
share of that snapshot keeps the file as last recorded, and the resolution is the user's commit on top. What an
``--abort`` or ``--skip`` (or a reset, a checkout) writes back is git's, and once nothing is stopped any more the
conflicts are forgotten.

What :class:`Conflicts` remembers is kept in ``.trajectory/state/conflicts.json`` while git's operation is stopped
(written under the shadow repository's write lock, beside the snapshot that saw the conflict), so a recorder started
between the conflict and ``--continue`` (a new server, ``watch`` after the client exited), or another recording
process (a ``checkpoint``, a second client's server), knows which files git left conflicted. The file is untrusted
input: read bounded, anything not of its shape is ignored, and the content it names for a file is taken only when the
parent snapshot holds it (the worst a planted one does is credit a write to the user). A conflict no recorder saw
(nothing recorded while git stopped) stays git's with the resolution, as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded, read_json_object
from code_trajectory.git.messages import FileChange
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import GitOperation

#: What the files git leaves in its git dir while an operation is stopped say is in progress (git's own names, see
#: git-status(1) and the sequencer): the first found names it.
IN_PROGRESS = (("rebase-merge", "rebase"), ("rebase-apply", "rebase"), ("MERGE_HEAD", "merge"),
               ("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert"))
#: Conflicted paths named in a label, at most.
NAMED_PATHS = 3
#: Reflog messages (git's wording) of an operation that gives a conflict up: what it writes back is git's.
GIVEN_UP = ("(abort)", "(skip)", "reset: ", "checkout: ")
#: Where the conflicts seen are kept while git's operation is stopped, relative to the shadow repository's state dir.
STATE_FILE = "conflicts.json"
#: A blob's id as stored (git's object ids: SHA-1 or SHA-256, hexadecimal), and an index stage (``2:<id>``, as
#: :meth:`~code_trajectory.git.project.ProjectRepo.index_stages` gives it).
_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_STAGE = re.compile(r"[123]:[0-9a-f]{40}([0-9a-f]{24})?")


def in_progress(project: ProjectRepo) -> str | None:
    """The git operation stopped in the project's work tree (``rebase``, ``merge``, ``cherry-pick``, ``revert``),
    or None: only whether git's state files exist is looked at (nothing is read)."""
    if project.git_dir is None:
        return None
    for name, kind in IN_PROGRESS:
        if os.path.lexists(project.git_dir / name):
            return kind
    return None


@dataclass(frozen=True)
class Split:
    """How a snapshot's changes divide between git and the user, for
    :func:`code_trajectory.recording.commit_message.compose`.

    Attributes:
        operation: the git operation to name git's share with (a stop on a conflict without a reflog entry gets
            one: ``[MERGE] conflict left by merge in a.py``), or None.
        left: paths git just left conflicted (git's, whatever the index says).
        resolved: paths the user wrote to since they were last recorded, git having left them conflicted, with the
            blob id last recorded: git's share keeps that content, the user's commit holds the rest.
    """

    operation: GitOperation | None
    left: frozenset[str] = frozenset()
    resolved: Mapping[str, str] = field(default_factory=dict)


#: What :class:`Conflicts` remembers of a path git left conflicted: its index stages then, and the blob id last
#: recorded for it.
Seen = dict[str, tuple[tuple[str, ...], str]]


def load_seen(path: Path) -> Seen:
    """The conflicts kept in ``path`` (see the module's docstring): ``{path: (index stages, blob id last
    recorded)}``; empty when the file is missing, unreadable, over the state file limit or not of that shape (an
    entry of the wrong shape is dropped)."""
    data = read_json_object(path) or {}
    entries = data.get("seen")
    seen: Seen = {}
    if not isinstance(entries, dict):
        return seen
    for name, value in entries.items():
        if (isinstance(value, list) and len(value) == 2 and isinstance(value[0], list)
                and all(isinstance(stage, str) and _STAGE.fullmatch(stage) for stage in value[0])
                and isinstance(value[1], str) and _OBJECT_ID.fullmatch(value[1]) and name and "\0" not in name):
            seen[name] = (tuple(value[0]), value[1])
    return seen


def save_seen(path: Path, seen: Seen) -> None:
    """Keep ``seen`` in ``path`` (written atomically), or remove the file when ``seen`` is empty.

    Raises:
        OSError: the file cannot be written (a missing file that cannot be removed is not an error).
    """
    if not seen:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    replace_file(path, json.dumps({"seen": {name: [list(stages), blob] for name, (stages, blob) in
                                            sorted(seen.items())}}, ensure_ascii=False), mode=0o600)


@dataclass
class Conflicts:
    """The conflicts git left that the recorders saw, until git goes on (see the module's docstring).

    Attributes:
        state_file: where they are kept across processes (``.trajectory/state/conflicts.json``), or None to keep
            them in this object only.
        seen: what was read from ``state_file`` last, or what this object keeps.
    """

    state_file: Path | None = None
    seen: Seen = field(default_factory=dict)

    def _load(self) -> None:
        if self.state_file is not None:
            self.seen = load_seen(self.state_file)

    def split(self, project: ProjectRepo, changes: Sequence[FileChange], operation: GitOperation | None, *,
              index_written: bool = False) -> tuple[Split, Seen]:
        """What of ``changes`` git left conflicted and what the user resolved, and what to remember once the
        snapshot is written (give it to :meth:`written`).

        Args:
            project: the project's repository (its state files, and its index when an operation is stopped, a
                conflict was seen or the index was written).
            changes: the snapshot's file changes against its parent.
            operation: the git operation read from the reflog for this snapshot, if any.
            index_written: git wrote the project's index (or its HEAD or reflogs) since the last snapshot: a
                ``git stash pop``/``apply`` that stops on a conflict leaves no state file and no reflog entry, only
                unmerged paths in the index.

        Returns:
            ``(split, what to remember)``: a path git left conflicted is remembered while git's operation is stopped
            or, with none stopped (a stash's conflict), while the path is unmerged in the index; with the content
            last recorded.

        Call it, and :meth:`written`, holding the shadow repository's write lock: the kept conflicts are read here.
        """
        kind = in_progress(project)
        if kind is not None or self.seen or self._kept():
            self._load()
        if not changes:
            return Split(operation), dict(self.seen)
        if kind is None and not self.seen and not (index_written and _may_be_conflicted(project, changes)):
            return Split(operation), {}
        _blobs, unmerged = project.index_stages(sorted({c.path for c in changes} | set(self.seen)))
        left = {c.path for c in changes if c.path in unmerged and c.status != "D"
                and self.seen.get(c.path, ((), ""))[0] != unmerged[c.path]}  # stages new: git wrote it (again)
        given_up = operation is not None and any(word in operation.reflog for word in GIVEN_UP)
        # the content kept for git is the one the parent snapshot holds: an entry naming another blob is not of this
        # history (a conflicts.json planted in .trajectory made git's share of a merge hold content of its choosing)
        resolved = {} if given_up else {c.path: self.seen[c.path][1] for c in changes if c.path in self.seen
                                        and c.path not in left and c.new_oid != self.seen[c.path][1]
                                        and c.old_oid == self.seen[c.path][1]}
        # kept while git's operation is stopped; with none (a stash's conflict), while the path is unmerged
        remember: Seen = {path: seen for path, seen in self.seen.items() if kind is not None or path in unmerged}
        for change in changes:
            if change.path in left:
                remember[change.path] = (unmerged[change.path], change.new_oid)
            elif change.path in remember:
                remember[change.path] = (remember[change.path][0], change.new_oid)
        if left:
            named = sorted(left)
            where = ", ".join(named[:NAMED_PATHS]) + (f" +{len(named) - NAMED_PATHS} more"
                                                      if len(named) > NAMED_PATHS else "")
            # no operation stopped and no reflog entry: a stash applied or popped onto changed files (git keeps the
            # stash then, and writes neither its reflog nor HEAD's; its markers say so), or `git apply --3way`
            by = kind or ("git" if operation is not None or not any(_stash_markers(project, p) for p in named)
                          else "stash")
            said = f"conflict left by {by} in {where}"
            label = kind or ("stash" if by == "stash" else "conflict")
            operation = (replace(operation, label=f"{operation.label}; {said}") if operation is not None else
                         GitOperation(kind or ("stash" if by == "stash" else "merge"), f"[{label.upper()}] {said}",
                                      f"{by}: stopped on a conflict (no reflog entry)", 0))
        return Split(operation, frozenset(left), resolved), remember

    def unchanged(self, project: ProjectRepo) -> None:
        """A snapshot found nothing to record: once git's operation is no longer stopped (``--abort`` wrote the
        files back as they were), forget its conflicts that are no longer unmerged (a later operation's writes to
        those files are git's)."""
        if in_progress(project) is None and (self.seen or self._kept()):
            self._load()
            _blobs, unmerged = project.index_stages(sorted(self.seen))
            still = {path: seen for path, seen in self.seen.items() if path in unmerged}
            if still != self.seen or not still:
                self.written(still)

    def _kept(self) -> bool:
        return self.state_file is not None and os.path.lexists(self.state_file)

    def written(self, remember: Seen) -> None:
        """Remember what :meth:`split` said to, once its snapshot is written (kept in :attr:`state_file`; a
        failure to write it is not the snapshot's: the next recorder knows less, as before it was kept).

        Call it holding the shadow repository's write lock."""
        self.seen = remember
        if self.state_file is not None:
            with contextlib.suppress(OSError):
                save_seen(self.state_file, remember)


#: The end of the conflict git writes when a stash does not apply cleanly (``git stash pop``/``apply``: "Updated
#: upstream" against "Stashed changes").
STASH_MARKER = b"\n>>>>>>> Stashed changes"
#: Bytes of a conflicted file read to find :data:`STASH_MARKER`.
MARKER_READ_BYTES = 1 << 20


def _stash_markers(project: ProjectRepo, path: str) -> bool:
    """Whether the work tree's ``path`` (relative to the project root) holds a stash's conflict markers (read bounded,
    never through a link)."""
    data = read_bounded(project.root / path, MARKER_READ_BYTES)
    return data is not None and STASH_MARKER in data


#: Changed files :func:`_may_be_conflicted` reads at most; past it the index is asked.
MARKER_FILES_READ = 20


def _may_be_conflicted(project: ProjectRepo, changes: Sequence[FileChange]) -> bool:
    """Whether one of ``changes`` may be a conflict git left with no operation stopped: a file holding a line that
    starts with ``<<<<<<< `` (read bounded). An editor or a ``git status`` rewrites a large project's index often,
    and reading the whole index (tens of MB at 500,000 files) after every such write would slow every save's
    snapshot; more than :data:`MARKER_FILES_READ` changed files (a bulk operation) are left to the index."""
    files = [c.path for c in changes if c.status != "D"]
    if len(files) > MARKER_FILES_READ:
        return True
    for path in files:
        data = read_bounded(project.root / path, MARKER_READ_BYTES)
        if data is None or data.startswith(b"<<<<<<< ") or b"\n<<<<<<< " in data:  # None: too large to read here
            return True
    return False
