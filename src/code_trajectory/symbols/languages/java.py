"""Java (``.java``): classes, interfaces, enums, records and annotation types, nested with ``.``
(``Outer.Inner.method``); methods (``method``; abstract and interface methods
without a body too: ``Listener.onEvent``) and constructors (``constructor``, named like
the class: ``Outer.Outer``). An enum constant with a class body is an ``object`` holding its
methods (``Op.PLUS.apply``, ``Op.MINUS.apply``). The package is not part of names (the file
path says it).

Overloads: when one qualified name is defined more than once, each gets its parameter
types, as written, whitespace squashed: ``Outer.bar(int)``, ``Outer.bar(String,List<String>...)``
(``String a[]`` is ``String[]``).
``import`` declarations are imports.

Grammar: ``tree-sitter-java``.
"""

from __future__ import annotations

from ..engine import Def, TreeSitterLanguage, node_text, squash


class Java(TreeSitterLanguage):
    """Symbols of Java source."""

    name = "java"
    extensions = (".java",)
    grammar_module = "tree_sitter_java"
    doc_prefixes = ("/**",)  # Javadoc
    definitions = """
    (class_declaration name: (_) @name) @def.class
    (interface_declaration name: (_) @name) @def.interface
    (enum_declaration name: (_) @name) @def.enum
    (record_declaration name: (_) @name) @def.record
    (annotation_type_declaration name: (_) @name) @def.annotation
    (method_declaration name: (_) @name) @def.method
    (constructor_declaration name: (_) @name) @def.constructor
    (compact_constructor_declaration name: (_) @name) @def.constructor
    (enum_constant name: (_) @name body: (_)) @def.object
    """
    extras = """
    [(line_comment) (block_comment)] @comment
    [(string_literal) (character_literal)] @string
    (import_declaration) @import
    """

    def overload_name(self, d: Def) -> str | None:
        """Parameter types: ``Outer.bar(int,String...)``."""
        params = d.node.child_by_field_name("parameters")
        if params is None:
            return None
        types = []
        for p in params.named_children:
            if p.type == "formal_parameter":
                t = p.child_by_field_name("type")
                dims = p.child_by_field_name("dimensions")  # C-style ``String a[]``: the type is ``String[]``
                types.append((squash(node_text(t)) if t is not None else "?") +
                             (squash(node_text(dims)) if dims is not None else ""))
            elif p.type == "spread_parameter":
                t = next((c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")), None)
                types.append((squash(node_text(t)) if t is not None else "?") + "...")
        return f"{d.name}({','.join(types)})"


LANGUAGE = Java()
