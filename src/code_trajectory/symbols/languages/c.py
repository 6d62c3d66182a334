"""C (``.c``, ``.h``): functions (``function``), ``struct``/``union``/``enum`` definitions with a
body (named, or named by their ``typedef``: ``typedef struct { ... } Point;`` -> ``Point``) and
function-like macros (``macro``). ``#include`` lines are imports. C has no nesting of
functions, so names are unqualified; a name defined twice (``#ifdef`` alternatives) gets
``@2`` on its later definition.

A header whose lines show C++ (``namespace x {``, ``template <``, ``public:``, ``using namespace``, ``class A :
public B``: fmt's ``include/fmt/format.h``) is C++ and parsed by :mod:`.cpp`: tree-sitter-c would recover from
every class and template as errors and name only a few of its functions.

Grammar: ``tree-sitter-c``.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import MAX_SOURCE_BYTES, FileAnalysis
from ..engine import Def, TreeSitterLanguage, node_text
from ._clike import declared_name, function_declarator

#: A line only C++ has (at its start, spaces before): what makes a ``.h`` file C++.
_CPP_LINE = re.compile(rb"^[ \t]*(?:namespace[ \t]+[A-Za-z_][\w:]*[ \t]*\{|template[ \t]*<|(?:public|private|protected)"
                       rb"[ \t]*:(?!:)|using[ \t]+namespace[ \t]|(?:class|struct)[ \t]+\w+[^;(\n]*:[ \t]*"
                       rb"(?:public|private|protected)[ \t])", re.MULTILINE)


class C(TreeSitterLanguage):
    """Symbols of C source."""

    name = "c"
    extensions = (".c", ".h")
    grammar_module = "tree_sitter_c"
    doc_prefixes = ("/**", "///", "/*!", "//!")  # Doxygen
    definitions = """
    (function_definition) @def.function
    (struct_specifier name: (_) @name body: (_)) @def.struct
    (union_specifier name: (_) @name body: (_)) @def.union
    (enum_specifier name: (_) @name body: (_)) @def.enum
    (type_definition type: (struct_specifier !name body: (_)) declarator: (_) @name) @def.struct
    (type_definition type: (union_specifier !name body: (_)) declarator: (_) @name) @def.union
    (type_definition type: (enum_specifier !name body: (_)) declarator: (_) @name) @def.enum
    (preproc_function_def name: (_) @name) @def.macro
    """
    extras = """
    (comment) @comment
    [(string_literal) (char_literal) (system_lib_string)] @string
    (preproc_include) @import
    """

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Functions are named by their declarator (``int *make(...)`` -> ``make``)."""
        if kind == "function":
            name = declared_name(function_declarator(node))
            return None if name is None else self.make_def(node, kind, node_text(name))
        return self.make_def(node, kind, node_text(caps["name"][0]))

    def analyze(self, source: bytes, previous: FileAnalysis | None = None) -> FileAnalysis:
        """As :meth:`TreeSitterLanguage.analyze`; source with a line only C++ has (a C++ header named ``.h``) is
        analyzed by the C++ module (its ``language`` is then ``"cpp"``)."""
        if _CPP_LINE.search(source, 0, MAX_SOURCE_BYTES + 1):
            from .cpp import LANGUAGE as CPP

            return CPP.analyze(source, previous)
        return super().analyze(source, previous)


LANGUAGE = C()
