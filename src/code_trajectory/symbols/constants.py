"""The constants of a file's top-level code: the names it assigns outside every symbol (``TIMEOUT = 5``,
``__all__ = [...]``, ``HeaderTypes = Union[...]``, also under a top-level ``if``/``try``/``with``: ``if
sys.version_info >= (3, 11): ...``), so that a change there names the constant (``constant `TIMEOUT` changed``), not
"top-level code changed", which tells a model nothing it can ask about: :func:`constant_changes`.

Python only (its constants are plain assignments, which are no symbols); another language's file gives no names, and
its change outside symbols is said as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .base import FileAnalysis

#: Top-level statements whose blocks hold top-level code too (a conditional definition, a guarded import).
_STEP_INTO = frozenset({"if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
                        "except_group_clause", "finally_clause", "with_statement", "block"})
#: What is no top-level code of its own: symbols, imports and comments are said apart.
_LEAVE_OUT = frozenset({"function_definition", "class_definition", "decorated_definition", "import_statement",
                        "import_from_statement", "future_import_statement", "comment"})
_NAMES = frozenset({"pattern_list", "tuple_pattern", "list_pattern"})


def constant_changes(old: FileAnalysis, new: FileAnalysis) -> tuple[tuple[tuple[str, str], ...], bool]:
    """The constants whose assignments differ between two versions of one file (tokens compared: whitespace and
    comments do not count), as ``(name, "changed" | "added" | "removed")`` in source order (the new version's, then
    the removed ones in the old one's), and whether the rest of the code outside symbols (imports aside) differs too,
    or the constants' order. No names and ``True`` for a language without constants here: the caller keeps what it
    had found."""
    if new.language != "python" or old.source is None or new.source is None:
        return (), True
    old_names, old_rest = _top_level(old)
    new_names, new_rest = _top_level(new)
    said = [(n, "changed" if old_names[n] != tokens else "") if n in old_names else (n, "added")
            for n, tokens in new_names.items()]
    said += [(n, "removed") for n in old_names if n not in new_names]
    common = [n for n in new_names if n in old_names]
    reordered = common != [n for n in old_names if n in new_names]
    return tuple((n, how) for n, how in said if how), old_rest != new_rest or reordered


def constant_parts(constants: tuple[tuple[str, str], ...]) -> list[str]:
    """:func:`constant_changes`' names in words, by how they changed: ``constant `TIMEOUT` changed``, ``constants
    `A`, `B` added``."""
    return named_parts("constant", constants)


#: Names :func:`named_parts` lists of one kind of change at most; past it ``and N more`` (a class declaring 400
#: fields in one statement, all changed, made a log line of 3,137 characters).
NAMES_LISTED = 10


def named_parts(noun: str, changes: tuple[tuple[str, str], ...]) -> list[str]:
    """``(name, "changed" | "added" | "removed")`` pairs in words, grouped by how they changed, the ``noun`` (a
    constant, a field) made plural for several: ``constants `A`, `B` added``, at most :data:`NAMES_LISTED` names a
    group (``fields `a0`, ..., `a9` and 390 more changed``); other pairs are left out."""
    parts = []
    for how in ("changed", "added", "removed"):
        names = [f"`{name}`" for name, said in changes if said == how]
        if names:
            more = f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else ""
            parts.append(f"{noun}{'s' if len(names) > 1 else ''} {', '.join(names[:NAMES_LISTED])}{more} {how}")
    return parts


def constant_lines(analysis: FileAnalysis, name: str) -> range | None:
    """The lines (1-based) from the first to the last assignment of the constant ``name`` in one version of a file,
    or None when it assigns no such constant (another language, a name of no constant)."""
    if analysis.language != "python" or analysis.source is None:
        return None
    spans: dict[str, list[tuple[int, int]]] = {}
    _top_level(analysis, spans)
    found = spans.get(name)
    return range(found[0][0] + 1, found[-1][1] + 2) if found else None


def _top_level(analysis: FileAnalysis, spans: dict[str, list[tuple[int, int]]] | None = None
               ) -> tuple[dict[str, list[bytes]], list[bytes]]:
    """The tokens of each constant's assignments (a name assigned twice, in both branches of an ``if``: both, in
    order) and those of the rest of the top-level code; with ``spans``, the rows (0-based) of each assignment."""
    keys = analysis._keys
    source: bytes = keys.source
    with keys._lock:  # the tree is not to be used by two threads at once
        tree = keys.tree if keys.tree is not None else keys.language.parse(source)
        constants: dict[str, list[bytes]] = {}
        rest: list[bytes] = []
        children = list(tree.root_node.children)
        if children and _docstring(children[0]):
            children = children[1:]  # the module's docstring is said apart
        for node in children:
            _visit(node, source, constants, rest, spans)
    return constants, rest


def _visit(node: Any, source: bytes, constants: dict[str, list[bytes]], rest: list[bytes],
           spans: dict[str, list[tuple[int, int]]] | None) -> None:
    if node.type in _LEAVE_OUT:
        return
    names = assigned(node)
    if names:
        toks = list(tokens(node, source))
        for name in names:
            constants.setdefault(name, []).extend(toks)
            if spans is not None:
                spans.setdefault(name, []).append((node.start_point[0], node.end_point[0]))
        return
    if node.type not in _STEP_INTO:  # a statement (or a compound statement's keyword, condition)
        rest.extend(tokens(node, source))
        return
    for child in node.children:
        _visit(child, source, constants, rest, spans)

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


def tokens(node: Any, source: bytes) -> Iterator[bytes]:
    """The leaves of ``node`` (its tokens, comments left out), in order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.child_count == 0:
            yield source[n.start_byte:n.end_byte]
        else:
            stack.extend(reversed(n.children))


def _docstring(node: Any) -> bool:
    return node.type == "expression_statement" and node.named_child_count == 1 and \
        node.named_children[0].type == "string"
