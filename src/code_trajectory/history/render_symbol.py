"""The text and structured content of one symbol's trajectory (:func:`render`, :func:`symbol_data`), from the
versions :func:`code_trajectory.history.symbol_history.trace` found; each heading says why (:func:`why`, the
checkpoint's name from :func:`named_points`). Issue 28's leanness rules for it are stated in
:mod:`code_trajectory.history.symbol_history`.
"""

from __future__ import annotations

import re

from code_trajectory.core.answer import Answer, fenced, sections, short, shown, when
from code_trajectory.git import log, points
from code_trajectory.git.messages import one_line
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.headings import REPEATED_INTENT_CHARS
from code_trajectory.history.narrative import CHARS_PER_TOKEN, fit, fmt_time
from code_trajectory.history.symbol_history import SymbolVersion
from code_trajectory.symbols import readable


def why(record: log.CommitRecord, names: dict[str, list[str]]) -> tuple[str, str | None]:
    """Why a snapshot was taken, for a heading: ``(label, intent)``.

    ``label`` is `` · checkpoint: <name>`` (the checkpoint's own name, else the named points on the snapshot), or
    `` · [CHECKOUT] … by git`` for a git operation, or `` · restore`` / `` · consolidation``, else empty;
    ``intent`` is the snapshot's intent or None. ``names``: named points by commit (:func:`named_points`).
    """
    label = ""
    named = [record.checkpoint_note] if record.checkpoint_note else names.get(record.oid, [])
    if named:
        label = f" · checkpoint: {'; '.join(dict.fromkeys(named))}"
    elif record.is_git_operation:
        label = f" · {record.subject.split(' - ')[0]} by git"
    elif record.kind == "restore":
        label = " · restore"
    elif record.is_consolidation:
        label = " · consolidation"
    return label, record.intent


#: The name :func:`code_trajectory.git.points.name_point` gives a checkpoint called without a message: it says no why.
_DEFAULT_POINT_NAME = re.compile(r"checkpoint \d\d:\d\d:\d\d")


def named_points(repo: ShadowRepo) -> dict[str, list[str]]:
    """The names of the named points (checkpoints) by the commit they name, oldest first (default names left out)."""
    found: dict[str, list[str]] = {}
    for point in reversed(points.points(repo)):
        if not _DEFAULT_POINT_NAME.fullmatch(point.message):
            found.setdefault(point.commit, []).append(point.message)
    return found


def render(path: str, branch: str, name: str, versions: list[SymbolVersion], budget_tokens: int,
           names: dict[str, list[str]] | None = None) -> Answer:
    """Markdown of a symbol's versions, oldest first; the oldest diffs are dropped first to fit the budget.

    ``names``: named points by commit (:func:`named_points`), said in the headings of snapshots without a
    checkpoint name of their own.
    """
    shown = f"`{name}`" if readable(name) == name else f"the {readable(name, quote=True)} (`{name}`)"
    head = f"# Trajectory of {shown} in `{path}`\nShadow branch `{branch}`: {len(versions)} change(s), oldest first."
    blocks = []
    previous_intent, previous_day = None, None
    for version in reversed(versions):
        record = version.entry.record
        label, intent = why(record, names or {})
        what = f"{version.what} ({version.note})" if version.note else version.what
        stamp = fmt_time(record.time)
        day, clock = stamp.split(" ", 1)
        line = f"## {clock if day == previous_day else stamp} · `{record.oid[:12]}` · {what}{label}"
        previous_day = day
        if version.entry.path != path:
            line += f" (in `{version.entry.path}`)"
        if intent:  # a repeated intent is shortened, as in every heading (history.headings.why)
            line += f" · Intent: {one_line(intent, REPEATED_INTENT_CHARS) if intent == previous_intent else intent}"
        previous_intent = intent or previous_intent
        if version.diff:
            body = f"```diff\n{version.diff}\n```"
        elif version.what == "as first recorded" or version.note == "body unchanged":
            body = ""
        else:
            body = "(no textual change of its own)"
        blocks.append((line, body))
    limit = budget_tokens * CHARS_PER_TOKEN - len(head) - 300
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
    if cut:
        text += f"\n\n_{cut} older diff(s) left out to fit the budget; call with a smaller depth._"
    text = fit(text, budget_tokens)
    return Answer(text, symbol_data(text, path, branch, name, versions))


def symbol_data(text: str, path: str, branch: str, name: str, versions: list[SymbolVersion]) -> dict:
    """The structured content of a symbol's trajectory (see :mod:`code_trajectory.core.answer`): ``path``,
    ``symbol``, ``branch`` and the ``versions`` shown, oldest first as the text: ``id``, ``t``, ``what`` (what
    happened to the symbol), ``name`` and ``path`` (when not the symbol's, or ``path``), ``intent`` (when it changed) and ``diff``
    (as shown; absent when the text left it out)."""
    entries, previous = [], None
    for v in reversed(versions):
        record = v.entry.record
        entries.append({"id": short(record.oid), "t": when(record.time), "what": v.what,
                        "name": None if v.name == name else v.name,
                        "path": None if v.entry.path == path else v.entry.path,
                        "intent": record.intent if record.intent != previous else None})
        previous = record.intent or previous
    entries = shown(text, entries)
    for entry, part in zip(entries, sections(text, [f"`{e['id']}`" for e in entries])):
        entry["diff"] = fenced(part)
    return {"path": path, "symbol": name, "branch": branch, "versions": entries}
