"""Which symbol a name asked for means in a file's history: :func:`resolve`.

The newest version that has the symbol names it, by its exact qualified name or an unambiguous shorter form
(:func:`code_trajectory.symbols.find`). A name matched by a shorter form only is looked for exactly in the older
versions too (up to :data:`EXACT_LOOKBACK` of them): a symbol with exactly the name asked for wins over a newer one
whose name merely ends with it (Rust's ``Value::to_cow_str`` asked, ``std_support::Value::to_cow_str`` the newest
ending with it)."""

from __future__ import annotations

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import file_versions
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.symbols import DEFAULT_CACHE, FileAnalysis, closest_names, find
from code_trajectory.symbols.constants import has_constants
from code_trajectory.symbols.lookup import as_named, overloads_of

#: Older versions of its file searched for a symbol with exactly the name asked for once a newer version matched it
#: by a shorter form only: a bound on the parses a short name costs (each incremental from the version after it,
#: ~10 ms for a 1,300-line file).
EXACT_LOOKBACK = 200


def resolve(repo: ShadowRepo, entries: file_versions.FileVersions, path: str, symbol: str) -> str:
    """The qualified name ``symbol`` means in the versions ``entries`` (newest first) of the file ``path``.

    Raises:
        InvalidArgumentError: no version has such a symbol (the message names the closest names), or a version
            has several its shorter form matches (the message lists them).
    """
    known: list[str] = []
    name = None
    wanted = as_named(symbol)
    previous: FileAnalysis | None = None  # the newer version's, parsed from incrementally
    lookback = EXACT_LOOKBACK
    for entry in entries:
        analysis = _analysis(repo, entry.change.new_oid, entry.path, previous) or _analysis(
            repo, entry.change.old_oid, entry.change.old_path or entry.path, previous)
        previous = analysis or previous
        symbols = list(analysis.symbols) if analysis is not None else []
        if name is not None:  # a newer version has it by a shorter form only: one named exactly so wins
            if any(s.name == wanted for s in symbols):
                return wanted
            lookback -= 1
            if not lookback:
                break
            continue
        known += [s.name for s in symbols if s.name not in known]
        found = find(symbols, symbol) if symbols else None
        if found is not None:
            name = found.name
            if name == wanted:
                break
    if name is None:
        close = overloads_of(symbol, known)[:10] or closest_names(symbol, known)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        kinds = ("functions, methods, classes and types, the file's top-level constants, and a class's constants and "
                 "fields as `Class.NAME`; attributes and other code outside them" if has_constants(path) else
                 "functions, methods, classes and types, and a class's fields as `Class.NAME`; constants, attributes "
                 "and other code outside them") + " are in get_file_trajectory (CLI `code-trajectory file`)"
        raise InvalidArgumentError(f"no symbol {symbol!r} in the recorded history of {path!r}{hint} (symbols are "
                                   f"{kinds}; for other text use search_trajectory, CLI `code-trajectory search`)")
    return name


def _analysis(repo: ShadowRepo, oid: str, path: str, previous: FileAnalysis | None) -> FileAnalysis | None:
    """The cached analysis of blob ``oid`` read as ``path``, parsed incrementally from ``previous`` (another version
    of the file that still has its syntax tree) when not cached; ``None`` for no blob, an unreadable one or an
    unsupported language."""
    if not oid or oid == ZERO_OID:
        return None
    return DEFAULT_CACHE.analysis_for_blob(oid, path, lambda: repo.read_blob_or_none(oid), previous)
