"""TypeScript (``.ts``, ``.mts``, ``.cts``) and TSX (``.tsx``): the JavaScript rules of
:mod:`._ecmascript` plus ``interface`` (``interface``), ``type`` aliases (``type``), ``enum``
(``enum``), ``abstract class`` (``class``) and ``namespace``/``declare module`` (``namespace``).
Declarations without a body (overload signatures, abstract methods, ``declare function``)
are part of their container's text, not symbols.

Grammar: ``tree-sitter-typescript``, whose ``language_typescript()`` and ``language_tsx()``
are two grammars: ``.tsx`` uses the latter (``<T>x`` casts are JSX there).
"""

from __future__ import annotations

from ._ecmascript import DEFINITIONS, EXTRAS, EcmaScript

_TS_DEFINITIONS = DEFINITIONS + """
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)] @value) @def.method
(abstract_class_declaration name: (_) @name) @def.class
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


TYPESCRIPT = TypeScript()
TSX = TypeScript(tsx=True)
