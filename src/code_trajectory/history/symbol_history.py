"""One symbol's trajectory: the versions in which a function, class or method changed, each with only its own diff.

The symbol is followed backwards from the newest version: across renames inside the file (a removed and an
added symbol with the same body, see :mod:`code_trajectory.symbols`) and, where it is detectable, across a
move to another file in the same snapshot (it was added here while a symbol with the same body was removed
from another file of that snapshot): then its history continues in that file.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from code_trajectory.core.answer import Answer, fenced, sections, short, shown, when
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import log
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.history.narrative import CHARS_PER_TOKEN, fit, fmt_time
from code_trajectory.history.versions import symbol_changes
from code_trajectory.symbols import Symbol, closest_names, find, language_for, symbols_for_blob

#: Context lines around the changes of a symbol's own diff.
SYMBOL_DIFF_CONTEXT = 2
#: Moves to another file followed at most (a guard against pathological histories).
MAX_MOVES = 10


@dataclass
class SymbolVersion:
    """One version in which the symbol changed: what happened and its own diff."""

    entry: log.FileVersion
    name: str
    what: str
    diff: str


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


def _text_of(repo: ShadowRepo, oid: str, symbol: Symbol | None) -> list[str]:
    if symbol is None or not oid or oid == ZERO_OID:
        return []
    data = _load(repo)(oid) or b""
    lines = data.decode("utf-8", "replace").split("\n")
    return lines[symbol.start_line - 1:symbol.end_line]


def own_diff(repo: ShadowRepo, entry: log.FileVersion, old_name: str | None, new_name: str | None) -> str:
    """The unified diff of one symbol's own lines between the two sides of ``entry`` (line numbers of the file)."""
    change = entry.change
    old_path = change.old_path or entry.path
    old_symbol = next((s for s in _symbols(repo, change.old_oid, old_path) if s.name == old_name), None)
    new_symbol = next((s for s in _symbols(repo, change.new_oid, entry.path) if s.name == new_name), None)
    old_lines, new_lines = _text_of(repo, change.old_oid, old_symbol), _text_of(repo, change.new_oid, new_symbol)
    diff = list(difflib.unified_diff(old_lines, new_lines, lineterm="", n=SYMBOL_DIFF_CONTEXT))[2:]
    start_old = old_symbol.start_line if old_symbol else 0
    start_new = new_symbol.start_line if new_symbol else 0
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


def trace(repo: ShadowRepo, tip: str, path: str, symbol: str, depth: int) -> tuple[str, list[SymbolVersion]]:
    """Follow ``symbol`` (qualified or an unambiguous short name) in ``path`` back from ``tip``.

    Returns:
        ``(qualified name now, versions newest first, at most depth)``.

    Raises:
        InvalidArgumentError: the file has no symbol support, or no such symbol was ever recorded in it (the
            message names the closest names).
    """
    if language_for(path) is None:
        raise InvalidArgumentError(f"no symbol support for {path!r} (its language is not one of tree-sitter's "
                                   "grammars installed here); use get_file_trajectory or search_trajectory instead")
    entries = log.file_history(repo, tip, path)
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
    while entries and len(result) < depth:
        entry, entries = entries[0], entries[1:]
        changes = symbol_changes(repo, entry.path, entry.change)
        if changes is None:
            continue
        renamed_from = next((old for old, new in changes.renamed if new == current), None)
        if renamed_from is not None:
            result.append(SymbolVersion(entry, current, f"renamed from {renamed_from}",
                                        own_diff(repo, entry, renamed_from, current)))
            current = renamed_from
            continue
        if current in changes.modified:
            result.append(SymbolVersion(entry, current, "modified", own_diff(repo, entry, current, current)))
        elif current in changes.removed:
            result.append(SymbolVersion(entry, current, "removed", own_diff(repo, entry, current, None)))
        elif current in changes.added:
            moved = _moved_from(repo, entry, current) if moves < MAX_MOVES else None
            if moved is None:
                result.append(SymbolVersion(entry, current, "added", own_diff(repo, entry, None, current)))
                break
            other_path, other_name = moved
            result.append(SymbolVersion(entry, current, f"moved from {other_path} ({other_name})",
                                        own_diff(repo, entry, None, current)))
            moves += 1
            current = other_name
            parent = entry.record.parents[0] if entry.record.parents else None
            entries = log.file_history(repo, parent, other_path) if parent else []
    return name, result


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


def render(path: str, branch: str, name: str, versions: list[SymbolVersion], budget_tokens: int) -> Answer:
    """Markdown of a symbol's versions, oldest first; the oldest diffs are dropped first to fit the budget."""
    head = f"# Trajectory of `{name}` in `{path}`\nShadow branch `{branch}`: {len(versions)} change(s), oldest first."
    blocks = []
    for version in reversed(versions):
        record = version.entry.record
        line = f"## {fmt_time(record.time)} · `{record.oid[:12]}` · {version.what}"
        if version.entry.path != path:
            line += f" (in `{version.entry.path}`)"
        if record.intent:
            line += f"\n- Intent: {record.intent}"
        blocks.append((line, f"```diff\n{version.diff}\n```" if version.diff else "(no textual change of its own)"))
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
