"""PHP (``.php``, ``.phtml``): functions (``function``), classes, interfaces, traits and enums,
their methods as ``User::save`` (``method``; ``static`` ones too, PHP calls both with ``::``; an interface's and
abstract ones, without a body, too).
A braced ``namespace App\\Models { ... }`` is a ``namespace`` symbol prefixing its members
with ``\\`` (``App\\Models\\User::save``); the statement form ``namespace App\\Models;`` does not
prefix names (tree-sitter gives it no body). ``use`` declarations and top-level
``require``/``include`` statements are imports.

Grammar: ``tree-sitter-php`` (``language_php()``, which accepts HTML around ``<?php``).
"""

from __future__ import annotations

from ..engine import Def, TreeSitterLanguage


class Php(TreeSitterLanguage):
    """Symbols of PHP source."""

    name = "php"
    extensions = (".php", ".phtml")
    grammar_module = "tree_sitter_php"
    doc_prefixes = ("/**",)  # PHPDoc
    grammar_function = "language_php"
    definitions = """
    (namespace_definition name: (_) @name body: (_)) @def.namespace
    (function_definition name: (_) @name) @def.function
    (class_declaration name: (_) @name) @def.class
    (interface_declaration name: (_) @name) @def.interface
    (trait_declaration name: (_) @name) @def.trait
    (enum_declaration name: (_) @name) @def.enum
    (method_declaration name: (_) @name) @def.method
    """
    extras = """
    (comment) @comment
    [(string) (encapsed_string) (heredoc) (nowdoc)] @string
    (namespace_use_declaration) @import
    (program (expression_statement [(require_expression) (require_once_expression) (include_expression)
                                    (include_once_expression)]) @import)
    """

    def qualify(self, d: Def) -> str:
        """``\\`` after a namespace, ``::`` after a class-like symbol."""
        parent = d.parent
        if parent is None:
            return d.local
        separator = "\\" if parent.kind == "namespace" else "::"
        return parent.prefix + separator + d.local


LANGUAGE = Php()
