"""Python: functions, methods and classes, qualified with ``.`` (``Serializer.loads``, ``outer.inner``).

Grammar: ``tree-sitter-python``. Decorators belong to the definition's span. Docstrings
(a string as the first statement of a module or block) count as comments for the keys;
:mod:`code_trajectory.symbols.comments` tells a changed docstring of a ``def``/``class`` (or the module) apart
from a comment. Indented blocks are captured as ``@block`` so that re-indenting a statement into another block is a code change.
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, TreeSitterLanguage

#: Decorators that make a ``def`` a typing stub (PEP 484 ``@overload``), not the function's code.
_OVERLOAD = frozenset({b"overload", b"typing.overload", b"t.overload", b"typing_extensions.overload"})


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

    def overload_name(self, d: Def) -> str | None:
        """Definitions sharing a name: a PEP 484 ``@overload`` stub is ``f(overload)`` (so ``f`` is the
        implementation, the code that runs), a property's ``@f.setter``/``@f.deleter`` is ``f(setter)``/
        ``f(deleter)`` (``f`` is the getter); a plain redefinition, and stubs with no implementation beside them
        (a ``.pyi``, a ``Protocol``), keep the ``@2`` rule."""
        wrapper = d.node.parent
        if wrapper is None or wrapper.type != "decorated_definition":
            return None
        for child in wrapper.children:
            if child.type != "decorator":
                continue
            text = (child.text or b"").lstrip(b"@").strip()
            if text in _OVERLOAD:  # a stub beside its implementation (a .pyi holds stubs only: they keep @2)
                return f"{d.name}(overload)" if _implemented(wrapper, d.local) else None
            if text in (d.local.encode() + b".setter", d.local.encode() + b".deleter"):
                return f"{d.name}({text.rsplit(b'.', 1)[1].decode()})"
        return None


def _implemented(stub: Any, name: str) -> bool:
    """Whether the block holding the decorated definition ``stub`` also defines ``name`` without ``@overload``."""
    for sibling in stub.parent.children if stub.parent is not None else ():
        definition = sibling
        if sibling.type == "decorated_definition":
            decorators = [(c.text or b"").lstrip(b"@").strip() for c in sibling.children if c.type == "decorator"]
            if any(text in _OVERLOAD for text in decorators):
                continue
            definition = sibling.child_by_field_name("definition")
        if definition is not None and definition.type == "function_definition":
            found = definition.child_by_field_name("name")
            if found is not None and found.text == name.encode():
                return True
    return False


LANGUAGE = Python()
