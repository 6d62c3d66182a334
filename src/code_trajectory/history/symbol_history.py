"""One symbol's trajectory: the versions in which a function, class or method changed, each with only its own diff.

A version counts when the symbol's code, its docstring or doc comment, a comment in it, or a symbol nested in it (a
closure, a method of a class) changed. Its own lines include the doc comment directly above it (JSDoc, Javadoc,
Go). The version where the symbol first appears in the file's first recorded version is its baseline, not an
addition (it existed before, or came with its file): it is said in one line (size, first line) unless asked for its
body. Each heading says why: the snapshot's intent, the checkpoint's name (or a named point on the snapshot), or the
git operation. Each change is said once (issue 28: three times leaner than ``git log -L``): the newest diff with
:data:`SYMBOL_DIFF_CONTEXT` lines of context, older ones with their changed lines only, hunk headers without the
symbol's name (the title's), a day said at its first heading only; past the newest ``diffs`` changes
(:data:`~code_trajectory.history.render_symbol.DEFAULT_DIFFS`), :mod:`~code_trajectory.history.render_symbol` says
each in one line (why, when, ``+3 -1, lines 41-52``) with the call that shows their lines.

Followed backwards from the newest version: across renames inside the file (a removed and an added symbol with
the same body, :mod:`code_trajectory.symbols`) and across a move to another file of the same snapshot (one that
lost a symbol with the same body, or the file itself renamed) or of a nearby one of the same intent (a move in two
edits, :mod:`.symbol_moves`): its history continues there. A symbol an edit
adds back after an earlier edit removed it (``added again``) goes on with the version that removed it, looked for
among the :data:`REVIVAL_LOOKBACK` older versions; a restore or a git operation that brings it back is ``restored``
or ``added`` and goes on too."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.text import shown_pair
from code_trajectory.git import file_versions, indexed_log
from code_trajectory.git.diffs import HUNK_HEADER
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.git.trees import list_files
from code_trajectory.history import symbol_anchor, symbol_lookup
from code_trajectory.history.headings import began_recording
from code_trajectory.history.range_diff import range_diff
from code_trajectory.history.symbol_moves import Move, moved_from, moved_to
from code_trajectory.history.versions import blob_symbols, symbol_changes
from code_trajectory.symbols import Symbol, SymbolChanges, language_for, occurrences, readable
from code_trajectory.symbols.comments import describe_comments, documented_start
from code_trajectory.symbols.specs import TEST_SEPARATOR

#: Context lines around the changes of a symbol's own diff: its newest change's (whole, as ``git log -p`` minus
#: one line) and every older one's (git's answer, ``git log -L``, shows the whole range at every change).
SYMBOL_DIFF_CONTEXT = 2
#: What a symbol's baseline (its first recorded version, no change) is said to be.
BASELINE = "as first recorded"
OLDER_DIFF_CONTEXT = 0
#: Moves to another file followed at most (a guard against pathological histories).
MAX_MOVES = 10
#: Older versions of its file searched for the edit that removed a symbol an edit adds (typed back): a bound on the
#: parses a symbol truly new makes (one file version's symbols each).
REVIVAL_LOOKBACK = 32


@dataclass
class SymbolVersion:
    """One version in which the symbol changed: what happened and its own diff.

    Attributes:
        entry: the commit and the file's change in it.
        name: the symbol's qualified name in that version.
        what: ``modified``, ``docstring changed``, ``renamed from X``, ``added``, ``added again``, ``removed``,
            ``as first recorded`` ...
        diff: the unified diff of its own lines (empty for a baseline not asked for).
        note: what the heading adds to ``what`` (a baseline's size and first line: ``when recording began: 73
            lines, starts at line 12``).
    """

    entry: file_versions.FileVersion
    name: str
    what: str
    diff: str
    note: str = ""


def _file_lines(repo: ShadowRepo, oid: str) -> list[str]:
    """The blob's lines (without their ends); none for no blob."""
    if not oid or oid == ZERO_OID:
        return []
    return ((repo.read_blob_or_none(oid) or b"").decode("utf-8", "replace")).split("\n")


def _lines_of(symbol: Symbol | None, lines: list[str]) -> range:
    """The symbol's lines in its file (1-based; from its doc comment's first line when one is directly above it);
    empty for no symbol."""
    if symbol is None or not lines:
        return range(0)
    return range(documented_start(symbol), min(symbol.end_line, len(lines)) + 1)


def own_diff(repo: ShadowRepo, entry: file_versions.FileVersion, old_name: str | None, new_name: str | None,
             context: int = SYMBOL_DIFF_CONTEXT) -> str:
    """The unified diff of one symbol's own lines between the two sides of ``entry``, ``context`` lines around
    each change, aligned as git aligns the two files (:mod:`.range_diff`: a line moved within the symbol is
    removed and added where ``git log -L`` says so); hunk headers give the lines of the file
    (``@@ -12,4 +12,5 @@``: the symbol is the answer's)."""
    change = entry.change
    old_path = change.old_path or entry.path
    old_symbol = next((s for s in blob_symbols(repo, change.old_oid, old_path) if s.name == old_name), None)
    new_symbol = next((s for s in blob_symbols(repo, change.new_oid, entry.path) if s.name == new_name), None)
    old_lines, new_lines = _file_lines(repo, change.old_oid), _file_lines(repo, change.new_oid)
    return "\n".join(range_diff(repo, change.old_oid, change.new_oid, old_lines, new_lines,
                                _lines_of(old_symbol, old_lines), _lines_of(new_symbol, new_lines), context))


class NeverRecordedError(InvalidArgumentError):
    """No snapshot of the branch read holds the file."""


def trace(repo: ShadowRepo, tip: str, path: str, symbol: str, depth: int,
          show_baseline: bool = False, index_ref: str | None = None) -> tuple[str, list[SymbolVersion], bool]:
    """Follow ``symbol`` (qualified or an unambiguous short name) in ``path`` back from ``tip``.

    ``show_baseline``: give the baseline (the symbol in its file's first recorded version) its whole body as a
    diff instead of one line. ``index_ref``: the shadow ref whose commit ``tip`` is; its file index
    (:mod:`code_trajectory.git.file_index`) lists the file's versions without walking the history (the same
    versions: a stale, damaged or disagreeing index is passed over for ``git log``).

    Returns:
        ``(qualified name now, versions newest first, at most depth, whether older versions of the file are left
        that the walk stopped before at depth)``.

    Raises:
        InvalidArgumentError: the file has no symbol support, or no such symbol was ever recorded in it (the
            message names the closest names).
    """
    if language_for(path) is None:
        raise InvalidArgumentError(f"no symbol support for {path!r} (its language is not one of tree-sitter's "
                                   "grammars installed here); use get_file_trajectory or search_trajectory instead "
                                   "(CLI `code-trajectory file`, `code-trajectory search`)")
    lister = indexed_log.open_log(repo, index_ref, tip) if index_ref else None
    entries = file_versions.FileVersions(repo, tip, path, lister)  # read as far as the walk goes, not the whole history
    if not entries:
        raise NeverRecordedError(f"{path!r} was never recorded on this branch; check the path")
    name = symbol_lookup.resolve(repo, entries, path, symbol)
    current = name
    result: list[SymbolVersion] = []
    moves, ended = 0, False  # ended: the walk reached where the symbol began
    anchor: symbol_anchor.Anchor | None = None  # the symbol's text in the newer side of the next version, once known
    while entries and len(result) < depth:
        if anchor is not None and (skipped := symbol_anchor.untouched(repo, entries, anchor)):
            entries = entries[skipped:]  # its text and its scopes' first lines are there unchanged: no parse
            continue
        entry, entries = entries[0], entries[1:]
        changes = symbol_changes(repo, entry.path, entry.change)
        anchor = symbol_anchor.anchor(repo, entry.change.old_oid, entry.change.old_path or entry.path, current)
        if changes is None:
            continue
        context = OLDER_DIFF_CONTEXT if result else SYMBOL_DIFF_CONTEXT  # the newest change is shown whole

        def diff(old: str | None, new: str | None) -> str:
            return own_diff(repo, entry, old, new, context)  # noqa: B023 - called in this iteration only

        repeated = _repeated(repo, entry, current)
        if repeated is not None and repeated[0] != "added":
            how, old_name = repeated
            if how in ("modified", "reformatted"):
                what = how if how == "modified" else "reformatted (whitespace only)"
                result.append(SymbolVersion(entry, current, what, diff(old_name, current)))
            elif current in changes.docs_changed:  # its own lines kept, the doc comment above them changed
                mine = tuple(e for e in changes.comment_edits if e.symbol == current)
                what = "; ".join(describe_comments(mine, changes.language, ())) or "doc comment changed"
                result.append(SymbolVersion(entry, current, what, diff(old_name, current)))
            current = old_name
            continue
        renamed_from = next((old for old, new in changes.renamed if new == current), None)
        if renamed_from is not None:
            result.append(SymbolVersion(entry, current, f"renamed from {shown_pair(renamed_from, current, readable)[0]}",
                                        diff(renamed_from, current)))
            current = renamed_from
            continue
        renamed_from = _scope_renamed(changes, current, backwards=True) if current not in changes.added else None
        if renamed_from is not None:  # its class (or module, impl...) renamed: the same member under the old name
            result.append(SymbolVersion(entry, current, f"renamed from {shown_pair(renamed_from, current, readable)[0]}",
                                        diff(renamed_from, current)))
            current = renamed_from
            continue
        renamed_to = next((new for old, new in changes.renamed if old == current), None)
        if renamed_to is None and current not in changes.removed:
            renamed_to = _scope_renamed(changes, current, backwards=False)
        if renamed_to is not None:  # asked by its old name: it ends here, under its new one
            result.append(SymbolVersion(entry, current, f"renamed to {shown_pair(current, renamed_to, readable)[1]}", diff(current, renamed_to)))
            continue
        was = next((old for old, new in changes.aliases if new == current), None)
        if was is not None:  # named anew by another definition of its name (an overload added): the same symbol
            if current in changes.modified:
                result.append(SymbolVersion(entry, current, f"modified (named {readable(was)} before)",
                                            diff(was, current)))
            current = was
            continue
        now = next((new for old, new in changes.aliases if old == current), None) if (
            current not in changes.added and repeated is None) else None
        if now is not None:  # asked by the name it had before: it goes on under the new one
            result.append(SymbolVersion(entry, current, f"named {readable(now)} from here (another definition of "
                                        "its name came or went)", diff(current, now)))
            continue
        inner = _inner(changes, current, changes.touched)
        commented = [n for n in (current, *_inner(changes, current, changes.docs_changed + changes.comments_changed))
                     if n in changes.docs_changed or n in changes.comments_changed]
        if repeated is None and current in changes.modified:
            # its own code changed; a nested function or method changed alongside is named too
            result.append(SymbolVersion(entry, current,
                                        _nested(changes.modified_said(current, "modified"), ", also in ", changes, inner),
                                        diff(current, current)))
        elif inner and current not in changes.added and current not in changes.removed:
            result.append(SymbolVersion(entry, current, _nested("modified", " in ", changes, inner),
                                        diff(current, current)))
        elif commented:
            mine = tuple(e for e in changes.comment_edits if e.symbol in commented)
            what = "; ".join(describe_comments(mine, changes.language,
                                               tuple(n for n in commented if n in changes.comments_changed)))
            result.append(SymbolVersion(entry, current, what or "comments changed", diff(current, current)))
        elif current in changes.reformatted:  # whitespace only, as the log says it (git log -L lists it too)
            result.append(SymbolVersion(entry, current, "reformatted (whitespace only)", diff(current, current)))
        elif respaced := _inner(changes, current, changes.reformatted):  # a member's, inside its text: the same
            result.append(SymbolVersion(entry, current, _nested("reformatted (whitespace only)", " in ", changes,
                                                                respaced), diff(current, current)))
        elif current in changes.moved:  # its order among its siblings changed, nothing else (git log -L lists it)
            result.append(SymbolVersion(entry, current, "moved within the file", "", note="body unchanged"))
        elif current in changes.removed:
            went = moved_to(repo, tip, entry, current) if moves < MAX_MOVES else None
            if went is not None:  # its history goes on there (asked there, the move is said as "moved from")
                moves += 1
                result.append(_moved(entry, current, "to", went, partial(diff, current, None)))
            else:
                result.append(SymbolVersion(entry, current, "removed", diff(current, None)))
        elif current in changes.added and entries and (entry.record.kind == "restore"
                                                       or entry.record.is_git_operation):
            # brought back by a restore (or a checkout, reset, stash...): its earlier history is in older versions
            what = "restored" if entry.record.kind == "restore" else "added"
            result.append(SymbolVersion(entry, current, what, diff(None, current)))
        elif current in changes.added or repeated is not None:
            moved = moved_from(repo, tip, entry, current) if moves < MAX_MOVES else None
            if moved is None:
                if not entries and entry.change.old_oid in ("", ZERO_OID):  # the file's first recorded version
                    result.append(_baseline(repo, entry, current, show_baseline))
                    ended = True
                    break
                removal = _removed_earlier(repo, entries, current)
                result.append(SymbolVersion(entry, current, "added" if removal is None else "added again",
                                            diff(None, current)))
                if removal is None:
                    ended = True
                    break
                entries = entries[removal:]  # typed back after an edit removed it: its history goes on there
                anchor = None
                continue
            result.append(_moved(entry, current, "from", moved, partial(diff, None, current)))
            moves += 1
            current = moved.name
            # the other file's history goes on before the snapshot that took it out (a move in two snapshots: maybe
            # one before this one), or else it would say that removal again
            start = moved.earlier or entry.record
            parent = start.parents[0] if start.parents else None
            entries = file_versions.FileVersions(repo, parent, moved.path, lister)
    _said_once(result)
    return name, result, not ended and bool(entries) and len(result) >= depth


def _scope_renamed(changes: SymbolChanges, name: str, *, backwards: bool) -> str | None:
    """``name``'s other name across a rename of a scope it is in (``Bar.run`` when class ``Foo`` became ``Bar``, Ruby's
    ``Bar#run``, a test block's ``describe Bar > it runs``):
    the old name of the new side's ``name`` (``backwards``), else the new name of the old side's ``name``; None when
    no enclosing scope of it was renamed."""
    for old, new in changes.renamed:
        this, other = (new, old) if backwards else (old, new)
        for separator in (".", "::", "#", TEST_SEPARATOR):  # Ruby's `Foo#run`, a test block's `describe P > it x`
            if name.startswith(this + separator):
                return other + name[len(this):]
    return None


def _removed_earlier(repo: ShadowRepo, entries: file_versions.FileVersions, name: str) -> int | None:
    """Where in ``entries`` (older versions of the file, newest first) the version that removed ``name`` is: the
    newest whose older side has it, among the first :data:`REVIVAL_LOOKBACK`, when that version removed it (not
    renamed it: the name then belongs to another symbol's history); None when there is none."""
    for i, entry in enumerate(itertools.islice(entries, REVIVAL_LOOKBACK)):
        if entry.change.old_oid not in ("", ZERO_OID) and any(
                s.name == name for s in blob_symbols(repo, entry.change.old_oid, entry.change.old_path or entry.path)):
            changes = symbol_changes(repo, entry.path, entry.change)
            renamed = changes is not None and any(old == name for old, _new in changes.renamed)
            return i if changes is not None and name in changes.removed and not renamed else None
    return None


def _repeated(repo: ShadowRepo, entry: file_versions.FileVersion, name: str) -> tuple[str, str] | None:
    """For one of several definitions of a name (``fetch@31``: numbered in source order, so a definition added
    above it renumbers it), what ``entry`` did to it: ``("same", old name)``, ``("modified", old name)``,
    ``("reformatted", old name)`` or ``("added", name)``. The old definition is the only one with its tokens (whitespace
    aside: one wrapped in an ``if`` is re-indented), else the one git's diff of the file maps most of its non-blank
    lines to (as ``git log -L`` follows a range), not the one with the same number; None when the name is not
    repeated on either side."""
    change = entry.change
    new = occurrences(blob_symbols(repo, change.new_oid, entry.path), name)
    old = occurrences(blob_symbols(repo, change.old_oid, change.old_path or entry.path), name)
    if len(new) < 2 and len(old) < 2:
        return None
    mine = next((s for s in new if s.name == name), None)
    if mine is None:
        return None
    alike = [s for s in old if s.body_key == mine.body_key]  # its tokens, re-indented into an ``if``: that one
    lines = _file_lines(repo, change.new_oid)
    if len(alike) == 1 and sum(s.body_key == mine.body_key for s in new) == 1:
        before = alike[0]
        if before.text_hash == mine.text_hash:
            return "same", before.name  # a doc comment changed above it is said by the caller
        old_lines = _file_lines(repo, change.old_oid)
        same_doc = [x.strip() for x in lines[documented_start(mine) - 1:mine.start_line - 1]] == [
            x.strip() for x in old_lines[documented_start(before) - 1:before.start_line - 1]]
        return ("reformatted" if same_doc else "modified"), before.name
    to_old = _line_map(file_versions.file_patch(repo, entry, context=0))
    votes: dict[str, int] = {}
    for line in range(mine.start_line, mine.end_line + 1):
        was = to_old(line) if line <= len(lines) and lines[line - 1].strip() else None  # a blank line is no vote
        hit = next((s for s in old if was is not None and s.start_line <= was <= s.end_line), None)
        if hit is not None:
            votes[hit.name] = votes.get(hit.name, 0) + 1
    if not votes:
        return "added", name
    before = next(s for s in old if s.name == max(votes, key=lambda n: votes[n]))
    return ("same" if before.text_hash == mine.text_hash else "modified"), before.name



def _line_map(patch: str):
    """A function from a line of the new side of ``patch`` (a unified diff without context lines) to the same
    line on the old side, or None for a line the diff added or changed."""
    hunks = [(int(b or 1), int(c), int(d or 1)) for _a, b, c, d, _section in HUNK_HEADER.findall(patch)]

    def to_old(line: int) -> int | None:
        delta = 0
        for removed, start, added in hunks:
            if added and line < start or not added and line <= start:
                break
            if added and line < start + added:
                return None
            delta += removed - added
        return line + delta

    return to_old


def _said_once(versions: list[SymbolVersion]) -> None:
    """A move whose body is the one the version before it added (its whole body shown there, byte for byte) is said
    in its heading (``body unchanged``) instead of as a second copy of that body. ``versions``: newest first."""
    for moved, before in zip(versions, versions[1:]):
        if (moved.what.startswith("moved from ") and before.what == "added" and moved.diff and before.diff
                and _added_lines(moved.diff) == _added_lines(before.diff)):
            moved.diff, moved.note = "", "body unchanged"


def _added_lines(diff: str) -> list[str]:
    return [line for line in diff.split("\n") if not line.startswith("@@")]


def _nested(what: str, link: str, changes: SymbolChanges, inner: list[str]) -> str:
    """``what`` with the nested symbols that changed (``modified in Foo.run``), those added or removed said so
    (``modified; removed Foo.new``), not as changed in there."""
    changed = [readable(n) for n in inner if n not in changes.added and n not in changes.removed]
    said = [what + (link + ", ".join(changed) if changed else "")]
    said += [f"{verb} {', '.join(readable(n) for n in inner if n in names)}" for verb, names in (
        ("added", changes.added), ("removed", changes.removed)) if any(n in names for n in inner)]
    return "; ".join(said)


def _inner(changes: SymbolChanges, name: str, names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` lexically nested in ``name`` (a closure in a function, a method in a class): their
    changes are changes of ``name``'s code, although :func:`code_trajectory.symbols.compare` reports only the
    innermost symbol (``modified Ky.create.function_``, not ``Ky.create``)."""
    return [changed for changed in dict.fromkeys(names) if name in changes.ancestors(changed)]


def other_definitions(repo: ShadowRepo, tip: str, path: str, name: str) -> list[str]:
    """The other definitions of ``name`` (a qualified name without an occurrence suffix) in ``path`` as snapshot
    ``tip`` holds it (none when it does not): ``["init@2"]`` beside ``init`` (two Go ``init`` functions, see
    :func:`~code_trajectory.symbols.engine.disambiguate`), in source order; ``[]`` when it is the only one."""
    if "@" in name:
        return []
    entry = list_files(repo, repo.commit_tree_oid(tip), [path]).get(path)  # one ls-tree, no walk
    symbols = blob_symbols(repo, entry.oid, path) if entry is not None else []
    return [s.name for s in occurrences(symbols, name) if s.name != name]


def _baseline(repo: ShadowRepo, entry: file_versions.FileVersion, name: str, show: bool) -> SymbolVersion:
    """The symbol as its file's first recorded version had it: one line (its size, where it starts), or its body."""
    symbol = next((s for s in blob_symbols(repo, entry.change.new_oid, entry.path) if s.name == name), None)
    file_lines = _file_lines(repo, entry.change.new_oid)
    span = _lines_of(symbol, file_lines)
    start, lines = span.start, file_lines[span.start - 1:span.stop - 1] if span else []
    where = "when recording began" if began_recording(entry.record) else "with its file"
    note = f"{where}: {len(lines)} line{'s' if len(lines) != 1 else ''}, starts at line {start or '?'}"
    if not show:
        note += "; its body: show_baseline=true, CLI `--baseline`"
    return SymbolVersion(entry, name, BASELINE, own_diff(repo, entry, None, name) if show else "", note)


def _moved(entry: file_versions.FileVersion, name: str, way: str, where: Move,
           diff: Callable[[], str]) -> SymbolVersion:
    """The version of ``name`` moved ``way`` (``from``, ``to``) ``where`` (:func:`.symbol_moves.counterpart`'s
    answer): ``moved from src/util.py (other name)``, its ``diff`` shown unless its text moved byte for byte (``body
    unchanged``)."""
    other_path, other_name, same_text = where.path, where.name, where.same
    what = f"moved {way} {other_path}" + ("" if other_name == name else f" ({readable(other_name)})")
    if same_text:
        return SymbolVersion(entry, name, what, "", "body unchanged")
    return SymbolVersion(entry, name, what, diff())
