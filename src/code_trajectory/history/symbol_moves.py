"""Where a symbol added to (or removed from) a file in one snapshot came from (or went): another file of the same
snapshot that lost (or gained) a symbol with the same body, or the file itself renamed; else, a move in two
snapshots (an agent's edit of one file, then its edit of the other: a hook snapshot each), another file that lost
(or gained) it in a nearby snapshot of the same intent. Used by :mod:`~code_trajectory.history.symbol_history` to
follow a symbol's history across files."""

from __future__ import annotations

from typing import NamedTuple

from code_trajectory.git import file_versions, log
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.versions import blob_symbols, symbol_changes, symbol_text
from code_trajectory.symbols import Symbol, language_for

#: Changed files of a snapshot past which a move is not looked for (each other file's symbols are compared).
MAX_MOVE_FILES = 200
#: Snapshots searched on each side of the one that added (removed) a symbol for the other half of a move made in two
#: snapshots: those of the same intent within :data:`~code_trajectory.git.file_versions.TWO_STEP_MOVE_SECONDS`.
TWO_STEP_SNAPSHOTS = 5


class Move(NamedTuple):
    """The other side of a move: the file and the symbol's name there, whether its text is byte for byte the
    same, and ``earlier``: the snapshot of the other half when it came before the asked one's (the other file's
    history goes on before it), else None."""

    path: str
    name: str
    same: bool
    earlier: log.CommitRecord | None = None


def moved_from(repo: ShadowRepo, tip: str, entry: file_versions.FileVersion, name: str) -> Move | None:
    """Where ``name``, added in ``entry`` (a version of a file on ``tip``'s history), came from: the other file that
    lost a symbol with the same body (in the same snapshot, else in a nearby one of a move in two snapshots); None
    when there is none."""
    added = next((s for s in blob_symbols(repo, entry.change.new_oid, entry.path) if s.name == name), None)
    return None if added is None else counterpart(repo, tip, entry, added, entry.change.new_oid, gained=False)


def moved_to(repo: ShadowRepo, tip: str, entry: file_versions.FileVersion, name: str) -> Move | None:
    """Where ``name``, removed in ``entry``, went: as :func:`moved_from`, the other file having gained it."""
    old_oid = entry.change.old_oid
    removed = next((s for s in blob_symbols(repo, old_oid, entry.change.old_path or entry.path) if s.name == name), None)
    return None if removed is None else counterpart(repo, tip, entry, removed, old_oid, gained=True)


def counterpart(repo: ShadowRepo, tip: str, entry: file_versions.FileVersion, symbol: Symbol, oid: str, *,
                gained: bool) -> Move | None:
    """The symbol with ``symbol``'s body (in blob ``oid``) that another file ``gained`` (else lost) in ``entry``'s
    snapshot, else in one of :func:`_neighbours`; None when there is none."""
    if entry.record.kind == "restore" or entry.record.is_git_operation:
        return None  # a restore or a checkout moves no code: it puts files back
    own = symbol_text(repo, oid, symbol)
    full = log.read_log(repo, [entry.record.oid], limit=1)
    if full and len(full[0].changes) <= MAX_MOVE_FILES:
        found = _in_snapshot(repo, entry, full[0], symbol, own, gained=gained, renames=True)
        if found is not None:
            return found
    for record, earlier in _neighbours(repo, tip, entry.record):
        found = _in_snapshot(repo, entry, record, symbol, own, gained=gained, renames=False)
        if found is not None:
            return found._replace(earlier=record if earlier else None)
    return None


def _neighbours(repo: ShadowRepo, tip: str, record: log.CommitRecord) -> list[tuple[log.CommitRecord, bool]]:
    """The snapshots of ``record``'s intent nearest it on ``tip``'s first-parent line, :data:`TWO_STEP_SNAPSHOTS` on
    each side within :data:`~code_trajectory.git.file_versions.TWO_STEP_MOVE_SECONDS` (no restore, git operation or
    import: they move no code), nearest first, each with whether it came before ``record``."""
    if record.is_import:
        return []  # the start of recording: what it holds was there before, not moved in
    when = int(record.time.timestamp())
    window = log.read_log(repo, [tip], first_parent=True, line_counts=False, root_changes=False,
                          since=when - file_versions.TWO_STEP_MOVE_SECONDS,
                          until=when + file_versions.TWO_STEP_MOVE_SECONDS)
    at = next((i for i, r in enumerate(window) if r.oid == record.oid), None)
    if at is None:
        return []

    def alike(r: log.CommitRecord) -> bool:
        return (r.intent == record.intent and r.kind != "restore" and not r.is_git_operation and not r.is_import
                and len(r.changes) <= MAX_MOVE_FILES)

    later = [r for r in reversed(window[:at]) if alike(r)][:TWO_STEP_SNAPSHOTS]  # the log is newest first
    before = [r for r in window[at + 1:] if alike(r)][:TWO_STEP_SNAPSHOTS]
    nearest: list[tuple[log.CommitRecord, bool]] = []
    for pair in zip(before, later, strict=False):
        nearest += [(pair[0], True), (pair[1], False)]
    shorter = min(len(before), len(later))
    return nearest + [(r, True) for r in before[shorter:]] + [(r, False) for r in later[shorter:]]


def _in_snapshot(repo: ShadowRepo, entry: file_versions.FileVersion, record: log.CommitRecord, symbol: Symbol,
                 own: bytes | None, *, gained: bool, renames: bool) -> Move | None:
    """The symbol with ``symbol``'s body that a file of ``record`` other than ``entry``'s ``gained`` (else lost);
    ``renames``: ``entry``'s file itself renamed in ``record`` takes its symbols with it."""
    for change in record.changes:
        if change.path == entry.path or language_for(change.path) is None:
            continue
        if renames and gained and change.old_path == entry.path:  # the file itself renamed: its symbols went with it
            # (renamed with it when their scope was: a C# file moved to another folder changes its namespace)
            changes = symbol_changes(repo, change.path, change)
            name = dict((*changes.renamed, *changes.aliases)).get(symbol.name, symbol.name) if changes else symbol.name
            other = next((s for s in blob_symbols(repo, change.new_oid, change.path) if s.name == name), None)
            return None if other is None else Move(change.path, other.name,
                                                   symbol_text(repo, change.new_oid, other) == own)
        changes = symbol_changes(repo, change.path, change)
        names = () if changes is None else changes.added if gained else changes.removed
        if not names:
            continue
        other_oid, other_path = ((change.new_oid, change.path) if gained
                                 else (change.old_oid, change.old_path or change.path))
        for other in blob_symbols(repo, other_oid, other_path):
            if other.name in names and other.body_key == symbol.body_key:
                return Move(other_path, other.name, symbol_text(repo, other_oid, other) == own)
    return None
