"""Go (``.go``): functions ``New``, methods ``Server.Start`` (pointer or value receiver; the
type parameters of a generic receiver are dropped: ``func (s *Server[T]) Start()`` ->
``Server.Start``), and types from ``type`` declarations: ``struct``, ``interface``, else ``type``
(aliases and defined types). A method is not nested in its type's declaration, so its
``parent`` is ``None``. An interface's methods are methods of it (``Reader.Read``).

Grammar: ``tree-sitter-go``.
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, TreeSitterLanguage, node_text


class Go(TreeSitterLanguage):
    """Symbols of Go source."""

    name = "go"
    extensions = (".go",)
    grammar_module = "tree_sitter_go"
    doc_prefixes = ("//",)  # go doc: the comment directly above a declaration
    definitions = """
    (function_declaration name: (identifier) @name) @def.function
    (method_declaration receiver: (parameter_list (parameter_declaration type: (_) @receiver))
      name: (field_identifier) @name) @def.method
    (type_spec name: (type_identifier) @name type: (_) @type) @def.type
    (type_alias name: (type_identifier) @name) @def.type
    (method_elem name: (field_identifier) @name) @def.method
    """
    extras = """
    (comment) @comment
    [(interpreted_string_literal) (raw_string_literal) (rune_literal)] @string
    (import_declaration) @import
    """

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Receivers prefix method names; ``type`` kinds follow the declared type."""
        local = node_text(caps["name"][0])
        receiver = caps.get("receiver")
        if receiver:
            local = f"{_receiver_type(receiver[0])}.{local}"
        declared = caps.get("type")
        if declared:
            kind = {"struct_type": "struct", "interface_type": "interface"}.get(declared[0].type, "type")
        span = None
        parent = node.parent
        if node.type in ("type_spec", "type_alias") and parent is not None and parent.named_child_count == 1:
            span = parent
        return self.make_def(node, kind, local, span=span)


def _receiver_type(node: Any) -> str:
    while node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        inner = node.child_by_field_name("type") if node.type == "generic_type" else node.named_child(0)
        if inner is None:
            break
        node = inner
    return node_text(node)


LANGUAGE = Go()
