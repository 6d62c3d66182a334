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

What :class:`Conflicts` remembers is this process's: a recorder started between the conflict and ``--continue``
does not know which files git left conflicted (the resolution is then git's, as before).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

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


@dataclass
class Conflicts:
    """The conflicts git left that this recorder saw, until git goes on (see the module's docstring)."""

    seen: Seen = field(default_factory=dict)

    def split(self, project: ProjectRepo, changes: Sequence[FileChange],
              operation: GitOperation | None) -> tuple[Split, Seen]:
        """What of ``changes`` git left conflicted and what the user resolved, and what to remember once the
        snapshot is written (give it to :meth:`written`).

        Args:
            project: the project's repository (its state files, and its index when an operation is stopped or a
                conflict was seen).
            changes: the snapshot's file changes against its parent.
            operation: the git operation read from the reflog for this snapshot, if any.

        Returns:
            ``(split, what to remember)``: a path git left conflicted is remembered while git's operation is stopped
            (with the content last recorded); all is forgotten once it is not.
        """
        kind = in_progress(project)
        if kind is None and not self.seen or not changes:
            return Split(operation), dict(self.seen) if kind is not None else {}
        _blobs, unmerged = project.index_stages(sorted({c.path for c in changes}))
        left = {c.path for c in changes if c.path in unmerged and c.status != "D"
                and self.seen.get(c.path, ((), ""))[0] != unmerged[c.path]}  # stages new: git wrote it (again)
        given_up = operation is not None and any(word in operation.reflog for word in GIVEN_UP)
        resolved = {} if given_up else {c.path: self.seen[c.path][1] for c in changes if c.path in self.seen
                                        and c.path not in left and c.new_oid != self.seen[c.path][1]}
        remember: Seen = {}
        if kind is not None:
            remember = dict(self.seen)
            for change in changes:
                if change.path in left:
                    remember[change.path] = (unmerged[change.path], change.new_oid)
                elif change.path in remember:
                    remember[change.path] = (remember[change.path][0], change.new_oid)
        if left:
            named = sorted(left)
            where = ", ".join(named[:NAMED_PATHS]) + (f" +{len(named) - NAMED_PATHS} more"
                                                      if len(named) > NAMED_PATHS else "")
            said = f"conflict left by {kind or 'git'} in {where}"
            operation = (replace(operation, label=f"{operation.label}; {said}") if operation is not None else
                         GitOperation(kind or "merge", f"[{(kind or 'merge').upper()}] {said}",
                                      f"{kind or 'git'}: stopped on a conflict (no reflog entry)", 0))
        return Split(operation, frozenset(left), resolved), remember

    def unchanged(self, project: ProjectRepo) -> None:
        """A snapshot found nothing to record: once git's operation is no longer stopped (``--abort`` wrote the
        files back as they were), forget its conflicts (a later operation's writes to those files are git's)."""
        if self.seen and in_progress(project) is None:
            self.seen = {}

    def written(self, remember: Seen) -> None:
        """Remember what :meth:`split` said to, once its snapshot is written."""
        self.seen = remember
