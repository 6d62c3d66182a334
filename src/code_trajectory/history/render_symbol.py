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
import shlex

from code_trajectory.core.answer import Answer, code_block, fenced, sections, short, shown, when
from code_trajectory.git import log, messages, points
from code_trajectory.git.diffs import HUNK_HEADER
from code_trajectory.git.messages import one_line
from code_trajectory.git.shadow import ShadowRepo
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
    head = (f"# Trajectory of {shown} in `{path}`\nShadow branch `{branch}`: {changes} change(s)"
            + (" since it was first recorded" if changes < len(versions) else "") + ", oldest first.")
    if older_depth is not None:
        head = (f"# Trajectory of {shown} in `{path}`\nShadow branch `{branch}`: the newest {len(versions)} "
                f"change(s), oldest first; older ones were not read: depth={older_depth} "
                f"(CLI `--depth {older_depth}`) goes further back.")
    if others:
        head += (f"\n`{name}` is the first of {len(others) + 1} definitions of that name in this file: "
                 + ", ".join(f"`{other}`" for other in others) + (" names" if len(others) == 1 else " name")
                 + " the next.")
    starts, folded = _folded(versions)
    kept = _kept(versions, diffs, folded)
    blocks = []
    compacted_count = 0
    previous_intent, previous_day = None, None
    for index, version in reversed(list(enumerate(versions))):
        record = version.entry.record
        if index in folded:  # said once, at the run's oldest version
            if index in starts:
                stamp, previous_day = day_once(record.time, previous_day)
                blocks.append((f"## {stamp} · {' '.join(f'`{v.entry.record.oid[:12]}`' for v in starts[index])} · "
                               f"{net_zero_line([v.entry.record for v in starts[index]])}", ""))
            continue
        label, intent = why(record, names or {})
        what = f"{version.what} ({version.note})" if version.note else version.what
        compacted = version.diff and index not in kept
        stamp, previous_day = day_once(record.time, previous_day)
        line = f"## {stamp} · `{record.oid[:12]}` · {what}{label}"
        if version.entry.path != path:
            line += f" (in `{version.entry.path}`)"
        if intent:  # a repeated intent is shortened, as in every heading (history.headings.why)
            line += f" · Intent: {one_line(intent, REPEATED_INTENT_CHARS) if intent == previous_intent else intent}"
        previous_intent = intent or previous_intent
        if compacted:  # one line: its lines in a few characters, at the end (what happened and why come first)
            line += f" · {changed_summary(version.diff)}"
            body = ""
            compacted_count += 1
        elif version.diff:
            body = code_block(version.diff)
        elif version.what == BASELINE or version.note == "body unchanged":
            body = ""
        else:
            body = "(no textual change of its own)"
        blocks.append((line, body))
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
    data = symbol_data(text, path, branch, name, versions, kept, starts, names or {})
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
            f"code-trajectory symbol {shlex.quote(path)} {shlex.quote(name)} --diffs {diffs}")


#: Kinds of snapshot a symbol's heading says (:func:`why`): the others are said by their checkpoint name or intent.
_KINDS_SAID = (messages.KIND_RESTORE, messages.KIND_CONSOLIDATE, messages.KIND_GIT)


def symbol_data(text: str, path: str, branch: str, name: str, versions: list[SymbolVersion],
                kept: set[int] | None = None, runs: dict[int, list[SymbolVersion]] | None = None,
                names: dict[str, list[str]] | None = None) -> dict:
    """The structured content of a symbol's trajectory (see :mod:`code_trajectory.core.answer`): ``path``,
    ``symbol``, ``branch`` and the ``versions`` shown, oldest first as the text: ``id``, ``t``, ``what`` (what
    happened to the symbol), ``note`` (what the heading adds to it, ``body unchanged``; a baseline's size is the
    text's alone), why as the heading says it: ``kind`` (``restore``, ``consolidate`` or ``git``), ``checkpoint``
    (its own name, else those of the points on it in ``names``, :func:`named_points`) and ``operation`` (a git
    operation's: ``checkout``, ``stash``...), ``name`` and ``path`` (when not the symbol's, or ``path``),
    ``intent`` (when it changed), ``diff`` (as shown; absent when the text left it out) and, for an older change
    compacted to one line (its index, newest first, not in ``kept``; None: none is), ``lines``
    (:func:`changed_summary`). A run that cancels out (``runs``: :func:`_folded`'s first answer) is one entry, as
    the text says it: ``id`` and ``t`` (its oldest version's), ``ids`` (all, as shown) and ``what`` (the text's
    line: what they were, ``no net change``)."""
    entries: list[dict[str, str | None]] = []
    previous = None
    runs = runs or {}
    inside = {index - k for index, run in runs.items() for k in range(len(run))}
    for index, v in reversed(list(enumerate(versions))):
        record = v.entry.record
        if index in runs:
            run = runs[index]
            entries.append({"id": short(record.oid), "t": when(record.time),
                            "ids": " ".join(short(r.entry.record.oid) for r in run),
                            "what": net_zero_line([r.entry.record for r in run])})
            continue
        if index in inside:
            continue
        compacted = kept is not None and v.diff and index not in kept
        entries.append({"id": short(record.oid), "t": when(record.time), "what": v.what,
                        "note": v.note if v.note and v.what != BASELINE else None,
                        "kind": record.kind if record.kind in _KINDS_SAID else None,
                        "checkpoint": checkpoint_name(record, names or {}), "operation": record.git_operation,
                        "name": None if v.name == name else v.name,
                        "path": None if v.entry.path == path else v.entry.path,
                        "intent": record.intent if record.intent != previous else None,
                        "lines": changed_summary(v.diff) if compacted else None})
        previous = record.intent or previous
    entries = shown(text, entries)
    for entry, part in zip(entries, sections(text, [f"`{e['id']}`" for e in entries])):
        entry["diff"] = fenced(part)
    return {"path": path, "symbol": name, "branch": branch, "versions": entries}
