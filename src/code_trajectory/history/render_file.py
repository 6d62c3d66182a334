"""A file's trajectory as markdown: every shown version's heading, and every changed line of its diff.

Every shown version keeps its heading: time, snapshot id, change and +/- counts, why it exists (the intent, the
checkpoint's name, the git operation: :func:`code_trajectory.history.headings.why`), the symbols that changed
(``modified Serializer.loads, added Serializer.iter_unsigners``, at most
:data:`~code_trajectory.history.versions.SYMBOLS_LISTED` names then ``+ N more``), test runs and reverts. Git
operations that cancel out (a reset and the reset back, a stash and its pop: the file's blob id is back where it
was) are said in one line. Then the diffs (issue 28: every changed line ``git log -p`` shows, in fewer tokens; cut
repetition, not facts):

1. the newest version's diff, whole, with :data:`~code_trajectory.history.versions.DIFF_CONTEXT` lines of context;
2. every older version's diff with its changed lines only
   (:data:`~code_trajectory.history.versions.LEAN_CONTEXT` lines of context: the hunk header says where, the
   heading which symbols), a comment- or import-only change too (its one line, then its lines); a whitespace-only
   change is its one line.

The token budget is a safety cap, not a share: only when the diffs do not all fit in it are the older ones chosen
by importance (changed lines, fading with age: :data:`RECENCY_DECAY`; the agent's edits before git's operations:
:data:`OPERATION_WEIGHT`), a diff that does not fit cut line-wise to half the room left (at least
:data:`MIN_CUT_CHARS`), and
the answer names the diffs it left out, their changed lines, and the exact ``compare`` call (and CLI command) that
shows each. No version and no changed symbol is dropped.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

from code_trajectory.core.answer import Answer, code_block, fenced, sections, short, shown, when
from code_trajectory.core.text import cli_option, path_field, shown_pair
from code_trajectory.git.messages import display_path
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.headings import (
    OWN_CLIENT,
    began_recording,
    editor_of,
    file_spans,
    is_operation,
    net_zero_line,
    why,
)
from code_trajectory.history.narrative import CHARS_PER_TOKEN, cut_diff, fit, fmt_time, hunk_labels, lean_hunk_headers
from code_trajectory.history.versions import DIFF_CONTEXT, LEAN_CONTEXT, Version

#: An imported file (the state when recording began) is shown whole only up to this many lines.
IMPORT_LINES_SHOWN = 40
#: Importance of an older diff: its changed lines times RECENCY_DECAY to the power of its age (versions newer
#: than it): a change 5 versions older needs about twice the lines to come first.
RECENCY_DECAY = 0.87
#: Weight of a git operation's or a restore's diff against an edit's (prefer showing the agent's edits).
OPERATION_WEIGHT = 0.25
#: An older diff that does not fit whole is cut to the room left when that is at least this many characters.
MIN_CUT_CHARS = 1200

_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "type changed", "C": "copied"}


def editor(version: Version) -> str | None:
    """Who made a hook's snapshot, as its heading says it: ``Claude Code (Edit)`` (:func:`headings.editor_of`);
    None for a snapshot no hook recorded."""
    return editor_of(version.record)


def who(version: Version, hooks_seen: bool) -> str:
    """`` · edited by Claude Code (Edit)`` for a hook's snapshot (:func:`editor`); `` · edited outside the agent``
    for a watcher's snapshot of a file whose other changes came through hooks (so hooks were installed); else
    nothing."""
    by = editor(version)
    if by and version.record.origin and version.record.origin["client"] == OWN_CLIENT and not version.record.intent:
        return ""  # the heading's why says it already (headings.why)
    if by:
        return f" · edited by {by}"
    if hooks_seen and version.record.kind in ("snapshot", "reconcile"):
        return " · edited outside the agent"
    return ""


def heading(version: Version, previous_intent: str | None, hooks_seen: bool = False,
            previous_note: str | None = None) -> list[str]:
    """The lines every shown version keeps, whatever the budget: the first says when, what and why (an intent or a
    checkpoint's name repeated from an earlier heading, ``previous_intent``, ``previous_note``, shortened)."""
    record, change = version.record, version.entry.change
    what = _STATUS.get(change.status, change.status)
    if change.old_path:
        what += f" from {shown_pair(change.old_path, change.path, lambda path: f'`{display_path(path)}`')[0]}"
    counts = change.counts()
    named = f"checkpoint: {version.checkpoint} · " if version.checkpoint and not record.checkpoint_note else ""
    lines = [f"## {version.number}. {fmt_time(record.time)} · `{record.oid[:12]}` · {what}"
             f"{' ' + counts if counts else ''} · {named}{why(record, previous_intent=previous_intent, previous_note=previous_note, import_files=False)}"
             f"{who(version, hooks_seen)}"]
    symbols = version.symbol_line()
    if version.oversize:
        lines.append(f"- Content {version.oversize}")
    elif version.one_line_kind:
        lines.append(f"- {version.one_line_kind[0].upper()}{version.one_line_kind[1:]}"
                     f"{': ' + symbols if symbols and version.symbols and symbols != version.symbols.kind else ''}")
    elif symbols and not began_recording(record):  # the first recorded state: its symbols are not news
        lines.append(f"- Symbols: {symbols}")
    if version.revert_of is not None:
        lines.append(f"- **[Revert Detected]** (Matches state from {fmt_time(version.revert_of)})")
    if version.tests:
        lines.append(f"- {version.tests}")
    return lines


def collapsed_heading(group: list[Version]) -> str:
    """One line for versions that cancel out: numbers, times, ids and what they were."""
    first, last = group[0], group[-1]
    start, end = fmt_time(first.record.time), fmt_time(last.record.time)
    end = end.split(" ", 1)[1] if end[:10] == start[:10] else end
    return (f"## {first.number}–{last.number}. {start} → {end} · "
            + " ".join(f"`{v.record.oid[:12]}`" for v in group) + " · "
            + net_zero_line([v.record for v in group]))


#: One-line change kinds shown with their diff all the same: their lines are facts (the comment's or import's text).
_DIFF_TOO = ("comment-only change", "import-only change")


def _wants_diff(version: Version) -> bool:
    """Whether the version's diff is worth showing: not for a deletion, content over the size cap, a
    whitespace-only change (said in one line: no text changed), or a change of no line (a rename, a mode)."""
    change = version.entry.change
    return not (version.oversize or change.status == "D" or version.one_line_kind not in (None, *_DIFF_TOO)
                or (change.added == 0 and change.deleted == 0)  # a mode change: no line to show
                or (change.status == "R" and not change.added and not change.deleted))  # a pure rename


def render(repo: ShadowRepo, path: str, branch: str, versions: list[Version], total: int, budget_tokens: int, *,
           state_note: str | None = None, symbols_available: bool = True, complete: bool = True,
           since: str | None = None, deeper: int | None = None) -> Answer:
    """Render ``versions`` (oldest first) of ``path`` within ``budget_tokens``: the newest diff, then by importance.

    Args:
        repo: the shadow repository (diffs are read from it as they are shown).
        path: the file, relative to the project root.
        branch: the shadow branch read.
        versions: the versions to show, oldest first (see :func:`code_trajectory.history.versions.build`).
        total: how many versions the file has in all; with ``complete`` False, how many of the newest were read
            (the file has more: said as "more than ``total - 1``"; the versions are numbered back from the newest).
        budget_tokens: the answer's budget (4 characters a token).
        state_note: a sentence about the file's state now (deleted, followed across renames).
        symbols_available: False when the file's language has no symbol support (said once).
        complete: False when not every version was read (see
            :data:`~code_trajectory.history.versions.LOOKBACK`).
        since: what ``versions`` and ``total`` count from (``the green run``), when not the whole recorded history.
        deeper: the ``depth`` that shows the older versions left out (said with its CLI option), None when none are.

    Returns:
        The markdown and its data: every shown version's commit, time, change, counts, symbols and ``detail``
        (``full``, ``cut``, ``hunks``, ``heading``, ``one line`` or ``no net change``), and ``diffs_left_out``;
        ``total``, or, when not ``complete``, ``more_than`` and ``numbered`` (``back from the newest``).
    """
    head = [f"# Trajectory of `{display_path(path)}`",
            f"Shadow branch `{branch}`: the last {len(versions)} of {total} "
            + (f"change(s) to this file since {since}" if since else "recorded change(s) to this file")
            + ", oldest to newest." if complete else
            f"Shadow branch `{branch}`: the last {len(versions)} of more than {total - 1} recorded change(s) to this "
            f"file (not counted further), oldest to newest, numbered back from the newest (1); reverts are detected "
            f"among the newest {total} only."]
    if deeper is not None:
        head[-1] += f" Older ones: depth={deeper} (CLI `--depth {deeper}`)."
    if state_note:
        head.append(state_note)
    if not symbols_available:
        head.append("(No symbol support for this file type: hunks are labelled with git's function headers.)")
    spans = file_spans([v.entry for v in versions])
    group_of = {k: (a, b) for a, b in spans for k in range(a, b + 1)}
    headings: list[str] = [""] * len(versions)
    previous = previous_note = None
    hooks_seen = any(v.record.origin for v in versions)
    for i, version in enumerate(versions):
        if i in group_of:
            a, b = group_of[i]
            if i == a:
                headings[i] = collapsed_heading(versions[a:b + 1])
            continue
        headings[i] = "\n".join(heading(version, previous, hooks_seen, previous_note))
        previous = version.record.intent or previous
        previous_note = version.record.checkpoint_note or previous_note
    alone = [i for i in range(len(versions)) if i not in group_of]  # none when every version is in a group
    reserve = len(_left_out_note(path, versions, alone)) + 40 if alone else 0
    bodies, detail = _spend(repo, versions, set(group_of),
                            budget_tokens * CHARS_PER_TOKEN - sum(len(h) + 1 for h in head)
                            - sum(len(h) + 12 for h in headings) - reserve)
    out = ["\n".join(head)]
    for text, body in zip(headings, bodies):
        if text:
            out.append(f"{text}\n\n{body}" if body.startswith("```") else f"{text}\n{body}" if body else text)
    elided = [i for i, d in enumerate(detail) if d in ("heading", "hunks") and _wants_diff(versions[i])
              and not began_recording(versions[i].record)]
    if elided:
        out.append(_left_out_note(path, versions, elided))
    text = fit("\n\n".join(out), budget_tokens)
    data = file_data(text, path, branch, versions, total, [versions[i].number for i in elided], spans)
    if not complete:
        del data["total"]  # not counted: "more_than" instead, and "n" counted back from the newest (1)
        data.update(more_than=total - 1, numbered="back from the newest")
    return Answer(text, data)


def importance(versions: list[Version], i: int, size: int) -> float:
    """How much version ``i``'s diff is worth showing: changed lines (else its size in 40-character lines), times
    :data:`RECENCY_DECAY` per newer version, times :data:`OPERATION_WEIGHT` for git's operations and restores."""
    change = versions[i].entry.change
    lines = (change.added or 0) + (change.deleted or 0) or size / 40
    return lines * RECENCY_DECAY ** (len(versions) - 1 - i) * (OPERATION_WEIGHT if is_operation(versions[i].record) else 1)


def _spend(repo: ShadowRepo, versions: list[Version], collapsed: set[int], room: int) -> tuple[list[str], list[str]]:
    """The body (a diff, hunk labels, a note, or nothing) and detail level of each version, within ``room``
    characters: the newest diff whole if it fits at all (else cut), then the older ones by :func:`importance` while
    they fit; one that does not is cut to half the room left (at least :data:`MIN_CUT_CHARS`), so that a huge diff
    (a file's first version) does not take the room of every smaller one after it."""
    bodies = [""] * len(versions)
    detail = ["no net change" if i in collapsed else "heading" for i in range(len(versions))]
    newest = len(versions) - 1
    diffs: dict[int, str] = {}
    for i, version in enumerate(versions):
        if i in collapsed:
            continue
        if not _wants_diff(version) and not (i == newest and version.one_line_kind):  # the newest: always its lines
            detail[i] = "one line" if version.one_line_kind or version.oversize else "heading"
            continue
        # older: their changed lines only; a function named once for its hunks
        diff = lean_hunk_headers(version.diff(repo, DIFF_CONTEXT if i == newest else LEAN_CONTEXT))
        if began_recording(version.record) and diff.count("\n") > IMPORT_LINES_SHOWN:
            symbols = len(version.symbols.added) if version.symbols is not None else 0
            bodies[i] = (f"- The file as recording began: {diff.count(chr(10))} lines"
                         f"{f', {symbols} symbol(s)' if symbols else ''}, not shown (later versions show the edits; "
                         f"`git --git-dir=.trajectory show {shlex.quote(version.record.oid[:12] + ':' + version.entry.path)}` "
                         "prints it)")
            continue
        if not diff:
            bodies[i] = "(no textual diff: binary content or a pure rename)"
            continue
        diffs[i] = diff
    room = max(0, room)
    order = ([newest] if newest in diffs else []) + sorted(
        (k for k in diffs if k != newest), key=lambda k: (-importance(versions, k, len(diffs[k])), -k))
    for i in order:  # the newest first, whole whenever it fits at all; then the older ones by importance
        version, diff = versions[i], diffs[i]
        if len(diff) + 12 <= room:
            bodies[i], detail[i] = code_block(diff), "full"
        elif i == newest or room >= MIN_CUT_CHARS:  # part of the most important left, and room for smaller ones
            share = room if i == newest else max(MIN_CUT_CHARS, room // 2)
            bodies[i], detail[i] = code_block(cut_diff(diff, max(share - 12, 600), _cut_how(version))), "cut"
        elif version.symbols is None:  # no symbols: git's hunk headers say where the change was
            labels = hunk_labels(diff)
            line = "- Hunks in: " + ", ".join(f"`{label}`" for label in labels[:12]) if labels else ""
            if line and len(line) <= room:
                bodies[i], detail[i] = line, "hunks"
        room -= len(bodies[i])
    return bodies, detail


def _cut_how(version: Version) -> str:
    return (f"the whole diff: `git --git-dir=.trajectory show {version.record.oid[:12]} -- "
            f"{shlex.quote(version.entry.path)}`; one symbol's: get_symbol_trajectory")


def _left_out_note(path: str, versions: list[Version], elided: list[int]) -> str:
    """Which diffs were left out (only past the answer's budget), how many changed lines they hold, and the exact
    ``compare`` call and CLI command that show one (the most important one spelled out: its snapshot against its
    parent, where the file is as the version before left it)."""
    numbers = [versions[i].number for i in elided]
    lines = sum((versions[i].entry.change.added or 0) + (versions[i].entry.change.deleted or 0) for i in elided)
    top = versions[max(elided, key=lambda k: (importance(versions, k, 0), k))] if elided else versions[-1]
    record, where = top.record, top.entry.path
    before = record.parents[0][:12] if record.parents else "<id before>"
    return (f"_Diffs of version(s) {_ranges(numbers)} left out: their {lines} changed line(s) do not fit in this "
            f"answer's token budget (their headings name every changed symbol). Version {top.number}'s: "
            f"`compare(from_snapshot=\"{before}\", to_snapshot=\"{record.oid[:12]}\", filepath={json.dumps(where)})`, "
            f"CLI `code-trajectory compare {before} {record.oid[:12]} {cli_option('--file', where)}`; the others alike, "
            f"from the last id in the heading above each to its own; one symbol's changes: "
            f"`get_symbol_trajectory(filepath={json.dumps(path)}, symbol=...)`._")


def file_data(text: str, path: str, branch: str, versions: list[Version], total: int, left_out: list[int],
              spans: Sequence[tuple[int, int]] = ()) -> dict:
    """The structured content of a file's trajectory (see :mod:`code_trajectory.core.answer`): per version shown
    in ``text``, in its order, ``n`` (its number), ``id``, ``t``, ``kind`` (when not ``snapshot`` nor a named
    checkpoint), ``checkpoint`` (the checkpoint's name), ``name`` (the git operation), ``status`` (when not ``M``), ``+``/``-`` (lines), ``from`` (old path), ``path`` (when not
    ``path``), ``intent`` (when it changed, as the text), ``origin`` (who edited, as the heading
    says it: ``Claude Code (Edit)``, :func:`editor`), ``change`` (whitespace-,
    comment-, import-only...), ``symbols`` (the text's line: none for the first recorded state), ``revert_of``,
    ``tests``, ``not_stored`` and ``diff`` (as shown); ``left_out``: the version numbers whose diff the text left out. Versions that cancel out (``spans``:
    index ranges into ``versions``, said as one heading by the text) are one entry, as the text says them: ``n`` and
    ``to`` (the first and last number), ``id`` (the first) and ``ids`` (all, as shown), ``t`` (the first's),
    ``msg`` (the text's line: what they were, ``no net change``)."""
    entries, previous = [], None
    starts = {a: b for a, b in spans}
    inside = {k for a, b in spans for k in range(a, b + 1)}
    for index, version in enumerate(versions):
        if index in starts:
            group = versions[index:starts[index] + 1]
            entries.append({"n": group[0].number, "to": group[-1].number, "id": short(group[0].record.oid),
                            "ids": " ".join(short(v.record.oid) for v in group), "t": when(group[0].record.time),
                            "msg": net_zero_line([v.record for v in group])})
            continue
        if index in inside:
            continue
        record, change, symbols = version.record, version.entry.change, version.symbols
        entries.append({
            "n": version.number, "id": short(record.oid), "t": when(record.time),
            "kind": None if record.kind == "snapshot" or record.checkpoint_note else record.kind,
            "checkpoint": version.checkpoint, "name": record.git_operation,
            "status": None if change.status == "M" else change.status,
            "+": change.added or None, "-": change.deleted or None, "from": change.old_path and path_field(change.old_path),
            "path": None if version.entry.path == path else path_field(version.entry.path),
            "intent": record.intent if record.intent != previous else None,
            "origin": editor(version),
            "change": symbols.kind if symbols and symbols.kind not in ("code", "added", "removed") else None,
            # the first recorded state's symbols are not news: the text names none (see heading), nor does this
            "symbols": None if began_recording(record) and not version.one_line_kind else version.symbol_line(),
            "revert_of": version.revert_of and when(version.revert_of),
            "tests": tests_field(version.tests), "not_stored": version.oversize})
        previous = record.intent or previous
    entries = shown(text, entries)
    for entry, part in zip(entries, sections(text, [f"`{e['id']}`" for e in entries])):
        entry["diff"] = fenced(part)
    return {"path": path_field(path), "branch": branch, "total": total, "versions": entries, "left_out": left_out}


def tests_field(line: str | None) -> str | None:
    """A snapshot's test line without its ``tests: `` prefix (the field's name says it)."""
    return line.removeprefix("tests: ") if line else None


def _ranges(numbers: list[int]) -> str:
    """``1-3, 5`` for ``[1, 2, 3, 5]``; ``""`` for none."""
    if not numbers:
        return ""
    parts, start, prev = [], numbers[0], numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(parts)
