"""File names that are not valid UTF-8 survive the page: shown escaped, and their links and restore requests carry
the original bytes (URLs encode them with ``surrogateescape``)."""

from __future__ import annotations

import json
import os
import re
from html import unescape
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.recorder import Recorder
from code_trajectory.ui.security import cookie_name
from support.ui import record_demo, request, running_ui

NAME = os.fsdecode(b"caf\xe9 <b>.txt")  # Latin-1 bytes, and markup in the name


def test_a_non_utf8_name_round_trips(project: Path) -> None:
    record_demo(project)
    (project / NAME).write_bytes(b"one\n")
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        commit = recorder.record_paths([NAME]).commit
    finally:
        recorder.close()
    with running_ui(project) as ui:
        headers = {"Cookie": f"{cookie_name(ui.port)}={ui.token}"}
        status, _, body = request(ui.port, "GET", "/", headers=headers)
        page = body.decode()
        assert status == 200
        assert "caf\\xe9 &lt;b&gt;.txt" in page and "<b>.txt" not in page  # escaped twice over: bytes and markup
        status, _, body = request(ui.port, "GET", f"/fragment/snapshot/{commit}", headers=headers)
        snapshot = body.decode()
        link = re.search(r'data-pane="(/fragment/file\?[^"]+)"', snapshot).group(1)
        assert "caf%E9" in link
        status, _, body = request(ui.port, "GET", unescape(link), headers=headers)
        assert status == 200 and "1 version" in body.decode()
        paths = json.loads(unescape(re.search(r'data-paths="([^"]+)"', snapshot).group(1)))
        assert paths == [NAME]  # what the restore request will carry: the original bytes, surrogate-escaped
