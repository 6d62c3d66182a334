"""A top-level constant's trajectory (Python's ``__version__``, Go's ``const Timeout``, a Rust ``static``), or a
class member's (a Ruby class's ``Foo::LIMIT``, a Rust ``impl``'s ``S::MAX``, a Python class attribute ``C.LIMIT``, a
field): the versions in which its declarations changed, each with its own diff, as :mod:`.symbol_history` gives a
function's: :func:`trace`.

A constant is no symbol (:mod:`code_trajectory.symbols.constants`), so a history asked for a name no version has as
a symbol is looked for among the constants of the file's versions, then among its class-like symbols' members
(:func:`~code_trajectory.symbols.fields.member_lines`); its lines are those from its first to its last
declaration. Said as a symbol's: ``modified``, ``added``, ``removed``, and ``as first recorded`` for the
file's first recorded version."""

from __future__ import annotations

import itertools

from code_trajectory.git import file_versions, indexed_log
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.history.headings import began_recording
from code_trajectory.history.range_diff import range_diff
from code_trajectory.history.symbol_history import BASELINE, OLDER_DIFF_CONTEXT, SYMBOL_DIFF_CONTEXT, SymbolVersion
from code_trajectory.history.versions import symbol_changes
from code_trajectory.symbols import DEFAULT_CACHE
from code_trajectory.symbols.constants import constant_lines
from code_trajectory.symbols.fields import member_lines

#: Versions of the file (newest first) searched for a constant of the name asked for before it is said unknown.
LOOKUP_VERSIONS = 50


def trace(repo: ShadowRepo, tip: str, path: str, name: str, depth: int, show_baseline: bool = False,
          index_ref: str | None = None) -> tuple[str, list[SymbolVersion], bool] | None:
    """Follow the top-level constant ``name`` of ``path`` back from ``tip``; arguments and result as
    :func:`~code_trajectory.history.symbol_history.trace`'s, or None when none of the newest
    :data:`LOOKUP_VERSIONS` versions of the file assigns such a constant."""
    lister = indexed_log.open_log(repo, index_ref, tip) if index_ref else None
    entries = file_versions.FileVersions(repo, tip, path, lister)
    if not any(_lines(repo, e.change.new_oid, e.path, name) or _lines(repo, e.change.old_oid,
                                                                        e.change.old_path or e.path, name)
               for e in itertools.islice(entries, LOOKUP_VERSIONS)):
        return None
    result: list[SymbolVersion] = []
    ended = False
    while entries and len(result) < depth:
        entry, entries = entries[0], entries[1:]
        change = entry.change
        old_path = change.old_path or entry.path
        old, new = _lines(repo, change.old_oid, old_path, name), _lines(repo, change.new_oid, entry.path, name)
        member = _member(repo, change.new_oid, entry.path, name) if new is not None else None
        if old is None and new is None:
            continue
        if old is None and not entries and change.old_oid in ("", ZERO_OID):  # the file's first recorded version
            result.append(_baseline(repo, entry, name, new or range(0), show_baseline))
            ended = True
            break
        if old is not None and new is not None:
            changes = symbol_changes(repo, entry.path, change)
            if changes is None:
                continue
            said = dict(changes.constants) if member is None else dict(dict(changes.fields).get(member[0], ()))
            if (name if member is None else member[1]) not in said:
                continue
        what = "modified" if old is not None and new is not None else "added" if old is None else "removed"
        context = OLDER_DIFF_CONTEXT if result else SYMBOL_DIFF_CONTEXT  # the newest change is shown whole
        result.append(SymbolVersion(entry, name, what, _diff(repo, change.old_oid, change.new_oid, old, new,
                                                             context)))
    return name, result, not ended and bool(entries) and len(result) >= depth


def _lines(repo: ShadowRepo, oid: str, path: str, name: str) -> range | None:
    """The lines of the constant or member ``name`` in one version of the file (a top-level constant first)."""
    if not oid or oid == ZERO_OID:
        return None
    analysis = DEFAULT_CACHE.analysis_for_blob(oid, path, lambda: repo.read_blob_or_none(oid))
    if analysis is None:
        return None
    lines = constant_lines(analysis, name)
    if lines is None and (member := member_lines(analysis, name)) is not None:
        lines = member[2]
    return lines


def _member(repo: ShadowRepo, oid: str, path: str, name: str) -> tuple[str, str] | None:
    """``(owner, member)`` when ``name`` is a class member in this version of the file, not a top-level constant."""
    analysis = DEFAULT_CACHE.analysis_for_blob(oid, path, lambda: repo.read_blob_or_none(oid))
    if analysis is None or constant_lines(analysis, name) is not None:
        return None
    found = member_lines(analysis, name)
    return None if found is None else found[:2]


def _text(repo: ShadowRepo, oid: str) -> list[str]:
    if not oid or oid == ZERO_OID:
        return []
    return (repo.read_blob_or_none(oid) or b"").decode("utf-8", "replace").split("\n")


def _diff(repo: ShadowRepo, old_oid: str, new_oid: str, old: range | None, new: range | None, context: int) -> str:
    return "\n".join(range_diff(repo, old_oid, new_oid, _text(repo, old_oid), _text(repo, new_oid),
                                old or range(0), new or range(0), context))


def _baseline(repo: ShadowRepo, entry: file_versions.FileVersion, name: str, lines: range,
              show: bool) -> SymbolVersion:
    """The constant as its file's first recorded version had it: one line (its size, where it starts), or its
    assignments."""
    where = "when recording began" if began_recording(entry.record) else "with its file"
    note = f"{where}: {len(lines)} line{'s' if len(lines) != 1 else ''}, starts at line {lines.start or '?'}"
    if not show:
        note += "; its body: show_baseline=true, CLI `--baseline`"
    diff = _diff(repo, entry.change.old_oid, entry.change.new_oid, None, lines, SYMBOL_DIFF_CONTEXT) if show else ""
    return SymbolVersion(entry, name, BASELINE, diff, note)
