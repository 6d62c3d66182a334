"""A symbol's history over a long file history parses only the versions that touched the symbol's own text: the
others are passed over by comparing its exact text (a line of context each side, its scopes' first lines) with
the older side; the versions found are those a parse of every version finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import symbol_anchor, symbol_history
from code_trajectory.symbols.cache import DEFAULT_CACHE
from support.ui import build_history, record_edit

PATH = "src/pkg0/module_000.py"


def _trace(repo: ShadowRepo, tip: str, path: str, symbol: str) -> list[tuple[str, str, str]]:
    name, found, _more = symbol_history.trace(repo, tip, path, symbol, 10)
    return [(v.entry.record.oid, v.what, v.diff) for v in found]


def test_passing_over_untouched_versions_finds_the_same_changes_with_fewer_parses(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_history(project, 500, files=2, max_functions=40)
    with ShadowRepo(project) as repo:
        tip = repo.resolve("refs/heads/shadow/main")
        symbols = ["f0", "g499", "g300"] if "def g300" in repo.git.text(["show", f"{tip}:{PATH}"]) else ["f0"]
        DEFAULT_CACHE.clear()
        before = DEFAULT_CACHE.parses
        walked = {s: _trace(repo, tip, PATH, s) for s in symbols}
        parses = DEFAULT_CACHE.parses - before
        monkeypatch.setattr(symbol_anchor, "untouched", lambda *_: False)  # parse every version
        DEFAULT_CACHE.clear()
        before = DEFAULT_CACHE.parses
        assert walked == {s: _trace(repo, tip, PATH, s) for s in symbols}
        assert parses * 3 < DEFAULT_CACHE.parses
        assert len(walked["f0"]) == 10 and all(what == "modified" for _, what, _ in walked["f0"])


def test_comments_docstrings_and_a_renamed_class_are_read_as_a_parse_of_every_version_reads_them(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = "    def load(self):\n        return 1\n"
    versions = [
        'class Store:\n    """Keeps things."""\n\n    # Read it back.\n' + body,
        'class Store:\n    """Keeps things."""\n\n' + body,  # the comment above the method removed
        'class Store:\n    """Keeps all things."""\n\n' + body,  # the class's docstring
        'class Store:\n    """Keeps all things."""\n\n' + body.replace("1", "2"),  # the method itself
        'class Store:\n    """Keeps all things."""\n\n' + body.replace("1", "2") + "    # the end\n",
        'class Shelf:\n    """Keeps all things."""\n\n' + body.replace("1", "2") + "    # the end\n",  # renamed
    ]
    tips = [record_edit(project, "src/store.py", text) for text in versions]
    with ShadowRepo(project) as repo:
        walked = {s: _trace(repo, tips[-1], "src/store.py", s) for s in ("Shelf", "Shelf.load")}
        monkeypatch.setattr(symbol_anchor, "untouched", lambda *_: False)
        assert walked == {s: _trace(repo, tips[-1], "src/store.py", s) for s in ("Shelf", "Shelf.load")}
    shelf = [(tips.index(oid), what) for oid, what, _ in walked["Shelf"]]
    assert shelf[0] == (5, "renamed from Store") and (1, "comment removed from `Store`: `# Read it back.`") in shelf
