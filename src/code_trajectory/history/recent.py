"""The recent log (``get_global_trajectory``, ``code-trajectory log``): what happened lately, lean.

One heading per snapshot says when, which, and why (:func:`reason`: the checkpoint's name, the intent, or what
the first line says for what the agent did not write); then one line per file: the change, the path, the +/-
counts and the symbols that changed. Nothing is repeated: the date only when the day changes, an intent the
heading before showed whole in :data:`REPEATED_INTENT_CHARS` characters, no author, no ``--stat`` bar. Measured
by ``bench/answers.py`` against ``git log --stat`` (which names no symbol): see the README's context section.
"""

from __future__ import annotations

import re

from code_trajectory.git import messages
from code_trajectory.git.log import CommitRecord, describe_files
from code_trajectory.history.narrative import CHARS_PER_TOKEN, fit, fmt_time, message_head

#: Characters of an intent the heading before showed whole.
REPEATED_INTENT_CHARS = 48


def reason(record: CommitRecord, previous: CommitRecord | None = None) -> str:
    """Why the snapshot exists, in a few words, for a heading.

    Args:
        record: the snapshot.
        previous: the snapshot whose heading comes just before; an intent it had too is cut to
            :data:`REPEATED_INTENT_CHARS` characters (``…`` closing it).

    Returns:
        ``checkpoint "NAME" · Intent: TEXT`` (either alone), ``start of recording``, ``snapshot, no intent set``
        (``checkpoint, no intent set``) for an unexplained save, else the first line without its file summary (a
        git operation's ``[CHECKOUT] main → feature``, a restore, a consolidation).
    """
    parts = []
    name = record.trailers.get(messages.TRAILER_CHECKPOINT)
    if name:
        parts.append(f'checkpoint "{name}"')
    intent = record.intent
    if intent:
        if previous is not None and previous.intent == intent and len(intent) > REPEATED_INTENT_CHARS:
            intent = intent[:REPEATED_INTENT_CHARS - 1].rstrip() + "…"
        parts.append(f"Intent: {intent}")
    if parts and not (record.is_git_operation or record.is_consolidation or record.kind == messages.KIND_RESTORE):
        return " · ".join(parts)
    if record.is_import:
        return "start of recording"
    if record.subject.startswith(messages.SNAPSHOT_PREFIX + " "):  # all that is left is the file summary
        return f"{record.kind}, no intent set"
    return message_head(record)


def render(records: list[CommitRecord], branch: str, budget_tokens: int, *, since_consolidate: bool,
           reached_consolidation: bool, more_available: bool, marks: dict[str, str] | None = None,
           symbols: dict[str, dict[str, str]] | None = None) -> str:
    """The recent log in markdown, oldest to newest, within ``budget_tokens`` (the oldest dropped first).

    Args:
        records: the snapshots, newest first, with their file changes and counts read.
        branch: the shadow branch's project branch, for the title.
        budget_tokens: the answer's budget, estimated at :data:`~code_trajectory.history.narrative.CHARS_PER_TOKEN`.
        since_consolidate, reached_consolidation: the records go back to the last consolidation (found or not).
        more_available: older snapshots exist.
        marks: ``{commit: mark}`` (test runs), shown under the heading.
        symbols: ``{commit: {path: changed symbols}}`` (see ``history.versions.symbols_of``).
    """
    title = f"# Project trajectory (shadow branch `{branch}`)"
    if not records:
        if since_consolidate and reached_consolidation:
            return (f"{title}\n\nNo snapshots since the last consolidation: nothing changed after it. Call with "
                    "`since_consolidate=false` to see earlier commits.")
        return (f"{title}\n\nNo snapshots yet. Snapshots appear after files are saved (debounced) or when "
                "`checkpoint` is called.")
    scope = ("since the last consolidation" if since_consolidate and reached_consolidation
             else "since the start of the recorded history" if since_consolidate
             else f"the last {len(records)}")
    head = f"{title}: {len(records)} snapshot(s), {scope}, oldest to newest"
    fitted = [_entry(record, older, marks, symbols, with_date=True) for record, older in _pairs(records)]
    limit = budget_tokens * CHARS_PER_TOKEN - len(head) - 300
    shown = 0
    size = 0
    for entry in reversed(fitted):  # newest first, so the oldest are dropped
        if size + len(entry) + 1 > limit:
            break
        shown += 1
        size += len(entry) + 1
    kept = [_entry(record, older, marks, symbols, with_date=older is None or record.time.date() != older.time.date())
            for record, older in _pairs(records[:shown])]
    parts = [head]
    dropped = len(records) - shown
    if dropped:
        parts.append(f"_{dropped} older snapshot(s) not shown to fit the token budget; call with a smaller limit "
                     "or `since_consolidate=true`._")
    elif more_available and not since_consolidate:
        parts.append("_Older snapshots exist; raise `limit` to see them._")
    parts += kept
    return fit("\n".join(parts), budget_tokens)


def _pairs(records: list[CommitRecord]) -> list[tuple[CommitRecord, CommitRecord | None]]:
    """``records`` (newest first) oldest first, each with the one shown before it."""
    ordered = list(reversed(records))
    return [(record, ordered[i - 1] if i else None) for i, record in enumerate(ordered)]


def _entry(record: CommitRecord, previous: CommitRecord | None, marks: dict[str, str] | None,
           symbols: dict[str, dict[str, str]] | None, *, with_date: bool) -> str:
    """One snapshot: its heading (the date only ``with_date``), its mark, one line per file."""
    when = fmt_time(record.time)
    lines = [f"## {when if with_date else when[11:]} · {record.oid[:12]} · {reason(record, previous)}"]
    if marks and record.oid in marks:
        lines.append(f"- {marks[record.oid]}")
    named = {path: fold_symbols(line) for path, line in ((symbols or {}).get(record.oid) or {}).items()}
    lines += describe_files(record.changes, symbols=named, bare=True)
    return "\n".join(lines)


_OCCURRENCE = re.compile(r"@\d+\b")


def _split_names(text: str) -> list[str]:
    """``a, b (c, d), e`` -> ``["a", "b (c, d)", "e"]``: commas inside parentheses do not split."""
    names, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0 and text.startswith(", ", i):
            names.append(text[start:i])
            start = i + 2
    names.append(text[start:])
    return names


def fold_symbols(line: str) -> str:
    """A changed-symbols line with each name said once per kind of change: the occurrences of one name that the
    parser told apart (``delay@3, delay@4, delay@5``, anonymous callbacks in tests) become ``delay ×3``.

    Args:
        line: ``SymbolChanges.summary()``'s line (``modified a, b@2; added c; imports changed``).
    """
    groups = []
    for group in line.split("; "):
        label, sep, rest = group.partition(" ")
        if label == "comments" and rest.startswith("changed in "):
            label, rest = "comments changed in", rest.removeprefix("changed in ")
        if not sep or label not in ("modified", "added", "removed", "moved", "reformatted", "comments changed in"):
            groups.append(group)
            continue
        counts: dict[str, int] = {}
        for name in _split_names(rest):
            base = _OCCURRENCE.sub("", name)
            counts[base] = counts.get(base, 0) + 1
        groups.append(f"{label} " + ", ".join(name + (f" ×{n}" if n > 1 else "") for name, n in counts.items()))
    return "; ".join(groups)
