"""The data model of symbol extraction: :class:`Symbol`, :class:`FileAnalysis` and the language protocol.

A *symbol* is a named definition in a source file (function, method, class,
struct, ...) found by a tree-sitter grammar. Every language module in
:mod:`code_trajectory.symbols.languages` implements :class:`LanguageSupport`;
:mod:`code_trajectory.symbols.registry` maps file names to them.

Hashes are hex digests of BLAKE2b (``digest_size=12``): 24 hex characters,
compared only for equality, never stored beyond a process's caches.
"""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

from .specs import TEST_SEPARATOR, block_tail

#: Sources larger than this many bytes are not parsed: :func:`FileAnalysis.skipped` is
#: ``"too-large"``. 2 MiB is far above hand-written code (a 1,000-line file is ~40 KB)
#: and keeps a worst-case parse + extraction near 100 ms; generated bundles and
#: vendored amalgamations (sqlite3.c is ~9 MB) are skipped.
MAX_SOURCE_BYTES = 2 * 1024 * 1024

#: git's binary heuristic (``buffer_is_binary`` in git's xdiff-interface.c): a NUL byte
#: within the first 8,000 bytes makes a blob binary.
BINARY_SNIFF_BYTES = 8000

#: Kinds a :class:`Symbol` can have. Each language uses the subset its syntax has.
SYMBOL_KINDS = frozenset({
    "function", "method", "constructor", "class", "struct", "union", "interface", "trait", "enum",
    "record", "annotation", "module", "namespace", "impl", "type", "macro", "object", "property", "test",
})

#: Kinds whose direct ``function`` children are reported as ``method``.
CLASS_LIKE_KINDS = frozenset({
    "class", "struct", "union", "interface", "trait", "enum", "record", "impl", "object",
})

#: Kinds of containers whose import statements count as file-level imports (see
#: :class:`FileAnalysis.imports_key`).
NAMESPACE_KINDS = frozenset({"module", "namespace"})


class Symbol:
    """One named definition in a source file (immutable).

    Attributes:
        name: the qualified name in the language's own convention, e.g. ``Serializer.loads``
            (Python), ``Server::start`` (Rust, C++), ``Billing::Invoice#total`` (Ruby). When two
            definitions in one file would get the same name, the later ones are disambiguated
            (see :func:`code_trajectory.symbols.engine.disambiguate`): by parameter types for
            Java/C#/C++ (``Foo.bar(int)``), by trait for Rust (``<Server as Display>::fmt``), by
            accessor for JS/TS (``Point.x(set)``), else by a ``@N`` occurrence suffix (``C.x@2``).
        kind: one of :data:`SYMBOL_KINDS`.
        start_line: first line of the definition, 1-based, including decorators, ``export``,
            ``template<...>`` prefixes and (Rust) outer attributes.
        end_line: last line of the definition, 1-based, inclusive.
        parent: the qualified name of the lexically enclosing symbol, or ``None`` at file level.
            A Go method or an out-of-line C++ method is not nested in its type, so its parent is
            ``None`` (or the C++ namespace).

    The hashes below are computed on first access (and then kept), from the source the
    symbol was extracted from; listing symbols never computes them, and a comparison
    computes only those of symbols whose bytes differ (see :mod:`.normalize`).

    Attributes:
        text_hash: hash of the exact bytes of the definition (children included).
        body_key: hash of the definition with comments dropped, whitespace normalised (tokens
            only; leading indentation kept for Python) and every word of its own qualified
            name replaced by a positional placeholder: equal for a renamed or moved definition
            whose body is unchanged, in the same or another file.
        own_key: like ``body_key`` but over the text *outside* child symbols (children's
            positions and number do not count): it changes when the symbol itself (header,
            decorator, class attribute, statements between methods) changed, not when only a
            child was added, removed or changed. The name placeholders are one-to-one for a given
            qualified name, so between two versions of one symbol any code change shows.
        own_hash: hash of the exact bytes outside child symbols, each stretch between children
            stripped of surrounding whitespace (adding a method does not alter its class's).
        own_comments: hash of the comments outside child symbols (Python docstrings count as
            comments).

    Two symbols are equal when their names, kinds, lines, parents and exact bytes are.
    """

    __slots__ = ("name", "kind", "start_line", "end_line", "parent", "_keys", "_index")

    name: str
    kind: str
    start_line: int
    end_line: int
    parent: str | None
    _keys: Any  # the engine's LazyKeys, as passed to __init__ (None for a symbol built without its source)
    _index: int  # this symbol's position in ``_keys``

    def __init__(self, name: str, kind: str, start_line: int, end_line: int, parent: str | None,
                 keys: Any = None, index: int = -1) -> None:
        for attr, value in (("name", name), ("kind", kind), ("start_line", start_line), ("end_line", end_line),
                            ("parent", parent), ("_keys", keys), ("_index", index)):
            object.__setattr__(self, attr, value)

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError(f"Symbol is immutable: cannot set {attr!r}")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError(f"Symbol is immutable: cannot delete {attr!r}")

    def __repr__(self) -> str:
        return (f"Symbol(name={self.name!r}, kind={self.kind!r}, start_line={self.start_line}, "
                f"end_line={self.end_line}, parent={self.parent!r})")

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Symbol):
            return NotImplemented
        return (self.name == other.name and self.kind == other.kind and self.start_line == other.start_line
                and self.end_line == other.end_line and self.parent == other.parent
                and self._raw() == other._raw())

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.start_line, self.end_line, self.parent))

    def _raw(self) -> bytes | None:
        return None if self._keys is None else self._keys.raw(self._index)

    @property
    def short_name(self) -> str:
        """The last component of :attr:`name`, e.g. ``loads`` for ``Serializer.loads``."""
        return short_name(self.name)

    @property
    def text_hash(self) -> str:
        return self._keys.text_hash(self._index)

    @property
    def body_key(self) -> str:
        return self._keys.body_key(self._index)

    @property
    def own_key(self) -> str:
        return self._keys.own(self._index)[0]

    @property
    def own_hash(self) -> str:
        return self._keys.own_hash(self._index)

    @property
    def own_comments(self) -> str:
        return self._keys.own(self._index)[2]


_new_symbol = object.__new__
_SET_SYMBOL = tuple(getattr(Symbol, attr).__set__ for attr in Symbol.__slots__)


def make_symbol(name: str, kind: str, start_line: int, end_line: int, parent: str | None, keys: Any,
                index: int) -> Symbol:
    """Build a :class:`Symbol` without the per-attribute checks of its constructor (the engine's fast path)."""
    s = _new_symbol(Symbol)
    set_name, set_kind, set_start, set_end, set_parent, set_keys, set_index = _SET_SYMBOL
    set_name(s, name)
    set_kind(s, kind)
    set_start(s, start_line)
    set_end(s, end_line)
    set_parent(s, parent)
    set_keys(s, keys)
    set_index(s, index)
    return s


#: An overload's parameter types (``(int)``, with C++'s trailing qualifiers: ``(int) const``, ``() &&``) or an
#: occurrence's number (``@2``) ending a qualified name.
OVERLOAD_SUFFIX = re.compile(r"(\([^()]*\)(?: (?:const|volatile|&&|&))*|@\d+)$")


def short_name(qualified: str) -> str:
    """Return the last component of a qualified name (``a::B#c`` -> ``c``, ``A.b(int)`` -> ``b(int)``).

    Separators are ``.``, ``::``, ``#`` and ``\\`` outside parentheses and angle brackets, and the ``" > "`` of test
    blocks (:mod:`.specs`), in whose own names no other separator counts (``describe A > it parses 1.5`` ->
    ``it parses 1.5``).
    """
    if " " in qualified:  # a test block's name has a space
        test = block_tail(qualified)
        if test is not None:
            return test
        qualified = qualified.rsplit(TEST_SEPARATOR, 1)[-1]
    depth = 0
    cut = 0
    i = 0
    n = len(qualified)
    while i < n:
        ch = qualified[i]
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth = max(depth - 1, 0)
        elif depth == 0:
            if ch in ".#\\":
                cut = i + 1
            elif ch == ":" and qualified.startswith("::", i):
                cut = i + 2
                i += 1
        i += 1
    return qualified[cut:]


class FileAnalysis:
    """Everything :mod:`~code_trajectory.symbols.changes` needs from one version of one file (immutable).

    Attributes:
        language: the language's :attr:`LanguageSupport.name`.
        symbols: the file's symbols in source order (pre-order: a class before its methods).
        skipped: ``None`` when the source was analysed, ``"binary"`` (a NUL byte in the first
            :data:`BINARY_SNIFF_BYTES` bytes) or ``"too-large"`` (over :data:`MAX_SOURCE_BYTES`).
        has_errors: tree-sitter found syntax errors (symbols are still extracted where it could).

    The keys below are computed on first access (see :class:`Symbol`):

    Attributes:
        text_hash: hash of the exact bytes.
        top_key: hash of the normalised code outside every symbol, imports excluded.
        imports_key: hash of the normalised import statements (``import``, ``#include``,
            ``use``, ``require`` ...) at file level or directly in a module/namespace.
        comments_key: hash of every comment of the file, whitespace-normalised, in order.
        code_key: hash of the whole file's normalised code (comments dropped): ``top_key``,
            ``imports_key``, every symbol's name and kind, and the ``body_key`` of each
            file-level symbol, in order.
    """

    __slots__ = ("language", "symbols", "skipped", "has_errors", "_keys", "_text_hash", "_code_key")

    language: str
    symbols: tuple[Symbol, ...]
    skipped: str | None
    has_errors: bool
    _keys: Any  # the engine's LazyKeys, as passed to __init__ (None for a skipped file)
    _text_hash: str | None
    _code_key: str | None

    def __init__(self, language: str, symbols: tuple[Symbol, ...], skipped: str | None, has_errors: bool,
                 keys: Any = None, text_hash: str | None = None) -> None:
        """``keys`` is the engine's :class:`~.normalize.LazyKeys` (``None`` for a skipped file, which
        then needs ``text_hash``)."""
        for attr, value in (("language", language), ("symbols", symbols), ("skipped", skipped),
                            ("has_errors", has_errors), ("_keys", keys), ("_text_hash", text_hash),
                            ("_code_key", None)):
            object.__setattr__(self, attr, value)

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError(f"FileAnalysis is immutable: cannot set {attr!r}")

    def __repr__(self) -> str:
        return (f"FileAnalysis(language={self.language!r}, symbols=<{len(self.symbols)}>, skipped={self.skipped!r}, "
                f"has_errors={self.has_errors})")

    @property
    def source(self) -> bytes | None:
        """The analysed bytes (``None`` for a skipped file)."""
        return None if self._keys is None else self._keys.source

    @property
    def text_hash(self) -> str:
        found = self._text_hash
        if found is None:
            from .normalize import digest

            found = digest(self._keys.source)
            object.__setattr__(self, "_text_hash", found)
        return found

    @property
    def top_key(self) -> str:
        return self._file_key("top_key")

    @property
    def imports_key(self) -> str:
        return self._file_key("imports_key")

    @property
    def comments_key(self) -> str:
        return self._file_key("comments_key")

    @property
    def code_key(self) -> str:
        found = self._code_key
        if found is None:
            from .normalize import digest

            if self._keys is None:
                return digest(b"")
            found = digest("\x01".join([self.top_key, self.imports_key,
                                         *(f"{s.name}\x02{s.kind}\x02{s.body_key if s.parent is None else ''}"
                                           for s in self.symbols)]).encode())
            object.__setattr__(self, "_code_key", found)
        return found

    def _file_key(self, name: str) -> str:
        if self._keys is None:
            from .normalize import digest

            return digest(b"")
        return self._keys.file_key(name)

    def release_tree(self) -> None:
        """Drop the syntax tree kept for computing keys (they then need a new parse of the source)."""
        if self._keys is not None:
            self._keys.release_tree()


@runtime_checkable
class LanguageSupport(Protocol):
    """What :mod:`~code_trajectory.symbols.registry` needs from a language module.

    Attributes:
        name: a stable identifier (``"python"``, ``"typescript"``, ``"tsx"``); part of cache keys.
        extensions: lower-case file extensions with the dot (``".py"``).
        filenames: exact base names without a telling extension (``"Rakefile"``).
    """

    name: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...]

    def extract(self, source: bytes) -> list[Symbol]:
        """Return the symbols of ``source`` in source order (empty for binary or too-large input)."""
        ...

    def analyze(self, source: bytes, previous: FileAnalysis | None = None) -> FileAnalysis:
        """Return the symbols and file-level keys of ``source``; never raises on bad input.

        ``previous`` (an analysis of another version of the file) may be used to parse incrementally.
        """
        ...
