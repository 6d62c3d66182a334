"""The tree-sitter machinery shared by every language module.

:class:`TreeSitterLanguage` implements :class:`~code_trajectory.symbols.base.LanguageSupport`
with two tree-sitter queries per language:

* ``definitions``: each pattern captures a definition node as ``@def.<kind>``
  (``@def.function``, ``@def.class``...) and usually its name node as ``@name``;
* ``extras``: ``@comment``, ``@string`` and ``@import`` nodes, used for the
  whitespace/comment/import-insensitive keys of :mod:`.normalize`. It runs only when a
  key is read, limited to the byte ranges that key needs (:meth:`TreeSitterLanguage.specials`).

Extracting symbols is one parse and one ``definitions`` query; nothing is hashed then
(see :class:`~code_trajectory.symbols.normalize.LazyKeys`). Given the analysis of an
earlier version, :meth:`TreeSitterLanguage.analyze` reparses incrementally.

A language module subclasses it, sets the queries, the file names and its grammar package
(``grammar_module``), and overrides the naming hooks (:meth:`TreeSitterLanguage.definition`,
:meth:`~TreeSitterLanguage.qualify`, :meth:`~TreeSitterLanguage.child_prefix`,
:meth:`~TreeSitterLanguage.overload_name`) where its conventions need it. The grammar package is
imported on first use only.

Thread safety: a ``tree_sitter.Parser`` and a ``QueryCursor`` are not thread-safe, so
each thread gets its own (``threading.local``); the compiled ``Query`` objects are
shared (tree-sitter documents ``TSQuery`` as immutable and shareable).
"""

from __future__ import annotations

import importlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from code_trajectory.core.errors import TrajectoryError

from .base import (
    BINARY_SNIFF_BYTES,
    CLASS_LIKE_KINDS,
    MAX_SOURCE_BYTES,
    NAMESPACE_KINDS,
    FileAnalysis,
    Symbol,
    make_symbol,
)
from .chunks import CLOSE, COMMENT, IMPORT, OPEN, STRING, Special
from .normalize import LazyKeys, digest
from .specs import TEST_SEPARATOR, nests_in_test

_SPACES = re.compile(r"\s+")
_PUNCT_SPACES = re.compile(r"\s*([^\w\s])\s*")
_HAS_SPACE = re.compile(r"\s").search
_EXTRA_KINDS = {"comment": COMMENT, "string": STRING, "import": IMPORT}


def node_text(node: Any) -> str:
    """Return a node's source text decoded as UTF-8 (invalid bytes replaced)."""
    return node.text.decode("utf-8", "replace")


def squash(text: str) -> str:
    """Collapse whitespace runs to one space and remove spaces next to punctuation (for signatures)."""
    if _HAS_SPACE(text) is None:  # the common case: nothing to squash
        return text
    return _PUNCT_SPACES.sub(r"\1", _SPACES.sub(" ", text.strip()))


@dataclass(slots=True, eq=False)
class Def:
    """One definition found by the ``definitions`` query (internal, mutable while naming).

    Attributes:
        node: the definition node (``function_definition`` ...); ``kind``: symbol kind;
        local: the name as written at the definition (may itself be qualified, ``Server::start``);
        start, end, start_row, end_row, column: the span (bytes 0-based end-exclusive, rows 0-based);
        parent: the enclosing :class:`Def` or ``None``; ``name``: the qualified name;
        ``prefix``: what children are qualified with; ``base``: the name before disambiguation.
    """

    node: Any
    kind: str
    local: str
    start: int
    end: int
    start_row: int
    end_row: int
    column: int
    extra: Any = None
    parent: Def | None = field(default=None, init=False)
    name: str = field(init=False)
    prefix: str = field(init=False)
    base: str = field(init=False)
    index: int = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.prefix = self.base = self.local


class TreeSitterLanguage:
    """Base class of the language modules: parsing, querying, nesting, naming and keys.

    Class attributes a subclass sets:
        name, extensions, filenames: see :class:`~code_trajectory.symbols.base.LanguageSupport`.
        separator: joins a parent's qualified name and a child's name (``"."``, ``"::"``).
        wrappers: node types that wrap a definition and belong to its span (``decorated_definition``,
            ``export_statement``, ``template_declaration``).
        definitions, extras: the query sources described in the module docstring.
        grammar_module, grammar_function: the grammar package (``tree_sitter_java``) and its function that
            returns the language pointer (``language``), imported on first use by :meth:`grammar`.
        doc_prefixes: a comment starting with one of these directly above a definition (or at the start of
            its span) documents it (``/**``: JSDoc, Javadoc); see :mod:`.comments`.
        docstrings: the ``extras`` ``@comment`` captures include docstrings (Python), told apart from
            comments by their syntax (see :mod:`.comments`).
    """

    name: str = ""
    extensions: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    separator = "."
    wrappers: frozenset[str] = frozenset()
    definitions = ""
    extras = ""
    grammar_module = ""
    grammar_function = "language"
    doc_prefixes: tuple[str, ...] = ()
    docstrings = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._compiled: tuple[Any, Any, Any] | None = None
        self._local = threading.local()
        self._def_captures: dict[int, tuple[str, str]] = {}

    # ----------------------------------------------------------------- grammar, parser, queries

    def grammar(self) -> Any:
        """Import this language's grammar package and return its language pointer.

        Returns:
            ``grammar_module.grammar_function()``, a tree-sitter language pointer.

        Raises:
            ImportError: the grammar package is not installed.
        """
        return getattr(importlib.import_module(self.grammar_module), self.grammar_function)()

    def _setup(self) -> tuple[Any, Any, Any]:
        compiled = self._compiled
        if compiled is None:
            with self._lock:
                if self._compiled is None:
                    try:
                        import tree_sitter as ts

                        language = ts.Language(self.grammar())
                        self._compiled = (language, ts.Query(language, self.definitions),
                                          ts.Query(language, self.extras))
                    except (ImportError, ValueError, OSError) as exc:
                        raise TrajectoryError(
                            f"symbol extraction for {self.name} is unavailable: {exc}; install the "
                            f"tree-sitter grammar package for {self.name}") from exc
                compiled = self._compiled
        assert compiled is not None  # set above, under the lock
        return compiled

    def _tools(self) -> tuple[Any, Any, Any]:
        tools = getattr(self._local, "tools", None)
        if tools is None:
            import tree_sitter as ts

            language, dq, eq = self._setup()
            tools = (ts.Parser(language), ts.QueryCursor(dq), ts.QueryCursor(eq))
            self._local.tools = tools
        return tools

    def parse(self, source: bytes) -> Any:
        """Parse ``source`` with this thread's parser and return the ``tree_sitter.Tree``.

        Raises:
            TrajectoryError: the grammar package is missing or incompatible with the binding.
        """
        return self._tools()[0].parse(self.parsed_text(source))

    def parsed_text(self, source: bytes) -> bytes:
        """The bytes tree-sitter parses for ``source``: ``source`` itself, or (a language's override) a copy of the
        same length and lines where what the grammar misreads is blanked; keys and texts still read ``source``."""
        return source

    # ----------------------------------------------------------------- naming hooks

    def span_node(self, node: Any) -> Any:
        """Return the node whose extent is the symbol's span: ``node`` or the wrappers around it."""
        if not self.wrappers:
            return node
        parent = node.parent
        while parent is not None and parent.type in self.wrappers:
            node = parent
            parent = node.parent
        return node

    def definition(self, kind: str, node: Any, caps: dict[str, list[Any]]) -> Def | None:
        """Turn one query match into a :class:`Def`, or ``None`` to drop it.

        Args:
            kind: the ``<kind>`` of the ``@def.<kind>`` capture; node: that captured node;
            caps: every capture of the match by name (``caps["name"]`` is the name node).
        """
        names = caps.get("name")
        if not names:
            return None
        return self.make_def(node, kind, node_text(names[0]))

    def make_def(self, node: Any, kind: str, local: str, span: Any = None, extra: Any = None,
                 first: Any = None) -> Def:
        """Build a :class:`Def` for ``node`` spanning :meth:`span_node` (or ``span``).

        ``first``, when given, is an earlier node (an attribute, a doc comment) where the span starts.
        """
        span = span if span is not None else self.span_node(node)
        first = first if first is not None else span
        end_row, end_col = span.end_point
        start_row, column = first.start_point
        if end_col == 0 and end_row > start_row:
            end_row -= 1
        return Def(node, kind, local, first.start_byte, span.end_byte, start_row, end_row, column, extra)

    def refine(self, d: Def) -> None:
        """Adjust ``d.kind`` once ``d.parent`` is known: a function directly in a class-like symbol is a method."""
        if d.kind == "function" and d.parent is not None and d.parent.kind in CLASS_LIKE_KINDS:
            d.kind = "method"

    def qualify(self, d: Def) -> str:
        """Return the qualified name of ``d`` (its parent's :attr:`Def.prefix` + separator + local; `` > `` for a
        test block or what is in one, see :mod:`.specs`)."""
        if d.parent is None:
            return d.local
        if nests_in_test(d):
            return d.parent.prefix + TEST_SEPARATOR + d.local
        return d.parent.prefix + self.separator + d.local

    def child_prefix(self, d: Def) -> str:
        """Return what ``d``'s children are qualified with (default: ``d``'s qualified name)."""
        return d.name

    def overload_name(self, d: Def) -> str | None:
        """Return a distinguishing name for ``d`` when its qualified name is duplicated, or ``None``."""
        return None

    # ----------------------------------------------------------------- the pipeline

    def extract(self, source: bytes) -> list[Symbol]:
        """Return the symbols of ``source`` in pre-order (see :meth:`analyze`).

        The syntax tree is not kept: a key read later from one of the symbols parses the source again.
        """
        analysis = self.analyze(source)
        analysis.release_tree()
        return list(analysis.symbols)

    def analyze(self, source: bytes, previous: FileAnalysis | None = None) -> FileAnalysis:
        """Parse ``source`` and return its symbols; their keys and the file's are computed on first use.

        ``previous``, an analysis of an earlier version of the same file by this language that
        still has its syntax tree, lets tree-sitter reparse incrementally: the bytes between
        the common prefix and suffix of the two versions are an edit of its (copied) tree, and
        only what the edit touches is parsed again. The result is the same as without it.

        Binary input (a NUL byte in the first 8,000 bytes, git's rule) and input over
        :data:`~code_trajectory.symbols.base.MAX_SOURCE_BYTES` are not parsed: the result has
        no symbols and ``skipped`` says why. Syntax errors do not raise: tree-sitter recovers
        and the definitions it still recognises are returned (``has_errors`` is then true).

        The result keeps the source and, until its keys are all computed or
        :meth:`FileAnalysis.release_tree` is called, the syntax tree.

        Raises:
            TrajectoryError: the grammar package cannot be loaded.
        """
        if b"\0" in source[:BINARY_SNIFF_BYTES]:
            return _skipped(self.name, source, "binary")
        if len(source) > MAX_SOURCE_BYTES:
            return _skipped(self.name, source, "too-large")
        parser, def_cursor, _ = self._tools()
        text = self.parsed_text(source)
        base = _edited_tree(previous, text, self) if previous is not None else None
        tree = parser.parse(text, base) if base is not None else parser.parse(text)
        root = tree.root_node
        defs = self._definitions(def_cursor.matches(root))
        n = len(defs)
        starts = [0] * n
        ends = [0] * n
        parents = [-1] * n
        bases = [""] * n
        namespaces = [False] * n
        keys = LazyKeys(self, source, tree, starts, ends, parents, bases, namespaces, parsed=text)
        symbols = []
        for i, d in enumerate(defs):
            d.index = i
            starts[i] = d.start
            ends[i] = d.end
            bases[i] = d.base
            kind = d.kind
            if kind in NAMESPACE_KINDS:
                namespaces[i] = True
            parent = d.parent
            if parent is not None:
                parents[i] = parent.index
                symbols.append(make_symbol(d.name, kind, d.start_row + 1, d.end_row + 1, parent.name, keys, i))
            else:
                symbols.append(make_symbol(d.name, kind, d.start_row + 1, d.end_row + 1, None, keys, i))
        return FileAnalysis(self.name, tuple(symbols), None, root.has_error, keys)

    def specials(self, tree: Any, lo: int, hi: int) -> list[Special]:
        """The comments, strings, imports and block markers of ``tree`` that may start in ``[lo, hi]``.

        One byte of margin on each side keeps block markers at the very ends; the caller
        (:class:`~.normalize.LazyKeys`) assigns each to its chunk and drops the others.
        """
        cursor = self._tools()[2]
        cursor.set_byte_range(lo - 1 if lo > 0 else 0, hi + 1)
        specials: list[Special] = []
        for cap, nodes in cursor.captures(tree.root_node).items():
            if cap == "block":
                for n in nodes:
                    start, end = n.start_byte, n.end_byte
                    specials.append((start, start, OPEN, 0))
                    specials.append((end, end, CLOSE, start))
                continue
            kind = _EXTRA_KINDS.get(cap)
            if kind is not None:
                specials.extend([(n.start_byte, n.end_byte, kind, 0) for n in nodes])
        return specials

    def _definitions(self, matches: list[tuple[int, dict[str, list[Any]]]]) -> list[Def]:
        seen: set[tuple[int, int]] = set()
        defs: list[Def] = []
        definition = self.definition
        def_captures = self._def_captures
        for pattern, caps in matches:
            found = def_captures.get(pattern)
            if found is None:  # the pattern's @def.<kind> capture, looked up once per pattern
                cap = next((c for c in caps if c.startswith("def.")), None)
                if cap is None:
                    continue
                found = def_captures[pattern] = (cap, cap[4:])
            d = definition(found[1], caps[found[0]][0], caps)
            if d is not None:
                key = (d.start, d.end)
                if key not in seen:
                    seen.add(key)
                    defs.append(d)
        defs.sort(key=_def_order)
        stack: list[Def] = []
        refine, qualify, child_prefix = self.refine, self.qualify, self.child_prefix
        for d in defs:
            while stack and stack[-1].end < d.end:
                stack.pop()
            if stack:
                top = stack[-1]
                if d.start >= top.start and d.end <= top.end:
                    d.parent = top
            stack.append(d)
            refine(d)
            d.name = d.base = qualify(d)
            d.prefix = child_prefix(d)
        disambiguate(defs, self.overload_name)
        return defs


def _def_order(d: Def) -> tuple[int, int]:
    return (d.start, -d.end)


def disambiguate(defs: list[Def], overload_name: Any) -> None:
    """Make qualified names unique within one file, changing only duplicated names.

    Rule: when several definitions share a qualified name, each of them is renamed by the
    language's ``overload_name`` hook (parameter types for Java/C#/C++, the trait for Rust,
    ``get``/``set`` for JS/TS accessors) when it gives one. Names still shared after that keep
    the first occurrence as is and append ``@2``, ``@3`` ... to the later ones, in source order.
    Children keep the names they were qualified with (from the parent's undisambiguated name).
    """
    counts: dict[str, int] = {}
    for d in defs:
        counts[d.name] = counts.get(d.name, 0) + 1
    if len(counts) == len(defs):
        return
    for d in defs:
        if counts[d.name] > 1:
            alt = overload_name(d)
            if alt:
                d.name = alt
    occurrences: dict[str, int] = {}
    for d in defs:
        name = d.name
        n = occurrences.get(name, 0) + 1
        occurrences[name] = n
        if n > 1:
            d.name = f"{name}@{n}"


def common_prefix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the common prefix of ``a`` and ``b`` (at most ``limit``): a binary search on slice
    comparisons (memcmp), so about ``2 * limit`` bytes are compared in C."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the common suffix of ``a`` and ``b`` (at most ``limit``)."""
    la, lb = len(a), len(b)
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(source: bytes, offset: int) -> tuple[int, int]:
    row = source.count(b"\n", 0, offset)
    return row, offset - (source.rfind(b"\n", 0, offset) + 1)


def _edited_tree(previous: FileAnalysis, source: bytes, language: TreeSitterLanguage) -> Any:
    """A copy of ``previous``'s tree edited into the shape of ``source`` (as parsed: ``language.parsed_text``), or
    ``None`` (no tree, other language)."""
    keys = previous._keys
    if keys is None or previous.language != language.name:
        return None
    with keys._lock:
        tree = keys.tree
        if tree is None:
            return None
        tree = tree.copy()
        old = keys.parsed  # the previous version as its tree was parsed: not blanked a second time
    limit = min(len(old), len(source))
    start = common_prefix(old, source, limit)
    tail = common_suffix(old, source, limit - start)
    old_end, new_end = len(old) - tail, len(source) - tail
    tree.edit(start, old_end, new_end, _point(old, start), _point(old, old_end), _point(source, new_end))
    return tree


def _skipped(language: str, source: bytes, reason: str) -> FileAnalysis:
    return FileAnalysis(language, (), reason, False, None, digest(source))
