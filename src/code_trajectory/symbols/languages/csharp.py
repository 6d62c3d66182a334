"""C# (``.cs``): namespaces (``namespace``, ``App.Core``), classes, structs, interfaces, enums,
records and delegates (``type``) nested with ``.``; methods (``method``, an interface's and abstract ones too), operators
(``Unit.operator==``, ``Unit.operator int``) and finalizers (``Unit.~Unit``) as methods, constructors
(``constructor``), properties, indexers (``this``) and events with accessor bodies or an expression
body (``property``: ``Value => _value``; an auto-property is part of its type's text). A
file-scoped ``namespace App.Core;`` is a symbol of its own but does not prefix the types after it
(tree-sitter gives it no body).

A generic type's name says its arity as C# writes the unbound type (``typeof(Wrapper<,>)``):
``Wrapper<,>``, ``Wrapper<>``, each a type of its own beside a plain ``Wrapper`` (as in C#), under
one name when its type parameters are renamed; its members are ``Wrapper<,>.Handle``.

Overloads: when one qualified name is defined more than once, each gets its parameter
types, whitespace squashed: ``Store.Save(int)``, ``Store.Save(string,int[])``.
``using`` directives are imports.

Grammar: ``tree-sitter-c-sharp``.
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, TreeSitterLanguage, node_text, squash
from ._preprocessor import blank_conditions


class CSharp(TreeSitterLanguage):
    """Symbols of C# source."""

    name = "csharp"
    extensions = (".cs",)
    grammar_module = "tree_sitter_c_sharp"
    doc_prefixes = ("///", "/**")  # XML documentation comments
    definitions = """
    (namespace_declaration name: (_) @name) @def.namespace
    (file_scoped_namespace_declaration name: (_) @name) @def.namespace
    (class_declaration name: (_) @name) @def.class
    (struct_declaration name: (_) @name) @def.struct
    (interface_declaration name: (_) @name) @def.interface
    (enum_declaration name: (_) @name) @def.enum
    (record_declaration name: (_) @name) @def.record
    (method_declaration name: (_) @name) @def.method
    (constructor_declaration name: (_) @name) @def.constructor
    (property_declaration name: (_) @name accessors: (accessor_list (accessor_declaration body: (_)))) @def.property
    (property_declaration name: (_) @name value: (arrow_expression_clause)) @def.property
    (indexer_declaration accessors: (accessor_list (accessor_declaration body: (_)))) @def.property
    (indexer_declaration value: (arrow_expression_clause)) @def.property
    (event_declaration name: (_) @name accessors: (accessor_list (accessor_declaration body: (_)))) @def.property
    (operator_declaration operator: _ @name body: (_)) @def.method
    (conversion_operator_declaration type: (_) @name body: (_)) @def.method
    (destructor_declaration name: (_) @name) @def.method
    (delegate_declaration name: (_) @name) @def.type
    """
    extras = """
    (comment) @comment
    [(string_literal) (verbatim_string_literal) (raw_string_literal) (interpolated_string_expression)
     (character_literal)] @string
    (using_directive) @import
    """

    def parsed_text(self, source: bytes) -> bytes:
        """``source`` with each ``#if``/``#elif`` condition made one identifier of its length (``#if X___...``):
        tree-sitter-c-sharp misreads some (``#if !(DOTNET || PORTABLE)`` in a class's base list ended the class at
        its ``{``, Newtonsoft.Json's ``JToken``); which branch is taken never names a symbol."""
        return blank_conditions(source)

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Names are taken as written, whitespace squashed (``App.Core``); a generic type's with its arity
        (``Wrapper<,>``); operators, finalizers and indexers as C# spells them (``operator==``, ``operator int``,
        ``~Unit``, ``this``)."""
        name = squash(node_text(caps["name"][0])) if "name" in caps else "this"  # an indexer
        if node.type == "destructor_declaration":
            name = "~" + name
        elif node.type in ("operator_declaration", "conversion_operator_declaration"):
            name = "operator" + (" " if name[:1].isalnum() else "") + name
        params = next((c for c in node.children if c.type == "type_parameter_list"), None)
        if params is not None and kind != "method":
            arity = sum(1 for c in params.named_children if c.type == "type_parameter")
            name += "<" + "," * (arity - 1) + ">"
        return self.make_def(node, kind, name)

    def overload_name(self, d: Def) -> str | None:
        """Parameter types: ``Store.Save(string,int[])``."""
        params = d.node.child_by_field_name("parameters")
        if params is None:
            return None
        types = []
        for i, child in enumerate(params.children):
            if child.type == "parameter":
                t = child.child_by_field_name("type")
                types.append(squash(node_text(t)) if t is not None else "?")
            elif params.field_name_for_child(i) == "type":
                types.append(squash(node_text(child)))
        return f"{d.name}({','.join(types)})"


LANGUAGE = CSharp()
