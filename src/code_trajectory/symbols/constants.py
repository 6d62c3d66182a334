"""The constants of a file's top-level code: the names it assigns or declares outside every symbol (Python's
``TIMEOUT = 5``, ``__all__ = [...]``, ``HeaderTypes = Union[...]``, also under a top-level ``if``/``try``/``with``;
Go's ``const``/``var`` declarations, one or a block; JavaScript's and TypeScript's top-level ``const``/``let``/``var``
that are no function, class or object symbol; Rust's ``const``/``static`` items; Ruby's top-level ``CONSTANT = ...``),
so that a change there names the constant (``constant `TIMEOUT` changed``), not "top-level code changed", which tells
a model nothing it can ask about: :func:`constant_changes`.

One walk for every language, over per-language tables of node types (as :mod:`.fields` reads members). Another
language's file (Java, C#, C, C++, PHP: their constants are class members, said as fields) gives no names, and its
change outside symbols is said as before.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Any

from .base import FileAnalysis
from .registry import language_for

#: Top-level statements whose blocks hold top-level code too, per language (Python's conditional definitions, guarded
#: imports).
_STEP_INTO: dict[str, frozenset[str]] = {
    "python": frozenset({"if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
                         "except_group_clause", "finally_clause", "with_statement", "block"}),
}
#: What is no top-level code of its own, per language: imports and comments are said apart (symbols are left out by
#: their spans).
_LEAVE_OUT: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition", "decorated_definition", "import_statement",
                         "import_from_statement", "future_import_statement", "comment"}),
    "go": frozenset({"import_declaration", "comment"}),
    "javascript": frozenset({"import_statement", "comment"}),
    "rust": frozenset({"use_declaration", "extern_crate_declaration", "line_comment", "block_comment"}),
    "ruby": frozenset({"comment"}),
}
#: The declarations of one name or several, per language (a Go ``const_spec``, a JavaScript ``variable_declarator``,
#: a Rust ``const`` item, a Ruby ``X = 1``), and (:data:`_THROUGH`) the nodes between a top-level statement and them:
#: Go's ``var (...)`` block, JavaScript's ``export``, TypeScript's ``declare``.
_UNITS: dict[str, frozenset[str]] = {
    "go": frozenset({"const_spec", "var_spec"}),
    "javascript": frozenset({"variable_declarator"}),
    "rust": frozenset({"const_item", "static_item"}),
    "ruby": frozenset({"assignment"}),
}
_THROUGH: dict[str, frozenset[str]] = {
    "go": frozenset({"const_declaration", "var_declaration", "var_spec_list"}),
    "javascript": frozenset({"export_statement", "ambient_declaration", "lexical_declaration",
                             "variable_declaration"}),
}
for _table in (_LEAVE_OUT, _UNITS, _THROUGH):
    _table["typescript"] = _table["tsx"] = _table["javascript"]
#: The nodes that are a name, per language (Ruby's constants are ``CONSTANT``s, its variables no constants).
_NAME_NODES = {"ruby": frozenset({"constant"})}
_IDENTIFIERS = frozenset({"identifier"})
_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
#: The tokens of a declaration of several names that are no name's: its brackets, separators.
_PUNCTUATION = frozenset({b"(", b")", b",", b";"})
_NAMES = frozenset({"pattern_list", "tuple_pattern", "list_pattern"})
_END = 1 << 62
#: The right sides of an assignment of several names whose values pair with the names, Python's and Ruby's.
_VALUE_LISTS = frozenset({"expression_list", "tuple", "list", "right_assignment_list"})


def constant_changes(old: FileAnalysis, new: FileAnalysis) -> tuple[tuple[tuple[str, str], ...], bool]:
    """The constants whose assignments differ between two versions of one file (tokens compared: whitespace and
    comments do not count), as ``(name, "changed" | "added" | "removed")`` in source order (the new version's, then
    the removed ones in the old one's), and whether the rest of the code outside symbols (imports aside) differs too,
    or the constants' order. No names and ``True`` for a language without constants here: the caller keeps what it
    had found."""
    if new.language not in _LEAVE_OUT or old.language != new.language or old.source is None or new.source is None:
        return (), True
    old_names, old_rest = _top_level(old)
    new_names, new_rest = _top_level(new)
    said = [(n, "changed" if old_names[n] != tokens else "") if n in old_names else (n, "added")
            for n, tokens in new_names.items()]
    said += [(n, "removed") for n in old_names if n not in new_names]
    common = [n for n in new_names if n in old_names]
    reordered = common != [n for n in old_names if n in new_names]
    return tuple((n, how) for n, how in said if how), old_rest != new_rest or reordered


def has_constants(path: str) -> bool:
    """Whether the file ``path`` (relative, ``/`` separators) is of a language whose top-level constants are named
    here (by its name only: no file is read)."""
    language = language_for(path)
    return language is not None and language.name in _LEAVE_OUT


def constant_parts(constants: tuple[tuple[str, str], ...]) -> list[str]:
    """:func:`constant_changes`' names in words, by how they changed: ``constant `TIMEOUT` changed``, ``constants
    `A`, `B` added``."""
    return named_parts("constant", constants)


#: Names :func:`named_parts` lists of one kind of change at most; past it ``and N more`` (a class declaring 400
#: fields in one statement, all changed, made a log line of 3,137 characters).
NAMES_LISTED = 10


def named_parts(noun: str, changes: tuple[tuple[str, str], ...], *, counted_past: int | None = None) -> list[str]:
    """``(name, "changed" | "added" | "removed")`` pairs in words, grouped by how they changed, the ``noun`` (a
    constant, a field) made plural for several: ``constants `A`, `B` added``, at most :data:`NAMES_LISTED` names a
    group (``fields `a0`, ..., `a9` and 390 more changed``); other pairs are left out. With ``counted_past``, a group
    of more names than that is its count alone (``27 fields added``)."""
    parts = []
    for how in ("changed", "added", "removed"):
        names = [f"`{name}`" for name, said in changes if said == how]
        if counted_past is not None and len(names) > counted_past:
            parts.append(f"{len(names)} {noun}s {how}")
        elif names:
            parts.append(f"{noun}{'s' if len(names) > 1 else ''} {capped(names)} {how}")
    return parts


def capped(names: Sequence[str]) -> str:
    """``names`` (as said) joined by commas, at most :data:`NAMES_LISTED` of them, the rest counted: ``a, b``,
    ``a0, ..., a9 and 390 more``."""
    more = f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else ""
    return f"{', '.join(names[:NAMES_LISTED])}{more}"


def constant_lines(analysis: FileAnalysis, name: str) -> range | None:
    """The lines (1-based) from the first to the last declaration of the constant ``name`` in one version of a file,
    or None when it declares no such constant (a language without constants here, a name of no constant)."""
    found = constant_rows(analysis).get(name)
    return range(found[0][0] + 1, found[-1][1] + 2) if found else None


def constant_rows(analysis: FileAnalysis) -> dict[str, list[tuple[int, int]]]:
    """The rows (0-based, first and last) of each constant's declarations in one version of a file, in source order;
    empty for a language without constants here."""
    if analysis.language not in _LEAVE_OUT or analysis.source is None:
        return {}
    spans: dict[str, list[tuple[int, int]]] = {}
    _top_level(analysis, spans)
    return spans


def _top_level(analysis: FileAnalysis, spans: dict[str, list[tuple[int, int]]] | None = None
               ) -> tuple[dict[str, list[bytes]], list[bytes]]:
    """The tokens of each constant's declarations (a name assigned twice, in both branches of an ``if``: both, in
    order) and those of the rest of the top-level code (symbols, imports and comments left out); with ``spans``, the
    rows (0-based) of each declaration."""
    keys = analysis._keys
    source: bytes = keys.source
    language = analysis.language
    symbols = _merged([(keys.starts[i], keys.ends[i]) for i, parent in enumerate(keys.parents) if parent < 0])
    walk = _Walk(source, language, symbols, spans)
    with keys._lock:  # the tree is not to be used by two threads at once
        tree = keys.tree if keys.tree is not None else keys.language.parse(source)
        children = list(tree.root_node.children)
        if language == "python" and children and _docstring(children[0]):
            children = children[1:]  # the module's docstring is said apart
        for node in children:
            walk.visit(node)
    return walk.constants, walk.rest


class _Walk:
    """One file's top-level statements read into :attr:`constants` and :attr:`rest`."""

    def __init__(self, source: bytes, language: str, symbols: list[tuple[int, int]],
                 spans: dict[str, list[tuple[int, int]]] | None) -> None:
        self.source, self.language, self.symbols, self.spans = source, language, symbols, spans
        self.step_into = _STEP_INTO.get(language, frozenset())
        self.leave_out = _LEAVE_OUT[language]
        self.constants: dict[str, list[bytes]] = {}
        self.rest: list[bytes] = []

    def visit(self, node: Any) -> None:
        if node.type in self.leave_out or _inside(node, self.symbols) or _import(node, self.language):
            return
        if node.type in self.step_into:
            for child in node.children:
                self.visit(child)
            return
        candidates = [unit for unit in self._units(node) if not _overlaps(unit, self.symbols)]
        units = [(unit, names) for unit in candidates for names in [self._names(unit)] if names]
        if not units:  # a statement (or a compound statement's keyword, condition)
            self.rest.extend(tokens(node, self.source, self._symbols_in(node)))
            return
        named = {(u.start_byte, u.end_byte) for u, _names in units}
        for unit in candidates:
            if (unit.start_byte, unit.end_byte) not in named:  # Go's `_ = ...` in a block, a destructuring: no name
                self.rest.extend(tokens(unit, self.source))
        apart = _merged(self._symbols_in(node) + [(u.start_byte, u.end_byte) for u in candidates])
        shared = [t for t in tokens(node, self.source, apart)
                  if t not in _PUNCTUATION]  # `var (a = 1; b = 2)` split into `var a = 1` and `var b = 2`: unchanged
        for unit, names in units:
            own = shared + list(tokens(unit, self.source))
            where = node if len(units) == 1 else unit  # a block's declaration: its own lines
            values = paired_values(unit, len(names)) if len(names) > 1 else None
            if values is not None:  # `A, B = 1, 2`: each name with its own value, the rest shared
                frame = shared + list(tokens(unit, self.source, _merged([(v.start_byte, v.end_byte) for v in values]
                                                                        + _name_spans(unit))))
            for k, name in enumerate(names):
                if values is not None:
                    own = [*frame, b"\0", *tokens(values[k], self.source)]
                self.constants.setdefault(name, []).extend(own)
                if self.spans is not None:
                    self.spans.setdefault(name, []).append((where.start_point[0], where.end_point[0]))

    def _symbols_in(self, node: Any) -> list[tuple[int, int]]:
        """The spans of the symbols that start within ``node`` (a JavaScript declarator bound to a function)."""
        spans = self.symbols
        return spans[bisect.bisect_left(spans, (node.start_byte, 0)):bisect.bisect_left(spans, (node.end_byte, 0))]

    def _units(self, node: Any) -> list[Any]:
        """The declarations in the top-level statement ``node`` (Python's: the statement itself)."""
        if self.language == "python":
            return [node]
        if node.type in _UNITS[self.language]:
            return [node]
        if node.type in _THROUGH.get(self.language, ()):
            return [unit for child in node.named_children for unit in self._units(child)]
        return []

    def _names(self, unit: Any) -> list[str]:
        """The names one declaration binds: ``x`` of ``var x = 1``, ``a`` and ``b`` of ``var a, b = 1, 2``; none for
        Go's blank ``_``, a destructuring pattern, a Ruby variable."""
        if self.language == "python":
            return assigned(unit)
        kinds = _NAME_NODES.get(self.language, _IDENTIFIERS)
        named = unit.children_by_field_name("name") or unit.children_by_field_name("left")
        if len(named) == 1 and named[0].type == "left_assignment_list":  # Ruby's `A, B = 1, 2`
            named = named[0].named_children
        if not named or any(n.type not in kinds for n in named):
            return []
        return [text for n in named if (text := n.text.decode("utf-8", "replace")) != "_"]


def _sides(unit: Any) -> tuple[Any, Any] | None:
    """The left and right sides of a Python or Ruby assignment of several names (``A, B = 1, 2``), or None."""
    assignment = unit.named_children[0] if unit.type == "expression_statement" and unit.named_child_count else unit
    if assignment.type != "assignment":
        return None
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    return None if left is None or right is None else (left, right)


def paired_values(unit: Any, count: int) -> list[Any] | None:
    """The values of an assignment of ``count`` names, one a name in order (``A, B = 1, 2``: ``1``, ``2``); None when
    they do not pair so (``A, B = f()``, a splat, another count), and each name's tokens are the whole statement's."""
    sides = _sides(unit)
    if sides is None or sides[1].type not in _VALUE_LISTS:
        return None
    values = [v for v in sides[1].named_children if v.type not in _COMMENTS]
    if len(values) != count or any("splat" in v.type for v in values):
        return None
    return values


def _name_spans(unit: Any) -> list[tuple[int, int]]:
    """The byte spans of the names an assignment of several names binds (left out of what they share)."""
    sides = _sides(unit)
    return [] if sides is None else [(n.start_byte, n.end_byte) for n in sides[0].named_children]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte spans sorted, those that overlap made one: what :func:`_inside` and :func:`_overlaps` search by bisection
    (a file of 2,000 top-level functions and as many statements: no 4 million comparisons)."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo < out[-1][1]:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


def _inside(node: Any, spans: Sequence[tuple[int, int]]) -> bool:
    """``node`` lies within one of ``spans`` (:func:`_merged`)."""
    i = bisect.bisect_right(spans, (node.start_byte, _END)) - 1
    return i >= 0 and node.end_byte <= spans[i][1]


def _overlaps(node: Any, spans: Sequence[tuple[int, int]]) -> bool:
    """``node`` shares a byte with one of ``spans`` (:func:`_merged`)."""
    i = bisect.bisect_left(spans, (node.end_byte, 0)) - 1  # the last span starting before the node ends
    return i >= 0 and spans[i][1] > node.start_byte


def _import(node: Any, language: str) -> bool:
    """A top-level statement the language's grammar module counts as an import though no import statement: a
    CommonJS ``const x = require("x")``, a re-export ``export {x} from "./y"``, a Ruby ``require "x"``, a Rust
    ``mod x;``."""
    if language == "rust":
        return node.type == "mod_item" and node.child_by_field_name("body") is None
    if language == "ruby":
        method = node.child_by_field_name("method") if node.type == "call" else None
        return method is not None and method.text in (b"require", b"require_relative", b"load")
    if language in ("javascript", "typescript", "tsx") and node.type == "export_statement":
        return node.child_by_field_name("source") is not None  # a re-export, `export {x} from "./y"`: an import
    if language in ("javascript", "typescript", "tsx") and node.type == "lexical_declaration":
        for declarator in node.named_children:
            value = declarator.child_by_field_name("value")
            function = value.child_by_field_name("function") if value is not None and \
                value.type == "call_expression" else None
            if function is not None and function.text == b"require":
                return True
    return False


def assigned(node: Any) -> list[str]:
    """The names an ``expression_statement`` of one assignment binds (``A = B = 1``: ``A``; ``A, B = f()``: both)."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return []
    assignment = node.named_children[0]
    if assignment.type != "assignment":
        return []
    left = assignment.child_by_field_name("left")
    if left is None:
        return []
    if left.type == "identifier":
        return [left.text.decode("utf-8", "replace")]
    if left.type in _NAMES and all(c.type == "identifier" for c in left.named_children):
        return [c.text.decode("utf-8", "replace") for c in left.named_children]
    return []



def tokens(node: Any, source: bytes, skip: Sequence[tuple[int, int]] = ()) -> Iterator[bytes]:
    """The leaves of ``node`` (its tokens, comments and the nodes within a ``skip`` byte span left out), in order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _COMMENTS or skip and _inside(n, skip):
            continue
        if n.child_count == 0:
            yield source[n.start_byte:n.end_byte]
        else:
            stack.extend(reversed(n.children))


def _docstring(node: Any) -> bool:
    return node.type == "expression_statement" and node.named_child_count == 1 and \
        node.named_children[0].type == "string"
