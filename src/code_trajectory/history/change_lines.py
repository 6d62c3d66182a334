"""One line per changed file naming its changed symbols, for the answers that list the files of a change set: the
net change of ``compare`` and of the session summary, and each snapshot of the global log.

A symbol removed from one file and added to another with the same body (``Symbol.body_key``) in the same change set
is said moved, once each side (``moved xtob to uuid.go``, ``xtob moved from util.go``), as the symbol history
follows it (:mod:`~code_trajectory.history.symbol_moves`), not as an unrelated removal and addition. The log pairs
the two halves of a move made in two snapshots too (an agent's edit of one file, then of the other): nearby
snapshots of the same intent. Bounded: a change set of more than
:data:`~code_trajectory.history.symbol_moves.MAX_MOVE_FILES` files is not searched for moves.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple, TypeVar

from code_trajectory.git import file_versions, log
from code_trajectory.git.messages import FileChange
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.symbol_moves import MAX_MOVE_FILES, TWO_STEP_SNAPSHOTS
from code_trajectory.history.versions import Moves, bare, blob_symbols, describe_symbols, oversize_note, symbol_changes
from code_trajectory.symbols import Symbol, SymbolChanges

K = TypeVar("K", bound=Hashable)

#: Files per commit whose symbols are computed for the project-wide narratives.
SYMBOL_FILES_PER_COMMIT = 25


class _Side(NamedTuple):
    """One half of a possible move: the file's key and path, and the symbol removed (added) there."""

    key: Hashable
    path: str
    symbol: Symbol


def parsed(repo: ShadowRepo, change: FileChange) -> SymbolChanges | None:
    """The symbol changes of one file change worth a line: None for an unsupported language, content not stored
    (over the size cap) or no meaningful change."""
    if change.status != "D" and oversize_note(repo, change.new_oid):
        return None
    changes = symbol_changes(repo, change.path, change)
    return None if changes is None or changes.kind in ("unchanged", "skipped") else changes


def pair_moves(repo: ShadowRepo, groups: Sequence[Sequence[tuple[K, FileChange, SymbolChanges]]]) -> dict[K, Moves]:
    """The moves across files among ``groups`` of parsed file changes (each ``(key, change, symbol changes)``): a
    symbol removed from one file paired with one of the same kind and body added to another, preferably in the same
    group, else in another one (a move made in two snapshots); of several candidates, the one of the same name, else
    none. Only the outermost removed (added) symbols are paired: a class's members move with it.

    Returns:
        key -> its :class:`~code_trajectory.history.versions.Moves`, for the files with a move only.
    """
    moves: dict[K, Moves] = {}
    sides = [(_sides(repo, group, gained=False), _sides(repo, group, gained=True)) for group in groups]
    used: set[int] = set()
    for removed, added in sides:
        _match(removed, added, used, moves)
    if len(sides) > 1:
        _match([s for r, _ in sides for s in r], [s for _, a in sides for s in a], used, moves)
    return moves


def _sides(repo: ShadowRepo, group: Sequence[tuple[K, FileChange, SymbolChanges]], *, gained: bool) -> list[_Side]:
    out = []
    for key, change, changes in group:
        names = changes.added if gained else changes.removed
        if not names:
            continue
        inside = set(names)
        outer = {n for n in names if not any(p in inside for p in changes.ancestors(n))}
        oid, path = (change.new_oid, change.path) if gained else (change.old_oid, change.old_path or change.path)
        out += [_Side(key, path, s) for s in blob_symbols(repo, oid, path) if s.name in outer]
    return out


def _match(removed: list[_Side], added: list[_Side], used: set[int], moves: dict[Any, Moves]) -> None:
    """Pair each unused side of ``removed`` with one of ``added`` (see :func:`pair_moves`), into ``moves``."""
    bodies: dict[str, list[_Side]] = {}
    for side in added:
        if id(side) not in used:
            bodies.setdefault(side.symbol.body_key, []).append(side)
    for side in removed:
        if id(side) in used or side.symbol.body_key not in bodies:
            continue
        candidates = [a for a in bodies[side.symbol.body_key]
                      if id(a) not in used and a.path != side.path and a.symbol.kind == side.symbol.kind]
        same = [a for a in candidates if bare(a.symbol.name) == bare(side.symbol.name)]
        pick = same[0] if same else candidates[0] if len(candidates) == 1 else None
        if pick is None:
            continue
        used.update((id(side), id(pick)))
        moves.setdefault(side.key, Moves({}, {})).out[side.symbol.name] = (pick.path, pick.symbol.name)
        moves.setdefault(pick.key, Moves({}, {})).into[pick.symbol.name] = (side.path, side.symbol.name)


def change_set_lines(repo: ShadowRepo, changes: Sequence[FileChange], *, lean: bool = False,
                     listed: Sequence[FileChange] | None = None) -> dict[str, str]:
    """``{path: changed symbols}`` (:func:`~code_trajectory.history.versions.describe_symbols`) of the files of one
    change set, ``listed`` of them only when given, moves among the files said (those of a change set of at most
    :data:`~code_trajectory.history.symbol_moves.MAX_MOVE_FILES` files; among the listed ones only, whose symbols
    are read anyway: reading the others would cost ~10 ms a file, 2 s for 200); a file with no meaningful symbol
    change has none."""
    shown = list(changes if listed is None else listed)
    found = [(c.path, c, s) for c in shown if (s := parsed(repo, c)) is not None]
    moves = pair_moves(repo, [found]) if len(changes) <= MAX_MOVE_FILES else {}
    return {path: line for path, _, s in found if (line := describe_symbols(s, lean=lean, moves=moves.get(path)))}


def symbols_of(repo: ShadowRepo, records: list[log.CommitRecord],
               max_files: int = SYMBOL_FILES_PER_COMMIT, *, lean: bool = False) -> dict[str, dict[str, str]]:
    """``{commit: {path: changed symbols}}`` for the first ``max_files`` files of each commit of ``records`` (newest
    first; supported languages, content stored, a meaningful change only; ``lean``: see
    :func:`~code_trajectory.history.versions.describe_symbols`), a symbol moved to another file said moved, in the
    same snapshot or in a nearby one of the same intent among ``records`` (see :func:`_move_groups`)."""
    parsed_of: dict[str, list[tuple[tuple[str, str], FileChange, SymbolChanges]]] = {}
    for record in records:
        if record.is_import:
            continue  # the first scan adds every file: its symbols are not news
        parsed_of[record.oid] = [((record.oid, c.path), c, s) for c in record.changes[:max_files]
                                 if (s := parsed(repo, c)) is not None]
    moves: dict[tuple[str, str], Moves] = {}
    for group in _move_groups(records):
        moves.update(pair_moves(repo, [parsed_of[r.oid] for r in group]))
    found: dict[str, dict[str, str]] = {}
    for oid, files in parsed_of.items():
        for key, change, changes in files:
            line = describe_symbols(changes, lean=lean, moves=moves.get(key))
            if line:
                found.setdefault(oid, {})[change.path] = line
    return found


def _move_groups(records: list[log.CommitRecord]) -> list[list[log.CommitRecord]]:
    """``records`` (newest first) cut into runs where a move may take two snapshots: consecutive snapshots of one
    intent, each within :data:`~code_trajectory.git.file_versions.TWO_STEP_MOVE_SECONDS` of the next, at most
    ``2 * TWO_STEP_SNAPSHOTS + 1`` a run (as the symbol history looks). A restore, a git operation or an import
    (they move no code: they put files back, or were there before) and a snapshot of more than
    :data:`~code_trajectory.history.symbol_moves.MAX_MOVE_FILES` files are in none."""
    def alone(r: log.CommitRecord) -> bool:
        return r.kind == "restore" or r.is_git_operation or r.is_import or len(r.changes) > MAX_MOVE_FILES

    groups: list[list[log.CommitRecord]] = []
    for record in records:
        last = groups[-1] if groups else None
        if (last is not None and not alone(record) and not alone(last[-1]) and record.intent == last[-1].intent
                and len(last) <= 2 * TWO_STEP_SNAPSHOTS
                and abs((last[-1].time - record.time).total_seconds()) <= file_versions.TWO_STEP_MOVE_SECONDS):
            last.append(record)
        else:
            groups.append([record])
    return [g for g in groups if len(g) > 1 or not alone(g[0])]
