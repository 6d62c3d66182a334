"""Declarator helpers shared by the C and C++ modules (no grammar is imported here)."""

from __future__ import annotations

from typing import Any

from ..engine import node_text, squash

_NAME_TYPES = frozenset({"identifier", "field_identifier", "type_identifier", "qualified_identifier",
                         "destructor_name", "operator_name", "template_function", "operator_cast"})


def code_text(node: Any) -> str:
    """Return a node's source text (as :func:`node_text`) without the comments inside it: a name spanning lines
    (fmt's ``struct formatter<std::type_info, Char  // DEPRECATED! ...`` then ``> {``) holds no comment."""
    cuts, stack = [], [node]
    while stack:
        current = stack.pop()
        for child in current.children:
            if child.type == "comment":
                cuts.append((child.start_byte, child.end_byte))
            elif child.child_count:
                stack.append(child)
    if not cuts:
        return node_text(node)
    data, start, parts = node.text, node.start_byte, []
    at = 0
    for begin, end in sorted(cuts):
        parts.append(data[at:begin - start])
        at = end - start
    parts.append(data[at:])
    return b" ".join(parts).decode("utf-8", "replace")


def function_declarator(node: Any) -> Any:
    """Follow ``declarator`` fields from a definition to its ``function_declarator`` (or ``None``).

    C++'s ``reference_declarator`` (``Argument &help()``, ``auto &&f()``) names no field: its inner
    declarator is its named child.
    """
    node = node.child_by_field_name("declarator")
    while node is not None and node.type != "function_declarator":
        inner = node.child_by_field_name("declarator")
        if inner is None and node.type == "reference_declarator":
            inner = next((c for c in node.named_children if "declarator" in c.type), None)
        node = inner
    return node


def declared_name(node: Any) -> Any:
    """The innermost name node of a declarator chain (``*a[]`` -> ``a``), or ``None``."""
    while node is not None and node.type not in _NAME_TYPES:
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in _NAME_TYPES or "declarator" in c.type), None)
        node = inner
    return node


def parameter_types(func_declarator: Any) -> str:
    """``(const std::string&,int)``: each parameter's text without its name and default value.

    A ``const``/``volatile``/ref qualifier after the parameter list is appended (`` const``).
    """
    params = func_declarator.child_by_field_name("parameters")
    types = []
    for param in params.named_children if params is not None else ():
        if param.type == "comment":
            continue
        start = param.start_byte
        default = param.child_by_field_name("default_value")
        text = param.text[: (default.start_byte if default is not None else param.end_byte) - start]
        name = declared_name(param.child_by_field_name("declarator"))
        if name is not None and name.type == "identifier":
            text = text[: name.start_byte - start] + text[name.end_byte - start:]
        types.append(squash(text.decode("utf-8", "replace").rstrip(" =")))
    suffix = "".join(" " + c.text.decode() for c in func_declarator.children
                     if c.type in ("type_qualifier", "ref_qualifier") and c.start_byte > (params.end_byte if params else 0))
    return f"({','.join(types)}){suffix}"
