"""A file's trajectory as markdown within a token budget, spent newest version first.

Every shown version keeps its heading: time, snapshot id, change and +/- counts, the symbols that changed
(``modified Serializer.loads, added Serializer.iter_unsigners``), the intent when it changed, test runs and
reverts. Then the budget buys diffs, newest first: the newest versions keep their whole diff (cut hunk-wise
only when one diff alone exceeds what is left), older ones degrade to the git hunk headers (the enclosing
function of each hunk), then to the heading alone. So no version and no changed symbol is ever dropped, and
the answer says which diffs it left out and how to get them. Whitespace-, comment- and import-only changes
are said in one line.

Diffs are limited to :data:`DIFF_SHARE` of the budget (at most :data:`MAX_DIFF_TOKENS`) and to
:data:`HISTORY_SHARE` of the size of all the shown diffs: the point of the narrative is to say what changed in
fewer tokens than ``git log -p``, with the newest change whole (measured by ``bench/context.py``).
"""

from __future__ import annotations

from code_trajectory.core.answer import Answer, fenced, sections, short, shown, when
from code_trajectory.git.log import display_path
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.narrative import CHARS_PER_TOKEN, cut_diff, fit, fmt_time, hunk_labels
from code_trajectory.history.versions import Version

#: Share of the token budget that diffs may use; the rest is for the headings of every version.
DIFF_SHARE = 0.5
#: Most tokens of diffs in one answer, whatever the budget.
MAX_DIFF_TOKENS = 2500
#: Share of the size of all the shown versions' diffs that the answer's diffs may take (the newest is always whole),
#: so a short history is told in about half the tokens of ``git log -p`` too (``bench/context.py``).
HISTORY_SHARE = 0.35
#: Diffs up to this many tokens are always shown whole, whatever HISTORY_SHARE says (small histories).
MIN_DIFF_TOKENS = 600
#: An imported file (the state when recording began) is shown whole only up to this many lines.
IMPORT_LINES_SHOWN = 40

_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "type changed", "C": "copied"}


#: Display names of the clients whose hooks record origins.
CLIENT_NAMES = {"claude-code": "Claude Code"}


def who(version: Version, hooks_seen: bool) -> str:
    """`` · edited by Claude Code (Edit)`` for a hook's snapshot; `` · edited outside the agent`` for a watcher's
    snapshot of a file whose other changes came through hooks (so hooks were installed); else nothing."""
    origin = version.record.origin
    if origin:
        client = CLIENT_NAMES.get(origin["client"], origin["client"])
        return f" · edited by {client}" + (f" ({origin['tool']})" if origin.get("tool") else "")
    if hooks_seen and version.record.kind in ("snapshot", "reconcile"):
        return " · edited outside the agent"
    return ""


def heading(version: Version, previous_intent: str | None, hooks_seen: bool = False) -> list[str]:
    """The lines every shown version keeps, whatever the budget."""
    record, change = version.record, version.entry.change
    what = _STATUS.get(change.status, change.status)
    if change.old_path:
        what += f" from `{display_path(change.old_path)}`"
    counts = change.counts()
    kind = ""
    if record.is_git_operation:
        kind = f" · {record.subject.split(' - ')[0].split('] ')[0]}] by git"
    elif record.is_import:
        kind = " · as recording began"
    elif record.is_consolidation:
        kind = " · consolidation"
    elif record.kind == "checkpoint":
        kind = f" · checkpoint{': ' + record.checkpoint_note if record.checkpoint_note else ''}"
    elif record.kind == "restore":
        kind = " · restore"
    lines = [f"## {version.number}. {fmt_time(record.time)} · `{record.oid[:12]}` · {what}"
             f"{' ' + counts if counts else ''}{kind}{who(version, hooks_seen)}"]
    if record.intent and record.intent != previous_intent:
        lines.append(f"- Intent: {record.intent}")
    symbols = version.symbol_line()
    if version.oversize:
        lines.append(f"- Content {version.oversize}")
    elif version.one_line_kind:
        lines.append(f"- {version.one_line_kind[0].upper()}{version.one_line_kind[1:]}"
                     f"{': ' + symbols if symbols and version.symbols and symbols != version.symbols.kind else ''}")
    elif symbols:
        lines.append(f"- Symbols: {symbols}")
    if version.revert_of is not None:
        lines.append(f"- **[Revert Detected]** (Matches state from {fmt_time(version.revert_of)})")
    if version.tests:
        lines.append(f"- {version.tests}")
    return lines


def _wants_diff(version: Version) -> bool:
    return not (version.oversize or version.one_line_kind or version.entry.change.status == "D")


def render(repo: ShadowRepo, path: str, branch: str, versions: list[Version], total: int, budget_tokens: int, *,
           state_note: str | None = None, symbols_available: bool = True) -> Answer:
    """Render ``versions`` (oldest first) of ``path`` within ``budget_tokens``; newest diffs first.

    Args:
        repo: the shadow repository (diffs are read from it as they are shown).
        path: the file, relative to the project root.
        branch: the shadow branch read.
        versions: the versions to show, oldest first (see :func:`code_trajectory.history.versions.build`).
        total: how many versions the file has in all.
        budget_tokens: the answer's budget (4 characters a token).
        state_note: a sentence about the file's state now (deleted, followed across renames).
        symbols_available: False when the file's language has no symbol support (said once).

    Returns:
        The markdown and its data: every shown version's commit, time, change, counts, symbols, detail level.
    """
    head = [f"# Trajectory of `{display_path(path)}`",
            f"Shadow branch `{branch}`: the last {len(versions)} of {total} recorded change(s) to this file, "
            "oldest to newest."]
    if state_note:
        head.append(state_note)
    if not symbols_available:
        head.append("(No symbol support for this file type: hunks are labelled with git's function headers.)")
    headings, previous = [], None
    hooks_seen = any(v.record.origin for v in versions)
    for version in versions:
        headings.append("\n".join(heading(version, previous, hooks_seen)))
        previous = version.record.intent or previous
    budget = budget_tokens * CHARS_PER_TOKEN
    fixed = sum(len(h) for h in head) + sum(len(h) + 12 for h in headings) + 400
    room = max(0, min(budget - fixed, int(budget * DIFF_SHARE), MAX_DIFF_TOKENS * CHARS_PER_TOKEN))
    # diffs also stay within HISTORY_SHARE of what all the shown diffs would take (but the newest is whole)
    sizes = [len(v.diff(repo)) + 12 for v in versions if _wants_diff(v)]
    if sizes:
        room = min(room, max(int(sum(sizes) * HISTORY_SHARE), len(versions[-1].diff(repo)) + 12,
                             MIN_DIFF_TOKENS * CHARS_PER_TOKEN))
    bodies: list[str] = [""] * len(versions)
    detail = ["heading"] * len(versions)
    for i in range(len(versions) - 1, -1, -1):  # newest first
        version = versions[i]
        newest = i == len(versions) - 1
        if not _wants_diff(version) and not (newest and version.one_line_kind):  # the newest: always its lines
            detail[i] = "one line" if version.one_line_kind or version.oversize else "heading"
            continue
        diff = version.diff(repo)
        if version.record.is_import and diff.count("\n") > IMPORT_LINES_SHOWN:
            bodies[i] = (f"(the file as it was when recording began, {diff.count(chr(10))} lines: not shown; later "
                         "versions show the edits)")
            detail[i] = "heading"
            continue
        if not diff:
            bodies[i] = "(no textual diff: binary content or a pure rename)"
            continue
        block = len(diff) + 12
        if block <= room or i == len(versions) - 1:
            if block > room:  # the newest diff alone is too big: as much as fits, hunk by hunk
                how = (f"call get_symbol_trajectory for one symbol's diff, or run `git --git-dir=.trajectory show "
                       f"{version.record.oid[:12]} -- '{version.entry.path}'`")
                diff = cut_diff(diff, max(room - 12, 400), how)
            bodies[i] = f"```diff\n{diff}\n```"
            detail[i] = "full"
            room -= len(bodies[i])
            continue
        if version.symbols is None:  # no symbols: git's hunk headers say where the change was
            labels = hunk_labels(diff)
            line = "- Hunks in: " + ", ".join(f"`{label}`" for label in labels[:12]) if labels else ""
            if line and len(line) <= room:
                bodies[i] = line
                detail[i] = "hunks"
                room -= len(line)
    out = ["\n".join(head)]
    for text, body in zip(headings, bodies):
        out.append(f"{text}\n\n{body}" if body.startswith("```") else f"{text}\n{body}" if body else text)
    elided = [v.number for v, d in zip(versions, detail) if d in ("heading", "hunks") and _wants_diff(v)]
    if elided:
        out.append(f"_Diffs of version(s) {_ranges(elided)} left out to keep this answer short (their headings "
                   "name every changed symbol). For them: get_file_trajectory with a smaller depth, "
                   "get_symbol_trajectory(filepath, symbol) for one symbol's changes, or `git --git-dir=.trajectory "
                   "show <id> -- <path>`._")
    text = fit("\n\n".join(out), budget_tokens)
    return Answer(text, file_data(text, path, branch, versions, total, elided))


def file_data(text: str, path: str, branch: str, versions: list[Version], total: int, left_out: list[int]) -> dict:
    """The structured content of a file's trajectory (see :mod:`code_trajectory.core.answer`): per version shown
    in ``text``, in its order, ``n`` (its number), ``id``, ``t``, ``kind`` (when not ``snapshot`` nor a named
    checkpoint), ``checkpoint`` (the checkpoint's name), ``name`` (the git operation), ``status`` (when not ``M``), ``+``/``-`` (lines), ``from`` (old path), ``path`` (when not
    ``path``), ``intent`` (when it changed, as the text), ``origin`` (client, tool), ``change`` (whitespace-,
    comment-, import-only...), ``symbols`` (the text's line), ``revert_of``, ``tests``, ``not_stored`` and ``diff``
    (as shown); ``left_out``: the version numbers whose diff the text left out."""
    entries, previous = [], None
    for version in versions:
        record, change, symbols = version.record, version.entry.change, version.symbols
        origin = record.origin
        entries.append({
            "n": version.number, "id": short(record.oid), "t": when(record.time),
            "kind": None if record.kind == "snapshot" or record.checkpoint_note else record.kind,
            "checkpoint": record.checkpoint_note, "name": record.git_operation,
            "status": None if change.status == "M" else change.status,
            "+": change.added or None, "-": change.deleted or None, "from": change.old_path,
            "path": None if version.entry.path == path else version.entry.path,
            "intent": record.intent if record.intent != previous else None,
            "origin": origin and {k: v for k, v in origin.items() if k in ("client", "tool")},
            "change": symbols.kind if symbols and symbols.kind not in ("code", "added", "removed") else None,
            "symbols": version.symbol_line(), "revert_of": version.revert_of and when(version.revert_of),
            "tests": tests_field(version.tests), "not_stored": version.oversize})
        previous = record.intent or previous
    entries = shown(text, entries)
    for entry, part in zip(entries, sections(text, [f"`{e['id']}`" for e in entries])):
        entry["diff"] = fenced(part)
    return {"path": path, "branch": branch, "total": total, "versions": entries, "left_out": left_out}


def tests_field(line: str | None) -> str | None:
    """A snapshot's test line without its ``tests: `` prefix (the field's name says it)."""
    return line.removeprefix("tests: ") if line else None


def _ranges(numbers: list[int]) -> str:
    """``1-3, 5`` for ``[1, 2, 3, 5]``."""
    parts, start, prev = [], numbers[0], numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(parts)
