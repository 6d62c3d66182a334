"""The chunks of a source file: where they are and how one is normalised.

The symbols' byte spans cut the source into *chunks*, the stretches between span boundaries, each owned by the
innermost symbol around it (or by the file): :class:`Model` lays them out. :func:`normalise_chunk` turns one chunk
and the special ranges that start in it (comments, strings, imports, block markers: :data:`Special`) into its
tokens and the texts collected beside them (:class:`Chunk`). The keys built from chunks are
:mod:`.normalize`'s.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_TOKEN = re.compile(rb"\w+|\S")

#: Kinds of special ranges; OPEN/CLOSE are zero-width block markers (sorted before others at a position).
OPEN, CLOSE, COMMENT, STRING, IMPORT = 0, 1, 2, 3, 4
_MARKERS = {OPEN: b" \x04 ", CLOSE: b" \x05 "}

#: A special range: ``(start, end, kind, block_start)``; a CLOSE marker carries its block's start byte.
Special = tuple[int, int, int, int]


def special_order(t: Special) -> tuple[int, int, int, int]:
    """Sort specials by start; block markers first (closing ones, inner blocks first; then opening), then longer ranges."""
    if t[2] <= CLOSE:
        return (t[0], 0, 0 if t[2] == CLOSE else 1, -t[3])
    return (t[0], 1, -t[1], t[2])


class Chunk:
    """One normalised chunk (internal).

    Attributes:
        piece: its code tokens, space-joined (comments and file-level imports removed, strings as ``\\x02``).
        strings, comments, imports: the verbatim strings, normalised comments and normalised
            file-level import statements that start in it, in order (a shared empty tuple when none).
    """

    __slots__ = ("piece", "strings", "comments", "imports")

    def __init__(self, piece: bytes, strings: list[bytes] | tuple[()], comments: list[bytes] | tuple[()],
                 imports: list[bytes] | tuple[()]) -> None:
        self.piece = piece
        self.strings = strings
        self.comments = comments
        self.imports = imports


def normalise_chunk(src: bytes, lo: int, hi: int, specials: list[Special], file_level: bool) -> Chunk:
    """Normalise ``src[lo:hi]`` given the specials that start in it (sorted by :func:`special_order`).

    A special starting inside an earlier one is ignored; one running past ``hi`` is cut there
    (its remainder, in the next chunk, is plain code). Import statements are taken out only
    when ``file_level`` (the chunk belongs to the file or to a namespace); elsewhere they are code.
    """
    if not specials:
        return Chunk(b" ".join(_TOKEN.findall(src[lo:hi])), (), (), ())
    parts: list[bytes] = []
    strings: list[bytes] = []
    comments: list[bytes] = []
    imports: list[bytes] = []
    pos = lo
    for s, e, kind, _ in specials:
        if s < pos:
            continue
        if kind <= CLOSE:
            parts.append(src[pos:s])
            parts.append(_MARKERS[kind])
            pos = s
            continue
        if kind == IMPORT and not file_level:
            continue
        if e > hi:
            e = hi
        parts.append(src[pos:s])
        parts.append(b" \x02 " if kind == STRING else b" ")
        text = src[s:e]
        if kind == STRING:
            strings.append(text)
        elif kind == COMMENT:
            comments.append(b" ".join(_TOKEN.findall(text)))
        else:
            imports.append(b" ".join(_TOKEN.findall(text)))
        pos = e
    if parts:
        parts.append(src[pos:hi])
        code = b"".join(parts)
    else:
        code = src[lo:hi]
    return Chunk(b" ".join(_TOKEN.findall(code)), strings or (), comments or (), imports or ())


def layout(src: bytes, lo: int, hi: int, specials: list[Special]) -> bytes:
    """``src[lo:hi]`` with each comment of ``specials`` that starts in it (sorted by :func:`special_order`; one
    inside an earlier special ignored, one running past ``hi`` cut there, as :func:`normalise_chunk` reads them)
    written as its tokens: the whitespace of the chunk's layout, not the spaces inside a comment's text, which its
    normalised form leaves out too (``# keep  it`` and ``# keep it`` are one comment)."""
    parts: list[bytes] = []
    pos = lo
    for s, e, kind, _ in specials:
        if s < pos or kind <= CLOSE:
            continue
        e = min(e, hi)
        if kind == COMMENT:
            parts += [src[pos:s], b" ".join(_TOKEN.findall(src[s:e]))]
        else:
            parts.append(src[pos:e])
        pos = e
    parts.append(src[pos:hi])
    return b"".join(parts)


class Model:
    """Where the chunks are (internal): built from the symbols' spans on first use.

    Every span start and end is an *event*; events are ordered by position, ends before starts
    at one position, inner ends first, outer starts first (the order of the tuples
    ``(position, 0, -i)`` for ends and ``(position, 1, i)`` for starts).

    Attributes:
        positions: the events' positions; ``spans``: per event, ``i`` for the start of span ``i``
            and ``~i`` for its end.
        bounds: ``[0, *positions, len(src)]``: chunk ``k`` is ``src[bounds[k]:bounds[k + 1]]``.
        owner: per chunk, the innermost span around it, or -1.
        items: per span, its chunks (``k >= 0``) and children (``~i``) in order; ``top_items`` for the file.
        first, last: per span, its first and last chunk (every chunk between is inside it).
    """

    __slots__ = ("positions", "spans", "bounds", "owner", "items", "top_items", "first", "last")

    def __init__(self, starts: list[int], ends: list[int], size: int) -> None:
        n = len(starts)
        ordered = _nested_events(starts, ends)
        if ordered is None:  # overlapping or empty spans (broken code): sort the events
            events = sorted([(starts[i], 1, i) for i in range(n)] + [(ends[i], 0, -i) for i in range(n)])
            positions = [pos for pos, _, _ in events]
            spans = [i if is_start else ~(-i) for _, is_start, i in events]
        else:
            positions, spans = ordered
        owner = [-1] * (len(positions) + 1)
        items: list[list[int]] = [[] for _ in range(n)]
        top_items: list[int] = [0]
        first = [0] * n
        last = [0] * n
        stack: list[int] = []
        for k, i in enumerate(spans):
            if i >= 0:
                (items[stack[-1]] if stack else top_items).append(~i)
                stack.append(i)
                first[i] = k + 1
            else:
                last[~i] = k
                if stack:  # (an empty span ends before it starts: tolerated, never raised)
                    stack.pop()
            owner[k + 1] = stack[-1] if stack else -1
            (items[stack[-1]] if stack else top_items).append(k + 1)
        self.positions = positions
        self.spans = spans
        self.bounds = [0, *positions, size]
        self.owner = owner
        self.items = items
        self.top_items = top_items
        self.first = first
        self.last = last

    def chunk_of(self, special: Special, starts: list[int]) -> int:
        """The chunk a special belongs to (the rules of one left-to-right pass over the events).

        A text special belongs to the chunk its start is in (after every event at that position);
        an opening marker to the chunk before the events at its position (the block holds the
        spans starting there); a closing marker to the chunk after the ends, at its position,
        of the spans inside its block.
        """
        s, _, kind, block_start = special
        positions = self.positions
        if kind > CLOSE:
            return bisect_right(positions, s)
        k = bisect_left(positions, s)
        if kind == CLOSE:
            spans = self.spans
            n = len(positions)
            while k < n and positions[k] == s and spans[k] < 0 and starts[~spans[k]] >= block_start:
                k += 1
        return k


def _nested_events(starts: list[int], ends: list[int]) -> tuple[list[int], list[int]] | None:
    """The events of pre-ordered, properly nested, non-empty spans in order, by one walk
    (no sort), or ``None`` when the spans are not so."""
    positions: list[int] = []
    spans: list[int] = []
    stack: list[int] = []
    for i, s in enumerate(starts):
        e = ends[i]
        if e <= s:
            return None
        while stack and ends[stack[-1]] <= s:
            j = stack.pop()
            positions.append(ends[j])
            spans.append(~j)
        if stack and (e > ends[stack[-1]] or s < starts[stack[-1]]):
            return None
        if positions and s < positions[-1]:
            return None
        positions.append(s)
        spans.append(i)
        stack.append(i)
    while stack:
        j = stack.pop()
        positions.append(ends[j])
        spans.append(~j)
    return positions, spans
