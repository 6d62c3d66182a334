"""Every heading of the page says why a snapshot was taken: a checkpoint named without an intent shows its name in
the timeline row, the snapshot pane and the file history alike (issue 28: "every heading says why")."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import quote

from code_trajectory.ui.security import cookie_name
from support import server_command, subprocess_env
from support.ui import request, running_ui

NAME = "Parse the header before the body"
INTENT = "Count the lines of a record"


def checkpoint(project: Path, *args: str) -> None:
    done = subprocess.run([*server_command(), "checkpoint", *args, "--project", str(project)], env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_checkpoint_name_heads_the_row_the_pane_and_the_file_history(project: Path) -> None:
    (project / "parse.py").write_text("def header(text):\n    return text.splitlines()[0]\n")
    checkpoint(project)
    (project / "parse.py").write_text("def header(text):\n    return text.splitlines()[0].strip()\n")
    checkpoint(project, "--message", NAME)
    with running_ui(project) as ui:
        headers = {"Cookie": f"{cookie_name(ui.port)}={ui.token}"}
        status, _, body = request(ui.port, "GET", "/", headers=headers)
        assert status == 200 and NAME in body.decode()
        status, _, body = request(ui.port, "GET", f"/fragment/file?file={quote('parse.py')}", headers=headers)
        page = body.decode()
        assert status == 200 and "2 versions" in page
        assert page.count(NAME) == 1  # the named version says why; the import before it has no name to show
        newest = page.index('<details class="version"')
        assert page.index(NAME) > newest and page.index(NAME) < page.index('<details class="version"', newest + 1)
