"""Comparing the keys of two versions' symbols without hashing what is equal.

Two versions of a file are compared without hashing what is equal: every helper below
first compares raw bytes (of a symbol, or of chunks) and normalises only the chunks
whose bytes differ, on both sides. Each answers exactly what comparing the full keys
would (see :mod:`.normalize` for the one assumption), barring NUL bytes in code
(a NUL token could be confused with a child marker).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from difflib import SequenceMatcher
from typing import Any

from .base import OVERLOAD_SUFFIX, Symbol, short_name
from .chunks import Chunk
from .normalize import LazyKeys

#: An overload's or an occurrence's suffix of a qualified name (:data:`~.base.OVERLOAD_SUFFIX`: ``(int)``,
#: ``(int) const``, ``@2``), or a C# generic type's arity (``<,>``): what the change rules strip to compare two names.
NAME_SUFFIX = re.compile(rf"(?:{OVERLOAD_SUFFIX.pattern.removesuffix('$')}|<,*>)$")

def _trim(xs: list[Any], ys: list[Any]) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix of two lists."""
    n = min(len(xs), len(ys))
    p = 0
    while p < n and xs[p] == ys[p]:
        p += 1
    q = 0
    while q < n - p and xs[-1 - q] == ys[-1 - q]:
        q += 1
    return p, q


def _middles(a: LazyKeys, ka: list[int], b: LazyKeys, kb: list[int],
             raw_a: list[Any] | None = None, raw_b: list[Any] | None = None) -> tuple[list[Chunk], list[Chunk]]:
    """The normalised chunks between the common prefix and suffix (by bytes) of two chunk lists.

    For a key that concatenates its chunks' contributions, the two keys are equal exactly
    when the middles' contributions are (the prefixes and suffixes contribute the same).
    """
    raw_a = a.raw_chunks(ka) if raw_a is None else raw_a
    raw_b = b.raw_chunks(kb) if raw_b is None else raw_b
    p, q = _trim(raw_a, raw_b)
    return a.chunks(ka[p:len(ka) - q]), b.chunks(kb[p:len(kb) - q])


def _code(chunks: list[Chunk]) -> tuple[bytes, list[bytes]]:
    return b" ".join([c.piece for c in chunks if c.piece]), [t for c in chunks for t in c.strings]


def same_own(a: LazyKeys, i: int, b: LazyKeys, j: int) -> tuple[bool, bool]:
    """``(own_key equal, own_comments equal)`` for span ``i`` of ``a`` and span ``j`` of ``b``."""
    if a.same_symbol(i, b, j):
        return True, True
    if a.bases[i] != b.bases[j] or a.namespaces[i] != b.namespaces[j]:
        own_a, own_b = a.own(i), b.own(j)
        return own_a[0] == own_b[0], own_a[2] == own_b[2]
    # same name: the placeholders are the same on both sides, so compare the tokens themselves
    ma, mb = _middles(a, a.own_chunks(i), b, b.own_chunks(j))
    return (_code(ma) == _code(mb),
            [t for c in ma for t in c.comments] == [t for c in mb for t in c.comments])


def same_own_comments_in_any_order(a: LazyKeys, i: int, b: LazyKeys, j: int) -> bool:
    """The comments of span ``i`` of ``a`` and span ``j`` of ``b`` outside their children are the same, in any
    order: a member that moved with its doc comment (which lies in its container's own text) leaves them so."""
    def comments(keys: LazyKeys, k: int) -> list[bytes]:
        return sorted(t for c in keys.chunks(keys.own_chunks(k)) for t in c.comments)

    return comments(a, i) == comments(b, j)


def same_body(a: LazyKeys, i: int, b: LazyKeys, j: int) -> bool:
    """``body_key`` of span ``i`` of ``a`` equals that of span ``j`` of ``b``, normalising only what differs.

    Identical bytes and names are equal bodies. Under the same name, a body key is a hash of the
    own chunks with a marker for each child in between and the children's body keys: equal when
    there are as many children, each own chunk is equal (in bytes, else in tokens and strings)
    and the children are pairwise equal bodies.
    """
    if a.same_symbol(i, b, j):
        return True
    if a.bases[i] != b.bases[j] or a.namespaces[i] != b.namespaces[j]:
        return a.body_key(i) == b.body_key(j)
    body_a, body_b = a._body.get(i), b._body.get(j)
    if body_a is not None and body_b is not None:
        return body_a == body_b
    items_a, items_b = a.model().items[i], b.model().items[j]
    if len(items_a) != len(items_b):  # items alternate chunk, child, chunk ...: as many children
        return False
    chunks_a = [k for k in items_a if k >= 0]
    chunks_b = [k for k in items_b if k >= 0]
    raw_a, raw_b = a.raw_chunks(chunks_a), b.raw_chunks(chunks_b)
    differ = [n for n in range(len(raw_a)) if raw_a[n] != raw_b[n]]
    if differ:
        norm_a = a.chunks([chunks_a[n] for n in differ])
        norm_b = b.chunks([chunks_b[n] for n in differ])
        if any(x.piece != y.piece or x.strings != y.strings for x, y in zip(norm_a, norm_b)):
            return False
    return all(same_body(a, ~x, b, ~y) for x, y in zip(items_a, items_b) if x < 0)


def same_top(a: LazyKeys, b: LazyKeys) -> bool:
    """``top_key`` equal: as many file-level symbols, and each stretch between them equal in code."""
    ka, kb = a.top_chunks(), b.top_chunks()
    if len(ka) != len(kb):  # one more child marker on one side
        return False
    raw_a, raw_b = a.raw_chunks(ka), b.raw_chunks(kb)
    differ = [n for n in range(len(raw_a)) if raw_a[n] != raw_b[n]]
    if not differ:
        return True
    norm_a = a.chunks([ka[n] for n in differ])
    norm_b = b.chunks([kb[n] for n in differ])
    return all(x.piece == y.piece and x.strings == y.strings for x, y in zip(norm_a, norm_b))


def same_top_text(a: LazyKeys, b: LazyKeys, gone_a: Collection[int] = (), gone_b: Collection[int] = ()) -> bool:
    """The code outside every file-level symbol equal, wherever the symbols sit between it: adding or removing a
    function (with the blank lines around it) leaves it equal, a changed module-level statement does not.
    ``gone_a`` / ``gone_b``: the spans of the file-level symbols only on that side (removed / added), which
    join the code on either side of them: a function added between two statements does not change them."""
    def text(keys: LazyKeys, gone: Collection[int]) -> tuple[list[bytes], list[bytes]]:
        top = keys.top_chunks()
        chunks = dict(zip(top, keys.chunks(top)))
        pieces: list[bytes] = [b""]
        for item in keys.model().top_items:
            if item >= 0 and chunks[item].piece:
                pieces[-1] = b" ".join(filter(None, (pieces[-1], chunks[item].piece)))
            elif item < 0 and ~item not in gone:
                pieces.append(b"")
        return [p for p in pieces if p], [t for c in chunks.values() for t in c.strings]

    return text(a, gone_a) == text(b, gone_b)


def same_imports(a: LazyKeys, b: LazyKeys) -> bool:
    """``imports_key`` equal (the file-level import statements, in order)."""
    ma, mb = _middles(a, a.import_chunks(), b, b.import_chunks())
    return [t for c in ma for t in c.imports] == [t for c in mb for t in c.imports]


def same_own_imports(a: LazyKeys, i: int, b: LazyKeys, j: int) -> bool:
    """The import statements directly in span ``i`` of ``a`` and span ``j`` of ``b`` (a namespace's: a Rust
    ``mod``'s ``use``, left out of its code keys like the file's) are equal, in order."""
    ma, mb = _middles(a, a.own_chunks(i), b, b.own_chunks(j))
    return [t for c in ma for t in c.imports] == [t for c in mb for t in c.imports]


def same_comments(a: LazyKeys, b: LazyKeys) -> bool:
    """``comments_key`` equal (every comment of the file, in order)."""
    ka = list(range(len(a.model().bounds) - 1))
    kb = list(range(len(b.model().bounds) - 1))
    flags_a, flags_b = a.file_level_flags(), b.file_level_flags()
    ma, mb = _middles(a, ka, b, kb, list(zip(a.raw_chunks(ka), flags_a)), list(zip(b.raw_chunks(kb), flags_b)))
    return [t for c in ma for t in c.comments] == [t for c in mb for t in c.comments]


#: Whitespace, split off in :func:`_spacing` (kept: a run is a gap).
_SPACES = re.compile(rb"(\s+)")
#: A child in a gap of :func:`_spacing` (whitespace has no NUL byte).
_KID = b"\0"


def _spacing(keys: LazyKeys, i: int, layout: bool) -> tuple[bytes, dict[int, bytes]]:
    """Span ``i``'s own text without whitespace, and the gap after each offset of it where there is one: its
    whitespace, with :data:`_KID` for each child in it. With ``layout``, comments count by their tokens
    (:meth:`~.normalize.LazyKeys.laid_out_chunks`): spaces inside a comment's text are no layout."""
    text: list[bytes] = []
    gaps: dict[int, bytes] = {}
    size = 0
    own = keys.own_chunks(i)
    raws = iter(keys.laid_out_chunks(own) if layout else keys.raw_chunks(own))
    for item in keys.model().items[i]:
        for n, part in enumerate([_KID] if item < 0 else _SPACES.split(next(raws))):
            if n % 2 == 0 and item >= 0:
                text.append(part)
                size += len(part)
            elif part:
                gaps[size] = gaps.get(size, b"") + part
    return b"".join(text), gaps


def _same_gap(x: bytes, y: bytes) -> bool:
    """Two gaps of :func:`_spacing` at one place are the same layout. The whitespace next to a child is the child's
    (on both sides: not compared); where a child came or went (on one side only), the span's own line end before
    the first child and the indentation of its own line after the last one are compared: the child brought or took
    its lines and blank lines."""
    if (_KID in x) == (_KID in y):
        return _KID in x or x == y
    head_x, head_y = (g.split(_KID, 1)[0] for g in (x, y))
    if b"\n" in head_x and b"\n" in head_y and head_x[:head_x.index(b"\n")] != head_y[:head_y.index(b"\n")]:
        return False
    tail_x, tail_y = (g.rsplit(_KID, 1)[-1] for g in (x, y))
    return b"\n" not in tail_x or b"\n" not in tail_y or \
        tail_x[tail_x.rindex(b"\n"):] == tail_y[tail_y.rindex(b"\n"):]


def own_respaced(a: LazyKeys, i: int, b: LazyKeys, j: int, *, layout: bool = False) -> bool:
    """Span ``i`` of ``a`` and span ``j`` of ``b``, whose own code and comments are equal, differ in the whitespace
    of their own text: a line re-indented, CRLF, spaces around a brace; not in the blank lines and line breaks that
    come or go with a child (``class C { int x; }`` given a method after ``x``; see :func:`_same_gap`). With
    ``layout``, not in the spaces inside a comment's text either (``# keep  it`` made ``# keep it``: the code's
    layout is the same, and no comment was edited, as :func:`~.comments.comment_edits` counts them); without, a
    member's doc comment realigned inside its container's text counts (:func:`~.comments.doc_reformatted`)."""
    text_a, gaps_a = _spacing(a, i, layout)
    text_b, gaps_b = _spacing(b, j, layout)
    if text_a != text_b:  # (not expected with equal code and comments) the stretches between children, stripped
        return a.own_exact(i) != b.own_exact(j)
    return not all(_same_gap(gaps_a.get(at, b""), gaps_b.get(at, b"")) for at in {*gaps_a, *gaps_b})


def renamed_only(old: Symbol, new: Symbol) -> bool:
    """``new``'s text is ``old``'s with one whole word, ``old``'s own name, written as ``new``'s own name: a pure
    rename whose body names the old word elsewhere too (``fn to_cow_str(&self) { self.inner.to_str() }``, renamed
    from ``to_str``), which the body keys' name placeholders tell apart. Own names: ``bar`` for ``Foo.bar(int)``,
    ``from`` for ``<V as From>::from@2``, a test block's string (``parses numbers`` for ``describe P > it parses
    numbers``: the test renamed); ``False`` unless both are identifiers (or both test blocks) and differ."""
    words = _own_words(old, new)
    if words is None or words[0] == words[1]:
        return False
    a, b = old._keys.raw(old._index), new._keys.raw(new._index)
    ow, nw = words[0].encode(), words[1].encode()
    if len(b) != len(a) - len(ow) + len(nw):
        return False
    for found in re.finditer(_word_pattern(ow, words[2]), a):
        at = found.start()
        if a[:at] == b[:at] and b[at:at + len(nw)] == nw and a[at + len(ow):] == b[at + len(nw):]:
            return True
    return False


def _own_words(old: Symbol, new: Symbol) -> tuple[str, str, bool] | None:
    """The own names of ``old`` and ``new`` as written in their text, and whether they are test blocks' strings
    (``parses numbers`` for ``describe P > it parses numbers``, see :mod:`.specs`; else identifiers: ``bar`` for
    ``Foo.bar(int)``); ``None`` when they are neither two identifiers nor two test blocks of one keyword."""
    if old.kind == "test" and new.kind == "test":
        (ok, _, ow), (nk, _, nw) = (_OCCURRENCE.sub("", short_name(s.name)).partition(" ") for s in (old, new))
        return (ow, nw, True) if ok == nk and ow and nw else None
    ow, nw = (NAME_SUFFIX.sub("", short_name(s.name)) for s in (old, new))
    return (ow, nw, False) if ow.isidentifier() and nw.isidentifier() else None


#: The occurrence suffix of a repeated name (``it works@2``): all a test block's name has besides its string.
_OCCURRENCE = re.compile(r"@\d+$")


def _word_pattern(word: bytes, test: bool) -> bytes:
    """A pattern finding ``word`` as a whole word, or (a test block's string, ``test``) as written."""
    return re.escape(word) if test else rb"\b" + re.escape(word) + rb"\b"


def one_same_header(old: Symbol, candidates: list[Symbol]) -> Symbol | None:
    """The one candidate whose declaration line (the first line naming its own name followed by ``(``, stripped)
    is ``old``'s, or ``None`` (none, several, or no such line): ``Builder superclass(Type superclass) {`` is the
    same method once ``superclass(TypeName)`` appears beside it, though the old one's body changed."""
    def header(s: Symbol) -> bytes | None:
        word = NAME_SUFFIX.sub("", short_name(s.name)).encode()
        found = re.search(rb"^[^\n]*\b" + re.escape(word) + rb"\s*\([^\n]*", s._keys.raw(s._index), re.M)
        return found[0].strip() if found else None

    mine = header(old)
    same = [c for c in candidates if mine is not None and header(c) == mine]
    return same[0] if len(same) == 1 else None


#: A function assigned to a prototype's member (``Command.prototype.option``): JavaScript's method before ``class``.
_PROTOTYPE = re.compile(r"(.+)\.prototype\.([^.]+)")


def class_form(old: Symbol, candidates: list[Symbol]) -> list[Symbol]:
    """The candidates (one or none) that are ``old`` moved between a prototype and its class: the method
    ``Command.option`` of class ``Command`` for ``old`` the function ``Command.prototype.option``
    (``Command.prototype.option = function`` turned into ``option() {}`` in ``class Command``: its history goes on),
    or the other way round."""
    found = _PROTOTYPE.fullmatch(old.name) if old.parent is None else None
    if found is not None:
        return [c for c in candidates if c.parent == found[1] and c.name == f"{found[1]}.{found[2]}"]
    if old.parent is None or old.name != f"{old.parent}.{short_name(old.name)}":
        return []
    name = f"{old.parent}.prototype.{short_name(old.name)}"
    return [c for c in candidates if c.parent is None and c.name == name]


#: How alike (:class:`difflib.SequenceMatcher` ratio of their lines, names aside) a removed and an added definition
#: must be for :func:`renamed_and_changed` to take them as one, renamed and changed in one edit; about git's own
#: rename threshold (``-M``: 50% similar), higher since a symbol is smaller than a file.
RENAME_SIMILARITY = 0.6
#: Fewest lines either definition has for :func:`renamed_and_changed` (a one-line function renamed and changed has
#: nothing left to compare).
RENAME_MIN_LINES = 3


def renamed_and_changed(old: Symbol, new: Symbol) -> bool:
    """``new`` is ``old`` renamed and changed in one edit: their lines, each one's own name written as one word, are
    at least :data:`RENAME_SIMILARITY` alike (``_setOptionValueWithSource`` made public with a ``return this;`` added,
    commander.js #1613), and both have :data:`RENAME_MIN_LINES` lines or more. The caller asks it only of the one
    removed and the one added definition of a kind under one parent."""
    old_word, new_word = (NAME_SUFFIX.sub("", short_name(s.name)) for s in (old, new))
    a, b = old._keys.raw(old._index).splitlines(), new._keys.raw(new._index).splitlines()
    if old_word != new_word:  # renamed, not only moved to another scope (Ruby's ``xhr?`` and ``[]`` are no words)
        words = _own_words(old, new)
        if words is None:
            return False
        a = re.sub(_word_pattern(words[0].encode(), words[2]), b"\0", b"\n".join(a)).splitlines()
        b = re.sub(_word_pattern(words[1].encode(), words[2]), b"\0", b"\n".join(b)).splitlines()
    if min(len(a), len(b)) < RENAME_MIN_LINES:
        return False
    a, b = [line.strip() for line in a], [line.strip() for line in b]
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= RENAME_SIMILARITY
