"""Shared rules of the JavaScript and TypeScript modules (no grammar is imported here).

Names, qualified with ``.``:

* ``function f`` / ``function* f`` -> ``f``; ``class A`` -> ``A``; methods -> ``A.m``
  (getter and setter of one property, when both exist: ``A.x(get)``, ``A.x(set)``);
* a name bound to a function, arrow function or class expression (``const f = () => ...``,
  ``handle = () => ...`` class fields) -> ``f``; nested in a function -> ``outer.f``;
* a file-level ``const api = { ... }`` -> an ``object`` symbol ``api`` whose function-valued
  members are ``api.get``; ``module.exports.q = function`` / ``Foo.prototype.bar = ...``
  -> the assigned path (``Foo.prototype.bar``); ``export default function () {}`` -> ``default``.

``export`` belongs to the declaration's span; a ``const`` with a single declarator spans the
whole statement.
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, TreeSitterLanguage, squash

_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function) (class)]"

DEFINITIONS = f"""
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: {_FUNCTION_VALUES} @value) @def.function
(program (lexical_declaration (variable_declarator name: (identifier) @name value: (object)) @def.object))
(program (export_statement (lexical_declaration
  (variable_declarator name: (identifier) @name value: (object)) @def.object)))
(pair key: [(property_identifier) (string) (number)] @name value: {_FUNCTION_VALUES} @value) @def.function
(assignment_expression left: [(member_expression) (identifier)] @name right: {_FUNCTION_VALUES} @value)
  @def.function
(export_statement value: [(function_expression) (arrow_function) (class)] @value) @def.default
"""

EXTRAS = """
(comment) @comment
[(string) (template_string) (regex)] @string
(import_statement) @import
(program (lexical_declaration (variable_declarator
  value: (call_expression function: (identifier) @_require (#eq? @_require "require")))) @import)
"""


class EcmaScript(TreeSitterLanguage):
    """Naming hooks common to JavaScript and TypeScript."""

    wrappers = frozenset({"export_statement", "expression_statement", "ambient_declaration"})
    doc_prefixes = ("/**",)  # JSDoc, TSDoc

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """See :meth:`TreeSitterLanguage.definition`; handles declarators, assignments and default exports."""
        value = caps.get("value", [None])[0]
        is_class = value is not None and value.type == "class"
        if kind == "default":
            return self.make_def(node, "class" if is_class else "function", "default", span=node)
        if is_class:
            kind = "class"
        names = caps.get("name")
        if not names:
            return None
        name = names[0]
        local = squash(name.text.decode("utf-8", "replace"))
        if name.type == "string":
            local = local.strip("'\"`")
        span = None
        if node.type == "variable_declarator":
            statement = node.parent
            span = self.span_node(statement) if statement is not None and statement.named_child_count == 1 else node
        elif node.type == "assignment_expression":
            span = self.span_node(node)
        if kind == "method" and local == "constructor":
            kind = "constructor"
        return self.make_def(node, kind, local, span=span)

    def overload_name(self, d: Def) -> str | None:
        """Getter/setter pairs: ``A.x(get)`` and ``A.x(set)``."""
        if d.node.type == "method_definition":
            for child in d.node.children:
                if child.type in ("get", "set"):
                    return f"{d.name}({child.type})"
        return None
