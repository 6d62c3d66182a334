"""Structured content of the test status tools (``record_test_result``, ``get_test_history``), under the rule of
:mod:`code_trajectory.core.answer`: the facts the text says, in its order, at most its size, no empty fields."""

from __future__ import annotations

from code_trajectory.core.answer import short, shown, table, when
from code_trajectory.git import log
from code_trajectory.history import narrative
from code_trajectory.history.fields import message_of
from code_trajectory.testruns.model import TestRun

#: Failures listed per run (as the text lists them).
FAILURES_SHOWN = 10
#: Columns of a run's row in ``get_test_history``'s structured content (see :func:`run_fields`).
RUN_COLUMNS = ["id", "t", "outcome", "command", "runner", "scope", "tests", "failures", "s", "more_failures",
               "note", "squashed_into", "branch"]


def run_fields(run: TestRun, branch: str | None = None) -> dict:
    """One run as the history shows it: ``id`` of its snapshot, ``t`` (when it started), ``outcome``, ``command``,
    ``runner``, ``scope`` (its label: ``full suite``, ``partial: …``, ``unknown scope …``), ``s`` (duration, seconds),
    ``tests`` (the counts), ``failures`` (``[test, reason]``, the first
    :data:`FAILURES_SHOWN`), ``more_failures``, ``note``, ``squashed_into`` and ``branch`` when not ``branch``."""
    started = run.started
    return {"id": (run.commit or "?")[:12], "t": when(started) if started else None, "outcome": run.outcome,
            "command": run.command, "runner": run.runner, "scope": run.scope.label(),
            "s": round(run.duration_seconds, 1) if run.duration_seconds is not None else None,
            "tests": run.counts_text(), "failures": [list(pair) for pair in run.shown_failures()[:FAILURES_SHOWN]],
            "more_failures": max(0, len(run.failures) - FAILURES_SHOWN) + run.more_failures or None,
            "note": run.message, "squashed_into": (run.squashed_into or "")[:12] or None,
            "branch": run.branch if run.branch != branch else None}


def history(text: str, branch: str, runs: list[TestRun]) -> dict:
    """``get_test_history``'s data: ``branch`` and ``runs``, newest first as the text: rows of ``cols``
    (:data:`RUN_COLUMNS`, see :func:`run_fields`)."""
    cols, runs_shown = table(shown(text, [run_fields(run, branch) for run in runs]), RUN_COLUMNS)
    return {"branch": branch, "cols": cols, "runs": runs_shown}


def recorded(run: TestRun) -> dict:
    """``record_test_result``'s data: ``id`` of the snapshot, ``branch`` and ``tests``: the run's summary line (counts
    and failing tests) as the text says it."""
    return {"id": (run.commit or "?")[:12], "branch": run.branch,
            "tests": run.summary_line().removeprefix("tests: ")}


def since_green(text: str, green: TestRun, tip: str, net: dict, records: list[log.CommitRecord],
                marks: dict[str, str]) -> dict:
    """``diff_since_green``'s data for the project: ``green`` (the green run, :func:`run_fields`), ``to`` (the tip),
    the net change's ``cols``, ``files`` and ``diffs`` (:func:`code_trajectory.history.compare.net_change_data`),
    and ``snapshots`` since, oldest first as the text: ``id``, ``t``, ``msg`` where the text says the message (where
    it changes: :func:`step_messages`) and ``mark`` (test runs)."""
    oldest_first = list(reversed(records))
    return {"green": run_fields(green), "to": short(tip), **net, "snapshots": shown(text, [
        {"id": short(r.oid), "t": when(r.time), "msg": message, "mark": marks.get(r.oid)}
        for r, (message, _files) in zip(oldest_first, step_parts(oldest_first), strict=True)])}


def step_parts(records: list[log.CommitRecord]) -> list[tuple[str | None, str]]:
    """``(message, files)`` of each of ``records`` (oldest first) in a list of snapshots: its message
    (:func:`message_of`) where it differs from the one before, else None (a task of 17 snapshots said its intent 17
    times), and the files it changed (the subject's brief file summary, ``""`` when it has none)."""
    said: str | None = None
    parts_of = []
    for record in records:
        msg, files = message_of(record), narrative.file_summary(record)
        parts_of.append((None if msg == said and files else msg, files))
        said = msg
    return parts_of


def step_messages(records: list[log.CommitRecord]) -> list[str]:
    """How each of ``records`` (oldest first) is said in a list of snapshots (:func:`step_parts`): ``message -
    files``, or the files alone under the same message as the line before."""
    return [f"{msg} - {files}" if msg and files else msg or files for msg, files in step_parts(records)]
