"""JavaScript (``.js``, ``.mjs``, ``.cjs``, ``.jsx``): naming rules in :mod:`._ecmascript`.

Grammar: ``tree-sitter-javascript`` (its grammar includes JSX).
"""

from __future__ import annotations

from typing import Any

from ._ecmascript import DEFINITIONS, EXTRAS, EcmaScript


class JavaScript(EcmaScript):
    """Symbols of JavaScript source, JSX included."""

    name = "javascript"
    extensions = (".js", ".mjs", ".cjs", ".jsx")
    definitions = DEFINITIONS + """
(field_definition property: (_) @name value: [(arrow_function) (function_expression)] @value) @def.method
"""
    extras = EXTRAS

    def grammar(self) -> Any:
        import tree_sitter_javascript

        return tree_sitter_javascript.language()


LANGUAGE = JavaScript()
