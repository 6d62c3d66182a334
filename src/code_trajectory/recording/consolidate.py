"""Consolidation: the trailing automatic snapshots squashed into one ``[CONSOLIDATE]`` commit."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import diffs, log, messages
from code_trajectory.git.points import named_commits
from code_trajectory.git.shadow import shadow_ref
from code_trajectory.recording.recorder import Recorder

log_ = logging.getLogger(__name__)


@dataclass
class ConsolidateResult:
    """Outcome of :func:`consolidate`: ``commit`` is None when nothing was squashed."""

    commit: str | None
    squashed: int
    branch: str
    message: str
    squashed_commits: list[str] = field(default_factory=list)
    #: The squashed snapshots, oldest first.
    squashed_records: list[log.CommitRecord] = field(default_factory=list)
    #: When the run ended at a snapshot of the same task that is never squashed (a restore, a checkpoint...): one
    #: line saying which and that the task's snapshots before it are kept; else None.
    stopped_at: str | None = None


#: Snapshots of these kinds can be squashed; a checkpoint (a named point), a consolidation, the first-scan import,
#: a git operation or a restore ends the run.
SQUASHABLE_KINDS = (messages.KIND_SNAPSHOT, messages.KIND_RECONCILE)
#: Commits read back from the tip when looking for the start of the run.
SCAN_LIMIT = 5000


def squashable(record: log.CommitRecord) -> bool:
    """True for an automatic snapshot (``[AUTO-TRJ]``, kind snapshot or reconcile) that consolidate may squash."""
    return record.is_snapshot and record.kind in SQUASHABLE_KINDS


def consolidate(recorder: Recorder, intent: str) -> ConsolidateResult:
    """Squash the trailing automatic snapshots of the current task into one ``[CONSOLIDATE]`` commit.

    The run is the newest snapshots on the current shadow branch that carry the same intent as the
    newest one; it ends at a snapshot with another intent, a checkpoint or a named point (kept), an
    earlier consolidation, a git operation, a restore, or the first-scan import snapshot, which are never
    squashed. Pending changes are snapshotted first. The new commit has the last snapshot's tree and
    the commit before the run as parent; the squashed commits stay reachable through the reflog, and the
    test runs recorded on the last of them are copied by the caller.

    Args:
        recorder: the project's recorder.
        intent: a one-line summary of the finished work (the consolidation's name).

    Returns:
        The result; ``commit`` is None (with the reason in ``message``) when there was nothing to squash.

    Raises:
        InvalidArgumentError: ``intent`` is empty.
    """
    clean = messages.one_line(intent or "")
    if not clean:
        raise InvalidArgumentError("consolidate needs an intent summarising the work, "
                                   "e.g. 'Implemented login retry'")
    with recorder.writing():
        if recorder.has_pending():
            recorder.flush()
        branch = recorder.project.current_branch()
        ref = shadow_ref(branch)
        tip = recorder.repo.resolve(ref)
        if tip is None:
            return ConsolidateResult(None, 0, branch, f"No snapshots on shadow branch `{branch}` yet: "
                                                      "nothing to consolidate.")
        records = log.read_log(recorder.repo, [tip], limit=SCAN_LIMIT, first_parent=True, with_changes=False)
        newest = records[0]
        if not squashable(newest):
            what = ("a consolidation" if newest.is_consolidation else "the first-scan import" if newest.is_import
                    else "a git operation" if newest.is_git_operation else f"a {newest.kind}")
            return ConsolidateResult(None, 0, branch, f"Nothing to consolidate: the latest snapshot on `{branch}` "
                                                      f"is {what} ({newest.subject}), which is kept as it is.")
        named = named_commits(recorder.repo)
        if newest.oid in named:
            return ConsolidateResult(None, 0, branch, f"Nothing to consolidate: the latest snapshot on `{branch}` "
                                                      "is a named checkpoint, which is kept as it is.")
        run: list[log.CommitRecord] = []
        base: str | None = None
        stopped_at: str | None = None
        for record in records:
            if not squashable(record) or record.intent != newest.intent or record.oid in named:
                base = record.oid
                if record.intent == newest.intent and not record.is_import:
                    stopped_at = _stop_line(record, record.oid in named)
                break
            run.append(record)
            base = record.parents[0] if record.parents else None
        tree = recorder.repo.commit_tree_oid(tip)
        base_tree = recorder.repo.commit_tree_oid(base) if base else None
        if base_tree == tree:
            return ConsolidateResult(None, 0, branch, f"Nothing to consolidate: the {len(run)} snapshot(s) of "
                                                      "the current task net to no change.")
        files = diffs.tree_changes(recorder.repo, base_tree, tree)
        now = datetime.now().astimezone()
        oids = [r.oid for r in run]
        message = messages.consolidate_message(when=now, intent=clean, branch=branch, squashed=len(run),
                                               first=oids[-1], last=oids[0], files=files)
        commit = recorder.repo.commit_tree(tree, [base] if base else [], message,
                                           when=(int(now.timestamp()), now.strftime("%z") or "+0000"))
        recorder.repo.update_ref(ref, commit, tip, f"code-trajectory consolidate: squash {len(run)}")
        recorder.wrote(commit)
    log_.info("consolidate branch=%s commit=%s squashed=%d", branch, commit[:12], len(run))
    detailed = log.read_log(recorder.repo, [tip], limit=len(run), first_parent=True)  # with their files
    return ConsolidateResult(commit, len(run), branch, message.split("\n", 1)[0], oids, list(reversed(detailed)),
                             stopped_at)


def _stop_line(record: log.CommitRecord, named: bool) -> str:
    """Why the run of the current task ended at ``record``, a snapshot of the same task that is kept."""
    what = ("a named checkpoint" if named or record.kind == messages.KIND_CHECKPOINT else "a consolidation"
            if record.is_consolidation else "a git operation" if record.is_git_operation else f"a {record.kind}")
    return (f"Stopped at `{record.oid[:12]}`, {what} of this task, which is never squashed: it and this task's "
            "snapshots before it are kept as they are.")
