"""C++ (``.cc``, ``.cpp``, ``.cxx``, ``.hpp`` ...): names qualified with ``::``.

* namespaces (``namespace``; ``namespace a::b`` is one symbol ``a::b``; anonymous ones are
  transparent), classes (``class``), ``struct``, ``union``, ``enum`` with a body;
* functions (``function``); functions in a class body, and out-of-line definitions with a
  qualified name (``void Server::start() {}`` -> ``ns::Server::start`` inside ``namespace ns``),
  are ``method`` (``constructor`` when the name repeats the class's: ``Server::Server``);
  destructors and operators keep their spelling (``Server::~Server``, ``Server::operator==``), a
  conversion operator its name up to its parameters (``Server::operator bool``);
* ``template <...>`` and ``friend`` belong to the span of what they declare; in-class declarations without
  a body are part of the class's text.

Overloads: when one qualified name is defined more than once, each gets its parameter types
(names and default values removed, whitespace squashed) and trailing qualifiers:
``Server::start()``, ``Server::start(const std::string&,int)``, ``Server::size() const``.
``#include`` and ``using`` declarations are imports.

Grammar: ``tree-sitter-cpp``.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import CLASS_LIKE_KINDS
from ..engine import Def, TreeSitterLanguage, squash
from ._clike import code_text, function_declarator, parameter_types
from ._preprocessor import blank_conditions, blank_macros


class Cpp(TreeSitterLanguage):
    """Symbols of C++ source."""

    name = "cpp"
    extensions = (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl")
    grammar_module = "tree_sitter_cpp"
    doc_prefixes = ("/**", "///", "/*!", "//!")  # Doxygen
    separator = "::"
    wrappers = frozenset({"template_declaration", "friend_declaration"})
    definitions = """
    (function_definition) @def.function
    (namespace_definition name: (_) @name) @def.namespace
    (class_specifier name: (_) @name body: (_)) @def.class
    (struct_specifier name: (_) @name body: (_)) @def.struct
    (union_specifier name: (_) @name body: (_)) @def.union
    (enum_specifier name: (_) @name body: (_)) @def.enum
    (type_definition type: (struct_specifier !name body: (_)) declarator: (_) @name) @def.struct
    (preproc_function_def name: (_) @name) @def.macro
    """
    extras = """
    (comment) @comment
    [(string_literal) (raw_string_literal) (char_literal) (system_lib_string)] @string
    [(preproc_include) (using_declaration)] @import
    """

    def parsed_text(self, source: bytes) -> bytes:
        """``source`` with ``#if``/``#elif`` conditions and upper-case macros where a declaration is expected blanked
        (:mod:`._preprocessor`): tree-sitter-cpp read fmt's ``FMT_CONSTEXPR size_padding(...) : size(...)`` and a
        ``FMT_BEGIN_EXPORT`` line as errors it recovered from with most of ``format.h`` in one error, its symbols
        named ``operator=::basic_memory_buffer``; Chromium's ``class BASE_EXPORT Watcher`` lost its class."""
        return blank_macros(blank_conditions(source))

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Functions are named by their (possibly qualified) declarator."""
        if kind == "function":
            if _in_function_body(node):
                return None
            declarator = function_declarator(node)
            name = declarator.child_by_field_name("declarator") if declarator is not None else None
            if name is None:
                return _macro_namespace(self, node) or _conversion(self, node)
            name = _past_missing_scope(name)
            local = squash(code_text(name))
            if "::" in local:
                kind = "method"
            return self.make_def(node, kind, local, extra=declarator, first=_macro_prefix(self.span_node(node)))
        return self.make_def(node, kind, squash(code_text(caps["name"][0])))

    def refine(self, d: Def) -> None:
        """Methods in classes; constructors repeat their class's name."""
        super().refine(d)
        if d.kind not in ("method", "function"):
            return
        parts = d.local.split("::")
        owner = parts[-2] if len(parts) > 1 else (
            d.parent.local.split("::")[-1] if d.parent is not None and d.parent.kind in CLASS_LIKE_KINDS else None)
        if owner is not None and parts[-1] == _strip_template(owner):
            d.kind = "constructor"
        elif d.parent is not None and d.parent.kind in CLASS_LIKE_KINDS:
            d.kind = "method"

    def overload_name(self, d: Def) -> str | None:
        """Parameter types and trailing qualifiers: ``Server::start(int) const``."""
        if d.extra is None:
            return None
        return d.name + parameter_types(d.extra)


#: A namespace's name as ``_macro_namespace`` accepts it: ``detail``, ``fmt::detail``.
_NAMESPACE_NAME = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")


def _strip_template(name: str) -> str:
    return name.split("<", 1)[0]


def _in_function_body(node: Any) -> bool:
    """Whether a function definition is a statement of a function's body (preprocessor blocks between them
    aside), which C++ has not: a macro call before a block (fmt's ``FMT_CATCH(...) {}`` after ``FMT_TRY {...}``)
    that tree-sitter reads as a definition, whose text is the enclosing function's."""
    parent = node.parent
    while parent is not None and parent.type.startswith("preproc_"):
        parent = parent.parent
    if parent is None or parent.type != "compound_statement":
        return False
    while parent is not None and parent.type not in ("function_definition", "lambda_expression"):
        parent = parent.parent
    return parent is not None


def _macro_prefix(span: Any) -> Any:
    """The words before a function on its first line that tree-sitter made a declaration of its own, missing its
    ``;`` (fmt's ``FMT_CONSTEXPR20 friend bool operator==(...) {``: a field ``FMT_CONSTEXPR20 friend``, then the
    function): the function's span starts there. ``None`` when there are none."""
    before = span.prev_sibling
    if before is None or before.type not in ("field_declaration", "declaration"):
        return None
    last = before.children[-1] if before.child_count else None
    if last is None or not last.is_missing or before.end_point[0] != span.start_point[0]:
        return None
    return before


def _past_missing_scope(name: Any) -> Any:
    """The part of a declarator's name after the last ``::`` tree-sitter made up (a MISSING node): a macro before
    the return type (fmt's ``FMT_INLINE decimal_fp<T> shorter_interval_case(...)``) is read as the type, and the
    return type and the name as a qualified name ``decimal_fp<T> :: shorter_interval_case``. Returns ``name``
    itself when no ``::`` of it is missing."""
    found, node = name, name
    while node is not None and node.type == "qualified_identifier":
        inner = node.child_by_field_name("name")
        if inner is not None and any(c.type == "::" and c.is_missing for c in node.children):
            found = inner
        node = inner
    return found


def _macro_namespace(language: Cpp, node: Any) -> Def | None:
    """A namespace right after an object-like macro on its own line (fmt's ``FMT_BEGIN_NAMESPACE`` then
    ``namespace detail {``), which tree-sitter reads as a function: type the macro, declarator ``namespace``, the
    name in an ``ERROR`` node, the namespace's body as the function's. Returns the namespace (from its keyword to
    its closing brace), or ``None`` when ``node`` is not that shape (an anonymous namespace stays transparent)."""
    keyword = node.child_by_field_name("declarator")
    body = node.child_by_field_name("body")
    if keyword is None or body is None or keyword.type != "identifier" or keyword.text != b"namespace":
        return None
    error = keyword.next_sibling
    if error is None or error.type != "ERROR" or error.next_sibling != body:
        return None
    local = squash(code_text(error))
    if not _NAMESPACE_NAME.fullmatch(local):
        return None
    return language.make_def(node, "namespace", local, first=keyword)


def _conversion(language: Cpp, node: Any) -> Def | None:
    """A conversion operator (``explicit operator bool() const``, ``Parser::operator bool() const``), named
    as written up to its parameter list (``operator bool``, ``Parser::operator bool``), or ``None``."""
    named = node.child_by_field_name("declarator")
    cast = named
    while cast is not None and cast.type == "qualified_identifier":
        cast = cast.child_by_field_name("name")
    if cast is None or cast.type != "operator_cast":
        return None
    params = cast.child_by_field_name("declarator")
    while params is not None and params.type != "abstract_function_declarator":
        params = params.child_by_field_name("declarator")
    if params is None:
        return None
    local = squash(named.text[: params.start_byte - named.start_byte].decode("utf-8", "replace"))
    return language.make_def(node, "method" if "::" in local else "function", local, extra=params)


LANGUAGE = Cpp()
