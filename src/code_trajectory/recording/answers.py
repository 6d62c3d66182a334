"""Structured content of the recording tools (``configure_project``, ``set_trajectory_intent``, ``checkpoint``,
``consolidate``): the facts their text says, as fields, under the rule of :mod:`code_trajectory.core.answer`
(at most the size of the text, in its order, no empty fields)."""

from __future__ import annotations

from code_trajectory.core.answer import Answer, message, short, when
from code_trajectory.core.text import path_field
from code_trajectory.git import log
from code_trajectory.git.points import points
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.checkpoint_requests import CheckpointAnswer
from code_trajectory.recording.consolidate import ConsolidateResult

#: Columns of a file row: status letter, path, lines added, lines deleted, old path of a rename.
FILE_COLUMNS = ["status", "path", "+", "-", "from"]
#: Files listed in a checkpoint's answer (as its text lists them).
CHECKPOINT_FILES = 30


def file_rows(changes: list, limit: int) -> list[list]:
    """The first ``limit`` file changes as rows of :data:`FILE_COLUMNS` (paths: :func:`path_field`)."""
    return [[c.status, path_field(c.path), c.added, c.deleted, c.old_path and path_field(c.old_path)]
            for c in changes[:limit]]


def intent(text: str, recorded: str | None) -> Answer:
    """``set_trajectory_intent``'s answer: ``intent``, the intent now recorded with every snapshot (``recorded``)."""
    return Answer(text, {"intent": recorded})


def checkpoint(repo: ShadowRepo, branch: str, before: str | None, answer: CheckpointAnswer) -> Answer:
    """``checkpoint``'s answer: ``id`` and ``t`` of the named snapshot, ``name`` of the point, ``new`` (a snapshot
    was taken; else nothing had changed since ``before``, the tip before the call), ``branch`` (the shadow branch
    recorded), ``msg`` and ``files`` (rows of ``cols``, of a new snapshot); ``repo``: the shadow repository."""
    if answer.commit is None:
        return message(answer.text)
    named = [p for p in points(repo) if p.commit == answer.commit]
    data: dict = {"id": short(answer.commit), "name": max(named, key=lambda p: p.time).message if named else None,
                  "new": answer.commit != before}
    if data["new"]:
        record = next(iter(log.read_log(repo, [answer.commit], limit=1)), None)
        if record is not None:
            log.add_line_counts(repo, [record])
            data.update(branch=branch, t=when(record.time), msg=record.subject, cols=FILE_COLUMNS,
                        files=file_rows(record.changes, CHECKPOINT_FILES))
    return Answer(answer.text, data)


def consolidation(text: str, result: ConsolidateResult, listed: int) -> Answer:
    """``consolidate``'s answer: ``id`` of the ``[CONSOLIDATE]`` commit, ``branch``, ``msg``, ``squashed`` (how
    many), and ``snapshots``: the last ``listed`` squashed ones (as the text lists them, oldest first), each
    ``id``, ``t`` and its first 3 ``files``."""
    if result.commit is None:
        return message(text)
    shown = result.squashed_records[-listed:]
    return Answer(text, {"id": short(result.commit), "branch": result.branch, "msg": result.message,
                         "squashed": result.squashed, "cols": FILE_COLUMNS, "snapshots": [
                             {"id": short(r.oid), "t": when(r.time), "files": file_rows(r.changes, 3)}
                             for r in shown]})
