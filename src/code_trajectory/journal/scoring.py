"""Journal search scores: two relevance scores per entry, tempered by temporal salience.

Scores
------
Each entry gets two scores in [0, 1]:

* ``work_context_score``: the query's ``work_context`` against the entry's
  ``work_context:`` line (against the whole entry when it has none);
* ``content_score``: the query's ``content`` against the entry's text (without the
  ``work_context:`` line), the best of its chunks (~150 words each), so a long
  entry is not diluted.

Semantic ranking (the ``semantic`` extra): cosine similarity of all-MiniLM-L6-v2
sentence embeddings, mapped onto (0, 1) by :func:`calibrate`, a logistic curve
``1 / (1 + exp(-(cos - 0.25) / 0.07))``. Raw MiniLM cosines are not
probabilities: on the quality corpus of ``tests/test_journal_quality.py`` the
right answer to a paraphrased query scores a cosine of 0.17-0.58 (median 0.38,
averaged over the two fields) and a wrong entry 0.10 (median; 95th percentile
0.23), so a threshold of 0.5 on raw cosines would drop most right answers. The
curve puts the default threshold 0.5 at a cosine of 0.25: there 88 % of the
right answers pass and 3 % of the wrong entries do; it is strictly increasing,
so it never changes the order of two entries, and it saturates smoothly instead
of clipping, so strong matches stay distinguishable.

Lexical ranking (the fallback without the extra, or ``ranking = "lexical"``):
SQLite FTS5 with BM25 over the same two fields; each query's BM25 scores are
divided by the best one, so the best match scores 1 (scores are relative, not
absolute, in this mode); a query none of whose words occur in any entry is left
out of the weighting.

Combination
-----------
::

    relevance = (context_weight * work_context_score + content_weight * content_score)
                / (context_weight + content_weight)
    salience  = max(minimum_salience, 0.5 ** (age_days / half_life_days))
    combined  = relevance * (1 - recency_weight + recency_weight * salience)

An entry is returned when ``combined >= salience_threshold``; results are sorted
by ``combined`` then by recency. Why not ``relevance * salience`` (the prototype):
that makes every entry older than one half-life score at most 0.5, so at the
default threshold 0.5 nothing older than ~30 days can ever be found, however
relevant. Here salience can take away at most ``recency_weight`` (default 20 %)
of an entry's score: a clearly relevant old entry still passes the threshold,
while between entries of similar relevance the recent one ranks first (and an
exact tie always goes to the recent one).
"""

from __future__ import annotations

import re
from typing import Any

CHUNK_WORDS = 150
#: Chunks embedded per entry (the first ones): 2,400 words. A longer entry is searched (semantically) in that part
#: only, and a hit says so (``cut_for_search``): 300 entries of 800 KB, every chunk embedded, took a search 96 s.
MAX_CHUNKS = 16
#: Characters a chunk keeps: 150 words of 13 characters (a chunk of one 800 KB "word" was tokenized whole).
MAX_CHUNK_CHARS = CHUNK_WORDS * 13
#: Cosine similarity that :func:`calibrate` maps to 0.5, and the width of its logistic curve.
COSINE_MIDPOINT = 0.25
COSINE_SCALE = 0.07
SECONDS_PER_DAY = 86400.0


def calibrate(cosines: Any) -> Any:
    """Map raw cosine similarities onto relevance scores in [0, 1] (see the module docstring)."""
    import numpy as np

    return 1.0 / (1.0 + np.exp(-(np.asarray(cosines, dtype=np.float64) - COSINE_MIDPOINT) / COSINE_SCALE))


def salience(ts: float, now: float, half_life_days: float, minimum: float) -> float:
    """Temporal salience of an entry written at ``ts`` (epoch seconds), seen at ``now``."""
    age_days = max(0.0, (now - ts) / SECONDS_PER_DAY)
    return max(minimum, 0.5 ** (age_days / half_life_days))


def combine(relevance: float, sal: float, recency_weight: float) -> float:
    """The combined score: relevance, of which salience can take away at most ``recency_weight``."""
    return relevance * (1.0 - recency_weight + recency_weight * sal)


def chunks_of(text: str) -> list[str]:
    """The first :data:`MAX_CHUNKS` chunks of an entry body (see :func:`chunk_entry`)."""
    return chunk_entry(text)[0]


def chunk_entry(text: str) -> tuple[list[str], bool]:
    """Split an entry body into chunks of about :data:`CHUNK_WORDS` words along paragraphs.

    Returns:
        The first :data:`MAX_CHUNKS` chunks, each at most :data:`MAX_CHUNK_CHARS` characters, and whether anything
        of ``text`` was left out (more chunks, or a chunk cut).
    """
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    chunks: list[str] = []
    current: list[str] = []
    count = 0
    for para in paragraphs:
        words = para.split()
        if len(words) > CHUNK_WORDS:
            if current:
                chunks.append("\n\n".join(current))
                current, count = [], 0
            for i in range(0, len(words), CHUNK_WORDS):
                chunks.append(" ".join(words[i:i + CHUNK_WORDS]))
            continue
        if count + len(words) > CHUNK_WORDS and current:
            chunks.append("\n\n".join(current))
            current, count = [], 0
        current.append(para)
        count += len(words)
    if current:
        chunks.append("\n\n".join(current))
    kept = [c[:MAX_CHUNK_CHARS] for c in chunks[:MAX_CHUNKS]]
    cut = len(chunks) > MAX_CHUNKS or any(len(c) > MAX_CHUNK_CHARS for c in chunks[:MAX_CHUNKS])
    if not kept:
        return [text.strip()[:MAX_CHUNK_CHARS] or " "], len(text.strip()) > MAX_CHUNK_CHARS
    return kept, cut
