"""A file changed in more snapshots than ``LOOKBACK``: the file pane reads its newest ``LOOKBACK + 1`` versions only
(as ``get_file_trajectory`` does), says "more than", and shows the same versions with or without the file index."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import quote

from code_trajectory.git import file_versions
from code_trajectory.git.maintenance import run_maintenance
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.versions import LOOKBACK
from code_trajectory.ui.security import cookie_name
from support.ui import build_history, request, running_ui

PATH = "src/pkg0/module_000.py"


def _pane(root: Path) -> str:
    with running_ui(root) as ui:
        cookie = {"Cookie": f"{cookie_name(ui.port)}={ui.token}"}
        status, _, body = request(ui.port, "GET", f"/fragment/file?file={quote(PATH)}", headers=cookie)
    assert status == 200, body[:300]
    return body.decode()


def test_a_file_with_more_versions_than_the_lookback_says_more_than_and_shows_the_newest(project: Path) -> None:
    build_history(project, 2 * LOOKBACK, files=2)  # each snapshot changes one or both files
    with ShadowRepo(project) as repo:
        assert run_maintenance(repo) is not None  # the file index
        every = file_versions.file_history(repo, repo.resolve("refs/heads/shadow/main"), PATH)
    assert len(every) > LOOKBACK + 1
    indexed = _pane(project)
    assert f"more than {LOOKBACK} versions" in indexed and "the newest 200 shown" in indexed
    assert every[0].record.oid[:12] in indexed and every[-1].record.oid[:12] not in indexed
    shutil.rmtree(project / ".trajectory" / "state" / "file-index")
    assert _pane(project) == indexed
