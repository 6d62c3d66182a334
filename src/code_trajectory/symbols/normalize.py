"""Whitespace- and comment-insensitive keys for symbols and whole files, computed on first use.

The source is cut into *chunks*: the stretches between symbol boundaries, so each
byte belongs to exactly one chunk, owned by the innermost symbol around it (or by
the file). Each chunk is normalised on its own:

* comments are dropped (collected separately), string literals are replaced by a
  placeholder token and kept verbatim (whitespace inside a string is code), import
  statements at file or namespace level are taken out (collected separately);
* what remains is split into tokens: runs of word characters, or one other
  non-space character each (``a+=b`` and ``a += b`` give the same tokens);
* where indentation is syntax (Python), the language's ``@block`` captures insert an
  open and a close marker around every indented block, so moving a statement into or
  out of a block changes the key while re-indenting or re-wrapping lines does not.

A symbol's keys are composed from its own chunks and its children's keys. Nothing is
computed when a file is analysed: :class:`LazyKeys` keeps the source, the symbols' byte
spans and (while it is still needed) the syntax tree, and normalises only the chunks a
key asks for, with the ``extras`` query limited to their byte ranges. A narrative that
lists symbols never pays for keys; a comparison pays only for the symbols whose bytes
differ (see :mod:`.changes`). All keys are BLAKE2b digests (see :mod:`.base`).

Assumption used by the comparisons: a symbol's keys are a function of its bytes, its
qualified name (before disambiguation) and whether it is a namespace, so two symbols
with identical bytes and names have equal keys without normalising either.

This module builds the keys (:class:`LazyKeys`); where the chunks are and how one is normalised is
:mod:`.chunks`'s job, comparing keys that of :mod:`.changes` and :mod:`.same`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from hashlib import blake2b
from typing import Any

from .chunks import Chunk, Model, Special, layout, normalise_chunk, special_order
from .specs import block_said, said

_WORD = re.compile(r"\w+")
_CHILD = b"\x00"

#: More separate range queries than this for one batch of chunks: one query over their hull instead.
_MAX_RANGES = 8
#: After this many queries on one file (many keys are being read), the next one normalises every chunk left.
_MAX_QUERIES = 2


def digest(data: bytes) -> str:
    """Return the 24-hex-digit BLAKE2b digest of ``data``."""
    return blake2b(data, digest_size=12).hexdigest()


def _rename(text: bytes, words: list[tuple[bytes, bytes]]) -> bytes:
    """Replace whole tokens equal to a word by its placeholder in space-joined ``text``."""
    text = b" " + text + b" "
    for word, placeholder in words:
        if word in text:
            old, new = b" " + word + b" ", b" " + placeholder + b" "
            text = text.replace(old, new).replace(old, new)  # twice: adjacent occurrences share a space
    return text


def name_words(base: str) -> list[tuple[bytes, bytes]]:
    """``(word, placeholder)`` pairs for a qualified name: its last word is ``\\x030``, the one before ``\\x031`` ..."""
    words: dict[bytes, bytes] = {}
    for pos, word in enumerate(reversed(_WORD.findall(base))):
        words.setdefault(word.encode(), b"\x03%d" % pos)
    return list(words.items())


def _named(base: str, strings: list[bytes]) -> list[bytes]:
    """``strings`` with a test block's own string (what its name says, :mod:`.specs`) as a placeholder, as the words
    of other names are: a test whose string alone changed keeps its body key (renamed, not removed and added)."""
    own = block_said(base)
    if own is None:
        return strings
    return [b"\x03" if said(s.decode("utf-8", "replace")) == own else s for s in strings]


def _pieces(items: list[int], chunks: Mapping[int, Chunk],
            child: Callable[[int], bytes]) -> tuple[list[bytes], list[bytes]]:
    """The token pieces and the strings of a span's (or the file's) items, in order, for its key.

    Args:
        items: chunk numbers (``>= 0``) and children (``~span``, negative), as :class:`~.chunks.Model` lists
            them.
        chunks: the normalised chunks by number (every chunk of ``items`` present).
        child: what stands for child span ``span`` among the pieces.

    Returns:
        ``(pieces, strings)``: a chunk's non-empty piece or a child's stand-in per item; every chunk's strings.
    """
    parts: list[bytes] = []
    strings: list[bytes] = []
    for item in items:
        if item < 0:
            parts.append(child(~item))
        else:
            chunk = chunks[item]
            if chunk.piece:
                parts.append(chunk.piece)
            strings.extend(chunk.strings)
    return parts, strings


class LazyKeys:
    """The keys of one analysed file, computed on first use (internal; see the module docstring).

    Thread safety: one re-entrant lock per file serialises the computations (and the use of
    the syntax tree, which tree-sitter does not allow two threads to query at once).
    """

    __slots__ = ("language", "source", "parsed", "tree", "starts", "ends", "parents", "bases", "namespaces", "_lock",
                 "_model", "_chunks", "_own", "_body", "_file", "_queries", "_words")

    def __init__(self, language: Any, source: bytes, tree: Any, starts: list[int], ends: list[int],
                 parents: list[int], bases: list[str], namespaces: list[bool], *, parsed: bytes | None = None) -> None:
        self.language = language
        self.source = source
        #: The bytes ``tree`` was parsed from (``language.parsed_text(source)``: ``source`` itself but for a language
        #: that blanks what its grammar misreads), kept with the tree for the next version's incremental parse.
        self.parsed = source if parsed is None else parsed
        self.tree = tree
        self.starts = starts
        self.ends = ends
        self.parents = parents
        self.bases = bases
        self.namespaces = namespaces
        self._lock = threading.RLock()
        self._model: Model | None = None
        self._chunks: dict[int, Chunk] = {}
        self._own: dict[int, tuple[str, str, str]] = {}
        self._body: dict[int, str] = {}
        self._file: dict[str, str] = {}
        self._queries = 0
        self._words: dict[int, list[tuple[bytes, bytes]]] = {}

    def release_tree(self) -> None:
        """Drop the syntax tree and the chunk layout (memory: the layout is rebuilt on demand in
        about a tenth of a millisecond; chunks not yet normalised then need a new parse)."""
        with self._lock:
            self.tree = None
            self.parsed = self.source
            self._model = None

    # ------------------------------------------------------------------------------------ raw bytes

    def raw(self, i: int) -> bytes:
        """The exact bytes of span ``i``."""
        return self.source[self.starts[i]:self.ends[i]]

    def same_text(self, i: int, other: LazyKeys, j: int) -> bool:
        """Span ``i`` here and span ``j`` of ``other`` have identical bytes (no hashing)."""
        a, b = self.starts[i], other.starts[j]
        n = self.ends[i] - a
        return n == other.ends[j] - b and (self.source is other.source and a == b or
                                           self.source[a:a + n] == other.source[b:b + n])

    def same_symbol(self, i: int, other: LazyKeys, j: int) -> bool:
        """Identical bytes, base name and namespace-ness: then every key of the two is equal."""
        return (self.bases[i] == other.bases[j] and self.namespaces[i] == other.namespaces[j]
                and self.same_text(i, other, j))

    # ------------------------------------------------------------------------------------ chunks

    def model(self) -> Model:
        model = self._model
        if model is None:
            model = self._model = Model(self.starts, self.ends, len(self.source))
        return model

    def chunks(self, ks: Iterable[int]) -> list[Chunk]:
        """The normalised chunks ``ks`` (normalising those not done yet, with as few queries as possible)."""
        ks = list(ks)
        done = self._chunks
        try:
            return [done[k] for k in ks]
        except KeyError:
            pass
        with self._lock:
            missing = sorted({k for k in ks if k not in done})
            if missing:
                self._fill(missing)
            return [done[k] for k in ks]

    def _fill(self, missing: list[int]) -> None:
        model = self.model()
        bounds = model.bounds
        tree = self.tree
        everything = tree is None or self._queries >= _MAX_QUERIES
        if everything:
            # no tree (released): parse again, once, and do every chunk left, so that the tree is
            # not needed again; or many keys are being read: do every chunk left at once
            missing = [k for k in range(len(bounds) - 1) if k not in self._chunks]
            if tree is None:
                tree = self.language.parse(self.source)
        runs: list[list[int]] = []
        for k in missing:
            if runs and runs[-1][1] + 1 == k:
                runs[-1][1] = k
            else:
                runs.append([k, k])
        if everything or len(runs) > _MAX_RANGES:
            runs = [[missing[0], missing[-1]]]
        wanted = set(missing)
        src = self.source
        groups: dict[int, list[Special]] = {k: [] for k in missing}
        self._queries += len(runs)
        for first, last in runs:
            for special in self.language.specials(tree, bounds[first], bounds[last + 1]):
                k = model.chunk_of(special, self.starts)
                if first <= k <= last and k in wanted:
                    groups[k].append(special)
        owner = model.owner
        namespaces = self.namespaces
        for k, specials in groups.items():
            if len(specials) > 1:
                specials.sort(key=special_order)
            o = owner[k]
            self._chunks[k] = normalise_chunk(src, bounds[k], bounds[k + 1], specials, o < 0 or namespaces[o])
        if len(self._chunks) == len(bounds) - 1:
            self.tree, self.parsed = None, self.source  # every chunk is done: the tree is no longer needed

    # ------------------------------------------------------------------------------------ symbol keys

    def text_hash(self, i: int) -> str:
        return digest(self.raw(i))

    def words(self, i: int) -> list[tuple[bytes, bytes]]:
        """The name placeholders of span ``i`` (see :func:`name_words`)."""
        found = self._words.get(i)
        if found is None:
            found = self._words[i] = name_words(self.bases[i])
        return found

    def own_chunks(self, i: int) -> list[int]:
        """The chunks of span ``i`` outside its children, in order."""
        return [k for k in self.model().items[i] if k >= 0]

    def own(self, i: int) -> tuple[str, str, str]:
        """``(own_key, own_hash, own_comments)`` of span ``i`` (see :class:`~.base.Symbol`)."""
        found = self._own.get(i)
        if found is not None:
            return found
        with self._lock:
            ks = self.own_chunks(i)
            chunks = self.chunks(ks)
            strings = b"\x01".join(_named(self.bases[i], [s for c in chunks for s in c.strings]))
            own_key = digest(_rename(b" ".join([c.piece for c in chunks if c.piece]), self.words(i))
                             + b"\x01\x01" + strings)
            found = (own_key, self.own_hash(i), digest(b"\x01".join([t for c in chunks for t in c.comments])))
            self._own[i] = found
            return found

    def own_hash(self, i: int) -> str:
        """Hash of the exact bytes outside the children (no normalisation needed)."""
        return digest(_CHILD.join(self.own_exact(i)))

    def own_exact(self, i: int) -> list[bytes]:
        """The stretches of span ``i`` outside its children, stripped, empty ones left out."""
        exact = [raw.strip() for raw in self.raw_chunks(self.own_chunks(i))]
        return [e for e in exact if e]

    def body_key(self, i: int) -> str:
        """The ``body_key`` of span ``i``: its own tokens with its children's body keys in place."""
        found = self._body.get(i)
        if found is not None:
            return found
        with self._lock:
            model = self.model()
            self.chunks(range(model.first[i], model.last[i] + 1))  # the whole subtree in one batch
            return self._body_key(i, model)

    def _body_key(self, i: int, model: Model) -> str:
        found = self._body.get(i)
        if found is not None:
            return found
        parts, strings = _pieces(model.items[i], self._chunks,
                                 lambda child: _CHILD + self._body_key(child, model).encode())
        found = digest(_rename(b" ".join(parts), self.words(i)) + b"\x01\x01" + b"\x01".join(_named(self.bases[i],
                                                                                                  strings)))
        self._body[i] = found
        return found

    def children(self, i: int) -> list[int]:
        return [~item for item in self.model().items[i] if item < 0]

    # ------------------------------------------------------------------------------------ file keys

    def top_chunks(self) -> list[int]:
        return [k for k in self.model().top_items if k >= 0]

    def import_chunks(self) -> list[int]:
        """The chunks whose import statements are file-level: the file's and the namespaces'."""
        owner = self.model().owner
        namespaces = self.namespaces
        return [k for k, o in enumerate(owner) if o < 0 or namespaces[o]]

    def file_level_flags(self) -> list[bool]:
        """Per chunk: does it belong to the file or a namespace (its imports are then taken out)?"""
        namespaces = self.namespaces
        return [o < 0 or namespaces[o] for o in self.model().owner]

    def laid_out_chunks(self, ks: list[int]) -> list[bytes]:
        """The bytes of chunks ``ks`` with their comments written as their tokens (:func:`~.chunks.layout`): the
        whitespace a layout change can touch. Queries the syntax tree (parsing again when it was released): used
        only where two versions' own texts differ in whitespace alone (:func:`~.same.own_respaced`)."""
        bounds = self.model().bounds
        with self._lock:
            tree = self.tree if self.tree is not None else self.language.parse(self.source)
            found = []
            for k in ks:
                specials = [sp for sp in self.language.specials(tree, bounds[k], bounds[k + 1])
                            if bounds[k] <= sp[0] < bounds[k + 1]]
                found.append(layout(self.source, bounds[k], bounds[k + 1], sorted(specials, key=special_order)))
            return found

    def raw_chunks(self, ks: list[int]) -> list[bytes]:
        bounds = self.model().bounds
        src = self.source
        return [src[bounds[k]:bounds[k + 1]] for k in ks]

    def file_key(self, name: str) -> str:
        """``top_key``, ``imports_key`` or ``comments_key`` (see :class:`~.base.FileAnalysis`)."""
        found = self._file.get(name)
        if found is not None:
            return found
        with self._lock:
            model = self.model()
            if name == "top_key":
                top = self.top_chunks()
                parts, strings = _pieces(model.top_items, dict(zip(top, self.chunks(top))), lambda child: _CHILD)
                found = digest(b" ".join(parts) + b"\x01\x01" + b"\x01".join(strings))
            elif name == "imports_key":
                found = digest(b"\x01".join([t for c in self.chunks(self.import_chunks()) for t in c.imports]))
            elif name == "comments_key":
                found = digest(b"\x01".join([t for c in self.chunks(range(len(model.bounds) - 1))
                                              for t in c.comments]))
            else:
                raise KeyError(name)
            self._file[name] = found
            return found
