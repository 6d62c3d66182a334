"""Ruby (``.rb``, ``.rake``, ``.gemspec``, ``Rakefile``, ``Gemfile`` ...): Ruby's own notation.

* ``module`` (``module``) and ``class`` (``class``) nest with ``::``: ``Billing::Invoice``;
  a scoped name stays as written (``class Invoice::Line`` in ``Billing`` -> ``Billing::Invoice::Line``); a
  constant assigned a ``Struct.new``, ``Class.new`` or ``Data.define`` with a block is a ``class`` too
  (``Point = Struct.new(:x) do ... end`` in ``Geo`` -> ``Geo::Point``, its methods ``Geo::Point#dist``);
* instance methods: ``Billing::Invoice#total`` (``method``); singleton methods, ``def self.x``, ``def Invoice.x``
  or inside ``class << self``: ``Billing::Invoice.build`` (``method``); a ``def`` outside any
  class or module: ``helper`` (``function``).
* RSpec and minitest test blocks, ``describe Invoice do``, ``it "sums lines" do``, ``test "saves" do``: a ``test``
  named by its keyword and string (or constant), nested with `` > ``: ``describe Invoice > it sums lines``,
  ``UserTest > test saves`` (see :mod:`..specs`).

Top-level ``require``, ``require_relative`` and ``load`` calls are imports.

Grammar: ``tree-sitter-ruby``.
"""

from __future__ import annotations

from typing import Any

from ..engine import Def, TreeSitterLanguage, node_text
from ..specs import KEYWORD_PATTERN, block_name, keyword_of, nests_in_test


class Ruby(TreeSitterLanguage):
    """Symbols of Ruby source."""

    name = "ruby"
    extensions = (".rb", ".rake", ".gemspec", ".ru")
    grammar_module = "tree_sitter_ruby"
    doc_prefixes = ("#",)  # RDoc/YARD: the comment directly above a definition
    filenames = ("Rakefile", "Gemfile", "Guardfile", "Vagrantfile")
    separator = "::"
    definitions = """
    (module name: (_) @name) @def.module
    (class name: (_) @name) @def.class
    (method name: (_) @name) @def.method
    (singleton_method name: (_) @name) @def.singleton
    (assignment left: (constant) @name
                right: (call receiver: (constant) @_maker method: (identifier) @_new block: [(do_block) (block)])
                (#match? @_maker "^(Struct|Class|Data)$") (#match? @_new "^(new|define)$")) @def.class
    """ + f"""
    (call method: (identifier) @_t arguments: (argument_list . [(string) (constant) (scope_resolution)] @name)
          block: [(do_block) (block)] (#match? @_t "{KEYWORD_PATTERN}")) @def.test
    """
    extras = """
    (comment) @comment
    [(string) (heredoc_body) (regex)] @string
    (program (call method: (identifier) @_m (#match? @_m "^(require|require_relative|load)$")) @import)
    """

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Singleton methods remember their receiver (``self`` or an object's name); test blocks are named by their
        keyword and string (:mod:`..specs`)."""
        local = node_text(caps["name"][0])
        if kind == "test":
            keyword = keyword_of(node_text(caps["_t"][0]))
            return None if keyword is None else self.make_def(node, kind, block_name(keyword, local))
        receiver = None
        if kind == "singleton":
            obj = node.child_by_field_name("object")
            receiver = "self" if obj is None or obj.type == "self" else node_text(obj)
        elif kind == "method" and _in_singleton_class(node):
            receiver = "self"
        return self.make_def(node, "method" if kind == "singleton" else kind, local, span=_modifier_call(node),
                             extra=receiver)

    def refine(self, d: Def) -> None:
        """A ``def`` outside classes and modules is a ``function``."""
        if d.kind == "method" and (d.parent is None or d.parent.kind not in ("class", "module")):
            d.kind = "function"

    def qualify(self, d: Def) -> str:
        """``::`` between modules/classes, ``#`` before instance methods, ``.`` before singleton methods; `` > ``
        between a test block and what it is in or holds."""
        parent = d.parent
        if nests_in_test(d):
            return super().qualify(d)
        if d.kind in ("class", "module"):
            return d.local if parent is None else f"{parent.prefix}::{d.local}"
        if d.extra is not None and d.extra != "self" and not _names_scope(d.extra, parent):
            return f"{d.extra}.{d.local}"
        if parent is None:
            return d.local
        if d.extra is not None:  # ``def self.x``, or ``def Invoice.x`` in ``class Invoice``: the same method
            return f"{parent.prefix}.{d.local}"
        return f"{parent.prefix}#{d.local}"


def _names_scope(receiver: str, parent: Def | None) -> bool:
    """``receiver`` names the class or module the ``def`` is in (``Invoice`` or ``Billing::Invoice`` in ``class
    Invoice`` of ``module Billing``), as ``self`` would."""
    if parent is None or parent.kind not in ("class", "module"):
        return False
    receiver = receiver.removeprefix("::")
    return parent.prefix == receiver or parent.prefix.endswith("::" + receiver)


def _modifier_call(node: Any) -> Any:
    """The call a ``def`` is the only argument of (``private def helper``, ``private_class_method def self.x``,
    ``memoize def total``), which the method's span takes in: the word is the method's, not its class's; else
    ``None`` (the ``def`` itself)."""
    args = node.parent
    call = args.parent if args is not None and args.type == "argument_list" else None
    if call is None or call.type != "call" or call.child_by_field_name("receiver") is not None:
        return None
    if args.named_child_count != 1 or call.child_by_field_name("block") is not None:
        return None
    return call


#: Where a ``def`` stops being one of the ``class << self`` around it: another scope, a method, a block.
_SCOPES = frozenset({"class", "module", "method", "singleton_method", "do_block", "block", "program"})


def _in_singleton_class(node: Any) -> bool:
    """The ``def`` is in a ``class << self`` body, also under a condition (``if defined?(...)``) or as the argument
    of ``private``/``protected`` (``private def helper``)."""
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        if parent.type == "singleton_class":
            return True
        parent = parent.parent
    return False


LANGUAGE = Ruby()
