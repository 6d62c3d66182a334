"""At an initial import, the stat index git vouched on is adopted for the directories found while their listings get
their packed facts (:func:`code_trajectory.recording.gitvouch.holds_all`), without building every entry again from
the rows: exactly the directories the general check (rows -> entries -> held) keeps, and a restart still records
what changed while stopped, in a kept directory and in one left out.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import pytest

from code_trajectory.recording import fullscan, gitvouch
from support import git, git_repo, recorded, restart, rewrite_in_place, write


def _import(root: Path, monkeypatch: pytest.MonkeyPatch, *, general: bool) -> dict[str, bytes]:
    """Import ``root`` into a new shadow repository; return the directories the stat index was adopted for (with
    their digests). ``general``: the adopted directories are found from the rows (:func:`gitvouch.refresh`, after
    the listings are saved), as before the import's shortcut (:func:`gitvouch.adopt_at_import`, named with them)."""
    shutil.rmtree(root / ".trajectory", ignore_errors=True)
    kept: list[dict[str, bytes]] = []
    adopt, adopt_at_import = gitvouch._adopt, gitvouch.adopt_at_import

    def adopted_at_import(*args: object) -> tuple[str, dict[str, bytes]] | None:
        found = adopt_at_import(*args)  # type: ignore[arg-type]
        if found is not None:
            kept.append(dict(found[1]))
        return found

    with monkeypatch.context() as patch:
        patch.setattr(gitvouch, "_adopt", lambda cache, written, listings, found, covered:
                      kept.append(dict(found)) or adopt(cache, written, listings, found, covered))
        patch.setattr(gitvouch, "adopt_at_import", adopted_at_import)
        if general:
            with_stats = fullscan._with_stats
            patch.setattr(fullscan, "_with_stats", lambda result, files, vouched, settled_ns, adopt=None, oids=None:
                          with_stats(result, files, vouched, settled_ns, None, oids))
        assert restart(root) is not None  # nothing recorded yet: the initial import
    assert len(kept) == 1, kept
    return kept[0]


def test_the_import_adopts_the_stat_index_for_exactly_the_directories_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(gitvouch, "MIN_FILES", 1)
    root = git_repo(tmp_path / "project", {f"pkg/sub{i:02}/m{j}.py": f"m = {i}{j}\n" for i in range(30)
                                           for j in range(5)}, branch="main", commit="initial")
    write(root, "pkg/sub01/m0.py", "m = 'edited'\n")  # git names it: not in the index git vouched on
    write(root, "pkg/sub02/new.py", "untracked = 1\n")  # never in the project's index
    time.sleep(2.1)  # every file out of the racy margins (the index's second, the stat cache's two seconds)
    git(root, "status", "--porcelain")
    general = _import(root, monkeypatch, general=True)
    with caplog.at_level(logging.INFO, logger="code_trajectory.recording.gitvouch"):
        shortcut = _import(root, monkeypatch, general=False)
    assert shortcut == general
    assert "pkg/sub00" in shortcut and "pkg/sub01" not in shortcut and "pkg/sub02" not in shortcut
    assert "stat index adopted from the import's git verdict: 140 files in 30 directories" in caplog.text  # and the root, pkg
    # the restart trusts git for the kept directories: an edit keeping size and mtime is still recorded there, and
    # an edit in a directory left out is found by this process's own lstat
    rewrite_in_place(root / "pkg" / "sub03" / "m2.py", "m = 99\n")
    write(root, "pkg/sub01/m1.py", "m = 'also edited'\n")
    snap = restart(root)
    assert snap is not None
    assert sorted((c.path, c.status) for c in snap.changes) == [("pkg/sub01/m1.py", "M"), ("pkg/sub03/m2.py", "M")]
    assert recorded(root, snap.ref, "pkg/sub03/m2.py") == "m = 99"
