"""JavaScript (``.js``, ``.mjs``, ``.cjs``, ``.jsx``): naming rules in :mod:`._ecmascript`.

Grammar: ``tree-sitter-javascript`` (its grammar includes JSX).
"""

from __future__ import annotations

from ._ecmascript import DEFINITIONS, EXTRAS, EcmaScript


class JavaScript(EcmaScript):
    """Symbols of JavaScript source, JSX included."""

    name = "javascript"
    extensions = (".js", ".mjs", ".cjs", ".jsx")
    grammar_module = "tree_sitter_javascript"
    definitions = DEFINITIONS + """
(field_definition property: (_) @name value: [(arrow_function) (function_expression)] @value) @def.method
"""
    extras = EXTRAS


LANGUAGE = JavaScript()
