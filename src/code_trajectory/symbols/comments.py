"""Which comments, docstrings and doc comments changed between two versions of a file, and to whom they belong.

:func:`comment_edits` lists the comments that differ (added, removed or changed; whitespace inside a comment
does not count), each attributed:

* to the symbol it *documents*: a Python docstring (a string as the first statement of a ``def``/``class``
  body; at the top of the file, the module's docstring), or a comment with one of the language's
  :attr:`doc_prefixes <code_trajectory.symbols.engine.TreeSitterLanguage.doc_prefixes>` (``/**`` for
  JSDoc and Javadoc, ``///`` for Rust and C#, any ``//`` for Go: the conventions of ``jsdoc``, ``javadoc``,
  ``rustdoc`` and ``go doc``) directly above the definition or at the start of its span, with no blank line
  between (a run of ``///`` lines is one doc comment);
* else to the innermost symbol around it, or to the file (``symbol`` None).

:func:`describe_comments` says them in words for the narratives: ``docstring of `echo` changed``, and a
short comment edit with its text (``comment in `foo`: `# old` → `# new```).

Cost: nothing is computed unless the file's comments differ (:func:`code_trajectory.symbols.same.same_comments`);
then one ``extras`` query per version over the whole file (the syntax tree is reparsed when it was released).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from code_trajectory.core.text import shown_pair

from .base import FileAnalysis, Symbol
from .chunks import COMMENT
from .constants import constant_rows

#: A comment is quoted in a narrative when it has at most this many lines and characters on each side
#: (longer ones are named only: ``comments changed in foo``).
SHORT_COMMENT_LINES = 3
SHORT_COMMENT_CHARS = 200
#: How far above a definition its doc comment may start (bytes).
DOC_LOOKBACK_BYTES = 16384
#: At most this many comment edits are quoted in one file's line; more are named only.
MAX_QUOTED_EDITS = 3

_TOKENS = re.compile(rb"\w+|\S")
#: Node types whose body's first string statement is a Python docstring.
_DOCSTRING_OWNERS = frozenset({"function_definition", "class_definition", "module"})


@dataclass(frozen=True, slots=True)
class CommentEdit:
    """One comment that changed between two versions of a file.

    Attributes:
        symbol: the qualified name (in the new version) of the symbol the comment documents (``doc``) or sits
            in; ``None`` for the file itself (a module docstring, a comment outside every symbol).
        doc: the comment is a docstring or doc comment of ``symbol`` (of the module when ``symbol`` is None).
        old, new: the comment's exact text before / after; ``None`` when it was added / removed.
        part: a line of a doc comment (a run of ``///`` or ``//`` lines) that was added or removed while the
            symbol's doc comment was there before and stays: the doc comment changed (see :attr:`how`).
        constant: for a comment outside every symbol, the top-level constant whose declaration's lines hold it
            (``const EVALUATING = /* @__PURE__*/ Symbol(...)``, see :mod:`.constants`), else None.
    """

    symbol: str | None
    doc: bool
    old: str | None
    new: str | None
    part: bool = False
    constant: str | None = None

    @property
    def place(self) -> str | None:
        """Where the comment is as said: its symbol's name quoted (``Auth.login``), ``constant `EVALUATING```, or
        None outside every symbol and constant."""
        if self.symbol is not None:
            return _code(self.symbol)
        return f"constant `{self.constant}`" if self.constant is not None else None

    @property
    def how(self) -> str:
        """``"added"`` (no such comment before), ``"removed"`` (none after) or ``"changed"``."""
        if self.part or (self.old is None) == (self.new is None):
            return "changed"
        return "added" if self.old is None else "removed"


@dataclass(frozen=True, slots=True)
class _Comment:
    start: int
    end: int
    text: bytes
    key: bytes  # tokens only: whitespace inside a comment does not count
    symbol: str | None
    doc: bool
    constant: str | None = None


def comment_edits(old: FileAnalysis, new: FileAnalysis, old_to_new: dict[str, str]) -> tuple[CommentEdit, ...]:
    """The comments that differ between two analysed versions of one file, in the new version's order.

    Args:
        old, new: analyses of the two versions (neither skipped).
        old_to_new: qualified names of the old version matched to the new one (renames); names absent
            from it are kept as they were.

    Returns:
        The edits (see :class:`CommentEdit`); a changed comment pairs its old and new text, in order.
    """
    before = [c if c.symbol is None else _Comment(c.start, c.end, c.text, c.key, old_to_new.get(c.symbol, c.symbol),
                                                   c.doc, c.constant)
              for c in _comments(old)]
    after = _comments(new)
    # unchanged: the same text under the same owner on both sides (a comment moving with its symbol is unchanged)
    left: dict[tuple[str | None, bytes], list[int]] = {}
    for n, c in enumerate(before):
        left.setdefault((c.symbol, c.key), []).append(n)
    added = []
    for c in after:
        same = left.get((c.symbol, c.key))
        if same:
            same.pop(0)
        else:
            added.append(c)
    removed = sorted(n for ns in left.values() for n in ns)
    # what is left under one owner is paired in order (a changed comment), the rest is added or removed
    gone: dict[tuple[str | None, str | None], list[_Comment]] = {}  # by symbol, and by constant outside them
    for n in removed:
        gone.setdefault((before[n].symbol, before[n].constant), []).append(before[n])
    # a doc comment line added (removed) where the symbol keeps a doc comment: that doc comment changed
    documented = ({c.symbol for c in before if c.doc}, {c.symbol for c in after if c.doc})
    edits: list[tuple[int, CommentEdit]] = []
    for c in added:
        mine = gone.get((c.symbol, c.constant)) or []
        o = next((x for x in mine if x.doc == c.doc), mine[0] if mine else None)  # a docstring pairs a docstring
        if o is not None:
            mine.remove(o)
        doc = c.doc or (o is not None and o.doc)
        edits.append((c.start, CommentEdit(c.symbol, doc, _text(o), _text(c), doc and c.symbol in documented[0],
                                           c.constant)))
    for rest in gone.values():
        edits += [(_new_position(o, new), CommentEdit(o.symbol, o.doc, _text(o), None,
                                                      o.doc and o.symbol in documented[1], o.constant)) for o in rest]
    edits.sort(key=lambda pair: pair[0])
    return tuple(edit for _, edit in edits)


def _new_position(comment: _Comment, new: FileAnalysis) -> int:
    """Where a removed comment's owner is in the new version (the end of the file for the file's own)."""
    keys = new._keys
    for s in new.symbols:
        if s.name == comment.symbol:
            return keys.starts[s._index]
    return len(keys.source)


def _text(comment: _Comment | None) -> str | None:
    return None if comment is None else comment.text.decode("utf-8", "replace")


def _comments(analysis: FileAnalysis) -> list[_Comment]:
    """Every comment (Python: docstring) of one version with its owner, in source order."""
    keys = analysis._keys
    language = keys.language
    source: bytes = keys.source
    with keys._lock:  # the syntax tree is not to be queried by two threads at once
        tree = keys.tree if keys.tree is not None else language.parse(source)
        spans = sorted({(s, e) for s, e, kind, _ in language.specials(tree, 0, len(source)) if kind == COMMENT})
        docstrings = {(s, e) for s, e in spans if _is_docstring(tree, s, e)} if language.docstrings else set()
    symbols = [(keys.starts[s._index], keys.ends[s._index], s.name) for s in analysis.symbols]
    prefixes = tuple(p.encode() for p in getattr(language, "doc_prefixes", ()))
    runs = _runs(source, spans) if prefixes else {}
    found = []
    for s, e in spans:
        text = source[s:e]
        owner = _innermost(symbols, s)
        doc = (s, e) in docstrings
        if not doc and prefixes and text.startswith(prefixes) and _starts_line(source, s):
            run_start, run_end = runs[(s, e)]
            documented = _documented(symbols, source, run_start, run_end)
            if documented is not None:
                owner, doc = documented, True
        found.append(_Comment(s, e, text, b" ".join(_TOKENS.findall(text)), owner, doc))
    if any(c.symbol is None and not c.doc for c in found):  # outside every symbol: in a constant's declaration?
        rows = [(lo, hi, name) for name, spans in constant_rows(analysis).items() for lo, hi in spans]
        if rows:
            found = [_in_constant(c, source, rows) if c.symbol is None and not c.doc else c for c in found]
    return found


def _in_constant(comment: _Comment, source: bytes, rows: list[tuple[int, int, str]]) -> _Comment:
    """``comment`` (outside every symbol) with the constant whose declaration's rows hold its first row, if any."""
    row = source.count(b"\n", 0, comment.start)
    name = next((name for lo, hi, name in rows if lo <= row <= hi), None)
    if name is None:
        return comment
    return _Comment(comment.start, comment.end, comment.text, comment.key, None, False, name)


def _is_docstring(tree: Any, start: int, end: int) -> bool:
    """The comment span is a string that is the first statement of a ``def``/``class`` body or of the module."""
    node = tree.root_node.descendant_for_byte_range(start, end)
    if node is None or node.type != "string":
        return False
    statement = node.parent
    holder = statement.parent if statement is not None else None
    if holder is not None and holder.type == "block":
        holder = holder.parent
    return holder is not None and holder.type in _DOCSTRING_OWNERS


def _runs(source: bytes, spans: list[tuple[int, int]]) -> dict[tuple[int, int], tuple[int, int]]:
    """Per comment, the start and end of the run of comments it belongs to (adjacent: no blank line between)."""
    runs: dict[tuple[int, int], tuple[int, int]] = {}
    group: list[tuple[int, int]] = []

    def close() -> None:
        for span in group:
            runs[span] = (group[0][0], group[-1][1])

    for span in spans:
        if group and not _adjacent(source, group[-1][1], span[0]):
            close()
            group = []
        group.append(span)
    close()
    return runs


def _adjacent(source: bytes, end: int, start: int) -> bool:
    """Only whitespace between ``end`` and ``start``, with at most one line break."""
    gap = source[end:start]
    return not gap.strip() and gap.count(b"\n") <= 1


def _starts_line(source: bytes, start: int) -> bool:
    """Only whitespace before ``start`` on its line: a comment ending a line of code (``class A < B # :nodoc:``)
    is that line's, never the doc comment of the definition below it."""
    return not source[source.rfind(b"\n", 0, start) + 1:start].strip()


def _innermost(symbols: list[tuple[int, int, str]], pos: int) -> str | None:
    best = None
    best_start = -1
    for s, e, name in symbols:
        if s <= pos < e and s >= best_start:
            best, best_start = name, s
    return best


def _documented(symbols: list[tuple[int, int, str]], source: bytes, run_start: int, run_end: int) -> str | None:
    """The symbol a run of doc comments documents: one starting right after it (whitespace, one line break at
    most), or one whose span starts with it (Rust's spans hold their doc comments)."""
    for s, _, name in symbols:
        if s == run_start or (s >= run_end and _adjacent(source, run_end, s)):
            return name
    return None


# ------------------------------------------------------------------------------------------------ narrative


def _quote(text: str) -> str:
    one = " ".join(text.split())
    return f"`` {one} ``" if "`" in one else f"`{one}`"


def _short(text: str | None) -> bool:
    return text is None or (text.count("\n") < SHORT_COMMENT_LINES and len(text) <= SHORT_COMMENT_CHARS)


def _code(name: str) -> str:
    from .lookup import readable

    return readable(name, quote=True)


def doc_parts(edits: tuple[CommentEdit, ...] | list[CommentEdit], language: str, said: Callable[[str], str],
              skip: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The docstrings and doc comments of ``edits`` in words, grouped by how they changed (changed, added,
    removed; a symbol whose doc edits differ in how is said changed), then the module's: ``docstrings of `a`,
    `b` changed``, ``docstring of `c` added``, ``module doc comment removed``.

    Args:
        edits: comment edits (:func:`comment_edits`); those of no docstring are left out.
        language: the language module's name (``python`` says "docstring", others "doc comment").
        said: how a symbol's name is written (``_split_opt`` quoted in backquotes).
        skip: symbols whose change is already said otherwise: their edits are left out.
    """
    word = "docstring" if language == "python" else "doc comment"
    hows: dict[str | None, set[str]] = {}
    for e in edits:
        if e.doc and e.symbol not in skip:
            hows.setdefault(e.symbol, set()).add(e.how)
    ways = {name: next(iter(found)) if len(found) == 1 else "changed" for name, found in hows.items()}
    parts = []
    for how in ("changed", "added", "removed"):
        names = list(dict.fromkeys(said(n) for n, way in ways.items() if n is not None and way == how))
        if names:
            parts.append(f"{word}{'s' if len(names) > 1 else ''} of {', '.join(names)} {how}")
    if None in ways:
        parts.append(f"module {word} {ways[None]}")
    return parts


def describe_comments(edits: tuple[CommentEdit, ...], language: str, comments_changed: tuple[str, ...] = (),
                      skip: frozenset[str] = frozenset()) -> list[str]:
    """The narrative's words for comment edits: documented symbols first, then the other comments.

    Args:
        edits: the file's edits (:func:`comment_edits`).
        language: the language module's name (``python`` says "docstring", others "doc comment").
        comments_changed: symbols whose own comments changed, named when their edits are not quoted.
        skip: symbols (and top-level constants) whose change is already said otherwise (modified, added, removed):
            their edits are left out (``TIMEOUT = 5  # seconds`` removed is said once, as the constant's removal).

    Returns:
        Parts such as ``docstring of `echo` changed`` (``added``, ``removed``: :func:`doc_parts`),
        ``module docstring changed``,
        ``comment in `foo`: `# old` → `# new```, ``comments changed in foo, bar``; a comment outside every symbol
        in a top-level constant's declaration is said in it: ``comment added in constant `EVALUATING`: ...``.
    """
    parts = doc_parts(edits, language, _code, skip)
    plain = [e for e in edits if not e.doc and e.symbol not in skip and e.constant not in skip]
    quoted = len(plain) <= MAX_QUOTED_EDITS and all(_short(e.old) and _short(e.new) for e in plain)
    if quoted:
        for e in plain:
            where = f" in {e.place}" if e.place else ""
            if e.old is None:
                parts.append(f"comment added{where}: {_quote(e.new or '')}")
            elif e.new is None:
                parts.append(f"comment removed{where.replace(' in ', ' from ')}: {_quote(e.old)}")
            else:
                old, new = shown_pair(e.old, e.new, _quote)  # a no-break space made a space: escaped
                parts.append(f"comment{where}: {old} → {new}")
    names = list(dict.fromkeys([*(e.place for e in plain if e.place is not None),
                                *(_code(n) for n in comments_changed if n not in skip)]))
    if quoted:
        names = [n for n in names if n not in {e.place for e in plain}]
    if names:
        parts.append(f"comments changed in {', '.join(names)}")
    if not quoted and any(e.place is None for e in plain):
        parts.append("comments changed outside symbols")
    return parts


def documented_start(symbol: Symbol) -> int:
    """The first line (1-based) of ``symbol`` with the doc comment directly above it (see :func:`comment_edits`),
    else its :attr:`~code_trajectory.symbols.base.Symbol.start_line`; for a symbol built without its source,
    its start line."""
    found = _doc_above(symbol)
    if found is None:
        return symbol.start_line
    source, first, start = found
    return symbol.start_line - source.count(b"\n", first, start)


def doc_text(symbol: Symbol) -> bytes:
    """The exact text of the doc comment directly above ``symbol`` (see :func:`documented_start`), the whitespace
    between it and the symbol left out; ``b""`` when it has none."""
    found = _doc_above(symbol)
    return b"" if found is None else found[0][found[1]:found[2]].rstrip()


def doc_reformatted(old: dict[str, Symbol], new: tuple[Symbol, ...], reverse: dict[str, str],
                    containers: list[str | None], said: set[str]) -> list[str]:
    """The symbols whose doc comment above them changed in whitespace only (``/**`` realigned by a code style
    fixer): the members of ``containers`` (symbols whose own text changed in whitespace only, where their members'
    doc comments lie) and, with ``None`` among them, the file-level symbols; those in ``said`` (already named) are
    left out. Old symbols are found by ``reverse`` (new name -> old name). In the new version's order."""
    out = []
    for s in new:
        o = old.get(reverse.get(s.name, ""))
        if o is None or s.parent not in containers or s.name in said:
            continue
        gap_before, gap_after = _gap(o), _gap(s)  # a changed text is a doc edit (docs_changed), else code
        if gap_before != gap_after and gap_before.split() == gap_after.split() and doc_text(o) != doc_text(s):
            out.append(s.name)
    return out


def _gap(symbol: Symbol) -> bytes:
    """The bytes between the end of the symbol before ``symbol`` (or the start of its container, or of the file) and
    its start: where its doc comment is; compared before the doc comment is looked for, which parses."""
    keys = symbol._keys
    i = symbol._index
    start = keys.starts[i]
    before = max((e for e in keys.ends if e <= start), default=0)
    parent = keys.parents[i]
    return keys.source[max(before, keys.starts[parent] if parent >= 0 else 0):start]


def _doc_above(symbol: Symbol) -> tuple[bytes, int, int] | None:
    """``(source, first, start)``: the bytes where the doc comment directly above ``symbol`` starts and where the
    symbol starts; ``None`` when it has none (or its language has no doc comments, or it was built without its
    source)."""
    keys = symbol._keys
    language: Any = getattr(keys, "language", None)
    prefixes = tuple(p.encode() for p in getattr(language, "doc_prefixes", ()))
    if language is None or not prefixes:
        return None
    source: bytes = keys.source
    start = keys.starts[symbol._index]
    lo = max(0, start - DOC_LOOKBACK_BYTES)
    with keys._lock:
        tree = keys.tree if keys.tree is not None else language.parse(source)
        spans = sorted({(s, e) for s, e, kind, _ in language.specials(tree, lo, start) if kind == COMMENT and e <= start})
    first = start
    for s, e in reversed(spans):
        if not source[s:e].startswith(prefixes) or not _adjacent(source, e, first) or not _starts_line(source, s):
            break
        first = s
    return None if first == start else (source, first, start)


def top_exact(analysis: FileAnalysis) -> list[bytes]:
    """The exact text outside every file-level symbol, in stretches, stripped."""
    keys = analysis._keys
    return [raw.strip() for raw in keys.raw_chunks(keys.top_chunks())]


def only_docs_differ(o: Symbol, s: Symbol, realigned: list[str], old_by: dict[str, Symbol],
                     new_by: dict[str, Symbol], reverse: dict[str, str]) -> bool:
    """The own text of a container (old ``o``, new ``s``) equal once its realigned members' doc comments are taken
    out: they are said as their members' changes, not as the container's."""
    def text(symbol: Symbol, docs: list[bytes]) -> bytes:
        joined = b"\0".join(symbol._keys.own_exact(symbol._index))
        for doc in docs:
            joined = joined.replace(doc, b"", 1)
        return joined

    mine = [n for n in realigned if new_by[n].parent == s.name]
    return text(o, [doc_text(old_by[reverse[n]]) for n in mine]) == text(s, [doc_text(new_by[n]) for n in mine])
