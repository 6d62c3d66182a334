"""Journal search latency over a synthetic journal.

Usage::

    PYTHONPATH=src python bench/journal_search.py [--entries 5000] [--queries 20] [--lexical-only]

Builds a journal of N entries in a temp dir (one ``git fast-import``, so building
is quick), then measures: indexing (listing the history into SQLite/FTS5),
embedding every entry (semantic only), and the median and p95 latency of
``SearchIndex.search`` for the lexical and, when the ``semantic`` extra is
installed, the semantic ranking. A warm query embeds the two query strings
(~10 ms) and scores all entries with one numpy matrix product.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from code_trajectory.journal.embedding import semantic_status
from code_trajectory.journal.search import SearchIndex
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.text import render_section

TOPICS = ["login", "database", "cache", "deploy", "search", "billing", "mobile", "logging", "queue", "tests",
          "memory", "latency", "schema", "tokens", "email", "backup", "metrics", "config", "docs", "build"]
VERBS = ["fixed", "investigated", "refactored", "documented", "benchmarked", "reverted", "designed", "removed"]
CONTEXTS = ["debugging production", "performance tuning", "API design", "security hardening", "refactoring",
            "incident review", "feature work", "code review"]


def build(root: Path, n: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "init", "-q", "--initial-branch=main", str(root)], check=True, env=env)
    rng = random.Random(7)
    counts: dict[str, int] = {}
    now = int(time.time())
    lines: list[bytes] = []
    for i in range(n):
        section = f"{rng.choice(TOPICS)}/{rng.choice(TOPICS)}"
        counts[section] = counts.get(section, 0) + 1
        words = " ".join(rng.choice(TOPICS + VERBS) for _ in range(40))
        message = (f"work_context: {rng.choice(CONTEXTS)}\n\n{rng.choice(VERBS).capitalize()} the "
                   f"{rng.choice(TOPICS)} {rng.choice(TOPICS)} problem. {words}\n").encode()
        content = render_section(f"# {section}", counts[section]).encode()
        ts = now - rng.randrange(0, 400 * 86400)
        lines += [b"commit refs/heads/main", f"mark :{i + 1}".encode(),
                  f"committer Bench <bench@localhost> {ts} +0000".encode(), f"data {len(message)}".encode(), message]
        if i:
            lines.append(f"from :{i}".encode())
        lines += [f"M 100644 inline {section}.md".encode(), f"data {len(content)}".encode(), content, b""]
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"\n".join(lines) + b"\n",
                   check=True, env=env)
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "-f", "main"], check=True, env=env)


def measure(index: SearchIndex, queries: int) -> tuple[float, float]:
    rng = random.Random(1)
    times = []
    for _ in range(queries):
        t = time.perf_counter()
        index.search(rng.choice(CONTEXTS), f"{rng.choice(VERBS)} {rng.choice(TOPICS)} issue",
                     salience_threshold=0.0)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--lexical-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "journal"
        t = time.perf_counter()
        build(root, args.entries)
        print(f"built a journal of {args.entries} entries in {time.perf_counter() - t:.1f} s")
        lexical = JournalSettings.load(journal_dir=root, ranking="lexical")
        index = SearchIndex(JournalStore(lexical), lexical)
        t = time.perf_counter()
        index.refresh()
        print(f"indexed (history -> SQLite + FTS5) in {time.perf_counter() - t:.2f} s")
        med, p95 = measure(index, args.queries)
        print(f"lexical query: median {med:.1f} ms, p95 {p95:.1f} ms")
        ok, why = semantic_status()
        if args.lexical_only or not ok:
            print(f"semantic ranking skipped ({'--lexical-only' if ok else why})")
            return 0
        semantic = JournalSettings.load(journal_dir=root, ranking="semantic")
        index = SearchIndex(JournalStore(semantic), semantic)
        t = time.perf_counter()
        index.search("warm up", "load the model and embed every entry")
        spent = time.perf_counter() - t
        print(f"first semantic query (model load + embedding {args.entries} entries): {spent:.1f} s "
              f"({args.entries / spent:.0f} entries/s)")
        med, p95 = measure(index, args.queries)
        print(f"semantic query: median {med:.1f} ms, p95 {p95:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
