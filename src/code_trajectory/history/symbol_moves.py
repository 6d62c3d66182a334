"""Where a symbol added to (or removed from) a file in one snapshot came from (or went): another file of the same
snapshot that lost (or gained) a symbol with the same body, or the file itself renamed. Used by
:mod:`~code_trajectory.history.symbol_history` to follow a symbol's history across files."""

from __future__ import annotations

from code_trajectory.git import file_versions, log
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.versions import blob_symbols, symbol_changes, symbol_text
from code_trajectory.symbols import Symbol, language_for

#: Changed files of a snapshot past which a move is not looked for (each other file's symbols are compared).
MAX_MOVE_FILES = 200


def moved_from(repo: ShadowRepo, entry: file_versions.FileVersion, name: str) -> tuple[str, str, bool] | None:
    """Where ``name``, added in ``entry``, came from: ``(the other file of the same snapshot that lost a symbol with
    the same body, that symbol's name, whether its text is byte for byte the added one's)``; None when there is
    none."""
    added = next((s for s in blob_symbols(repo, entry.change.new_oid, entry.path) if s.name == name), None)
    return None if added is None else counterpart(repo, entry, added, entry.change.new_oid, gained=False)


def moved_to(repo: ShadowRepo, entry: file_versions.FileVersion, name: str) -> tuple[str, str, bool] | None:
    """Where ``name``, removed in ``entry``, went: as :func:`moved_from`, the other file having gained it."""
    old_oid = entry.change.old_oid
    removed = next((s for s in blob_symbols(repo, old_oid, entry.change.old_path or entry.path) if s.name == name), None)
    return None if removed is None else counterpart(repo, entry, removed, old_oid, gained=True)


def counterpart(repo: ShadowRepo, entry: file_versions.FileVersion, symbol: Symbol, oid: str, *,
                 gained: bool) -> tuple[str, str, bool] | None:
    """The symbol with ``symbol``'s body (in blob ``oid``) that another file of ``entry``'s snapshot ``gained`` (else
    lost): ``(that file's path, its name, whether its text is byte for byte the same)``, or None."""
    if entry.record.kind == "restore" or entry.record.is_git_operation:
        return None  # a restore or a checkout moves no code: it puts files back
    own = symbol_text(repo, oid, symbol)
    full = log.read_log(repo, [entry.record.oid], limit=1)
    if full and len(full[0].changes) > MAX_MOVE_FILES:
        return None
    for change in full[0].changes if full else []:
        if change.path == entry.path or language_for(change.path) is None:
            continue
        if gained and change.old_path == entry.path:  # the file itself renamed: its symbols went with it
            # (renamed with it when their scope was: a C# file moved to another folder changes its namespace)
            changes = symbol_changes(repo, change.path, change)
            name = dict((*changes.renamed, *changes.aliases)).get(symbol.name, symbol.name) if changes else symbol.name
            other = next((s for s in blob_symbols(repo, change.new_oid, change.path) if s.name == name), None)
            return None if other is None else (change.path, other.name, symbol_text(repo, change.new_oid, other) == own)
        changes = symbol_changes(repo, change.path, change)
        names = () if changes is None else changes.added if gained else changes.removed
        if not names:
            continue
        other_oid, other_path = ((change.new_oid, change.path) if gained
                                 else (change.old_oid, change.old_path or change.path))
        for other in blob_symbols(repo, other_oid, other_path):
            if other.name in names and other.body_key == symbol.body_key:
                return other_path, other.name, symbol_text(repo, other_oid, other) == own
    return None
