"""The fields of a class-like symbol: the members it declares that are no symbols of their own (a ``@dataclass``'s
``timeout: float = 5.0``, an enum's ``RED = 1``, a TypeScript interface's ``name: string``, a Go or Rust struct's
field, a Java/C#/PHP field, constant or enum member, a Ruby class's or module's constant, a Rust ``impl``'s or
``mod``'s ``const``/``static``), so that a change there names the field (``modified Config
(field `timeout` changed)``), not the class alone, which tells a model nothing it can ask about: :func:`field_changes`.

One walk for every language: from the symbol's node through the nodes that hold its members (:data:`_CONTAINERS`) to
the member declarations (:data:`_MEMBERS`), passing over the spans of its child symbols (methods, nested classes).
A member's tokens are compared (whitespace and comments do not count), as :mod:`.constants` compares a module's.
"""

from __future__ import annotations

import bisect
from typing import Any

from code_trajectory.core.errors import InvalidArgumentError

from .base import CLASS_LIKE_KINDS, FileAnalysis, Symbol
from .constants import assigned, named_parts, paired_values
from .lookup import find

#: Kinds of symbols whose members are read (a function's local assignments are no fields).
FIELD_KINDS = CLASS_LIKE_KINDS | {"type", "module"}
#: Kinds of symbols whose members are constants, not fields (a Rust ``impl``'s or ``mod``'s ``const``), and languages
#: whose members are all constants (Ruby's ``LIMIT = 3`` in a class or module body): said ``constant `LIMIT` changed``.
_CONSTANT_KINDS = frozenset({"impl", "module"})
_CONSTANT_LANGUAGES = frozenset({"ruby"})
#: Fields named a group in a lean symbol line (the session's net change, the recent log, compare's file list); more
#: are counted: click's replay added 27 annotated fields to ``Context``, 16% of its session's net change in names
#: (5: a Go struct's five changed fields in cobra's stay named).
LEAN_FIELDS_NAMED = 5

#: Nodes, per language, that hold the members of a class-like definition (the definition itself and its body).
_CONTAINERS: dict[str, frozenset[str]] = {
    "python": frozenset({"decorated_definition", "class_definition", "block"}),
    "typescript": frozenset({"export_statement", "ambient_declaration", "class_declaration",
                             "abstract_class_declaration", "class_body", "interface_declaration", "interface_body",
                             "type_alias_declaration", "object_type", "enum_declaration", "enum_body"}),
    "javascript": frozenset({"export_statement", "class_declaration", "class_body"}),
    "go": frozenset({"type_declaration", "type_spec", "struct_type", "field_declaration_list"}),
    "rust": frozenset({"struct_item", "enum_item", "union_item", "field_declaration_list", "enum_variant_list",
                       "impl_item", "mod_item", "declaration_list"}),
    "java": frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
                       "class_body", "interface_body", "enum_body", "enum_body_declarations"}),
    "csharp": frozenset({"class_declaration", "struct_declaration", "interface_declaration", "enum_declaration",
                         "record_declaration", "declaration_list", "enum_member_declaration_list"}),
    "php": frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration",
                      "declaration_list", "enum_declaration_list"}),
    "ruby": frozenset({"class", "module", "body_statement"}),
}
_CONTAINERS["tsx"] = _CONTAINERS["typescript"]

#: Member declarations, per language.
_MEMBERS: dict[str, frozenset[str]] = {
    "python": frozenset({"expression_statement"}),
    "typescript": frozenset({"public_field_definition", "property_signature", "enum_assignment",
                             "property_identifier"}),
    "javascript": frozenset({"field_definition"}),
    "go": frozenset({"field_declaration"}),
    "rust": frozenset({"field_declaration", "enum_variant", "const_item", "static_item"}),
    "java": frozenset({"field_declaration", "constant_declaration", "enum_constant"}),
    "csharp": frozenset({"field_declaration", "property_declaration", "event_field_declaration",
                         "enum_member_declaration"}),
    "php": frozenset({"property_declaration", "const_declaration", "enum_case"}),
    "ruby": frozenset({"assignment"}),
}
_MEMBERS["tsx"] = _MEMBERS["typescript"]

_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
#: Nodes inside a member declaration that name one of several members it declares (``int a, b;``).
_DECLARATORS = frozenset({"variable_declarator", "variable_declaration", "property_element", "const_element"})


def field_changes(old: Symbol, new: Symbol, language: str) -> tuple[tuple[str, str], ...]:
    """The fields of one class-like symbol whose declarations differ between its old and its new version, as
    ``(name, "changed" | "added" | "removed")`` in source order (the new version's, then the removed ones), then
    ``("", "constants")`` when its members are constants (a Ruby class's or module's, a Rust ``impl``'s or ``mod``'s),
    and ``("", "other")`` last when its other own code (a header, a base class, a decorator) changed too; empty for a
    symbol of another kind, a language without fields here, or no field changed."""
    if new.kind not in FIELD_KINDS or language not in _MEMBERS:
        return ()
    (old_fields, old_rest), (new_fields, new_rest) = _fields(old, language), _fields(new, language)
    said = [(n, "changed" if old_fields[n] != toks else "") if n in old_fields else (n, "added")
            for n, toks in new_fields.items()]
    said += [(n, "removed") for n in old_fields if n not in new_fields]
    found = tuple((n, how) for n, how in said if how)
    if found and (language in _CONSTANT_LANGUAGES or new.kind in _CONSTANT_KINDS):
        found += (("", "constants"),)
    return found + (("", "other"),) if found and old_rest != new_rest else found


def field_parts(fields: tuple[tuple[str, str], ...], *, lean: bool = False) -> str:
    """:func:`field_changes`' names in words, by how they changed: ``field `timeout` changed``, ``fields `a`, `b`
    added; field `c` removed``; ``constant `LIMIT` changed`` for members that are constants. ``lean``: a group of more
    than :data:`LEAN_FIELDS_NAMED` is counted (``27 fields added``: the file's history names them)."""
    parts = named_parts("constant" if ("", "constants") in fields else "field", fields,
                        counted_past=LEAN_FIELDS_NAMED if lean else None)
    if ("", "other") in fields:
        parts.append("other code too")
    return "; ".join(parts)


#: Separators between a class-like symbol's name and one of its members' in a name asked for (``Config.timeout``,
#: Ruby's ``Foo::LIMIT``, Rust's ``S::MAX``, a Ruby ``Foo#LIMIT`` as its methods are named).
_MEMBER_SEPARATORS = ("::", "#", ".")


def member_lines(analysis: FileAnalysis, name: str) -> tuple[str, str, range] | None:
    """The field or member constant ``name`` of one version of a file, asked for as ``Owner.NAME``, ``Owner::NAME``
    or ``Owner#NAME``: the owner is a class-like symbol :func:`~.lookup.find` finds by that name, or a Rust
    ``impl Owner`` (the first of them declaring the member).

    Returns:
        ``(the owner's qualified name, the member's name, its lines)``: the lines (1-based) from its first to its
        last declaration; None when no such owner declares it (an ambiguous owner, a language without fields here).
    """
    if analysis.language not in _MEMBERS or analysis.source is None:
        return None
    at, sep = max((name.rfind(sep), sep) for sep in _MEMBER_SEPARATORS)
    owner, member = name[:at], name[at + len(sep):]
    if at <= 0 or not member:
        return None
    owners = [s for s in analysis.symbols if s.kind in FIELD_KINDS and s.name in (owner, f"impl {owner}")]
    if not owners:
        try:
            found = find(analysis.symbols, owner)
        except InvalidArgumentError:  # several symbols so named: the qualified name is asked for
            return None
        owners = [found] if found is not None and found.kind in FIELD_KINDS else []
    for symbol in owners:
        spans: dict[str, list[tuple[int, int]]] = {}
        _fields(symbol, analysis.language, spans)
        if member in spans:
            rows = spans[member]
            return symbol.name, member, range(rows[0][0] + 1, rows[-1][1] + 2)
    return None


def _fields(symbol: Symbol, language: str, spans: dict[str, list[tuple[int, int]]] | None = None
            ) -> tuple[dict[str, list[bytes]], list[bytes]]:
    """The tokens of each field the symbol declares (a name declared twice: both, in order), and those of the rest of
    its own declarations (its name, bases, decorators, other statements); with ``spans``, the rows (0-based) of each
    field's declarations."""
    keys = symbol._keys
    index = symbol._index
    source: bytes = keys.source
    start, end = keys.starts[index], keys.ends[index]
    skip = [(keys.starts[i], keys.ends[i]) for i, parent in enumerate(keys.parents) if parent == index]
    found: dict[str, list[bytes]] = {}
    rest: list[bytes] = []
    with keys._lock:  # the tree is not to be used by two threads at once
        tree = keys.tree if keys.tree is not None else keys.language.parse(source)
        node = tree.root_node.descendant_for_byte_range(max(end - 1, start), end)
        while node is not None and node.parent is not None and node.parent.end_byte == end and \
                node.parent.start_byte >= start:
            node = node.parent  # the outermost node of the span ending where it ends: the definition or its wrapper
        if node is not None:
            _visit(node, source, _CONTAINERS[language], _MEMBERS[language], skip, found, rest, spans)
    return found, rest


def _visit(node: Any, source: bytes, containers: frozenset[str], members: frozenset[str],
           skip: list[tuple[int, int]], found: dict[str, list[bytes]], rest: list[bytes],
           spans: dict[str, list[tuple[int, int]]] | None = None) -> None:
    for child in node.named_children:
        if any(lo <= child.start_byte and child.end_byte <= hi for lo, hi in skip):
            continue  # a method, a nested class: a symbol of its own
        if child.type in members:
            units = _units(child)
            for (name, _unit), tokens in zip(units, _unit_tokens(child, source, units)):
                found.setdefault(_text(name, source), []).extend(tokens)
                if spans is not None:
                    spans.setdefault(_text(name, source), []).append((child.start_point[0], child.end_point[0]))
            if not units:  # a docstring, a statement that declares no name
                rest.extend(t for t, _start in _positioned(child, source))
        elif child.type in containers:
            _visit(child, source, containers, members, skip, found, rest, spans)
        else:
            rest.extend(t for t, _start in _positioned(child, source))


def _units(node: Any) -> list[tuple[Any, Any]]:
    """The names one member declaration declares, each with the node that is its own part of it: its ``name``
    fields (Go's ``A, B int`` has two), else its declarators (``int a = 1, b;``), else (a Go embedded field) its
    type as written; a Python statement's assignment targets (the statement is theirs)."""
    if node.type == "expression_statement":
        left = node.named_children[0].child_by_field_name("left") if assigned(node) else None
        names = [left] if left is not None and left.type == "identifier" else \
            list(left.named_children) if left is not None else []
        return _paired(node, names)
    if node.type == "assignment":  # Ruby's `LIMIT = 3` (`A, B = 1, 2`: both); `@@count = 0` is no member
        left = node.child_by_field_name("left")
        names = [left] if left is not None and left.type == "constant" else list(left.named_children) \
            if left is not None and left.type == "left_assignment_list" else []
        if not names or any(n.type != "constant" for n in names):
            return []
        return _paired(node, names)
    if node.type == "property_identifier":  # a TypeScript enum's member without a value
        return [(node, node)]
    named = node.children_by_field_name("name") or node.children_by_field_name("property")  # JavaScript's
    if named:
        return [(n, n if len(named) > 1 else node) for n in named]
    found = [(name, child if child.type != "variable_declaration" else unit)
             for child in node.named_children if child.type in _DECLARATORS for name, unit in _units(child)]
    if found or node.type in _DECLARATORS:
        return found
    kind = node.child_by_field_name("type")
    return [(kind, node)] if kind is not None and node.type == "field_declaration" else []


def _paired(node: Any, names: list[Any]) -> list[tuple[Any, Any]]:
    """The units of an assignment of ``names`` (:func:`_units`): the statement when it assigns one; each name with
    its own value when they pair (``A, B = 1, 2``: :func:`~.constants.paired_values`, as a module's constants), so
    that a changed value names its own name only; else each name alone (``A, B = f()``: the rest is theirs)."""
    if len(names) == 1:
        return [(names[0], node)]
    values = paired_values(node, len(names))
    return [(n, n if values is None else (n, values[k])) for k, n in enumerate(names)]


def _unit_tokens(node: Any, source: bytes, units: list[tuple[Any, Any]]) -> list[list[bytes]]:
    """What tells each of ``units`` (:func:`_units`) of the declaration ``node`` changed: the tokens of its own part
    (a node, or several: a name and its value), after the declaration's other tokens with a mark where each part
    stands and the place of its own. The
    declaration is read once: comparing it whole less the others' parts, once per name, took 15 s for a class
    declaring 400 names in one statement (``a0, ..., a399 = range(400)``), growing with the cube of their number."""
    if len(units) == 1:
        return [[t for t, _start in _positioned(node, source)]]
    spans = sorted((p.start_byte, p.end_byte, k) for k, (_name, u) in enumerate(units)
                   for p in (u if isinstance(u, tuple) else (u,)))
    starts = [lo for lo, _hi, _k in spans]
    own: list[list[bytes]] = [[] for _ in units]
    frame: list[bytes] = []
    place: dict[int, bytes] = {}
    inside = -1  # the span the last token was in
    for token, start in _positioned(node, source):
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and start < spans[i][1]:
            k = spans[i][2]
            place.setdefault(k, str(len(place)).encode())
            if i != inside:
                frame.append(b"\0")  # where a part stands
            inside = i
            own[k].append(token)
        else:
            frame.append(token)
            inside = -1
    shared = b"\1".join(frame)
    return [[shared, place.get(k, b""), *tokens] for k, tokens in enumerate(own)]


def _positioned(node: Any, source: bytes) -> list[tuple[bytes, int]]:
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _COMMENTS:
            continue
        if n.child_count == 0:
            out.append((source[n.start_byte:n.end_byte], n.start_byte))
        else:
            stack.extend(reversed(n.children))
    return out


def _text(node: Any, source: bytes) -> str:
    return " ".join(source[node.start_byte:node.end_byte].decode("utf-8", "replace").split())
