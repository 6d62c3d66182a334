"""Journal search: the index of entries and the ranking (scores in :mod:`.scoring`).

Index
-----
An SQLite file (default ``<journal>/.git/code-trajectory-search.sqlite``) holds
one row per entry reachable from HEAD (keyed by commit sha and section path),
an FTS5 table over them, and the embeddings of each distinct entry text (keyed
by the text's hash and the model id, so an entry replayed by ``sync`` with a new
sha is not embedded again). It is updated incrementally: only commits new since
the last indexed head are read and embedded; a rewritten history is re-listed
and entries no longer reachable are dropped. Several processes may share it
(WAL, ``INSERT OR IGNORE``).

Costs (``bench/journal_search.py``, 2 shared cores): embedding is the slow part,
~45 entries a second for 60-word entries, paid once per entry on the first
search that sees it (a fresh 1000-entry journal: ~25 s once; afterwards only new
entries). A warm semantic query over 2000 entries takes ~19 ms median, most of
it embedding the two query strings; the scoring itself is one brute-force
float32 matrix product (~9 ms over 100k x 384), kept in memory per indexed head.
A lexical query takes ~12 ms.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from code_trajectory.core.bounded_read import drop_planted_cache
from code_trajectory.core.errors import InvalidArgumentError, JournalError
from code_trajectory.core.transactions import immediate_transaction
from code_trajectory.journal import SALIENCE_RANGE, embedding
from code_trajectory.journal.scoring import calibrate, chunk_entry, chunks_of, combine, salience
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.text import body_of, entry_id, iso, split_message, work_context_of

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
MAX_QUERY_CHARS = 4000
#: Entries whose messages are read at once when the index is brought up to date (each up to 865,536 bytes).
MESSAGES_READ = 50


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass
class SearchHit:
    """One search result (see :meth:`as_dict` for the JSON shape)."""

    path: str
    sha: str
    timestamp: int
    text: str
    summary: str | None
    work_context_score: float
    content_score: float
    combined_score: float
    salience: float
    cut_for_search: bool = False

    def as_dict(self) -> dict:
        return {
            "id": entry_id(self.path, self.sha),
            "path": self.path,
            "content": self.text,
            "work_context_score": round(self.work_context_score, 4),
            "content_score": round(self.content_score, 4),
            "combined_score": round(self.combined_score, 4),
            "salience": round(self.salience, 4),
            "timestamp": iso(self.timestamp),
            "cut_for_search": self.cut_for_search,
        }


@dataclass
class SearchResult:
    """A search answer: which ranking was used, and the hits."""

    ranking: str
    note: str
    threshold: float
    considered: int
    hits: list[SearchHit] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"ranking": self.ranking, "ranking_note": self.note, "salience_threshold": self.threshold,
                "entries_considered": self.considered, "results": [h.as_dict() for h in self.hits]}


@dataclass
class _Row:
    rowid: int
    sha: str
    path: str
    ts: int
    text_hash: str


class SearchIndex:
    """The search index of one journal (see the module docstring).

    Args:
        store: the journal.
        settings: search settings (weights, decay, ranking, cache path, model files).
    """

    def __init__(self, store: JournalStore, settings: JournalSettings) -> None:
        self.store = store
        self.settings = settings
        self.path: Path = settings.search_cache_file
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._vectors: dict[str, tuple[Any, Any]] = {}  # text_hash -> (ctx vec or None, chunk matrix)
        self._vectors_model: str | None = None
        self._rows_head: str | None = None
        self._rows: list[_Row] = []
        self._matrix: tuple[Any, Any, Any, Any] | None = None
        self._matrix_key: tuple[int, str] | None = None
        self._rows_generation = 0

    # -- database

    def _db(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        self.store.ensure()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            drop_planted_cache(self.path)  # a symlink or a FIFO: SQLite would follow it or block
            conn = sqlite3.connect(str(self.path), timeout=30.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")
                for table in ("meta", "entries", "entries_fts", "vectors", "vectors_done"):
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
                conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
                conn.execute("CREATE TABLE entries (rowid INTEGER PRIMARY KEY, sha TEXT NOT NULL, path TEXT NOT NULL, "
                             "ts INTEGER NOT NULL, text TEXT NOT NULL, text_hash TEXT NOT NULL, UNIQUE (sha, path))")
                conn.execute("CREATE INDEX entries_text_hash ON entries (text_hash)")
                conn.execute("CREATE VIRTUAL TABLE entries_fts USING fts5(ctx, body, "
                             "tokenize='porter unicode61 remove_diacritics 2')")
                conn.execute("CREATE TABLE vectors (text_hash TEXT NOT NULL, model TEXT NOT NULL, "
                             "field TEXT NOT NULL, chunk INTEGER NOT NULL, vec BLOB NOT NULL, "
                             "PRIMARY KEY (text_hash, model, field, chunk))")
                conn.execute("CREATE TABLE vectors_done (text_hash TEXT NOT NULL, model TEXT NOT NULL, "
                             "PRIMARY KEY (text_hash, model))")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            raise JournalError(f"cannot open the search cache {self.path}: {exc}") from exc
        self._conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- keeping the index in step with the journal

    def refresh(self) -> str | None:
        """Index the entries new since the last indexed head; returns the head indexed."""
        with self._lock:
            head = self.store.head()
            conn = self._db()
            try:
                row = conn.execute("SELECT value FROM meta WHERE key='head'").fetchone()
                indexed = row[0] if row else None
                if indexed == head:
                    return head
                with immediate_transaction(conn):
                    row = conn.execute("SELECT value FROM meta WHERE key='head'").fetchone()
                    indexed = row[0] if row else None  # another process may have done it meanwhile
                    if indexed != head:
                        self._update(conn, indexed, head)
            except sqlite3.Error as exc:
                raise JournalError(f"cannot update the search cache {self.path}: {exc}") from exc
            return head

    def _update(self, conn: sqlite3.Connection, indexed: str | None, head: str | None) -> None:
        if head is None:
            conn.execute("DELETE FROM entries")
            conn.execute("DELETE FROM entries_fts")
            conn.execute("DELETE FROM meta WHERE key='head'")
            return
        if indexed is not None and self.store._is_ancestor(indexed, head):
            new_pairs = [(c.sha, s, c.timestamp) for c in self.store._scan(f"{indexed}..{head}") for s in c.sections]
        else:
            present = [(c.sha, s, c.timestamp) for c in self.store.history(head) for s in c.sections]
            keys = {(sha, path) for sha, path, _ in present}
            known = {(sha, path): rowid for rowid, sha, path in conn.execute("SELECT rowid, sha, path FROM entries")}
            for key, rowid in known.items():
                if key not in keys:
                    conn.execute("DELETE FROM entries WHERE rowid=?", (rowid,))
                    conn.execute("DELETE FROM entries_fts WHERE rowid=?", (rowid,))
            new_pairs = [p for p in present if (p[0], p[1]) not in known]
        messages: dict[str, tuple[str, str]] = {}
        for at, (sha, path, ts) in enumerate(new_pairs):
            if at % MESSAGES_READ == 0:  # a slice at a time: 300 messages of 800 KB read at once took 1.15 GB
                messages = self.store.messages(sorted({p[0] for p in new_pairs[at:at + MESSAGES_READ]}))
            raw, _author = messages.get(sha, ("", ""))
            text, _summary = split_message(raw)
            cur = conn.execute("INSERT OR IGNORE INTO entries (sha, path, ts, text, text_hash) VALUES (?,?,?,?,?)",
                               (sha, path, ts, text, _text_hash(text)))
            if cur.rowcount:
                conn.execute("INSERT INTO entries_fts (rowid, ctx, body) VALUES (?,?,?)",
                             (cur.lastrowid, work_context_of(text) or "", body_of(text) or text))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('head', ?)", (head,))

    def _load_rows(self, head: str | None) -> list[_Row]:
        if self._rows_head == head and head is not None:
            return self._rows
        conn = self._db()
        rows = [_Row(*r) for r in conn.execute("SELECT rowid, sha, path, ts, text_hash FROM entries ORDER BY rowid")]
        self._rows_head, self._rows = head, rows
        self._rows_generation += 1
        return rows

    def _ensure_vectors(self, embedder: embedding.Embedder, rows: list[_Row]) -> None:
        import numpy as np

        conn = self._db()
        model = embedder.model_id
        if self._vectors_model != model:
            self._vectors, self._vectors_model = {}, model
        wanted = {r.text_hash for r in rows if r.text_hash not in self._vectors}
        if not wanted:
            return
        done = {h for (h,) in conn.execute("SELECT text_hash FROM vectors_done WHERE model=?", (model,))}
        missing = wanted - done
        if missing:
            texts: dict[str, str] = {}
            for h in missing:
                row = conn.execute("SELECT text FROM entries WHERE text_hash=? LIMIT 1", (h,)).fetchone()
                if row is not None:
                    texts[h] = row[0]
            self._embed_and_store(embedder, texts)
        stored: dict[str, dict[str, list[tuple[int, bytes]]]] = {}
        records: Iterable[tuple[str, str, int, bytes]]
        if len(wanted) > 2000:
            records = conn.execute("SELECT text_hash, field, chunk, vec FROM vectors WHERE model=?", (model,))
        else:
            found: list[tuple[str, str, int, bytes]] = []
            wanted_list = sorted(wanted)
            for start in range(0, len(wanted_list), 500):
                part = wanted_list[start:start + 500]
                found.extend(conn.execute(
                    "SELECT text_hash, field, chunk, vec FROM vectors WHERE model=? AND text_hash IN "
                    f"({','.join('?' * len(part))})", (model, *part)))
            records = found
        for h, fld, chunk, blob in records:
            if h in wanted:
                stored.setdefault(h, {}).setdefault(fld, []).append((chunk, blob))
        for h in wanted:
            fields = stored.get(h, {})
            ctx = fields.get("ctx")
            ctx_vec = np.frombuffer(ctx[0][1], dtype=np.float32) if ctx else None
            content = sorted(fields.get("content", []))
            if content:
                mat = np.stack([np.frombuffer(b, dtype=np.float32) for _, b in content])
            else:
                mat = np.zeros((1, embedding.DIMENSION), dtype=np.float32)
            self._vectors[h] = (ctx_vec, mat)

    def _embed_and_store(self, embedder: embedding.Embedder, texts: dict[str, str]) -> None:
        jobs: list[tuple[str, str, int, str]] = []  # (hash, field, chunk, text)
        for h, text in texts.items():
            ctx = work_context_of(text)
            if ctx:
                jobs.append((h, "ctx", 0, ctx))
            for i, chunk in enumerate(chunks_of(body_of(text) or text)):
                jobs.append((h, "content", i, chunk))
        conn = self._db()
        for start in range(0, len(jobs), 256):
            part = jobs[start:start + 256]
            unique = list(dict.fromkeys(j[3] for j in part))  # work_context lines repeat a lot
            unique_vecs = embedder.encode(unique)
            position = {text: k for k, text in enumerate(unique)}
            vecs = [unique_vecs[position[j[3]]] for j in part]
            with immediate_transaction(conn):
                conn.executemany("INSERT OR REPLACE INTO vectors (text_hash, model, field, chunk, vec) "
                                 "VALUES (?,?,?,?,?)",
                                 [(j[0], embedder.model_id, j[1], j[2], vecs[i].tobytes()) for i, j in enumerate(part)])
                done = {j[0] for j in part}
                conn.executemany("INSERT OR IGNORE INTO vectors_done (text_hash, model) VALUES (?,?)",
                                 [(h, embedder.model_id) for h in done])

    # -- searching

    def ranking_mode(self) -> tuple[str, str, embedding.Embedder | None]:
        """``(ranking, note, embedder or None)`` for the configured ranking and what is installed."""
        mode = self.settings.ranking
        if mode == "lexical":
            return "lexical", "lexical ranking (SQLite FTS5, BM25) as configured ([journal.search] ranking)", None
        try:
            embedder = embedding.get_embedder(self.settings.onnx_path, self.settings.tokenizer_path)
        except embedding.ModelUnavailable as exc:
            if mode == "semantic":
                raise JournalError(f"semantic ranking is configured but unavailable: {exc}") from exc
            return "lexical", (f"lexical ranking (SQLite FTS5, BM25): the semantic model is unavailable ({exc}); "
                               "scores are relative to the best match"), None
        return "semantic", f"semantic ranking ({embedding.MODEL_NAME} sentence embeddings, offline)", embedder

    def search(self, work_context: str, content: str, salience_threshold: float | None = None,
               now: float | None = None, max_results: int | None = None) -> SearchResult:
        """Search the journal's entries (see the module docstring for the scoring).

        Raises:
            InvalidArgumentError: both queries empty, or a threshold outside [0, 1].
        """
        work_context = (work_context or "").strip()[:MAX_QUERY_CHARS]
        content = (content or "").strip()[:MAX_QUERY_CHARS]
        if not work_context and not content:
            raise InvalidArgumentError("give a work_context or a content to search for")
        threshold = self.settings.default_salience_threshold if salience_threshold is None else salience_threshold
        low, high = SALIENCE_RANGE
        if isinstance(threshold, bool) or not low <= float(threshold) <= high:
            raise InvalidArgumentError(f"salience_threshold must be between {low:g} and {high:g}, got "
                                       f"{salience_threshold}")
        threshold = float(threshold)
        limit = max_results or self.settings.max_results
        now = time.time() if now is None else now
        with self._lock:
            ranking, note, embedder = self.ranking_mode()
            head = self.refresh()
            rows = self._load_rows(head)
            if not rows:
                return SearchResult(ranking, note, threshold, 0)
            weights = self._weights(bool(work_context), bool(content))
            if embedder is not None:
                candidates = self._semantic_candidates(embedder, rows, work_context, content, weights, threshold)
            else:
                candidates = self._lexical_candidates(rows, work_context, content)
            hits = self._rank(rows, candidates, threshold, now, limit)
            self._fill_text(hits, semantic=embedder is not None)
            return SearchResult(ranking, note, threshold, len(rows), hits)

    def _weights(self, use_ctx: bool, use_content: bool) -> tuple[float, float]:
        """The normalised (context, content) weights for the query dimensions that were given."""
        wc = self.settings.context_weight if use_ctx else 0.0
        wx = self.settings.content_weight if use_content else 0.0
        if wc + wx <= 0:
            wc, wx = (1.0, 0.0) if use_ctx else (0.0, 1.0)
        return wc / (wc + wx), wx / (wc + wx)

    def _semantic_candidates(self, embedder: embedding.Embedder, rows: list[_Row], work_context: str,
                             content: str, weights: tuple[float, float],
                             threshold: float) -> list[tuple[int, float, float, float]]:
        """``[(row index, context score, content score, relevance)]`` of entries that can pass ``threshold``."""
        import numpy as np

        chunks, starts, ctx_rows, ctx_mat = self._matrices(embedder, rows)
        queries = embedder.encode([work_context or content, content or work_context])
        q_ctx, q_content = queries[0], queries[1]
        sims = chunks @ np.stack([q_ctx, q_content], axis=1)  # (chunks, 2): brute-force cosine
        best = np.maximum.reduceat(sims, starts, axis=0)  # (entries, 2): best chunk per entry
        ctx_cos = best[:, 0].copy()
        if len(ctx_rows):
            ctx_cos[ctx_rows] = ctx_mat @ q_ctx
        ctx, body = calibrate(ctx_cos), calibrate(best[:, 1])
        relevance = weights[0] * ctx + weights[1] * body
        # salience only lowers a score, so nothing below the threshold before it can pass after it
        keep = np.flatnonzero(relevance >= threshold - 1e-9)
        return [(int(i), float(ctx[i]), float(body[i]), float(relevance[i])) for i in keep]

    def _matrices(self, embedder: embedding.Embedder, rows: list[_Row]) -> tuple[Any, Any, Any, Any]:
        """The stacked vectors of ``rows``: (chunk matrix, first chunk of each entry, rows with a
        work_context vector, their vectors). Built once per indexed head and model."""
        import numpy as np

        key = (self._rows_generation, embedder.model_id)
        if self._matrix_key == key and self._matrix is not None:
            return self._matrix
        self._ensure_vectors(embedder, rows)
        mats, sizes, ctx_rows, ctx_vecs = [], [], [], []
        for i, row in enumerate(rows):
            ctx_vec, mat = self._vectors[row.text_hash]
            mats.append(mat)
            sizes.append(len(mat))
            if ctx_vec is not None:
                ctx_rows.append(i)
                ctx_vecs.append(ctx_vec)
        chunks = np.ascontiguousarray(np.concatenate(mats), dtype=np.float32)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        ctx_mat = np.stack(ctx_vecs) if ctx_vecs else np.zeros((0, embedding.DIMENSION), dtype=np.float32)
        self._matrix = (chunks, starts, np.array(ctx_rows, dtype=np.int64), ctx_mat)
        self._matrix_key = key
        return self._matrix

    def _lexical_candidates(self, rows: list[_Row], work_context: str,
                            content: str) -> list[tuple[int, float, float, float]]:
        """Like :meth:`_semantic_candidates` with FTS5/BM25 scores (pure Python: no numpy needed)."""
        index = {row.rowid: i for i, row in enumerate(rows)}

        def scores(query: str, ctx_weight: float, body_weight: float) -> dict[int, float]:
            terms = [t for t in re.findall(r"\w+", query.lower()) if len(t) > 1 or t.isdigit()]
            if not terms:
                return {}
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms))
            try:
                result = self._db().execute(
                    "SELECT rowid, bm25(entries_fts, ?, ?) FROM entries_fts WHERE entries_fts MATCH ?",
                    (ctx_weight, body_weight, match)).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"lexical search failed: {exc}") from exc
            raw = {index[rowid]: max(0.0, -bm25) for rowid, bm25 in result if rowid in index}
            top = max(raw.values(), default=0.0)
            return {i: v / top for i, v in raw.items()} if top > 0 else {}

        ctx = scores(work_context, 2.0, 1.0) if work_context else {}
        body = scores(content, 0.5, 1.0) if content else {}
        # a query whose words occur in no entry says nothing: weigh only the other one
        wc, wx = self._weights(bool(ctx), bool(body))
        return [(i, ctx.get(i, 0.0), body.get(i, 0.0), wc * ctx.get(i, 0.0) + wx * body.get(i, 0.0))
                for i in sorted(set(ctx) | set(body))]

    def _rank(self, rows: list[_Row], candidates: list[tuple[int, float, float, float]], threshold: float,
              now: float, limit: int) -> list[SearchHit]:
        s = self.settings
        scored = []
        for i, ctx, body, relevance in candidates:
            sal = salience(rows[i].ts, now, s.half_life_days, s.minimum_salience)
            combined = combine(relevance, sal, s.recency_weight)
            if combined >= threshold - 1e-9:
                scored.append((i, ctx, body, combined, sal))
        scored.sort(key=lambda c: (-round(c[3], 6), -rows[c[0]].ts, rows[c[0]].path))
        return [SearchHit(path=rows[i].path, sha=rows[i].sha, timestamp=rows[i].ts, text="", summary=None,
                          work_context_score=ctx, content_score=body, combined_score=combined, salience=sal)
                for i, ctx, body, combined, sal in scored[:limit]]

    def _fill_text(self, hits: list[SearchHit], semantic: bool) -> None:
        """Put each hit's text in; ``semantic``: mark the hits whose entry was searched in its first
        :data:`~.scoring.MAX_CHUNKS` chunks only (the lexical index holds the whole text)."""
        conn = self._db()
        for hit in hits:
            row = conn.execute("SELECT text FROM entries WHERE sha=? AND path=?", (hit.sha, hit.path)).fetchone()
            hit.text = row[0] if row else ""
            hit.cut_for_search = semantic and chunk_entry(body_of(hit.text) or hit.text)[1]
