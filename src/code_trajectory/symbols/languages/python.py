"""Python: functions, methods and classes, qualified with ``.`` (``Serializer.loads``, ``outer.inner``).

Grammar: ``tree-sitter-python``. Decorators belong to the definition's span. Docstrings
(a string as the first statement of a module or block) count as comments for the keys;
:mod:`code_trajectory.symbols.comments` tells a changed docstring of a ``def``/``class`` (or the module) apart
from a comment. Indented blocks are captured as ``@block`` so that re-indenting a statement into another block is a code change.
"""

from __future__ import annotations

from ..engine import TreeSitterLanguage


class Python(TreeSitterLanguage):
    """Symbols of Python source (``.py``, ``.pyi``, ``.pyw``)."""

    name = "python"
    extensions = (".py", ".pyi", ".pyw")
    grammar_module = "tree_sitter_python"
    filenames = ("SConstruct", "SConscript")
    docstrings = True
    wrappers = frozenset({"decorated_definition"})
    definitions = """
    (function_definition name: (identifier) @name) @def.function
    (class_definition name: (identifier) @name) @def.class
    """
    extras = """
    (comment) @comment
    (module . (expression_statement . (string) @comment .))
    (block . (expression_statement . (string) @comment .))
    (string) @string
    (import_statement) @import
    (import_from_statement) @import
    (future_import_statement) @import
    (block) @block
    """


LANGUAGE = Python()
