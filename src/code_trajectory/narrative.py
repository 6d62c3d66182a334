"""Markdown narratives of the shadow history, sized to a token budget.

Each answer is estimated at :data:`CHARS_PER_TOKEN` characters a token (the
rule of thumb OpenAI and Anthropic give for English text and code) and kept
within the budget: diffs are cut hunk-wise with a marker saying what was left
out and how to see it, whole entries are dropped oldest first.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from code_trajectory.history import CommitRecord, FileVersion, display_path
from code_trajectory.messages import FileChange

#: Characters per token used to estimate the size of an answer.
CHARS_PER_TOKEN = 4
#: Files listed per commit in the global trajectory.
FILES_PER_COMMIT = 25

#: An imported file (the state when recording began) is shown whole only up to this many lines.
IMPORT_LINES_SHOWN = 40

_HUNK_RE = re.compile(r"^@@ [^@]* @@ ?(.*)$")


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text`` (``len / CHARS_PER_TOKEN``, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def fmt_time(when: datetime) -> str:
    """``2026-11-21 14:02:11`` in the machine's local time."""
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def fmt_duration(seconds: float) -> str:
    """``2 h 05 min``, ``12 min``, ``40 s``."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    return f"{hours // 24} days {hours % 24} h"


def fit(text: str, budget_tokens: int) -> str:
    """Cut ``text`` to the budget with a closing marker (last resort after smarter trimming)."""
    limit = budget_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    marker = "\n\n… [answer cut to fit the {} token budget; ask for less (smaller depth or limit)]".format(
        budget_tokens)
    return text[: max(0, limit - len(marker))].rstrip() + marker


def cut_diff(diff: str, max_chars: int, how_to_see: str) -> str:
    """Keep whole hunks of ``diff`` while they fit in ``max_chars``; say what was left out."""
    if len(diff) <= max_chars:
        return diff
    lines = diff.split("\n")
    kept: list[str] = []
    size = 0
    hunks_total = sum(1 for line in lines if line.startswith("@@"))
    hunks_kept = 0
    for i, line in enumerate(lines):
        if size + len(line) + 1 > max_chars:
            break
        if line.startswith("@@"):
            hunks_kept += 1
        kept.append(line)
        size += len(line) + 1
    left = len(lines) - len(kept)
    marker = (f"… [diff cut: {left} more line(s), {max(0, hunks_total - hunks_kept)} more hunk(s) not shown; "
              f"{how_to_see}]")
    return "\n".join(kept) + "\n" + marker


def _share(sizes: list[int], total: int) -> list[int]:
    """Split ``total`` characters over items of ``sizes``: small ones whole, the rest evenly."""
    shares = [0] * len(sizes)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    remaining = total
    for n, i in enumerate(order):
        fair = remaining // (len(order) - n) if len(order) > n else 0
        shares[i] = min(sizes[i], max(fair, 0))
        remaining -= shares[i]
    return shares


#: A line that opens a definition in common languages; used to refine git's hunk header, which names
#: the definition above the hunk's first *context* line rather than above its first change.
_DEFINITION_RE = re.compile(r"^\s*(?:async\s+def|def|class|function|func|fn|impl|struct|interface|enum|trait|"
                            r"module|(?:public|private|protected|static|export)\b.*\()\b")


def hunk_labels(diff: str) -> list[str]:
    """Return the function or class enclosing each hunk's first change, de-duplicated, in order.

    Starts from git's hunk header (its diff drivers, set in the shadow repository's
    ``info/attributes``) and moves to a definition line that appears in the hunk's
    context before the first changed line, when there is one.
    """
    labels: list[str] = []
    label: str | None = None
    searching = False
    for line in diff.split("\n"):
        match = _HUNK_RE.match(line)
        if match:
            if searching and label and label not in labels:
                labels.append(label)
            label = match.group(1).strip() or None
            searching = True
            continue
        if not searching:
            continue
        if line.startswith(("+", "-")):
            if label and label not in labels:
                labels.append(label)
            searching = False
        elif _DEFINITION_RE.match(line[1:]):
            label = line[1:].strip()
    if searching and label and label not in labels:
        labels.append(label)
    return labels


def describe_files(changes: list[FileChange], limit: int = FILES_PER_COMMIT) -> list[str]:
    """Markdown bullet lines for file changes, ``... and N more`` past ``limit``."""
    lines = []
    for change in changes[:limit]:
        where = (f"`{display_path(change.old_path)}` → `{display_path(change.path)}`" if change.old_path
                 else f"`{display_path(change.path)}`")
        counts = change.counts()
        lines.append(f"  - {change.status} {where}{' ' + counts if counts else ''}")
    if len(changes) > limit:
        lines.append(f"  - ... and {len(changes) - limit} more")
    return lines


# -- get_file_trajectory ---------------------------------------------------------------------------

@dataclass
class RenderedVersion:
    """A file version with its diff, ready to render."""

    version: FileVersion
    diff: str
    revert_of: datetime | None
    tests: str | None = None


def file_trajectory(path: str, branch: str, versions: list[RenderedVersion], total_versions: int,
                    budget_tokens: int, *, state_note: str | None = None) -> str:
    """Render the trajectory of one file; ``versions`` are oldest to newest."""
    head = [f"# Trajectory of `{display_path(path)}`",
            f"Shadow branch `{branch}`: the last {len(versions)} of {total_versions} recorded change(s) to this "
            "file, oldest to newest."]
    if state_note:
        head.append(state_note)
    sections_fixed: list[str] = []
    for n, item in enumerate(versions, 1):
        record, change = item.version.record, item.version.change
        lines = [f"## {n}. {fmt_time(record.time)} — {record.kind} `{record.oid[:12]}`",
                 f"- Message: {record.subject}"]
        if record.intent:
            lines.append(f"- Intent: {record.intent}")
        if record.checkpoint_note:
            lines.append(f"- Checkpoint note: {record.checkpoint_note}")
        what = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "type changed",
                "C": "copied"}.get(change.status, change.status)
        if change.old_path:
            what += f" from `{display_path(change.old_path)}`"
        counts = change.counts()
        lines.append(f"- Change: {what}{' ' + counts if counts else ''}")
        if item.revert_of is not None:
            lines.append(f"- **[Revert Detected]** (Matches state from {fmt_time(item.revert_of)})")
        if item.tests:
            lines.append(f"- {item.tests}")
        labels = hunk_labels(item.diff)
        if labels:
            lines.append("- Touches: " + ", ".join(f"`{label}`" for label in labels[:12]))
        sections_fixed.append("\n".join(lines))
    fixed_size = sum(len(s) for s in head) + sum(len(s) + 20 for s in sections_fixed)
    available = budget_tokens * CHARS_PER_TOKEN - fixed_size - 200
    shares = _share([len(v.diff) for v in versions], max(available, 0))
    out = ["\n".join(head)]
    for item, fixed, share in zip(versions, sections_fixed, shares):
        diff = item.diff
        if item.version.record.is_import and not diff:
            out.append(f"{fixed}\n\n(the file as it was when recording began, over {IMPORT_LINES_SHOWN} lines: not "
                       "shown; later versions show the edits)")
            continue
        if diff:
            how = (f"call get_file_trajectory with depth=1 right after this change, or run "
                   f"`git --git-dir=.trajectory show {item.version.record.oid[:12]} -- '{item.version.path}'`")
            diff = cut_diff(diff, max(share, 200), how) if share < len(diff) else diff
            out.append(f"{fixed}\n\n```diff\n{diff}\n```")
        else:
            out.append(fixed + "\n\n(no textual diff: binary content or a pure rename)")
    return fit("\n\n".join(out), budget_tokens)


def never_recorded(path: str, reason: str | None, exists: bool, candidates: list[str]) -> str:
    """Answer for a path no snapshot ever touched."""
    lines = [f"# Trajectory of `{display_path(path)}`", "No snapshot on this shadow branch has recorded this path."]
    if reason:
        lines.append(f"It is not recorded: {reason}.")
    elif exists:
        lines.append("The file exists but has not been snapshotted yet (saved less than the debounce ago?); "
                     "call `checkpoint` to record it now.")
    else:
        lines.append("No such file exists in the project. Paths are relative to the project root.")
    close = difflib.get_close_matches(path, candidates, n=5, cutoff=0.5)
    if close:
        lines.append("Recorded paths with similar names: " + ", ".join(f"`{display_path(c)}`" for c in close))
    return "\n\n".join(lines)


# -- get_global_trajectory -------------------------------------------------------------------------

def global_trajectory(records: list[CommitRecord], branch: str, budget_tokens: int, *, since_consolidate: bool,
                      reached_consolidation: bool, more_available: bool, marks: dict[str, str] | None = None,
                      title: str | None = None) -> str:
    """Render recent project-wide history; ``records`` are newest first, rendered oldest to newest."""
    if not records:
        if since_consolidate and reached_consolidation:
            return (f"# Project trajectory (shadow branch `{branch}`)\n\nNo snapshots since the last consolidation: "
                    "nothing changed after it. Call with `since_consolidate=false` to see earlier commits.")
        return (f"# Project trajectory (shadow branch `{branch}`)\n\nNo snapshots yet. Snapshots appear after "
                "files are saved (debounced) or when `checkpoint` is called.")
    head = f"# {title or 'Project trajectory'} (shadow branch `{branch}`)\n"
    scope = ("since the last consolidation" if since_consolidate and reached_consolidation
             else "since the start of the recorded history" if since_consolidate
             else f"the last {len(records)} commit(s)")
    head += f"{len(records)} commit(s), {scope}, oldest to newest."
    entries = []
    for record in reversed(records):
        lines = [f"### {fmt_time(record.time)} — `{record.oid[:12]}`", f"{record.subject}"]
        if record.intent:
            lines.append(f"- Intent: {record.intent}")
        if marks and record.oid in marks:
            lines.append(f"- {marks[record.oid]}")
        lines.append(f"- Files changed ({len(record.changes)}):")
        lines += describe_files(record.changes)
        entries.append("\n".join(lines))
    limit = budget_tokens * CHARS_PER_TOKEN - len(head) - 300
    kept: list[str] = []
    size = 0
    for entry in reversed(entries):  # newest first, so the oldest are dropped
        if size + len(entry) + 2 > limit:
            break
        kept.append(entry)
        size += len(entry) + 2
    dropped = len(entries) - len(kept)
    parts = [head]
    if dropped:
        parts.append(f"_{dropped} older commit(s) not shown to fit the token budget; call with a smaller limit "
                     "or `since_consolidate=true`._")
    elif more_available and not since_consolidate:
        parts.append("_Older commits exist; raise `limit` to see them._")
    parts += list(reversed(kept))
    return fit("\n\n".join(parts), budget_tokens)


# -- get_session_summary ---------------------------------------------------------------------------

def session_summary(*, now: datetime, gap_seconds: float, sessions: list[list[CommitRecord]],
                    current_intent: str | None, current_branch: str, net_changes: list[FileChange] | None,
                    pending: bool, recap: str | None, budget_tokens: int, notices: list[str],
                    tests: str | None = None) -> str:
    """Render the session summary; ``sessions`` newest first, each newest commit first."""
    out = ["# Session summary"]
    out.append(f"Now: {fmt_time(now)}; project branch `{current_branch}`; current intent: "
               f"{current_intent or '(none set: call set_trajectory_intent)'}.")
    for notice in notices:
        out.append(f"**Notice:** {notice}")
    if not sessions:
        out.append("No snapshots recorded yet: **this is a new session.**")
        if tests:
            out.append(tests)
        if recap:
            out.append(recap)
        return fit("\n\n".join(out), budget_tokens)
    last = sessions[0]
    newest, oldest = last[0], last[-1]
    idle = (now - newest.time).total_seconds()
    if idle > gap_seconds:
        out.append(f"The last snapshot was {fmt_duration(idle)} ago, more than the {fmt_duration(gap_seconds)} "
                   "session gap: **a new session starts now.** The summary below is of the previous session.")
    else:
        out.append(f"The last snapshot was {fmt_duration(idle)} ago: **the current session continues.**")
    if pending:
        out.append("Changes saved since the last snapshot are waiting for the debounce.")
    span = (newest.time - oldest.time).total_seconds()
    branches = sorted({r.branch for r in last if r.branch})
    lines = [f"## Last session: {fmt_time(oldest.time)} → {fmt_time(newest.time)} ({fmt_duration(span)})",
             f"- {len(last)} commit(s) on shadow branch(es): " + ", ".join(f"`{b}`" for b in branches or ["?"])]
    intents: list[tuple[str, datetime, datetime]] = []
    for record in reversed(last):
        if record.intent:
            if intents and intents[-1][0] == record.intent:
                intents[-1] = (record.intent, intents[-1][1], record.time)
            else:
                intents.append((record.intent, record.time, record.time))
    if intents:
        lines.append("- Intents, in order: " + "; ".join(
            f"\"{i}\" ({t0.strftime('%H:%M')}–{t1.strftime('%H:%M')})" for i, t0, t1 in intents[:12]))
    lines.append(f"- Final intent: {newest.intent or intents[-1][0] if intents else '(none)'}")
    touched: Counter[str] = Counter()
    plus: Counter[str] = Counter()
    minus: Counter[str] = Counter()
    for record in last:
        if record.is_consolidation or record.is_import:
            continue
        for change in record.changes:
            touched[change.path] += 1
            plus[change.path] += change.added or 0
            minus[change.path] += change.deleted or 0
    if touched:
        lines.append("- Files most changed: " + ", ".join(
            f"`{display_path(p)}` ({n} snapshot(s), +{plus[p]} -{minus[p]})" for p, n in touched.most_common(8)))
    consolidations = [r for r in last if r.is_consolidation]
    if consolidations:
        lines.append("- Consolidations: " + "; ".join(f"{fmt_time(r.time)} {r.subject}" for r in consolidations[:5]))
    lines.append(f"- Final state: last commit {fmt_time(newest.time)} `{newest.oid[:12]}`: {newest.subject}")
    out.append("\n".join(lines))
    if tests:
        out.append(tests)
    if net_changes is not None:
        net = [f"## Net change over the last session ({len(net_changes)} file(s))"]
        net += describe_files(net_changes, 30) if net_changes else ["  - (none: the session ended where it began)"]
        out.append("\n".join(net))
    if recap:
        out.append(recap)
    if len(sessions) > 1:
        prev = sessions[1]
        out.append(f"Earlier: {len(sessions) - 1} older session(s) in the history read; the one before ran "
                   f"{fmt_time(prev[-1].time)} → {fmt_time(prev[0].time)} ({len(prev)} commit(s)).")
    return fit("\n\n".join(out), budget_tokens)
