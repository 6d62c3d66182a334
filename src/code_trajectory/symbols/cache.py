"""An LRU cache of file analyses keyed by (git blob id, language), so no blob is parsed twice.

Bound: at most :data:`MAX_ENTRIES` blobs, :data:`MAX_SYMBOLS` symbols and :data:`MAX_BYTES`
bytes of source in total, whichever is reached first (least recently used entries are
evicted). An analysis keeps its source (keys are computed from it on first use, see
:mod:`.normalize`) and its symbols: a cached symbol costs about 300-450 bytes (measured with
tracemalloc on ``bench/symbols.py``'s Python file, before and after a 20-version history walk:
its slots, name and span; no hash is stored until one is read), and a 1,000-line file's
source about 40 KB (the bytes ``load`` returned, not copied). Reading every key of an
analysis also keeps its normalised text (a few KB per symbol in all).
Syntax trees are kept only for the :data:`MAX_TREES` most recently stored analyses: they let
the next version of a file be parsed incrementally and its keys be computed without a new
parse. Walking a file's history (``compare_blobs`` of consecutive versions) thus parses each
version once, incrementally from the one before.

Thread safety: one lock guards the table; parsing happens outside it. Two threads asking
for the same blob at once parse it once: the second waits for the first's result.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict, deque
from collections.abc import Callable

from .base import FileAnalysis, Symbol
from .changes import SymbolChanges, compare_analyses
from .registry import language_for

MAX_ENTRIES = 4096
MAX_SYMBOLS = 60_000
MAX_BYTES = 64 * 1024 * 1024
MAX_TREES = 8

#: git's all-zero object id, which ``git diff --raw`` shows for an absent side.
_NULL_OIDS = frozenset({"0" * 40, "0" * 64})


class SymbolCache:
    """A bounded, thread-safe LRU map from ``(blob oid, language name)`` to :class:`FileAnalysis`.

    Attributes:
        hits, misses: lookups answered from the cache / that had to parse (ints).
        parses: how many times a blob was actually analysed.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES, max_symbols: int = MAX_SYMBOLS,
                 max_bytes: int = MAX_BYTES, max_trees: int = MAX_TREES) -> None:
        """Create an empty cache holding at most ``max_entries`` blobs, ``max_symbols`` symbols and
        ``max_bytes`` bytes of source (each >= 1), and the syntax trees of the ``max_trees`` (>= 0)
        most recently stored analyses."""
        from code_trajectory.core.errors import InvalidArgumentError

        if max_entries < 1 or max_symbols < 1 or max_bytes < 1 or max_trees < 0:
            raise InvalidArgumentError("symbol cache bounds must be at least 1 (0 trees allowed)")
        self.max_entries = max_entries
        self.max_symbols = max_symbols
        self.max_bytes = max_bytes
        self.max_trees = max_trees
        self._data: OrderedDict[tuple[str, str], FileAnalysis] = OrderedDict()
        self._symbols = 0
        self._bytes = 0
        self._trees: deque[FileAnalysis] = deque()
        self._lock = threading.Lock()
        self._inflight: dict[tuple[str, str], threading.Event] = {}
        self.hits = 0
        self.misses = 0
        self.parses = 0

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._data.clear()
            self._symbols = self._bytes = 0
            for analysis in self._trees:
                analysis.release_tree()
            self._trees.clear()
            self.hits = self.misses = self.parses = 0

    def analysis_for_blob(self, oid: str, path: str, load: Callable[[], bytes | None],
                          previous: FileAnalysis | None = None) -> FileAnalysis | None:
        """Return the analysis of one blob, parsing it only if it is not cached.

        Args:
            oid: the blob's git object id (hex). Content is assumed immutable per id.
            path: the file's path relative to the project root; its extension picks the language.
            load: returns the blob's bytes (called at most once, only on a miss), or ``None``
                when the blob cannot be read.
            previous: an analysis of another version of the file, parsed incrementally from
                on a miss when it still has its syntax tree (see ``LanguageSupport.analyze``).

        Returns:
            The :class:`FileAnalysis`, or ``None`` when no language module handles ``path`` or
            ``load`` returned ``None`` (nothing is cached then).

        Raises:
            Whatever ``load`` raises; TrajectoryError when the grammar cannot be loaded.
        """
        language = language_for(path)
        if language is None:
            return None
        key = (oid, language.name)
        while True:
            with self._lock:
                found = self._data.get(key)
                if found is not None:
                    self._data.move_to_end(key)
                    self.hits += 1
                    return found
                event = self._inflight.get(key)
                if event is None:
                    event = self._inflight[key] = threading.Event()
                    self.misses += 1
                    break
            event.wait()
        try:
            source = load()
            analysis = None if source is None else language.analyze(source, previous=previous)
            if analysis is not None:
                with self._lock:
                    self.parses += 1
                    self._store(key, analysis)
            return analysis
        finally:
            with self._lock:
                del self._inflight[key]
            event.set()

    def _store(self, key: tuple[str, str], analysis: FileAnalysis) -> None:
        self._data[key] = analysis
        self._symbols += len(analysis.symbols)
        self._bytes += _size(analysis)
        while self._data and (len(self._data) > self.max_entries or self._symbols > self.max_symbols
                              or self._bytes > self.max_bytes):
            _, dropped = self._data.popitem(last=False)
            self._symbols -= len(dropped.symbols)
            self._bytes -= _size(dropped)
            dropped.release_tree()
        self._trees.append(analysis)
        while len(self._trees) > self.max_trees:
            self._trees.popleft().release_tree()

    def symbols_for_blob(self, oid: str, path: str, load: Callable[[], bytes | None]) -> list[Symbol] | None:
        """Return the symbols of one blob (see :meth:`analysis_for_blob` for arguments and ``None``)."""
        analysis = self.analysis_for_blob(oid, path, load)
        return None if analysis is None else list(analysis.symbols)

    def compare_blobs(self, path: str, old_oid: str | None, new_oid: str | None,
                      load: Callable[[str], bytes | None]) -> SymbolChanges | None:
        """Compare two blobs of one file symbol by symbol, parsing each at most once per cache.

        Args:
            path: the file's path relative to the project root (new path for a rename).
            old_oid, new_oid: blob ids; ``None`` or git's all-zero id for an absent side
                (file added / deleted).
            load: returns a blob's bytes given its id, or ``None`` when it cannot be read
                (that side is then treated as absent).

        Returns:
            As :func:`code_trajectory.symbols.changes.compare`: ``None`` for an unsupported
            language.
        """
        if language_for(path) is None:
            return None
        sides: list[FileAnalysis | None] = []
        for oid in (old_oid, new_oid):
            if oid is None or oid in _NULL_OIDS:
                sides.append(None)
            else:  # the new side is parsed incrementally from the old one
                previous = sides[0] if sides else None
                sides.append(self.analysis_for_blob(oid, path, functools.partial(load, oid), previous=previous))
        return compare_analyses(path, sides[0], sides[1])


def _size(analysis: FileAnalysis) -> int:
    source = analysis.source
    return 0 if source is None else len(source)


DEFAULT_CACHE = SymbolCache()


def symbols_for_blob(oid: str, path: str, load: Callable[[], bytes | None]) -> list[Symbol] | None:
    """:meth:`SymbolCache.symbols_for_blob` on the process-wide :data:`DEFAULT_CACHE`."""
    return DEFAULT_CACHE.symbols_for_blob(oid, path, load)


def compare_blobs(path: str, old_oid: str | None, new_oid: str | None,
                  load: Callable[[str], bytes | None]) -> SymbolChanges | None:
    """:meth:`SymbolCache.compare_blobs` on the process-wide :data:`DEFAULT_CACHE`."""
    return DEFAULT_CACHE.compare_blobs(path, old_oid, new_oid, load)
