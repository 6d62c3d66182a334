"""What a snapshot commit says: its kind, its message, and git's share of it split off as its own commit.

A snapshot that follows a git operation (checkout, reset, merge, stash...) of the project is the operation's
(``[CHECKOUT] feature -> main``), not the agent's; when edits of the agent landed in the same window, git's share is
written first as its own commit and the edits on top of it (:mod:`code_trajectory.recording.gitops` tells which
paths are git's; :mod:`code_trajectory.recording.conflicts` which files git left conflicted and which the user
resolved since). Otherwise the message is a restore's or an ordinary snapshot's (:mod:`code_trajectory.git.messages`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from code_trajectory.core.text import format_size
from code_trajectory.git import diffs, messages
from code_trajectory.git.messages import AddedFiles, FileChange
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import GitOperation
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording import gitops
from code_trajectory.recording.conflicts import Split


@dataclass
class Snapshot:
    """A snapshot commit that was written.

    Attributes:
        commit: the new commit id.
        ref: the shadow ref it was written to.
        branch: the project branch.
        kind: ``snapshot``, ``checkpoint`` or ``reconcile``.
        subject: the commit message's first line.
        changes: the file changes against the parent.
        elapsed_ms: time spent writing it, milliseconds.
    """

    commit: str
    ref: str
    branch: str
    kind: str
    subject: str
    changes: Sequence[FileChange]
    elapsed_ms: float


@dataclass
class Composed:
    """The commit to write: its parent (git's share when one was split off), kind, message and file changes."""

    parent: str | None
    kind: str
    message: str
    changes: Sequence[FileChange]


def mark_oversize(changes: Sequence[FileChange], oversize: dict[str, int]) -> Sequence[FileChange]:
    """``changes`` with files over the size cap (path -> bytes) noted ``not stored: <size>``."""
    if not oversize:
        return changes
    if isinstance(changes, AddedFiles):
        return changes.with_notes({path: f"not stored: {format_size(size)}" for path, size in oversize.items()})
    return [FileChange(c.status, c.path, c.old_path, c.added, c.deleted, c.old_oid, c.new_oid, c.counted,
                       f"not stored: {format_size(oversize[c.path])}") if c.path in oversize else c
            for c in changes]


def compose(repo: ShadowRepo, project: ProjectRepo, *, tree: str, parent: str | None, parent_tree: str | None,
            changes: Sequence[FileChange], kind: str, branch: str, now: datetime, intent: str | None,
            operation: GitOperation | None, note: str | None = None, origin: str | None = None,
            restored_from: tuple[str, str] | None = None, unrecorded: bool = False,
            split: Split | None = None) -> Composed:
    """Decide what the snapshot of ``tree`` (after ``parent``) says.

    Args:
        repo: the shadow repository (git's share, when split off, is committed there now).
        project: the project's repository (which changed paths git wrote).
        tree, parent, parent_tree: the new tree, the commit it follows (None: the first) and that commit's tree.
        changes: the file changes from ``parent_tree`` to ``tree``.
        kind: ``snapshot``, ``reconcile``, ``checkpoint``, ``restore``...; a first reconcile becomes ``import``.
        branch: the project branch recorded.
        now: the snapshot's time (its timezone is written).
        intent: the current intent, if any.
        operation: the git operation seen since the last snapshot, if any.
        note, origin: a checkpoint's note; who made the change (a hook's trailer).
        restored_from: ``(commit, how it was named)`` for a restore.
        unrecorded: the start-up scan's catch-up of changes made while nothing recorded: what ``operation`` (the
            git operations of that time) does not explain is said to be so (:data:`messages.UNRECORDED`).
        split: the conflicts git left and the user's resolutions among ``changes``
            (:meth:`code_trajectory.recording.conflicts.Conflicts.split`); its operation replaces ``operation``.

    Raises:
        GitError, StorageError: git's share cannot be committed.
    """
    if parent is None and kind == messages.KIND_RECONCILE:
        kind = messages.KIND_IMPORT
    if split is not None:
        operation = split.operation
    left, resolved = (split.left, split.resolved) if split is not None else (frozenset(), {})
    if operation is not None and not operation.unstaged:  # what a stash pop puts back is unstaged by nature
        # a conflict git left is git's; what the user wrote to it since is the user's, staged or not
        ours = (gitops.operation_paths(project, changes) | left) - set(resolved)
        if not ours:
            operation = None  # git changed no file (`checkout -b`): the edits are the agent's
        elif any(c.path not in ours for c in changes):
            # git's share first, as its own commit (a resolved file as last recorded); the agent's edits on top of it
            op_tree = gitops.operation_tree(repo, parent_tree, tree, ours, resolved)
            op_changes = ([c for c in changes if c.path in ours] if not resolved
                          else diffs.tree_changes(repo, parent_tree, op_tree))
            parent = repo.commit_tree(op_tree, [parent] if parent else [],
                                      messages.git_operation_message(when=now, label=operation.label,
                                                                     kind=operation.kind, reflog=operation.reflog,
                                                                     branch=branch, changes=op_changes),
                                      when=(int(now.timestamp()), now.strftime("%z") or "+0000"))
            changes = diffs.tree_changes(repo, op_tree, tree)
            operation = None
    if operation is not None:
        return Composed(parent, messages.KIND_GIT, messages.git_operation_message(
            when=now, label=operation.label, kind=operation.kind, reflog=operation.reflog, branch=branch,
            changes=changes), changes)
    if kind == messages.KIND_RESTORE and restored_from is not None:
        return Composed(parent, kind, messages.restore_message(when=now, intent=intent, branch=branch, changes=changes,
                                                               source=restored_from[0], how=restored_from[1]), changes)
    return Composed(parent, kind, messages.snapshot_message(when=now, intent=intent, branch=branch, changes=changes,
                                                            kind=kind, note=note, origin=origin,
                                                            unrecorded=unrecorded and kind != messages.KIND_IMPORT),
                    changes)
