"""Telling, without parsing, that versions of a file left one symbol alone (:func:`untouched`), for the walk of
:func:`~code_trajectory.history.symbol_history.trace`: each older side that holds the symbol's text exactly once, in
its own scope, is passed over unparsed."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from code_trajectory.git import file_versions
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.history.versions import blob_symbols
from code_trajectory.symbols.base import CLASS_LIKE_KINDS, NAMESPACE_KINDS, OVERLOAD_SUFFIX
from code_trajectory.symbols.comments import documented_start

#: Kinds of symbols that hold others: the nearest one opened above the symbol's text must be its parent.
_CONTAINERS = CLASS_LIKE_KINDS | NAMESPACE_KINDS


@dataclass
class Anchor:
    """What tells, without parsing, that a version left a symbol alone: the exact text of its lines (its doc
    comment included, a line of context each side; whole lines, between line breaks) and the first line of each
    enclosing symbol (a renamed class renames its methods), the first lines of the file's other classes, modules
    and the like (a method moved from one module to another with its text and surroundings alike is no version
    that left it alone), and how often the blob has its own name's word: another definition of that name coming or
    going names it anew (``Foo.bar`` -> ``Foo.bar(String)``), and the first lines of its siblings next to it, the one
    above and the one below (a move among its siblings between blank lines keeps its text and context alike)."""

    text: bytes
    scopes: list[bytes]
    others: list[bytes]
    word: re.Pattern[bytes]
    uses: int
    above: bytes | None = None
    below: bytes | None = None

    def holds(self, data: bytes) -> bool:
        """``data`` (an older side) holds the symbol's text once, every scope line, the nearest class or module
        line above the text being its parent's, its siblings next to it still above and below it, and its name's
        word as often."""
        padded = b"\n" + data + b"\n"
        if padded.count(self.text) != 1 or not all(line in data for line in self.scopes):
            return False
        at = padded.find(self.text)
        above = padded[:at + self.text.index(b"\n", 1) + 1]  # up to its context line's end
        if self.above is not None and b"\n%s\n" % self.above not in above:
            return False
        if self.below is not None and b"\n%s\n" % self.below not in padded[at + self.text.rindex(b"\n", 0, -1):]:
            return False
        if self.scopes:
            own = above.rfind(b"\n%s\n" % self.scopes[0])
            if own < 0 or any(above.rfind(b"\n%s\n" % line) > own for line in self.others):
                return False
        return len(self.word.findall(data)) == self.uses


def anchor(repo: ShadowRepo, oid: str, path: str, name: str) -> Anchor | None:
    """The anchor of ``name`` in blob ``oid`` (parsed already: the symbol cache has it), or None when it is not
    there, or its name depends on other definitions (a ``@N`` occurrence suffix)."""
    if "@" in name:
        return None
    symbols = blob_symbols(repo, oid, path)
    symbol = next((s for s in symbols if s.name == name), None)
    data = repo.read_blob_or_none(oid) if symbol is not None else None
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
    others = [lines[s.start_line - 1] for s in symbols if s.kind in _CONTAINERS and s.name != symbol.parent
              and not symbol.start_line <= s.start_line <= symbol.end_line]
    others = [line for line in dict.fromkeys(others) if not scopes or line != scopes[0]]
    siblings = [s for s in symbols if s.parent == symbol.parent and s.name != symbol.name]
    above = max((s for s in siblings if s.start_line < symbol.start_line), key=lambda s: s.start_line, default=None)
    below = min((s for s in siblings if s.start_line > symbol.end_line), key=lambda s: s.start_line, default=None)
    word = OVERLOAD_SUFFIX.sub("", symbol.short_name).encode()
    uses = re.compile(rb"(?<![\w$])" + re.escape(word) + rb"\s*\(")  # as definitions write it: get(, not get_min(
    # a line of context each side, whole lines: a doc comment or attribute removed above it is a change to read
    return Anchor(b"\n%s\n" % b"\n".join(lines[max(documented_start(symbol) - 2, 0):symbol.end_line + 1]), scopes,
                  others, uses, len(uses.findall(data)), None if above is None else lines[above.start_line - 1],
                  None if below is None else lines[below.start_line - 1]) if word else None


def untouched(repo: ShadowRepo, entries: file_versions.FileVersions, anchor: Anchor) -> int:
    """How many of the next ``entries`` left the symbol alone: each one's older side :meth:`~Anchor.holds` it, so it
    changed other lines of the file only (a rename, an addition or a deletion of the file is read). Only versions
    read already are looked at (at least the next one); their older sides are read 64, then
    :data:`ShadowRepo.BATCH` a round trip (reading past the end of the run costs less than a round trip more on a
    loaded machine)."""
    eligible = []
    for entry in itertools.islice(entries, max(entries.ready(), 1)):
        change = entry.change
        if change.old_path or change.status != "M" or not change.old_oid or change.old_oid == ZERO_OID:
            break
        eligible.append(change.old_oid)
    alone, ended = 0, False

    def visit(found: tuple[str, bytes] | None) -> None:
        nonlocal alone, ended
        data = found[1] if found is not None and found[0] == "blob" else None
        if ended or data is None or not anchor.holds(data):
            ended = True
        else:
            alone += 1

    size = 64
    while alone < len(eligible) and not ended:
        repo.each_object(eligible[alone:alone + size], visit)
        size = repo.BATCH
    return alone
