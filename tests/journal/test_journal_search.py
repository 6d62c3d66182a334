"""Journal search: the salience formula, the lexical fallback (always), semantic search (with the extra)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError, JournalError
from code_trajectory.journal.embedding import semantic_status
from code_trajectory.journal.scoring import calibrate, chunks_of, combine, salience
from code_trajectory.journal.search import SearchIndex
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore

DAY = 86400
NOW = time.time()
HAVE_MODEL, WHY_NOT = semantic_status()
semantic = pytest.mark.skipif(not HAVE_MODEL, reason=f"semantic extra not installed: {WHY_NOT}")


def make(tmp_path: Path, **overrides) -> tuple[JournalStore, SearchIndex]:
    settings = JournalSettings.load(journal_dir=tmp_path / "journal", **overrides)
    store = JournalStore(settings)
    return store, SearchIndex(store, settings)


def ids(result) -> list[str]:
    return [h.path for h in result.hits]


# --------------------------------------------------------------------------- the formula

def test_salience_decay_and_floor() -> None:
    assert salience(NOW, NOW, 30, 0.1) == 1.0
    assert salience(NOW - 30 * DAY, NOW, 30, 0.1) == pytest.approx(0.5)
    assert salience(NOW - 60 * DAY, NOW, 30, 0.1) == pytest.approx(0.25)
    assert salience(NOW - 3650 * DAY, NOW, 30, 0.1) == 0.1
    assert salience(NOW + DAY, NOW, 30, 0.1) == 1.0  # clock skew: no bonus for the future


def test_old_relevant_entry_stays_above_threshold_unlike_prototype() -> None:
    old = salience(NOW - 365 * DAY, NOW, 30, 0.1)
    relevance = 0.8
    assert relevance * old < 0.5  # the prototype's product: a year-old perfect-ish match is unfindable
    assert combine(relevance, old, 0.2) >= 0.5  # ours: salience takes at most 20 %
    # equal relevance: the recent entry ranks first
    assert combine(relevance, 1.0, 0.2) > combine(relevance, old, 0.2)
    # recency weight 0 ignores age, 1 is the prototype
    assert combine(0.7, old, 0.0) == 0.7
    assert combine(0.7, old, 1.0) == pytest.approx(0.7 * old)


def test_calibration_is_monotonic_and_centred() -> None:
    np = pytest.importorskip("numpy")  # numpy comes with the semantic extra

    xs = np.linspace(-1, 1, 201)
    ys = calibrate(xs)
    assert np.all(np.diff(ys) > 0) and ys.min() >= 0 and ys.max() <= 1
    assert calibrate(np.array([0.25]))[0] == pytest.approx(0.5)
    assert calibrate(np.array([0.05]))[0] < 0.1 and calibrate(np.array([0.6]))[0] > 0.99


def test_chunks_split_long_entries() -> None:
    short = "one paragraph"
    assert chunks_of(short) == [short]
    long = "\n\n".join(" ".join(f"w{p}_{i}" for i in range(100)) for p in range(4))
    parts = chunks_of(long)
    assert len(parts) == 4 and all(len(p.split()) <= 150 for p in parts)
    huge = " ".join(f"x{i}" for i in range(400))
    assert [len(p.split()) for p in chunks_of(huge)] == [150, 150, 100]


# --------------------------------------------------------------------------- lexical (always tested)

def test_lexical_search_finds_and_reports_ranking(tmp_path: Path) -> None:
    store, index = make(tmp_path, ranking="lexical")
    store.write("auth/login", "work_context: debugging production\n\nFixed the login bug with the session cookie.")
    store.write("db/index", "work_context: performance tuning\n\nAdded a composite index to the orders table.")
    res = index.search("debugging", "login cookie")
    assert res.ranking == "lexical" and "FTS5" in res.note
    assert ids(res) == ["auth/login"]
    hit = res.hits[0].as_dict()
    assert hit["id"].startswith("auth/login#") and "Fixed the login bug" in hit["content"]
    assert hit["combined_score"] >= 0.5 and hit["timestamp"].endswith("Z")
    assert ids(index.search("tuning", "composite index orders")) == ["db/index"]
    assert index.search("nothing", "zebra giraffe").hits == []


def test_lexical_recency_breaks_ties_and_old_entries_stay_findable(tmp_path: Path) -> None:
    store, index = make(tmp_path, ranking="lexical")
    text = "work_context: incident\n\nThe webhook retries double charged customers."
    store.write("old", text, timestamp=int(NOW - 400 * DAY))
    store.write("recent", text, timestamp=int(NOW - 2 * DAY))
    store.write("noise", "work_context: gardening\n\nWatered the tomatoes.", timestamp=int(NOW))
    res = index.search("incident", "webhook double charged", now=NOW)
    assert ids(res) == ["recent", "old"]  # same relevance: recent first; old still above 0.5
    assert res.hits[1].combined_score >= 0.5 and res.hits[1].salience == pytest.approx(0.1)


def test_threshold_and_max_results(tmp_path: Path) -> None:
    store, index = make(tmp_path, ranking="lexical", max_results=2)
    for i in range(4):
        store.write(f"s{i}", f"work_context: ops\n\nrotated the keys again {i}")
    assert len(index.search("ops", "rotated keys").hits) == 2
    assert len(index.search("ops", "rotated keys", max_results=10, salience_threshold=0.0).hits) == 4
    with pytest.raises(InvalidArgumentError):
        index.search("ops", "keys", salience_threshold=1.5)
    with pytest.raises(InvalidArgumentError):
        index.search("", "  ")


def test_index_follows_history_rewrites(tmp_path: Path) -> None:
    store, index = make(tmp_path, ranking="lexical")
    store.write("a", "work_context: x\n\nalpha bravo")
    assert ids(index.search("x", "alpha")) == ["a"]
    store.write("b", "work_context: x\n\ncharlie delta")
    assert ids(index.search("x", "charlie")) == ["b"]  # incremental: new entry indexed
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "-C", str(store.root), "reset", "-q", "--hard", "HEAD~1"], check=True, env=env)
    assert index.search("x", "charlie").hits == []  # rewritten history: the entry is gone
    assert ids(index.search("x", "alpha")) == ["a"]


def test_auto_falls_back_to_lexical_without_model(tmp_path: Path) -> None:
    store, index = make(tmp_path, onnx_path=str(tmp_path / "missing.onnx"))
    store.write("a", "work_context: x\n\nthe login bug")
    res = index.search("x", "login")
    assert res.ranking == "lexical" and "unavailable" in res.note and ids(res) == ["a"]
    _, forced = make(tmp_path, ranking="semantic", onnx_path=str(tmp_path / "missing.onnx"))
    with pytest.raises(JournalError, match="semantic ranking is configured but unavailable"):
        forced.search("x", "login")


def test_empty_journal_search(tmp_path: Path) -> None:
    _, index = make(tmp_path, ranking="lexical")
    res = index.search("anything", "at all")
    assert res.hits == [] and res.considered == 0


# --------------------------------------------------------------------------- semantic (with the extra)

@semantic
def test_semantic_paraphrase_old_entry_found_and_recency_breaks_ties(tmp_path: Path) -> None:
    store, index = make(tmp_path)
    store.write("auth/old", "work_context: debugging production incident\n\nFixed the login bug: sessions were "
                "dropped because the cookie domain was wrong.", timestamp=int(NOW - 300 * DAY))
    store.write("garden", "work_context: weekend hobby\n\nPlanted tomatoes and basil in the raised bed.",
                timestamp=int(NOW))
    store.write("ci/cache", "work_context: continuous integration\n\nCached pip wheels between CI runs.",
                timestamp=int(NOW))
    res = index.search("troubleshooting a live problem", "repair authentication error", now=NOW)
    assert res.ranking == "semantic"
    assert ids(res)[:1] == ["auth/old"], res.as_dict()  # 300 days old, no shared words, still found at 0.5
    assert "garden" not in ids(res)
    # the same entry written recently ranks above the old one
    store.write("auth/recent", "work_context: debugging production incident\n\nFixed the login bug: sessions were "
                "dropped because the cookie domain was wrong.", timestamp=int(NOW - DAY))
    res = index.search("troubleshooting a live problem", "repair authentication error", now=NOW)
    assert ids(res)[:2] == ["auth/recent", "auth/old"]
    assert res.hits[0].work_context_score == pytest.approx(res.hits[1].work_context_score, abs=1e-6)
    assert res.hits[0].combined_score > res.hits[1].combined_score


@semantic
def test_embeddings_cached_incrementally(tmp_path: Path) -> None:
    store, index = make(tmp_path)
    for i in range(3):
        store.write(f"s{i}", f"work_context: w\n\nentry number {i} about databases")
    index.search("w", "databases")
    db = sqlite3.connect(index.path)
    assert db.execute("SELECT COUNT(*) FROM vectors_done").fetchone()[0] == 3
    n_vectors = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    store.write("s3", "work_context: w\n\none more about caches")
    index.search("w", "caches")
    assert db.execute("SELECT COUNT(*) FROM vectors_done").fetchone()[0] == 4
    assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == n_vectors + 2  # ctx + one chunk
    # a second index object (another process) reuses the cache: nothing embedded again
    _, again = make(tmp_path)
    assert ids(again.search("w", "caches"))[0] == "s3"
    assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == n_vectors + 2
    db.close()


@semantic
def test_embedder_matches_reference_geometry() -> None:
    from code_trajectory.journal.embedding import get_embedder

    emb = get_embedder()
    v = emb.encode(["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."])
    assert v.shape == (3, 384)
    assert abs(float((v * v).sum(axis=1).max()) - 1.0) < 1e-5
    # all-MiniLM-L6-v2 (fp32 reference) gives 0.7553 for the first pair
    assert float(v[0] @ v[1]) == pytest.approx(0.755, abs=0.02)
    assert float(v[0] @ v[2]) < 0.3


@semantic
def test_a_long_entry_is_embedded_in_its_first_chunks_and_a_hit_says_it_was_cut(tmp_path: Path, monkeypatch) -> None:
    """300 entries of 800 KB had every chunk embedded (96 s, a 541 MB cache): at most MAX_CHUNKS chunks of at most
    MAX_CHUNK_CHARS characters are, and a hit on a longer entry says only its beginning was searched."""
    from code_trajectory.journal import scoring
    from code_trajectory.journal.service import Journal

    monkeypatch.setattr(scoring, "MAX_CHUNKS", 2)
    assert scoring.chunk_entry("x" * (scoring.MAX_CHUNK_CHARS + 1)) == (["x" * scoring.MAX_CHUNK_CHARS], True)
    store, index = make(tmp_path)
    para = " ".join(["database"] * 150)
    store.write("long", "work_context: databases\n\n" + "\n\n".join([para] * 5))
    store.write("short", "work_context: databases\n\n" + para)
    res = index.search("databases", "database", salience_threshold=0.0)
    cut = {h.path: h.cut_for_search for h in res.hits}
    assert cut == {"long": True, "short": False}
    db = sqlite3.connect(index.path)
    assert db.execute("SELECT max(chunk) FROM vectors WHERE field='content'").fetchone()[0] == 1
    text, data = Journal(store.settings).search("databases", "database", salience_threshold=0.0)
    assert sorted(r["cut_for_search"] for r in data["results"]) == [False, True]
    assert text.count("only its beginning was searched") == 1


def test_the_index_reads_new_messages_a_slice_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """Bringing the index up to date read every new message at once (300 synced messages of 800 KB: 1.15 GB);
    :data:`~code_trajectory.journal.search.MESSAGES_READ` at a time now, and every entry is still indexed."""
    from code_trajectory.journal import search

    monkeypatch.setattr(search, "MESSAGES_READ", 2)
    store, index = make(tmp_path, ranking="lexical")
    for n in range(5):
        store.write(f"area/topic{n}", f"work_context: slices\n\nEntry number {n} about the zeppelin{n} hangar.")
    asked: list[int] = []
    read = store.messages
    monkeypatch.setattr(store, "messages", lambda shas: asked.append(len(shas)) or read(shas))
    for n in range(5):
        assert ids(index.search("", f"zeppelin{n}"))[:1] == [f"area/topic{n}"]
    assert asked and max(asked) <= 2 and sum(asked) >= 5, asked
