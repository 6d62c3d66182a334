"""Shared rules of the JavaScript and TypeScript modules (no grammar is imported here).

Names, qualified with ``.``:

* ``function f`` / ``function* f`` -> ``f``; ``class A`` -> ``A``; methods -> ``A.m``
  (getter and setter of one property, when both exist: ``A.x(get)``, ``A.x(set)``);
* a name bound to a function, arrow function or class expression (``const f = () => ...``,
  ``handle = () => ...`` class fields) -> ``f``; nested in a function -> ``outer.f``;
* a file-level constant made by a call given a function (zod's ``const $ZodString = core.$constructor("...",
  (inst, def) => {...})``, ``const Row = React.memo(() => ...)``) -> ``$ZodString``, what the function defines
  in it qualified by it (``$ZodString.inst._zod.parse``);
* a file-level ``const api = { ... }`` (or ``module.exports = { ... }``) -> an ``object`` symbol ``api``
  (``module.exports``) whose function-valued members are ``api.get`` (``module.exports.get``, not a second ``get``
  beside a function of that name); ``module.exports.q = function`` / ``Foo.prototype.bar = ...``
  -> the assigned path (``Foo.prototype.bar``); ``export default function () {}`` -> ``default``;
* a member of an object literal passed to a call (``withPerformanceObserver({async test() {}})``,
  ``ky(url, {retry: {delay: () => 0}})``, ``new Vue({methods: {save() {}}})``) -> qualified by what is called:
  ``withPerformanceObserver.test``, ``ky.delay``, ``Vue.save`` (the object has no name of its own; a bare ``test``
  read as a top-level function). A callee that is no name (``make()({...})``) leaves the member's own name.
  ``Object.assign(A.prototype, {get() {}})`` (``_.extend``, ``_.assign``) is qualified by what it assigns to, as
  ``A.prototype.get = function`` is: ``A.prototype.get`` (``class A``'s method ``A.get`` once moved there).
  A property descriptor's accessors (``Object.defineProperty(inst, "x", { get() {...} })``, ``Reflect.``'s, and
  ``Object.defineProperties(inst, { x: { get() {...} } })``) are named by the property as a class's are:
  ``x(get)``, ``x(set)``, ``x`` for a function ``value`` (in a function: ``ZodType.x(get)``). A descriptor of a
  property no string names (``Object.defineProperty(obj, key, {...})``, ``{[key]: {...}}``: known only when the code
  runs) gives no symbol: its accessors are code of the function or statement holding the call.
* a Jest/Mocha/Vitest test block, ``describe("Parser", () => {...})``, ``it.only("parses", fn)``,
  ``describe.each(table)("adds %i", fn)`` -> a ``test`` named by its keyword and string, nested with `` > ``:
  ``describe Parser > it parses`` (see :mod:`..specs`); ``it.todo("later")``, given no function, is none.

``export`` belongs to the declaration's span; a ``const`` with a single declarator spans the
whole statement.
"""

from __future__ import annotations

import re
from typing import Any

from ..engine import Def, TreeSitterLanguage, squash
from ..specs import KEYWORD_PATTERN, block_name, keyword_of

_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function) (class)]"

DEFINITIONS = f"""
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: {_FUNCTION_VALUES} @value) @def.function
(program (lexical_declaration (variable_declarator name: (identifier) @name value: (object)) @def.object))
(program (export_statement (lexical_declaration
  (variable_declarator name: (identifier) @name value: (object)) @def.object)))
(program (expression_statement (assignment_expression left: (member_expression) @name right: (object))
  @def.object))
(program (lexical_declaration (variable_declarator name: (identifier) @name
  value: (call_expression arguments: (arguments [(arrow_function) (function_expression)] @value))) @def.function))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name
  value: (call_expression arguments: (arguments [(arrow_function) (function_expression)] @value))) @def.function)))
(pair key: [(property_identifier) (string) (number)] @name value: {_FUNCTION_VALUES} @value) @def.function
(assignment_expression left: [(member_expression) (identifier)] @name right: {_FUNCTION_VALUES} @value)
  @def.function
(export_statement value: [(function_expression) (arrow_function) (class)] @value) @def.default
""" + "".join(f"""
(call_expression function: {callee} arguments: (arguments . [(string) (template_string)] @name)
  (#match? @_t "{KEYWORD_PATTERN}")) @def.test""" for callee in (
    "(identifier) @_t",  # it("...", fn)
    "(member_expression object: (identifier) @_t)",  # it.only("...", fn)
    "(member_expression object: (member_expression object: (identifier) @_t))",  # test.concurrent.only
    "(call_expression function: (member_expression object: (identifier) @_t))",  # describe.each(table)("...", fn)
    "(call_expression function: (member_expression object: (member_expression object: (identifier) @_t)))",
)) + "\n"

#: What a test block is given: its function (its timeout may follow it, Jest's ``test(name, fn, 5000)``).
_TEST_BODIES = frozenset({"arrow_function", "function_expression"})

EXTRAS = """
(comment) @comment
[(string) (template_string) (regex)] @string
(import_statement) @import
(program (export_statement source: (_)) @import)
(program (lexical_declaration (variable_declarator
  value: (call_expression function: (identifier) @_require (#eq? @_require "require")))) @import)
"""


class EcmaScript(TreeSitterLanguage):
    """Naming hooks common to JavaScript and TypeScript."""

    wrappers = frozenset({"export_statement", "expression_statement", "ambient_declaration"})
    doc_prefixes = ("/**",)  # JSDoc, TSDoc

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """See :meth:`TreeSitterLanguage.definition`; handles declarators, assignments and default exports."""
        if kind == "test":
            return self._test_block(node, caps)
        value = caps.get("value", [None])[0]
        is_class = value is not None and value.type == "class"
        if kind == "default":
            return self.make_def(node, "class" if is_class else "function", "default", span=node)
        if is_class:
            kind = "class"
        names = caps.get("name")
        if not names:
            return None
        name = names[0]
        local = squash(name.text.decode("utf-8", "replace"))
        if name.type == "string":
            local = local.strip("'\"`")
        span = None
        if node.type == "variable_declarator":
            statement = node.parent
            span = self.span_node(statement) if statement is not None and statement.named_child_count == 1 else node
        elif node.type == "assignment_expression":
            span = self.span_node(node)
        if kind == "method" and local == "constructor":
            kind = "constructor"
        if node.type in ("method_definition", "pair"):
            prop = _defined_property(node.parent) if local in _ACCESSORS else None
            callee = None if prop is not None else _callee_of_argument(node.parent)
            if prop == "":  # a property no string names: no name is true (the call's was an older naming's)
                return None
            if prop is not None:
                local = prop if local == "value" else f"{prop}({local})"
            elif callee is not None:
                local = f"{callee}.{local}"
        return self.make_def(node, kind, local, span=span)

    def _test_block(self, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """A test block (see :mod:`..specs`): named by its keyword and string, given a function after it."""
        keyword = keyword_of(caps["_t"][0].text.decode("utf-8", "replace"))
        literal = caps["name"][0]
        after = literal.next_named_sibling
        while after is not None and after.type not in _TEST_BODIES:
            after = after.next_named_sibling
        if keyword is None or after is None:
            return None
        return self.make_def(node, "test", block_name(keyword, literal.text.decode("utf-8", "replace")))

    def overload_name(self, d: Def) -> str | None:
        """Getter/setter pairs: ``A.x(get)`` and ``A.x(set)``."""
        if d.node.type == "method_definition":
            for child in d.node.children:
                if child.type in ("get", "set"):
                    return f"{d.name}({child.type})"
        return None


#: A callee written as a name or a path of names (``ky``, ``app.router.get``, ``$.ajax``).
_NAME_PATH = re.compile(r"[\w$]+(?:\.[\w$]+)*")
#: Nodes between an object literal and the call it is an argument of: nested objects (``{retry: {delay}}``),
#: arrays of them, ``as``/``satisfies``/``!`` wrappers (TypeScript).
_THROUGH = frozenset({"object", "pair", "array", "parenthesized_expression", "as_expression",
                      "satisfies_expression", "non_null_expression"})


#: The calls that copy the members of their later object arguments onto the first: ``Object.assign(A.prototype,
#: {get() {}})`` defines ``A.prototype.get`` as ``A.prototype.get = function`` does (Backbone's ``_.extend``).
_ASSIGNING = frozenset({"Object.assign", "_.extend", "_.assign"})
#: The members of a property descriptor that may be functions: ``get``, ``set`` and ``value``.
_ACCESSORS = frozenset({"get", "set", "value"})
#: The calls given a property descriptor after the object and the property's name.
_DEFINE_PROPERTY = frozenset({"Object.defineProperty", "Reflect.defineProperty"})


def _string(node: Any) -> str | None:
    """The text of a plain string literal node (``"x"``, ``'x'``, a template without substitutions), else None."""
    if node is None or node.type not in ("string", "template_string") or any(
            child.type == "template_substitution" for child in node.named_children):
        return None
    return node.text.decode("utf-8", "replace")[1:-1] or None


def _defined_property(container: Any) -> str | None:
    """The property a descriptor object literal ``container`` defines: ``x`` for the third argument of
    ``Object.defineProperty(inst, "x", {...})`` (or ``Reflect.defineProperty``), and for the member ``x: {...}`` of
    ``Object.defineProperties(inst, {...})``; ``""`` for such a descriptor of a property named by no string (a
    variable, a computed key); None for any other object."""
    if container is None or container.type != "object" or container.parent is None:
        return None
    holder = container.parent
    if holder.type == "pair" and holder.parent is not None and holder.parent.type == "object":
        key = holder.child_by_field_name("key")
        plain = key is not None and key.type in ("property_identifier", "number")
        name = key.text.decode("utf-8", "replace") if plain else _string(key)
        if _callee_of_argument(holder.parent) == "Object.defineProperties":
            return name or ""
        return None
    if holder.type != "arguments" or _callee_of_argument_list(holder) not in _DEFINE_PROPERTY:
        return None
    args = holder.named_children
    if len(args) < 3 or args[2] != container:
        return None
    return _string(args[1]) or ""


def _callee_of_argument_list(holder: Any) -> str | None:
    """The name of the function called with the ``arguments`` node ``holder`` (a name path), else None."""
    call = holder.parent
    if call is None:
        return None
    callee = call.child_by_field_name("function" if call.type == "call_expression" else "constructor")
    if callee is None:
        return None
    text = squash(callee.text.decode("utf-8", "replace"))
    return text if _NAME_PATH.fullmatch(text) else None


def _callee_of_argument(container: Any) -> str | None:
    """The name of the function called with the object literal ``container`` (a member's parent) as an argument,
    directly or nested in other literals (``withPerformanceObserver({...})`` -> ``withPerformanceObserver``,
    ``new Vue({...})`` -> ``Vue``); None when ``container`` is no such object literal (a ``class_body``, a
    ``const api = {...}``, an object returned by a function) or the callee is no name (``make()({...})``)."""
    if container is None or container.type != "object":
        return None
    node = container
    while node.parent is not None and node.parent.type in _THROUGH:
        node = node.parent
    holder = node.parent
    if holder is None or holder.type != "arguments":
        return None
    callee = _callee_of_argument_list(holder)
    target = holder.named_children[0] if callee in _ASSIGNING and holder.named_child_count > 1 else None
    if target is not None and target is not node:  # what the members are assigned to names them
        text = squash(target.text.decode("utf-8", "replace"))
        return text if _NAME_PATH.fullmatch(text) else callee
    return callee
