"""The search index: maintenance writes it, a text search checks only the snapshots it names (plus those newer than
the index) and answers exactly what the full scan answers; a rewritten history or a damaged file falls back to the
scan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.git import search_index
from code_trajectory.git.maintenance import run_maintenance
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import search
from support.ui import build_history, record_edit

REF = "refs/heads/shadow/main"
QUERIES = ["return y * 301", "return x + 1", "g41", "def f2(x)", "no such text anywhere", "x + 3"]


def _hits(repo: ShadowRepo, query: str, **options) -> list[tuple[str, dict[str, list[str]]]]:
    tip = repo.resolve(REF)
    return [(h.record.oid, h.lines) for h in search.search(repo, tip, query, **options)]


@pytest.fixture
def history(project: Path) -> Path:
    build_history(project, 400, files=8, chunk=200, loose=True, between=lambda _: _maintain(project))
    return project


def _maintain(root: Path) -> None:
    with ShadowRepo(root) as repo:
        assert run_maintenance(repo) is not None


def test_an_indexed_search_answers_what_the_scan_answers_reading_only_the_candidates(history: Path) -> None:
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        stored = search_index.load(repo, REF)
        assert stored is not None and stored.tip == tip and len(stored.oids) == 400
        for query in QUERIES:
            for options in ({"limit": 20}, {"limit": 2}, {"limit": 20, "path": "src/pkg1"}):
                assert _hits(repo, query, index_ref=REF, **options) == _hits(repo, query, **options), (query, options)
        rare = search_index.plan(repo, REF, tip, "return y * 301")
        assert rare is not None and rare.newer == [] and len(rare.candidates) < 40  # of 400 snapshots
        assert _hits(repo, "return y * 301")  # the text is there: the candidates hold it
        assert search_index.plan(repo, REF, tip, "no such text anywhere").candidates == []
        assert search_index.plan(repo, REF, tip, "ab") is None  # under a trigram: the scan
        assert search_index.plan(repo, REF, tip, "two\nlines") is None


def test_snapshots_newer_than_the_index_are_searched_too(history: Path) -> None:
    newest = record_edit(history, "src/fresh.py", "def fresh():\n    return 'written after maintenance'\n")
    with ShadowRepo(history) as repo:
        plan = search_index.plan(repo, REF, newest, "written after maintenance")
        assert plan is not None and plan.newer == [newest, f"^{search_index.load(repo, REF).tip}"]
        found = _hits(repo, "written after maintenance", index_ref=REF)
        assert [oid for oid, _ in found] == [newest]
        assert found == _hits(repo, "written after maintenance")
    _maintain(history)
    with ShadowRepo(history) as repo:
        assert search_index.load(repo, REF).tip == newest
        assert search_index.plan(repo, REF, newest, "written after maintenance").candidates == [newest]


def test_a_rewritten_history_or_a_damaged_index_falls_back_to_the_scan(history: Path) -> None:
    with ShadowRepo(history) as repo:
        old_tip = repo.resolve(REF)
        base = repo.resolve(f"{REF}~100")
        repo.update_ref(REF, base, old_tip, "test: history rewritten")
        assert search_index.plan(repo, REF, base, "return x + 1") is None  # the index's tip is not an ancestor
        assert _hits(repo, "return x + 1", index_ref=REF) == _hits(repo, "return x + 1")
        assert search_index.update(repo, REF) == 300  # rebuilt from the new tip
        assert search_index.plan(repo, REF, base, "return x + 1") is not None
        path = next((history / ".trajectory" / "state" / "search-index").glob("*.bin"))
        path.write_bytes(path.read_bytes()[:-7])
        assert search_index.load(repo, REF) is None
        assert _hits(repo, "g41", index_ref=REF) == _hits(repo, "g41")


def test_the_cli_search_uses_the_index_and_finds_old_text(history: Path) -> None:
    with ShadowRepo(history) as repo:
        (oid, lines), = _hits(repo, "def f2(x)")
    out = subprocess.run([sys.executable, "-m", "code_trajectory", "search", "def f2(x)", "--project", str(history)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert oid[:12] in out.stdout and "def f2(x)" in out.stdout
