"""The recent log (``get_global_trajectory``, ``code-trajectory log``): what happened lately, lean.

One heading per snapshot says when, which, and why (:func:`code_trajectory.history.headings.why`: the
checkpoint's name, the intent, the git operation, the start of recording); then one line per file: the change, the
path, the +/- counts and the symbols that changed. Nothing is repeated: the date only when the day changes, an intent
the heading before showed whole shortened, no author, no ``--stat`` bar. A run of git operations (or restores) that
ends on the tree it started from is one line (:func:`~code_trajectory.history.headings.net_zero_spans`); the start
of recording lists its files only up to :data:`IMPORT_FILES_LISTED`. Measured
by ``bench/answers.py`` against ``git log --stat`` (which names no symbol): see the README's context section.
"""

from __future__ import annotations

import re

from code_trajectory.git.log import CommitRecord, describe_files
from code_trajectory.history import fields
from code_trajectory.history.headings import Step, began_recording, net_zero_line, net_zero_spans, why
from code_trajectory.history.narrative import CHARS_PER_TOKEN, fit, fmt_time

#: Files of the start of recording listed at most (its heading counts them all: ``start of recording: 1204
#: file(s)``; issue 23: a start-of-recording entry listed ~200 names).
IMPORT_FILES_LISTED = 10


def render(records: list[CommitRecord], branch: str, budget_tokens: int, *, since_consolidate: bool,
           reached_consolidation: bool, more_available: bool, marks: dict[str, str] | None = None,
           symbols: dict[str, dict[str, str]] | None = None, trees: dict[str, str] | None = None,
           before: str | None = None) -> str:
    """The recent log in markdown, oldest to newest, within ``budget_tokens`` (the oldest dropped first).

    Args:
        records: the snapshots, newest first, with their file changes and counts read.
        branch: the shadow branch's project branch, for the title.
        budget_tokens: the answer's budget, estimated at :data:`~code_trajectory.history.narrative.CHARS_PER_TOKEN`.
        since_consolidate, reached_consolidation: the records go back to the last consolidation (found or not).
        more_available: older snapshots exist.
        marks: ``{commit: mark}`` (test runs), shown under the heading.
        symbols: ``{commit: {path: changed symbols}}`` (see ``history.change_lines.symbols_of``, ``lean``).
        trees: ``{commit: tree id}`` of the git operations and restores and of their first parents (see
            ``history.headings.operation_trees``): operations that cancel out are said in one line.
        before: the short id of the snapshot the records are older than (a page back), or None (the newest).

    Older snapshots left out (by the budget, or past ``limit``) are said with the call that shows them: ``before``
    the oldest one shown.
    """
    title = f"# Project trajectory (shadow branch `{branch}`)"
    if not records:
        if since_consolidate and reached_consolidation:
            return (f"{title}\n\nNo snapshots since the last consolidation: nothing changed after it. Call with "
                    "`since_consolidate=false` (CLI: without `--since-consolidate`) to see earlier commits.")
        if before is not None:
            return f"{title}\n\nNo snapshots before `{before}`: it is the first recorded on this line."
        return (f"{title}\n\nNo snapshots yet. Snapshots appear after files are saved (debounced) or when "
                "`checkpoint` is called.")
    scope = ("since the last consolidation" if since_consolidate and reached_consolidation
             else "since the start of the recorded history" if since_consolidate
             else f"the last {len(records)}")
    page = f" before `{before}`" if before is not None else ""
    head = (f"{title}: the last {len(records)} snapshot(s){page}, oldest to newest" if scope.startswith("the last")
            else f"{title}: {len(records)} snapshot(s), {scope}, oldest to newest")
    groups = _groups(list(reversed(records)), trees or {})
    fitted = [_entry(group, older, marks, symbols, with_date=True) for group, older in groups]
    limit = budget_tokens * CHARS_PER_TOKEN - len(head) - 300
    shown = 0
    size = 0
    for entry in reversed(fitted):  # newest first, so the oldest are dropped
        if size + len(entry) + 1 > limit:
            break
        shown += 1
        size += len(entry) + 1
    kept_groups = groups[len(groups) - shown:]
    kept = [_entry(group, older if i else None, marks, symbols,
                   with_date=not i or older is None or group[0].time.date() != older.time.date())
            for i, (group, older) in enumerate(kept_groups)]
    parts = [head]
    dropped = sum(len(group) for group, _ in groups[:len(groups) - shown])
    oldest = kept_groups[0][0][0].oid[:12] if kept_groups else records[-1].oid[:12]
    if dropped:
        parts.append(f"_{dropped} older snapshot(s) not shown to fit the token budget; see them with "
                     f"`before=\"{oldest}\"` (CLI `--before {oldest}`)._")
    elif more_available and not since_consolidate:
        parts[0] += f"; older ones: `before=\"{oldest}\"` (CLI `--before {oldest}`)"
    parts += kept
    return fit("\n".join(parts), budget_tokens)


def _groups(chronological: list[CommitRecord], trees: dict[str, str]
            ) -> list[tuple[list[CommitRecord], CommitRecord | None]]:
    """The entries, oldest first: each a list of snapshots (one, or a run of git operations that cancel out) with
    the last snapshot of the entry before it."""
    spans = net_zero_spans([Step(trees.get(r.parents[0]) if r.parents else None, trees.get(r.oid),
                                 (r.is_git_operation or r.kind == "restore") and r.oid in trees)
                            for r in chronological])
    ends = dict(spans)
    groups: list[tuple[list[CommitRecord], CommitRecord | None]] = []
    i = 0
    while i < len(chronological):
        j = ends.get(i, i)
        groups.append((chronological[i:j + 1], groups[-1][0][-1] if groups else None))
        i = j + 1
    return groups


def _entry(group: list[CommitRecord], previous: CommitRecord | None, marks: dict[str, str] | None,
           symbols: dict[str, dict[str, str]] | None, *, with_date: bool) -> str:
    """One entry: a snapshot's heading (the date only ``with_date``), its mark and one line per file; or one line
    for a run of git operations that cancel out."""
    record = group[0]
    when = fmt_time(record.time)
    stamp = when if with_date else when[11:]
    if len(group) > 1:
        return f"## {stamp} · {record.oid[:12]} to {group[-1].oid[:12]} · {net_zero_line(group)}"
    reason = record.subject if record.is_consolidation else why(
        record, previous_intent=previous.intent if previous is not None else None,
        previous_note=previous.checkpoint_note if previous is not None else None)
    lines = [f"## {stamp} · {record.oid[:12]} · {reason}"]
    if marks and record.oid in marks:
        lines.append(f"- {marks[record.oid]}")
    if record.is_import and record.change_count > IMPORT_FILES_LISTED:
        return "\n".join(lines)  # its heading counts the files
    if began_recording(record) and (record.files_not_read is not None or record.change_count > IMPORT_FILES_LISTED):
        # a history begun by a checkpoint: its first snapshot holds the project as it was, not files just added
        return "\n".join([*lines, f"{record.change_count} files as they were when recording began (the first "
                                   "snapshot; not listed)"])
    lines += describe_files(record.changes, symbols=(symbols or {}).get(record.oid), bare=True)
    return "\n".join(lines)


#: Columns of a snapshot row of :func:`data`.
SNAPSHOT_COLUMNS = ["t", "id", "why", "files", "mark"]
_HEADING = re.compile(r"^## (.+?) · ([0-9a-f]{12}(?: to [0-9a-f]{12})?) · (.*)$", re.M)


def data(text: str, branch: str, records: list[CommitRecord], marks: dict[str, str] | None, more: bool) -> dict:
    """The structured content of the recent log :func:`render` wrote as ``text`` (see
    :mod:`code_trajectory.core.answer`): ``branch``; ``snapshots``, rows of ``cols`` (:data:`SNAPSHOT_COLUMNS`) for
    the entries the text shows, oldest first as there (``left_out``: how many older ones the budget dropped): the time and the why as the heading says them, the id (or
    ``<id> to <id>`` for git operations that cancel out), ``files``: the text's lines for its files (change, path,
    +/- counts, changed symbols) as one string, a line each, and the test-run ``mark`` (``cols`` only as long as
    the longest row); ``more``: older snapshots exist. As lean as the text: a program splits ``files`` at line
    breaks, a file line at its first space and at ``" ("``."""
    heads = {m.group(2): (m.group(1), m.group(3), m.end()) for m in _HEADING.finditer(text)}
    by_id = {r.oid[:12]: r for r in records}
    rows = []
    for key, (stamp, reason, end) in sorted(heads.items(), key=lambda item: item[1][2]):
        record = by_id.get(key[:12])
        if record is None:
            continue
        body = text[end:].split("\n## ", 1)[0].split("\n\n", 1)[0]
        files = "\n".join(line for line in body.split("\n")[1:] if line and not line.startswith("- "))
        mark = (marks or {}).get(record.oid) if " to " not in key else None
        rows.append([stamp, key, reason, files or None] + ([mark] if mark else []))
    left_out = sum(1 for r in records if r.oid[:12] not in text)  # dropped for the budget, oldest first
    width = max((len(row) for row in rows), default=0)
    return {"branch": branch, "cols": SNAPSHOT_COLUMNS[:width], "snapshots": rows, "left_out": left_out or None,
            "more": more or None}


def within_text(text: str, data: dict) -> dict:
    """``data`` (:func:`data`'s, with what the caller added) held to the size of ``text``: a row costs a few
    characters more than its heading (JSON's quotes and commas), so past about 40 snapshots the oldest rows are left
    out and counted in ``left_out`` rather than the content outgrowing the text, whose size cap would then drop
    every row (a client that passes only structured content got the columns and no snapshot); see
    :func:`~.fields.rows_within_text`."""
    return fields.rows_within_text(text, data, "snapshots", "left_out")
