"""The text and structured content of one symbol's trajectory (:func:`render`, :func:`symbol_data`), from the
versions :func:`code_trajectory.history.symbol_history.trace` found; each heading says why (:func:`why`, the
checkpoint's name from :func:`named_points`). Issue 28's leanness rules for it are stated in
:mod:`code_trajectory.history.symbol_history`; the newest :data:`DEFAULT_DIFFS` changes keep their lines and each
older one is compacted to its heading (:func:`changed_summary`), as the lead decided for issue 28: a symbol's
question is why it changed (every change's why) and what it was before its last change (the newest change's lines).
Git operations (and restores) that cancel out — a ``git stash`` and its ``pop`` — are one line, found and said as
the file's trajectory finds and says them (:func:`code_trajectory.history.headings.file_spans`).
"""

from __future__ import annotations

import json

from code_trajectory.core.answer import Answer, code_block, fenced, sections, short, table
from code_trajectory.core.text import cli_operands, path_field
from code_trajectory.git import log, points
from code_trajectory.git.diffs import HUNK_HEADER
from code_trajectory.git.messages import display_path, one_line
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import fields
from code_trajectory.history.headings import REPEATED_INTENT_CHARS, file_spans, net_zero_line, operation_label
from code_trajectory.history.narrative import CHARS_PER_TOKEN, day_once, fit
from code_trajectory.history.symbol_history import BASELINE, SymbolVersion
from code_trajectory.symbols import readable

#: Changes of a symbol's history shown with their lines by default (the newest ones; the newest whole): older ones
#: are one line each (:func:`changed_summary`). Chosen by ``bench/answers.py`` (issue 28): the largest number for
#: which the symbol histories of click, ky and cobra each stay 3x leaner than ``git log -L``.
DEFAULT_DIFFS = 1


def why(record: log.CommitRecord, names: dict[str, list[str]]) -> tuple[str, str | None]:
    """Why a snapshot was taken, for a heading: ``(label, intent)``.

    ``label`` is `` · checkpoint: <name>`` (the checkpoint's own name, else the named points on the snapshot), or
    `` · [CHECKOUT] feature → main by git`` for a git operation (named by
    :func:`~code_trajectory.history.headings.operation_label`, as the file's trajectory names it), or `` · restore`` /
    `` · consolidation``, else empty;
    ``intent`` is the snapshot's intent or None. ``names``: named points by commit (:func:`named_points`).
    """
    label = ""
    named = checkpoint_name(record, names)
    if record.kind == "restore":  # before its names: a safety snapshot's point may land on a restore (no change)
        label = " · restore" + (f" · checkpoint: {named}" if named else "")
    elif named:
        label = f" · checkpoint: {named}"
    elif record.is_git_operation:
        label = f" · {operation_label(record)} by git"  # as the file's trajectory names it
    elif record.is_consolidation:
        label = " · consolidation"
    return label, record.intent


def checkpoint_name(record: log.CommitRecord, names: dict[str, list[str]]) -> str | None:
    """The checkpoint name a heading gives a snapshot (:func:`why`): its own, else the names of the points on it
    (``; `` between them), else None."""
    named = [record.checkpoint_note] if record.checkpoint_note else names.get(record.oid, [])
    return "; ".join(dict.fromkeys(named)) or None


def named_points(repo: ShadowRepo) -> dict[str, list[str]]:
    """The names the user gave points (checkpoints) by the commit they name, oldest first: automatic names (a
    restore's safety snapshot, a turn's end, a checkpoint without a message: :attr:`~code_trajectory.git.points.Point.automatic`,
    told by their mark or their name's pattern) are left out, they say no why."""
    found: dict[str, list[str]] = {}
    for point in reversed(points.points(repo)):
        if point.automatic is None:
            found.setdefault(point.commit, []).append(point.message)
    return found


def render(path: str, branch: str, name: str, versions: list[SymbolVersion], budget_tokens: int,
           names: dict[str, list[str]] | None = None, diffs: int = DEFAULT_DIFFS, *,
           others: list[str] | None = None, older_depth: int | None = None) -> Answer:
    """Markdown of a symbol's versions, oldest first.

    Every change keeps its heading: when, the snapshot, what happened, why (intent or checkpoint name). The newest
    ``diffs`` changes with lines keep them (the newest whole, with context); each older one is compacted to its
    heading with a short what (:func:`changed_summary`: ``+3 -1, lines 41-52``), and a closing line gives the
    call that shows their lines. The oldest diffs shown are then dropped first to fit ``budget_tokens``.

    ``names``: named points by commit (:func:`named_points`), said in the headings of snapshots without a
    checkpoint name of their own. ``versions``: newest first, as :func:`~code_trajectory.history.symbol_history.trace`
    gives them. ``others``: the other definitions of that name in the file (``init@2`` beside ``init``), said.
    ``older_depth``: the walk stopped at its depth with older versions of the file left: the head says these are the
    newest changes only and gives the call with this depth.

    A run of git operations and restores after which the file is as before them (:func:`~code_trajectory.history.
    headings.file_spans`: a stash and its pop) is one heading, ``[STASH] …, then [STASH] …: back to where it was,
    no net change``, as in the file's trajectory; it shows no lines and takes none of the ``diffs``.
    """
    shown = f"`{name}`" if readable(name) == name else f"the {readable(name, quote=True)} (`{name}`)"
    changes = sum(1 for v in versions if v.what != BASELINE)  # the baseline is no change
    head = (f"# Trajectory of {shown} in `{display_path(path)}`\nShadow branch `{branch}`: {changes} change(s)"
            + (" since it was first recorded" if changes < len(versions) else "") + ", oldest first.")
    if older_depth is not None:
        head = (f"# Trajectory of {shown} in `{display_path(path)}`\nShadow branch `{branch}`: the newest "
                f"{len(versions)} change(s), oldest first; older ones were not read: depth={older_depth} "
                f"(CLI `--depth {older_depth}`) goes further back.")
    if others:
        head += (f"\n`{name}` is the first of {len(others) + 1} definitions of that name in this file: "
                 + ", ".join(f"`{other}`" for other in others) + (" names" if len(others) == 1 else " name")
                 + " the next.")
    starts, folded = _folded(versions)
    kept = _kept(versions, diffs, folded)
    blocks = []
    rows: list[dict[str, str | None]] = []  # each heading's parts, for the structured content (symbol_data)
    compacted_count = 0
    previous_intent, previous_day = None, None
    for index, version in reversed(list(enumerate(versions))):
        record = version.entry.record
        if index in folded:  # said once, at the run's oldest version
            if index in starts:
                stamp, previous_day = day_once(record.time, previous_day)
                ids = " ".join(short(v.entry.record.oid) for v in starts[index])
                line = net_zero_line([v.entry.record for v in starts[index]])
                blocks.append((f"## {stamp} · {' '.join(f'`{i}`' for i in ids.split())} · {line}", ""))
                rows.append({"t": stamp, "id": ids, "what": line})
            continue
        label, intent = why(record, names or {})
        what = f"{version.what} ({version.note})" if version.note else version.what
        where = f" (in `{display_path(version.entry.path)}`)" if version.entry.path != path else ""
        said = ""
        if intent:  # a repeated intent is shortened, as in every heading (history.headings.why)
            said = f" · Intent: {one_line(intent, REPEATED_INTENT_CHARS) if intent == previous_intent else intent}"
        previous_intent = intent or previous_intent
        compacted = version.diff and index not in kept
        summary = changed_summary(version.diff) if compacted else None
        stamp, previous_day = day_once(record.time, previous_day)
        line = f"## {stamp} · `{short(record.oid)}` · {what}{label}{where}{said}"
        if compacted:  # one line: its lines in a few characters, at the end (what happened and why come first)
            line += f" · {summary}"
            body = ""
            compacted_count += 1
        elif version.diff:
            body = code_block(version.diff)
        elif version.what == BASELINE or version.note == "body unchanged":
            body = ""
        else:
            body = "(no textual change of its own)"
        blocks.append((line, body))
        rows.append({"t": stamp, "id": short(record.oid),
                     "what": (version.what if version.what == BASELINE else what) + where,  # a baseline's size: text
                     "why": (label + said).removeprefix(" · ") or None, "lines": summary})
    call = _call(path, name, sum(1 for i, v in enumerate(versions)
                                 if v.diff and v.what != BASELINE and i not in folded))
    closing = (f"_{compacted_count} older change(s) shown as one line each (+added -removed, where). Their lines: "
               f"`{call[0]}` (CLI: `{call[1]}`)._") if compacted_count else ""
    limit = budget_tokens * CHARS_PER_TOKEN - len(head) - len(closing) - 300
    out, used, cut = [], sum(len(h) for h, _ in blocks), 0
    for heading, body in reversed(blocks):  # newest first keep their diffs
        if not body:
            out.append(heading)
        elif used + len(body) <= limit:
            out.append(f"{heading}\n{body}")
            used += len(body)
        else:
            out.append(heading)
            cut += 1
    text = "\n\n".join([head, *reversed(out)])
    if closing:
        text += f"\n\n{closing}"
    if cut:
        text += f"\n\n_{cut} older diff(s) left out to fit the budget; call with a smaller depth or diffs._"
    text = fit(text, budget_tokens)
    data = symbol_data(text, path, branch, name, rows)
    if older_depth is not None:
        data["older_depth"] = older_depth
    if compacted_count:
        data["compacted"] = {"n": compacted_count, "call": call[0]}
    return Answer(text, data)


def _folded(versions: list[SymbolVersion]) -> tuple[dict[int, list[SymbolVersion]], set[int]]:
    """The runs of ``versions`` (newest first) that cancel out (:func:`~code_trajectory.history.headings.file_spans`):
    ``({index of a run's oldest version: the run, oldest first}, the indexes of every version in a run)``."""
    last = len(versions) - 1
    starts: dict[int, list[SymbolVersion]] = {}
    inside: set[int] = set()
    for first, end in file_spans([v.entry for v in reversed(versions)]):
        starts[last - first] = [versions[last - k] for k in range(first, end + 1)]
        inside.update(last - k for k in range(first, end + 1))
    return starts, inside


def _kept(versions: list[SymbolVersion], diffs: int, folded: set[int]) -> set[int]:
    """The indexes (in ``versions``, newest first) of the newest ``diffs`` changes that have lines, those in a run
    that cancels out (``folded``) aside, and of the baseline when it has them (its body, asked for with
    ``show_baseline``)."""
    with_lines = [i for i, v in enumerate(versions) if v.diff and i not in folded]
    asked = {i for i, v in enumerate(versions) if v.what == BASELINE}  # a baseline's body: show_baseline
    return set(with_lines[:max(diffs, 0)]) | asked


def changed_summary(diff: str) -> str:
    """A change's lines in a few characters: ``+3 -1, lines 41-52`` (lines added and removed, and the lines of the
    newer file they span; a removal alone is placed by the older file's: ``-4, lines 12-15 before``)."""
    added = removed = 0
    new_lines: list[int] = []
    old_lines: list[int] = []
    old = new = 0
    for line in diff.split("\n"):
        match = HUNK_HEADER.match(line)
        if match:
            old, new = int(match.group(1)), int(match.group(3))
            if match.group(4) == "0":  # nothing on the newer side: git places it after line `new`
                new += 1
            if match.group(2) == "0":
                old += 1
        elif line.startswith("+"):
            added += 1
            new_lines.append(new)
            new += 1
        elif line.startswith("-"):
            removed += 1
            old_lines.append(old)
            new_lines.append(new)
            old += 1
        elif line.startswith(" "):
            old, new = old + 1, new + 1
    counts = " ".join(part for part in (f"+{added}" if added else "", f"-{removed}" if removed else "") if part)
    where, suffix = (new_lines, "") if added else (old_lines, " before")
    if not where:
        return counts or "no lines"
    first, last = min(where), max(where)
    span = f"line {first}" if first == last else f"lines {first}-{last}"
    return f"{counts}, {span}{suffix}"


def _call(path: str, name: str, diffs: int) -> tuple[str, str]:
    """The MCP call and the CLI command that show a symbol's history with ``diffs`` changes' lines."""
    return (f"get_symbol_trajectory(filepath={json.dumps(path)}, symbol={json.dumps(name)}, diffs={diffs})",
            f"code-trajectory symbol --diffs {diffs} {cli_operands([path, name])}")


#: Columns of a version's row in a symbol's structured content (:func:`symbol_data`).
SYMBOL_COLUMNS = ["t", "id", "what", "lines", "why", "diff"]


def symbol_data(text: str, path: str, branch: str, name: str, rows: list[dict[str, str | None]]) -> dict:
    """The structured content of a symbol's trajectory (see :mod:`code_trajectory.core.answer`): ``path``,
    ``symbol``, ``branch``, and ``versions``: the versions shown, oldest first as the text, each a row of ``cols``
    (:data:`SYMBOL_COLUMNS`, as :func:`~code_trajectory.core.answer.table` makes them: None where a version has no
    such value, ``cols`` only as long as the longest row), its heading's parts as the heading says them:

    * ``t``: the time (its day said once, by the first row of each day);
    * ``id``: the snapshot id; for a run that cancels out (a stash and its pop), every id of the run, space-separated;
    * ``what``: what happened to the symbol (``modified``, ``moved from util.py (body unchanged)``, ``renamed from
      App.run``; `` (in `old.py`)`` when the version was in another file; a run's line, ``… no net change``);
    * ``lines``: for an older change compacted to one line, its lines in a few characters
      (:func:`changed_summary`);
    * ``why``: the checkpoint's name (``checkpoint: <name>``: its own, else those of the named points on it), or
      ``restore``, ``consolidation``, ``[CHECKOUT] feature → main by git``, then ``Intent: <intent>`` (shortened with
      ``…`` when the previous heading said it), `` · `` between them;
    * ``diff``: the diff as shown (absent when the text left it out).

    ``rows``: each heading's parts by column name, oldest first (:func:`render` makes them with the headings). Rows
    rather than an object a version: the keys repeated on every version made the content larger than the text of a
    dozen versions with long checkpoint names, and the size rule then left out the oldest. ``lines`` comes before
    ``why`` (the heading says it last) so that a version without a why (no checkpoint name, no intent) ends its
    row rather than holding a ``null`` (a row is then no longer than its heading; a shown diff's fence pays for the
    ``null`` before it)."""
    ids = [str(row["id"]).split(" ", 1)[0] for row in rows]
    entries = [dict(row) for row, first in zip(rows, ids) if f"`{first}`" in text]  # a budget cut shows fewer
    for entry, part in zip(entries, sections(text, [f"`{str(e['id']).split(' ', 1)[0]}`" for e in entries])):
        entry["diff"] = fenced(part)
    cols, table_rows = table(entries, SYMBOL_COLUMNS)
    data = {"path": path_field(path), "symbol": name, "branch": branch, "cols": cols, "versions": table_rows}
    # never measured over its text, but if it were: the oldest rows go, not (the size rule's last resort, which
    # knows no row order) the newest
    return fields.rows_within_text(text, data, "versions", "versions_left_out") if table_rows else data
