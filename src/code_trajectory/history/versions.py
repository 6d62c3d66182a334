"""The versions of one file, each with what a reader needs before its diff: symbols, kind, reverts, tests.

:func:`build` turns the commits that touched a file (:func:`code_trajectory.git.file_versions.file_history`) into
:class:`Version` objects: the functions, classes and methods added, removed, modified and renamed
(tree-sitter, :mod:`code_trajectory.symbols`, cached by blob id), whitespace-, comment- and import-only
changes, content over the size cap, reverts to an earlier recorded state, and the test runs recorded on the
snapshot. Diffs are read lazily (:meth:`Version.diff`): only the versions shown with a diff pay for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from code_trajectory.git import file_versions, log
from code_trajectory.git.messages import FileChange, display_path
from code_trajectory.git.oversize import oversize_size
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.symbols import Symbol, SymbolChanges, compare_blobs, language_for, readable, symbols_for_blob
from code_trajectory.symbols.comments import doc_parts
from code_trajectory.symbols.constants import NAMES_LISTED, constant_parts
from code_trajectory.symbols.lookup import renamed_said
from code_trajectory.symbols.specs import TEST_SEPARATOR

#: Lines of git's diff header that repeat what the version's heading already says.
_HEADER_LINE = re.compile(r"^(diff --git |index [0-9a-f]|--- |\+\+\+ |similarity index |rename from |rename to |"
                          r"new file mode |deleted file mode )")
#: Context lines around each change in the diffs shown (git log -p uses 3).
DIFF_CONTEXT = 2
#: Context lines around each change where the hunk headers and symbol lines already say where it is: the net
#: change of ``compare`` and the older versions of a file's trajectory (issue 28: cut context lines, not facts).
LEAN_CONTEXT = 0
#: Versions of a file read at most for its trajectory, for the reverts and the total (issue 29: reading every version
#: of a file changed in 1,363 of 100,000 snapshots took 0.25 s of the answer's 0.3 s; its newest 301 take ~0.03 s).
#: A file with more is said to have "over LOOKBACK" versions, numbered back from the newest.
LOOKBACK = 300

#: Change kinds said in one line instead of a diff.
ONE_LINE_KINDS = {"whitespace-only": "whitespace-only change", "comment-only": "comment-only change",
                  "import-only": "import-only change"}


@dataclass
class Version:
    """One recorded version of a file.

    Attributes:
        number: 1-based position among all recorded versions of the file, oldest first; when they were not all
            read (more than :data:`LOOKBACK`), counted back from the newest version (1).
        entry: the commit and the file's change in it (``path`` is the file's path then).
        symbols: the symbol changes, or None (an unsupported language, binary or oversize content).
        revert_of: when the content equals an earlier recorded state (not the one just before), that state's time.
        tests: the summary line of the test runs recorded on the snapshot, or None.
        oversize: ``not stored: 12.3 MiB`` when the content was over the size cap, else None.
        named: the names the user gave points on the snapshot (a checkpoint that found nothing new to record names
            the snapshot before it), oldest first; said as its checkpoint when it has no checkpoint name of its own.
    """

    number: int
    entry: file_versions.FileVersion
    symbols: SymbolChanges | None = None
    revert_of: datetime | None = None
    tests: str | None = None
    oversize: str | None = None
    named: tuple[str, ...] = ()
    _diff: tuple[int, str] | None = field(default=None, repr=False)

    @property
    def record(self) -> log.CommitRecord:
        return self.entry.record

    @property
    def checkpoint(self) -> str | None:
        """The snapshot's checkpoint name: its own, else the user's names of points on it."""
        return self.record.checkpoint_note or ("; ".join(dict.fromkeys(self.named)) or None)

    @property
    def one_line_kind(self) -> str | None:
        """``whitespace-only change`` (comment-, import-only) when the change is said in one line, else None."""
        return ONE_LINE_KINDS.get(self.symbols.kind) if self.symbols is not None else None

    def diff(self, repo: ShadowRepo, context: int = DIFF_CONTEXT) -> str:
        """The version's diff without git's file header lines (hunks with ``context`` lines of context)."""
        if self._diff is None or self._diff[0] != context:
            text = file_versions.file_patch(repo, self.entry, context=context)
            self._diff = (context, "\n".join(line for line in text.split("\n")
                                              if not _HEADER_LINE.match(line)).strip("\n"))
        return self._diff[1]

    def symbol_line(self) -> str | None:
        """``modified Serializer.loads; added Serializer.iter_unsigners``, or None when there are no symbols.

        Every changed name is there: the members of an added or removed class are listed with it
        (``added _PDataSerializer (loads, dumps)``) rather than folded away.
        """
        if self.symbols is None or self.symbols.kind in ("unchanged", "skipped"):
            return None
        return describe_symbols(self.symbols) or None


class Moves(NamedTuple):
    """The symbols of one file's change that moved to or from another file of the same change set (see
    :mod:`~code_trajectory.history.change_lines`).

    Attributes:
        out: removed name -> (the file it went to, its name there).
        into: added name -> (the file it came from, its name there).
    """

    out: dict[str, tuple[str, str]]
    into: dict[str, tuple[str, str]]

    def apart(self, changes: SymbolChanges) -> SymbolChanges:
        """``changes`` without the moved symbols, nor their members, among the added and removed, nor their
        comments among the comments changed (a moved function's doc comment went with it)."""
        def went(name: str | None) -> bool:
            seen = set()
            while name is not None and name not in seen:
                if name in self.out or name in self.into:
                    return True
                seen.add(name)
                name = changes.parents.get(name)
            return False

        return replace(changes, added=tuple(n for n in changes.added if not went(n)),
                       removed=tuple(n for n in changes.removed if not went(n)),
                       comment_edits=tuple(e for e in changes.comment_edits if not went(e.symbol)))

    def parts(self, said: Any) -> list[str]:
        """``moved xtob, ytob to uuid.go`` and ``xtob moved from util.go`` (``parse (as parse_all)``: renamed as
        it moved, ``parse_all (was parse)`` the other side), each file's at most
        :data:`~code_trajectory.symbols.constants.NAMES_LISTED` names then ``+ N more``."""
        out = []
        for moved, template, note in ((self.out, "moved {} to {}", "as"), (self.into, "{} moved from {}", "was")):
            by_file: dict[str, list[str]] = {}
            for name, (path, there) in moved.items():
                by_file.setdefault(path, []).append(said(name) if bare(there) == bare(name)
                                                    else f"{said(name)} ({note} {said(there)})")
            for path, names in by_file.items():
                listed = ", ".join(names[:NAMES_LISTED]) + (f" + {len(names) - NAMES_LISTED} more"
                                                            if len(names) > NAMES_LISTED else "")
                out.append(template.format(listed, display_path(path)))
        return out


#: Symbol names one line lists at most (about 250 tokens); past it the line ends with ``+ N more`` (a file's
#: first version listed ~200 names, ~500 tokens: issue 23). A real change rarely names more (the largest of
#: ``bench/context.py``'s replays: 111). The structured content keeps every name.
SYMBOLS_LISTED = 100


def describe_symbols(changes: SymbolChanges, limit: int = SYMBOLS_LISTED, *, lean: bool = False,
                     moves: Moves | None = None) -> str:
    """One line naming the changed symbols: modified, added and removed (with their members), renamed,
    the constants changed (``constant `TIMEOUT` changed``), then what else changed outside symbols (imports, top-level
    code), docstrings and comments (a short comment quoted),
    and cosmetic changes (``whitespace-only`` when that is all and no symbol was reformatted). A name with an
    occurrence suffix reads as such (``3rd definition of Context.invoke``),
unless the list holds several occurrences of that name: then they are said once with a count (``parseJson ×9``).

    At most :data:`~code_trajectory.symbols.constants.NAMES_LISTED` names are listed a group (modified, added,
    removed, renamed, moved, reformatted), ``limit`` in all (a class and each of its members count one); the rest
    are counted in the group's closing ``+ N more``.

    ``lean`` (the recent log, the file list of ``compare``: answers whose diffs, or whose purpose, do not need the
    comments' text): the occurrences of one name the parser told apart (``delay@3``, ``delay@4``: tests' anonymous
    callbacks) are said once with a count (``delay ×2``), comments are named by their symbols without their text
    (``comments changed in Hooks``, see :func:`lean_comment_parts`), moved symbols are counted
    (``3 symbol(s) moved``), a class's fields past five a group are counted (``27 fields added``, see
    :func:`~code_trajectory.symbols.fields.field_parts`) and what changed outside symbols is one part (``imports, code, comments outside
    symbols``, ``code outside symbols``; ``imports changed`` alone).

    ``moves``: the symbols of ``changes`` removed that went to another file of the same change set, and those added
    that came from one (see :mod:`~code_trajectory.history.change_lines`): said moved, after the renames
    (``moved xtob to uuid.go``, ``xtob moved from util.go``), not removed or added, their members with them.
    """
    if moves is not None and (moves.out or moves.into):
        changes = moves.apart(changes)
    parts = []
    room = limit
    more = 0
    said = bare if lean else readable

    def folded(names: tuple[str, ...]) -> dict[str, str]:
        """How each name of one list is said: readable (``2nd definition of init``: a second Go ``init`` changed),
        but a name the parser told apart several times in the list bare, so that it is said once with a count
        (``parseJson ×9``, not "parseJson, 2nd definition of parseJson, ..., 9th definition of parseJson": issue 28,
        cut repetition)."""
        times: dict[str, int] = {}
        for n in names:
            times[bare(n)] = times.get(bare(n), 0) + 1
        return {n: bare(n) if times[bare(n)] > 1 else readable(n) for n in names}

    def grouped(names: tuple[str, ...]) -> list[tuple[str, list[str]]]:
        inside = set(names)
        members: dict[str, list[str]] = {}
        tops = []
        for name in names:
            # the outermost listed ancestor: a member's own members are its members too
            top = next((p for p in reversed(list(changes.ancestors(name))) if p in inside), None)
            if top is None:
                tops.append(name)
            else:
                members.setdefault(top, []).append(name)
        tops_said = folded(tuple(tops))

        def member(name: str, parent: str) -> str:
            if lean or tops_said[parent] != readable(parent):  # bare, so `f@2.g@2` is `g` under `f` (and matches)
                return bare(_member(bare(name), bare(parent), changes.language))
            return said(_member(name, parent, changes.language))

        def counted(parent: str) -> list[str]:
            """Its members as said, one named several times (two ``def initialize``) once with a count."""
            names = members.get(parent, [])
            plain = [bare(_member(bare(m), bare(parent), changes.language)) for m in names]
            out = {f"{p} ×{plain.count(p)}" if plain.count(p) > 1 else member(m, parent): None
                   for m, p in zip(names, plain)}
            return list(out)

        return [(tops_said[n], counted(n)) for n in tops]

    def listed(entries: list[tuple[str, list[str]]]) -> list[str]:
        nonlocal room, more
        merged: dict[str, tuple[int, list[str]]] = {}  # a name said once: its members together, its count
        for name, members in entries:
            times, union = merged.get(name, (0, []))
            merged[name] = (times + 1, union + [m for m in members if m not in union])
        out = []
        budget = min(room, NAMES_LISTED)  # a group's own cap: 39 modified named before the one added (click)
        for name, (times, members) in merged.items():
            if budget <= 0:
                more += times + len(members)
                continue
            shown = members[:budget - 1]
            budget -= times + len(shown)
            room -= times + len(shown)
            more += len(members) - len(shown)
            cut = ", …" if len(shown) < len(members) else ""
            said_once = f"{name} ({', '.join(shown)}{cut})" if shown else f"{name} (…)" if members else name
            out.append(said_once + (f" ×{times}" if times > 1 else ""))
        return out

    none: list[str] = []
    sections: list[tuple[str, list[tuple[str, list[str]]]]] = [
        ("modified", [(changes.modified_said(name, said_as, lean=lean), none) for name, said_as in folded(changes.modified).items()]), ("added", grouped(changes.added)),
        ("removed", grouped(changes.removed)),
        ("renamed", _renames(changes.renamed, said))]
    for label, entries in sections:
        names = listed(entries)
        if names:
            parts.append(f"{label} {', '.join(names)}")
        if more and parts:  # each group's own count
            parts[-1] += f" + {more} more"
            more = 0
    if moves is not None:
        parts += moves.parts(said)
    parts += constant_parts(changes.constants)  # by name: `constant `TIMEOUT` changed`, not "code"
    outside = [word for word, changed in (("imports", changes.imports_changed), ("top-level code",
                                                                              changes.top_level_changed))
               if changed and changes.kind not in ("added", "deleted")]
    comments = lean_comment_parts(changes) if lean else changes.comment_parts()
    if lean and "comments changed outside symbols" in comments:
        comments.remove("comments changed outside symbols")
        outside.append("comments")
    if lean and outside and outside != ["imports"]:  # one part for them all, the line says they changed
        parts.append(f"{', '.join(outside)} outside symbols".replace("top-level code", "code"))
    else:
        parts += [f"{word} changed" for word in outside]
    parts += comments
    if lean and changes.moved:
        parts.append(f"{len(changes.moved)} symbol(s) moved")
    for label, symbols in (("moved", () if lean else changes.moved), ("reformatted", changes.reformatted)):
        names = listed([(name, none) for name in folded(tuple(symbols)).values()])
        if names:
            parts.append(f"{label} {', '.join(names)}{f' + {more} more' if more else ''}")
        elif more:
            parts.append(f"{label} {more} symbol(s)")
        more = 0
    if not parts and changes.kind == "whitespace-only":  # outside every symbol (a clang-format run): said, not bare
        parts.append("whitespace-only")
    return "; ".join(parts)


_OCCURRENCE = re.compile(r"@\d+(?=$|[.(])")
#: ``A.prototype.m`` -> ``A.m``: a JavaScript prototype's method moved into ``class A``.
_INTO_CLASS = re.compile(r"(.+)\.prototype\.([^.]+) -> \1\.\2")


def _renames(pairs: tuple[tuple[str, str], ...], said: Any) -> list[tuple[str, list[str]]]:
    """The renamed entries of :func:`describe_symbols`, ``old -> new``; the methods of a JavaScript prototype moved
    into its class said once with their names (``Command.prototype.* -> Command.* (option, parse)``), not each
    twice."""
    entries: list[tuple[str, list[str]]] = []
    into: dict[str, list[str]] = {}
    for a, b in pairs:
        found = _INTO_CLASS.fullmatch(f"{a} -> {b}")
        if found is None or sum(1 for x, y in pairs if _INTO_CLASS.fullmatch(f"{x} -> {y}")) < 2:
            entries.append((renamed_said(a, b, said), []))
            continue
        key = f"{found[1]}.prototype.* -> {found[1]}.*"
        if key not in into:
            entries.append((key, into.setdefault(key, [])))
        into[key].append(found[2])
    return entries


def bare(name: str) -> str:
    """``name`` without the occurrence suffixes the parser adds to tell repeated names apart (``delay@3`` and
    ``customFetch@2.start@2`` are ``delay`` and ``customFetch.start``: see
    :func:`code_trajectory.symbols.engine.disambiguate`)."""
    return _OCCURRENCE.sub("", name)


def _member(name: str, parent: str, language: str = "") -> str:
    """``name`` under ``parent`` without its prefix: ``Pager.wait`` is ``wait``; Ruby's ``Rack::Session::Pool#call``
    under ``Rack`` is ``Session::Pool#call``; ``describe P > it parses`` under ``describe P`` is ``it parses``; and a method of the parent keeps what kind it is, ``#call`` (instance)
    or ``.build`` (singleton: ``def self.build``), as Ruby's documentation writes them."""
    if not parent:
        return name
    if name.startswith(parent + "::"):
        return name[len(parent) + 2:]
    if name.startswith(parent + TEST_SEPARATOR):  # in a test block: `it parses` under `describe Parser`
        return name[len(parent) + len(TEST_SEPARATOR):]
    if language == "ruby" and name.startswith((parent + "#", parent + ".")):
        return name[len(parent):]
    return name[len(parent) + 1:] if name.startswith(parent + ".") else name


def lean_comment_parts(changes: SymbolChanges) -> list[str]:
    """The comment and docstring changes of ``changes`` in the words of
    :meth:`~code_trajectory.symbols.SymbolChanges.comment_parts`, but named by their symbols without the comments'
    text (``docstring of `echo` changed``, ``docstring of `f` added``, ``module docstring changed``, ``comments
    changed in Hooks, parse, constant `EVALUATING```, ``comments changed outside symbols``), a change of comments only too (the file history and the diffs quote
    them; issue 28: a quoted comment made the recent log longer than ``git log --stat``). Symbols said added,
    removed or modified, and constants said changed, added or removed (``said_otherwise``), are left out."""
    skip = changes.said_otherwise
    edits = [e for e in changes.comment_edits if e.symbol not in skip and e.constant not in skip]
    plain = list(dict.fromkeys([*(bare(e.symbol) if e.symbol is not None else e.place
                                  for e in edits if not e.doc and e.place is not None),
                                *(bare(n) for n in changes.comments_changed if n not in skip)]))
    parts = doc_parts(edits, changes.language, lambda name: f"`{bare(name)}`")
    if plain:
        parts.append(f"comments changed in {', '.join(plain)}")
    if any(not e.doc and e.place is None for e in edits):
        parts.append("comments changed outside symbols")
    return parts


def _blob_loader(repo: ShadowRepo):
    return repo.read_blob_or_none


def blob_symbols(repo: ShadowRepo, oid: str, path: str) -> list[Symbol]:
    """The symbols of blob ``oid`` read as file ``path`` (relative to the root; its name chooses the grammar), in
    source order; none for no blob, an unreadable one or an unsupported language."""
    if not oid or oid == ZERO_OID:
        return []
    load = _blob_loader(repo)
    return symbols_for_blob(oid, path, lambda: load(oid)) or []


def symbol_text(repo: ShadowRepo, oid: str, symbol: Symbol) -> bytes | None:
    """The lines of ``symbol`` in blob ``oid``, joined by ``\\n`` (None when the blob cannot be read)."""
    data = _blob_loader(repo)(oid)
    return None if data is None else b"\n".join(data.split(b"\n")[symbol.start_line - 1:symbol.end_line])


def oversize_note(repo: ShadowRepo, oid: str) -> str | None:
    """The recorder's size note when blob ``oid`` stands for a file over the size cap (``not stored: 12.3 MiB``)."""
    if oid == ZERO_OID:
        return None
    found = repo.read_blob_or_none(oid)
    size = oversize_size(found) if found is not None else None
    if size is None:
        return None
    from code_trajectory.core.text import format_size

    return f"not stored: {format_size(size)} (over the size cap)"


def symbol_changes(repo: ShadowRepo, path: str, change: FileChange) -> SymbolChanges | None:
    """The symbol changes of one file change (``path`` relative to the root; None: an unsupported language, or
    content not stored)."""
    if language_for(path) is None:
        return None
    old = change.old_oid if change.old_oid != ZERO_OID else None
    new = change.new_oid if change.new_oid != ZERO_OID else None
    if any(oversize_note(repo, oid) for oid in (old, new) if oid):
        return None
    return compare_blobs(path, old, new, _blob_loader(repo))


def build(repo: ShadowRepo, entries: list[file_versions.FileVersion], shown: int,
          marks: dict[str, str] | None = None, *, complete: bool = True) -> list[Version]:
    """The last ``shown`` versions of a file, oldest first, from ``entries`` (newest first: every version when
    ``complete``, else the newest ones, and the versions are numbered back from the newest, which is 1).

    Reverts are detected over ``entries`` (by blob id); symbols, size notes and test marks are
    computed for the shown versions only.
    """
    chronological = list(reversed(entries))
    first_seen: dict[str, datetime] = {}
    reverts: dict[str, datetime | None] = {}
    previous: str | None = None
    for entry in chronological:
        blob = entry.change.new_oid
        earlier = first_seen.get(blob) if blob != ZERO_OID else None
        reverts[entry.record.oid] = earlier if (earlier is not None and blob != previous) else None
        if blob != ZERO_OID:
            first_seen[blob] = entry.record.time  # the latest occurrence wins: "matches state from"
        previous = blob
    start = len(chronological) - shown
    versions = []
    for position, entry in enumerate(chronological[start:], start + 1):
        number = position if complete else len(chronological) + 1 - position
        oversize = oversize_note(repo, entry.change.new_oid)
        versions.append(Version(number, entry, None if oversize else symbol_changes(repo, entry.path, entry.change),
                                reverts[entry.record.oid], (marks or {}).get(entry.record.oid), oversize))
    return versions
