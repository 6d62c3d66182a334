"""TypeScript (``.ts``, ``.mts``, ``.cts``) and TSX (``.tsx``): the JavaScript rules of
:mod:`._ecmascript` plus ``interface`` (``interface``), ``type`` aliases (``type``), ``enum``
(``enum``), ``abstract class`` (``class``) and ``namespace``/``declare module`` (``namespace``).
An interface's methods and abstract methods are methods (``Reader.read``), their ``;`` theirs (adding one is
no change of the interface's own text); other declarations without a body (``declare function``) are part of their
container's text, not symbols; the overload signatures right before a function's or a method's implementation
(``function parse(x: string): number;``, ``parse(x: string): number;`` in a class) are part of its text: changing
one modifies it; an interface's overloads of one method (``get(): T; get(key: string): T;``) are one symbol
``Repo.get`` spanning them. A type and a value of one name (``interface Foo`` beside ``const Foo``) are
``Foo(type)`` and ``Foo``.

Grammar: ``tree-sitter-typescript``, whose ``language_typescript()`` and ``language_tsx()``
are two grammars: ``.tsx`` uses the latter (``<T>x`` casts are JSX there).
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, squash
from ._ecmascript import DEFINITIONS, EXTRAS, EcmaScript

_TS_DEFINITIONS = DEFINITIONS + """
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)] @value) @def.method
(abstract_class_declaration name: (_) @name) @def.class
(interface_body (method_signature name: (_) @name) @def.method)
(abstract_method_signature name: (_) @name) @def.method
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.namespace
(module name: (_) @name) @def.namespace
"""


class TypeScript(EcmaScript):
    """Symbols of TypeScript source; ``tsx=True`` selects the TSX grammar."""

    definitions = _TS_DEFINITIONS
    extras = EXTRAS
    grammar_module = "tree_sitter_typescript"

    def __init__(self, tsx: bool = False) -> None:
        super().__init__()
        self.tsx = tsx
        self.name = "tsx" if tsx else "typescript"
        self.extensions = (".tsx",) if tsx else (".ts", ".mts", ".cts")
        self.grammar_function = "language_tsx" if tsx else "language_typescript"

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """See :meth:`EcmaScript.definition`; a function declaration's or a method's span starts at its overload
        signatures."""
        found = super().definition(kind, node, caps)
        if found is not None and node.type == "method_signature" and node.parent is not None \
                and node.parent.type == "interface_body":
            if _named_signature(_beside(node, before=True), found.local):
                return None  # an overload of the interface's method before it: part of that one's text
            while _named_signature(_beside(node, before=False), found.local):
                node = _beside(node, before=False)  # the interface's method spans its overloads
            found.end, found.end_row = node.end_byte, node.end_point[0]
        after = node.next_sibling
        if found is not None and node.type in _BODILESS and after is not None and after.type in (";", ","):
            found.end, found.end_row = after.end_byte, after.end_point[0]  # its separator is its own, not its type's
        signature = _SIGNATURES.get(node.type)
        if found is None or signature is None:
            return found
        span = self.span_node(node)
        first = _first_overload(span, found.local, signature)
        return found if first is None else self.make_def(node, found.kind, found.local, span=span, first=first)

    def overload_name(self, d: Def) -> str | None:
        """See :meth:`EcmaScript.overload_name`; a type (``interface``, ``type``) whose name is also a value's
        (``interface Foo`` and ``const Foo = make(...)``, ``class Foo``: TypeScript keeps types and values apart)
        is ``Foo(type)``, the value keeping ``Foo``, rather than the later of the two being ``Foo@2``."""
        if d.kind in ("interface", "type"):
            return f"{d.name}(type)"
        return super().overload_name(d)


#: Methods without a body (an interface's, an abstract one), symbols of their own.
_BODILESS = frozenset({"method_signature", "abstract_method_signature"})
#: The node of an overload signature of each definition that can have some.
_SIGNATURES = {"function_declaration": "function_signature", "method_definition": "method_signature"}


def _beside(node: Any, before: bool) -> Any:
    """The named sibling before (or after) ``node``, comments passed over, or None."""
    sibling = node.prev_named_sibling if before else node.next_named_sibling
    while sibling is not None and sibling.type == "comment":
        sibling = sibling.prev_named_sibling if before else sibling.next_named_sibling
    return sibling


def _named_signature(node: Any, name: str) -> bool:
    """Whether ``node`` is a ``method_signature`` named ``name`` (as the local name is made)."""
    named = node.child_by_field_name("name") if node is not None and node.type == "method_signature" else None
    return named is not None and squash(named.text.decode("utf-8", "replace")) == name


def _first_overload(span: Any, name: str, signature: str) -> Any:
    """The first of the overload signatures (``signature`` nodes: ``function_signature``, ``method_signature``) of
    ``name`` right before ``span`` (each such a node, or an ``export_statement`` holding one; comments between them
    are passed over), or None when there is none."""
    first, sibling = None, span.prev_named_sibling
    while sibling is not None:
        inner = sibling.named_children[0] if sibling.type == "export_statement" and sibling.named_child_count else sibling
        if inner.type == signature:
            named = inner.child_by_field_name("name")
            if named is None or squash(named.text.decode("utf-8", "replace")) != name:  # as the local name is made
                break
            first = sibling
        elif sibling.type != "comment":
            break
        sibling = sibling.prev_named_sibling
    return first


TYPESCRIPT = TypeScript()
TSX = TypeScript(tsx=True)
