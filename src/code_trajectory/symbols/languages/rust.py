"""Rust (``.rs``): items qualified with ``::`` by their module path.

* ``fn`` -> ``function`` (``a::b::f`` inside ``mod a { mod b { ... } }``); in an ``impl`` or
  ``trait`` -> ``method``: ``Server::start`` for ``impl Server`` *and* ``impl Trait for
  Server``; ``Trait::method`` for a trait's method (a default one or a required one without a body);
* ``struct``, ``enum``, ``union``, ``trait``, ``mod`` with a body (``module``), ``type``
  aliases (``type``), ``macro_rules!`` (``macro``);
* each ``impl`` block is an ``impl`` symbol named ``impl Server`` / ``impl fmt::Display for
  Server`` (generic arguments dropped), so associated items (``type Output``, consts) count.

When two trait impls give one type the same method name (``fmt`` of ``Display`` and
``Debug``), both become ``<Server as fmt::Display>::fmt``, Rust's own qualified-path form, with
the trait's generic arguments when it has some: ``impl From<bool> for Value`` and ``impl
From<u8> for Value`` are so named, their methods ``<Value as From<bool>>::from`` and
``<Value as From<u8>>::from`` (not ``@2``). An impl for a reference to a type keeps the reference (``impl<'a>
Default for &'a Value``: ``impl Default for &Value``, its methods ``<&Value as Default>::default``; the lifetime
dropped, ``&mut`` kept), so that it is told from the type's own impl (``impl Default for Value``,
``Value::default``) and its methods are not said to be a generic parameter's (``impl<M: Trait> Trait for &M``:
``<&M as Trait>::name``, not ``M::name``).
Outer attributes (``#[derive]``) and ``///`` doc comments directly above an item belong to
its span, also when a plain comment is among them (``#[allow(x)] // why``). ``use``, ``extern crate`` and ``mod x;`` are imports.

Grammar: ``tree-sitter-rust``.
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, TreeSitterLanguage, node_text, squash


class Rust(TreeSitterLanguage):
    """Symbols of Rust source."""

    name = "rust"
    extensions = (".rs",)
    grammar_module = "tree_sitter_rust"
    doc_prefixes = ("///", "/**")  # rustdoc
    separator = "::"
    definitions = """
    (function_item name: (_) @name) @def.function
    (function_signature_item name: (_) @name) @def.function
    (struct_item name: (_) @name) @def.struct
    (enum_item name: (_) @name) @def.enum
    (union_item name: (_) @name) @def.union
    (trait_item name: (_) @name) @def.trait
    (mod_item name: (_) @name body: (_)) @def.module
    (type_item name: (_) @name) @def.type
    (macro_definition name: (_) @name) @def.macro
    (impl_item type: (_) @type) @def.impl
    """
    extras = """
    [(line_comment) (block_comment)] @comment
    [(string_literal) (raw_string_literal) (char_literal)] @string
    [(use_declaration) (extern_crate_declaration)] @import
    (mod_item !body) @import
    """

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Impl blocks are named after their type and trait; attributes and doc comments join the span."""
        first = None
        prev = node.prev_named_sibling
        # a plain comment among them (``#[allow(x)] // why``) is passed over, not made the start
        while prev is not None and (prev.type in ("attribute_item", "line_comment", "block_comment")):
            if prev.type == "attribute_item" or _is_outer_doc(prev):
                first = prev
            prev = prev.prev_named_sibling
        if kind == "impl":
            trait = node.child_by_field_name("trait")
            extra = (_type_name(caps["type"][0]), _type_name(trait) if trait is not None else None,
                     squash(node_text(trait)) if trait is not None else None, _reference(caps["type"][0]))
            return self.make_def(node, kind, "", first=first, extra=extra)
        return self.make_def(node, kind, node_text(caps["name"][0]), first=first)

    def qualify(self, d: Def) -> str:
        """``impl`` blocks: ``impl [Trait for ]Type`` (``impl Trait for &Type`` for a reference to it); items in an
        impl: ``Type::item``, ``<&Type as Trait>::item`` in a trait's impl for a reference (``impl<M: Trait> Trait
        for &M``: its methods are no methods of ``M``, whose own impl names them ``M::item``)."""
        if d.kind == "impl":
            prefix = d.parent.prefix + "::" if d.parent is not None else ""
            type_name, trait, _, reference = d.extra
            return f"impl {trait} for {reference}{prefix}{type_name}" if trait else f"impl {prefix}{type_name}"
        parent = d.parent
        if parent is not None and parent.kind == "impl" and parent.extra[1] and parent.extra[3]:
            return f"<{parent.extra[3]}{parent.prefix} as {parent.extra[1]}>::{d.local}"
        return super().qualify(d)

    def child_prefix(self, d: Def) -> str:
        """Children of an ``impl`` are qualified with the implementing type."""
        if d.kind == "impl":
            prefix = d.parent.prefix + "::" if d.parent is not None else ""
            return prefix + d.extra[0]
        return d.name

    def overload_name(self, d: Def) -> str | None:
        """``<Type as Trait>::method`` for methods of trait impls; the trait's generic arguments as written when it
        has some (``<Value as From<bool>>::from``, ``impl From<bool> for Value``) and a reference to the type
        (``<&Value as Default>::default``, ``impl Default for &Value``), as they tell impls apart."""
        if d.kind == "impl" and d.extra[2] and d.extra[2] != d.extra[1]:
            return d.name.replace(f"impl {d.extra[1]} for ", f"impl {d.extra[2]} for ", 1)
        parent = d.parent
        if parent is not None and parent.kind == "impl" and parent.extra[1]:
            return f"<{parent.extra[3]}{parent.prefix} as {parent.extra[2]}>::{d.local}"
        return None


def _is_outer_doc(node: Any) -> bool:
    if node.type not in ("line_comment", "block_comment"):
        return False
    text = node.text
    return text.startswith((b"///", b"/**")) and not text.startswith((b"////", b"/***"))


def _reference(node: Any) -> str:
    """``&`` or ``&mut `` when the type is a reference (``&'a mut Server<T>`` -> ``&mut ``), else ``""``."""
    if node.type != "reference_type":
        return ""
    return "&mut " if any(child.type == "mutable_specifier" for child in node.children) else "&"


def _type_name(node: Any) -> str:
    """A type's path without generic arguments or references (``&'a mut Server<T>`` -> ``Server``)."""
    while node.type in ("generic_type", "reference_type", "pointer_type"):
        inner = node.child_by_field_name("type")
        if inner is None:
            break
        node = inner
    return squash(node_text(node))


LANGUAGE = Rust()
