"""One symbol's trajectory: the versions in which a function, class or method changed, each with only its own diff.

A version counts when the symbol's code, its docstring or doc comment, or a comment in it changed. Its own lines
include the doc comment directly above it (JSDoc, Javadoc, Go). The version where the symbol first appears in the
file's first recorded version is its baseline, not an addition (it existed before, or came with its file): it is
said in one line (size, first line) unless asked for its body. Each heading says why: the snapshot's intent, the
checkpoint's name (or a named point on the snapshot), or the git operation.

The symbol is followed backwards from the newest version: across renames inside the file (a removed and an
added symbol with the same body, see :mod:`code_trajectory.symbols`) and, where it is detectable, across a
move to another file in the same snapshot (it was added here while a symbol with the same body was removed
from another file of that snapshot): then its history continues in that file.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from code_trajectory.core.answer import Answer, fenced, sections, short, shown, when
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import log, points
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.history.narrative import CHARS_PER_TOKEN, fit, fmt_time
from code_trajectory.history.versions import symbol_changes
from code_trajectory.symbols import Symbol, closest_names, find, language_for, readable, symbols_for_blob
from code_trajectory.symbols.comments import describe_comments, documented_start

#: Context lines around the changes of a symbol's own diff.
SYMBOL_DIFF_CONTEXT = 2
#: Moves to another file followed at most (a guard against pathological histories).
MAX_MOVES = 10


@dataclass
class SymbolVersion:
    """One version in which the symbol changed: what happened and its own diff.

    Attributes:
        entry: the commit and the file's change in it.
        name: the symbol's qualified name in that version.
        what: ``modified``, ``docstring changed``, ``renamed from X``, ``added``, ``as first recorded`` ...
        diff: the unified diff of its own lines (empty for a baseline not asked for).
        note: what the heading adds to ``what`` (a baseline's size and first line: ``when recording began: 73
            lines, starts at line 12``).
    """

    entry: log.FileVersion
    name: str
    what: str
    diff: str
    note: str = ""


def _load(repo: ShadowRepo):
    def load(oid: str) -> bytes | None:
        found = repo.read_object(oid)
        return found[1] if found is not None and found[0] == "blob" else None

    return load


def _symbols(repo: ShadowRepo, oid: str, path: str) -> list[Symbol]:
    if not oid or oid == ZERO_OID:
        return []
    load = _load(repo)
    return symbols_for_blob(oid, path, lambda: load(oid)) or []


def _text_of(repo: ShadowRepo, oid: str, symbol: Symbol | None) -> tuple[int, list[str]]:
    """The symbol's first line (its doc comment's, when one is directly above it) and its lines."""
    if symbol is None or not oid or oid == ZERO_OID:
        return 0, []
    data = _load(repo)(oid) or b""
    lines = data.decode("utf-8", "replace").split("\n")
    start = documented_start(symbol)
    return start, lines[start - 1:symbol.end_line]


def own_diff(repo: ShadowRepo, entry: log.FileVersion, old_name: str | None, new_name: str | None) -> str:
    """The unified diff of one symbol's own lines between the two sides of ``entry`` (line numbers of the file)."""
    change = entry.change
    old_path = change.old_path or entry.path
    old_symbol = next((s for s in _symbols(repo, change.old_oid, old_path) if s.name == old_name), None)
    new_symbol = next((s for s in _symbols(repo, change.new_oid, entry.path) if s.name == new_name), None)
    (start_old, old_lines), (start_new, new_lines) = (_text_of(repo, change.old_oid, old_symbol),
                                                      _text_of(repo, change.new_oid, new_symbol))
    diff = list(difflib.unified_diff(old_lines, new_lines, lineterm="", n=SYMBOL_DIFF_CONTEXT))[2:]
    shifted = []
    for line in diff:
        if line.startswith("@@"):  # hunk positions relative to the file, not to the symbol
            head = line.split("@@")[1].strip().split()
            o, n = head[0][1:].split(","), head[1][1:].split(",")
            o[0] = str(int(o[0]) + max(start_old - 1, 0))
            n[0] = str(int(n[0]) + max(start_new - 1, 0))
            line = f"@@ -{','.join(o)} +{','.join(n)} @@ {new_name or old_name}"
        shifted.append(line)
    return "\n".join(shifted)


def trace(repo: ShadowRepo, tip: str, path: str, symbol: str, depth: int,
          show_baseline: bool = False) -> tuple[str, list[SymbolVersion]]:
    """Follow ``symbol`` (qualified or an unambiguous short name) in ``path`` back from ``tip``.

    ``show_baseline``: give the baseline (the symbol in its file's first recorded version) its whole body as a
    diff instead of one line.

    Returns:
        ``(qualified name now, versions newest first, at most depth)``.

    Raises:
        InvalidArgumentError: the file has no symbol support, or no such symbol was ever recorded in it (the
            message names the closest names).
    """
    if language_for(path) is None:
        raise InvalidArgumentError(f"no symbol support for {path!r} (its language is not one of tree-sitter's "
                                   "grammars installed here); use get_file_trajectory or search_trajectory instead")
    entries = log.FileVersions(repo, tip, path)  # read as far as the walk goes, not the whole history
    if not entries:
        raise InvalidArgumentError(f"{path!r} was never recorded on this branch; check the path")
    known: list[str] = []
    name = None
    for entry in entries:  # the newest version that has the symbol names it
        symbols = _symbols(repo, entry.change.new_oid, entry.path) or _symbols(repo, entry.change.old_oid,
                                                                               entry.change.old_path or entry.path)
        known += [s.name for s in symbols if s.name not in known]
        found = find(symbols, symbol) if symbols else None
        if found is not None:
            name = found.name
            break
    if name is None:
        close = closest_names(symbol, known)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InvalidArgumentError(f"no symbol {symbol!r} in the recorded history of {path!r}{hint}")
    current = name
    result: list[SymbolVersion] = []
    moves = 0
    anchor: _Anchor | None = None  # the symbol's text in the newer side of the next version, once known
    while entries and len(result) < depth:
        entry, entries = entries[0], entries[1:]
        if anchor is not None and _untouched(repo, entry, anchor):
            continue  # its text and its scopes' first lines are there unchanged: no parse of this version
        changes = symbol_changes(repo, entry.path, entry.change)
        anchor = _anchor(repo, entry.change.old_oid, entry.change.old_path or entry.path, current)
        if changes is None:
            continue
        renamed_from = next((old for old, new in changes.renamed if new == current), None)
        if renamed_from is not None:
            result.append(SymbolVersion(entry, current, f"renamed from {readable(renamed_from)}",
                                        own_diff(repo, entry, renamed_from, current)))
            current = renamed_from
            continue
        if current in changes.modified:
            result.append(SymbolVersion(entry, current, "modified", own_diff(repo, entry, current, current)))
        elif current in changes.docs_changed or current in changes.comments_changed:
            mine = tuple(e for e in changes.comment_edits if e.symbol == current)
            what = "; ".join(describe_comments(mine, changes.language, (current,)
                                               if current in changes.comments_changed else ()))
            result.append(SymbolVersion(entry, current, what or "comments changed",
                                        own_diff(repo, entry, current, current)))
        elif current in changes.removed:
            result.append(SymbolVersion(entry, current, "removed", own_diff(repo, entry, current, None)))
        elif current in changes.added:
            moved = _moved_from(repo, entry, current) if moves < MAX_MOVES else None
            if moved is None:
                if not entries and entry.change.old_oid in ("", ZERO_OID):  # the file's first recorded version
                    result.append(_baseline(repo, entry, current, show_baseline))
                else:
                    result.append(SymbolVersion(entry, current, "added", own_diff(repo, entry, None, current)))
                break
            other_path, other_name = moved
            result.append(SymbolVersion(entry, current, f"moved from {other_path} ({readable(other_name)})",
                                        own_diff(repo, entry, None, current)))
            moves += 1
            current = other_name
            parent = entry.record.parents[0] if entry.record.parents else None
            entries = log.FileVersions(repo, parent, other_path)
    return name, result


@dataclass
class _Anchor:
    """What tells, without parsing, that a version left a symbol alone: the exact text of its lines (its doc
    comment included, a line of context each side) and the first line of each enclosing symbol (a renamed class
    renames its methods)."""

    text: bytes
    scopes: list[bytes]


def _anchor(repo: ShadowRepo, oid: str, path: str, name: str) -> _Anchor | None:
    """The anchor of ``name`` in blob ``oid`` (parsed already: the symbol cache has it), or None when it is not
    there, or its name depends on other definitions (a ``@N`` occurrence suffix)."""
    if "@" in name:
        return None
    symbols = _symbols(repo, oid, path)
    symbol = next((s for s in symbols if s.name == name), None)
    data = _load(repo)(oid) if symbol is not None else None
    if symbol is None or data is None:
        return None
    lines = data.split(b"\n")
    scopes, parent = [], symbol.parent
    while parent is not None:
        enclosing = next((s for s in symbols if s.name == parent), None)
        if enclosing is None:
            return None
        scopes.append(lines[enclosing.start_line - 1])
        parent = enclosing.parent
    # a line of context each side: a doc comment removed above it, or a comment below it, is a change to read
    return _Anchor(b"\n".join(lines[max(documented_start(symbol) - 2, 0):symbol.end_line + 1]), scopes)


def _untouched(repo: ShadowRepo, entry: log.FileVersion, anchor: _Anchor) -> bool:
    """True when the older side of ``entry`` holds the symbol's text exactly once and every scope line: the
    version changed other lines of the file only (a rename, an addition or a deletion of the file is read)."""
    change = entry.change
    if change.old_path or change.status != "M" or not change.old_oid or change.old_oid == ZERO_OID:
        return False
    data = _load(repo)(change.old_oid)
    return data is not None and data.count(anchor.text) == 1 and all(line in data for line in anchor.scopes)


def _baseline(repo: ShadowRepo, entry: log.FileVersion, name: str, show: bool) -> SymbolVersion:
    """The symbol as its file's first recorded version had it: one line (its size, where it starts), or its body."""
    symbol = next((s for s in _symbols(repo, entry.change.new_oid, entry.path) if s.name == name), None)
    start, lines = _text_of(repo, entry.change.new_oid, symbol)
    where = "when recording began" if entry.record.is_import or not entry.record.parents else "with its file"
    note = f"{where}: {len(lines)} line{'s' if len(lines) != 1 else ''}, starts at line {start or '?'}"
    return SymbolVersion(entry, name, "as first recorded", own_diff(repo, entry, None, name) if show else "", note)


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


def _moved_from(repo: ShadowRepo, entry: log.FileVersion, name: str) -> tuple[str, str] | None:
    """Where ``name``, added in ``entry``, came from: another file of the same snapshot that lost a symbol with
    the same body; None when there is none."""
    added = next((s for s in _symbols(repo, entry.change.new_oid, entry.path) if s.name == name), None)
    if added is None:
        return None
    full = log.read_log(repo, [entry.record.oid], limit=1)
    for change in full[0].changes if full else []:
        if change.path == entry.path or language_for(change.path) is None:
            continue
        changes = symbol_changes(repo, change.path, change)
        if changes is None or not changes.removed:
            continue
        old_path = change.old_path or change.path
        for symbol in _symbols(repo, change.old_oid, old_path):
            if symbol.name in changes.removed and symbol.body_key == added.body_key:
                return old_path, symbol.name
    return None


def render(path: str, branch: str, name: str, versions: list[SymbolVersion], budget_tokens: int,
           names: dict[str, list[str]] | None = None) -> Answer:
    """Markdown of a symbol's versions, oldest first; the oldest diffs are dropped first to fit the budget.

    ``names``: named points by commit (:func:`named_points`), said in the headings of snapshots without a
    checkpoint name of their own.
    """
    shown = f"`{name}`" if readable(name) == name else f"the {readable(name, quote=True)} (`{name}`)"
    head = f"# Trajectory of {shown} in `{path}`\nShadow branch `{branch}`: {len(versions)} change(s), oldest first."
    blocks = []
    previous_intent = None
    for version in reversed(versions):
        record = version.entry.record
        label, intent = why(record, names or {})
        what = f"{version.what} ({version.note})" if version.note else version.what
        line = f"## {fmt_time(record.time)} · `{record.oid[:12]}` · {what}{label}"
        if version.entry.path != path:
            line += f" (in `{version.entry.path}`)"
        if intent and intent != previous_intent:  # an intent is said where it starts, as in the file trajectory
            line += f"\n- Intent: {intent}"
        previous_intent = intent or previous_intent
        if version.diff:
            body = f"```diff\n{version.diff}\n```"
        elif version.what == "as first recorded":
            body = "(its body: show_baseline=true, CLI `--baseline`)"
        else:
            body = "(no textual change of its own)"
        blocks.append((line, body))
    limit = budget_tokens * CHARS_PER_TOKEN - len(head) - 300
    out, used, cut = [], sum(len(h) for h, _ in blocks), 0
    for heading, body in reversed(blocks):  # newest first keep their diffs
        if used + len(body) <= limit:
            out.append(f"{heading}\n\n{body}")
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
