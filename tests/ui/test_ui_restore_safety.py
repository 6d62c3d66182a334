"""Issue 21 (parts 2, 3, 6) through the page's HTTP API (``POST /api/restore``, a real server on loopback, the real
restore service, real git): a hostile snapshot, a 6 MB file over the size cap, a 240-byte name, a directory in
the way."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from code_trajectory.ui.security import CSRF_HEADER, cookie_name, csrf_value
from support import file_size_limit, half_restorable, hand_built_commit, record_now, write
from support.ui import request, running_ui


def post(ui, payload: dict) -> tuple[int, dict]:
    headers = {"Cookie": f"{cookie_name(ui.port)}={ui.token}", CSRF_HEADER: csrf_value(ui.token),
               "Content-Type": "application/json", "Origin": ui.url}
    status, _, body = request(ui.port, "POST", "/api/restore", headers=headers, body=json.dumps(payload).encode())
    return status, json.loads(body)


def files(root: Path) -> dict[str, str]:
    """Every file under ``root`` (``.git`` included, the shadow repository not): path -> content hash."""
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and ".trajectory" not in p.relative_to(root).parts}


def test_hostile_snapshot_is_refused_by_the_page(project: Path) -> None:
    tip = record_now(project)
    evil = hand_built_commit(project / ".trajectory", {
        ".git/hooks/pre-commit": ("100755", b"#!/bin/sh\necho pwned\n"), ".trajectory/config": b"x",
        ".GIT./x": b"x", "git~1/x": b"x", ".Trajectory/x": b"x", "src/app.py": b"evil = 1\n"},
        parent=tip, ref="refs/heads/shadow/evil")
    before = files(project)
    with running_ui(project) as ui:
        for dry_run in (True, False):
            status, body = post(ui, {"snapshot": evil, "paths": None, "dry_run": dry_run})
            assert status == 400 and "must never write" in body["error"] and ".git" in body["error"]
        status, body = post(ui, {"snapshot": evil, "paths": [".git/hooks/pre-commit"], "dry_run": False})
        assert status == 400 and "must never write" in body["error"]
    assert files(project) == before and not (project / ".git" / "hooks" / "pre-commit").exists()


def test_size_cap_long_name_and_directory_in_the_way_through_the_page(project: Path) -> None:
    big = os.urandom(6 * 1024 * 1024)
    long_name = "src/" + "n" * 240
    write(project, "data/big.bin", big)
    write(project, long_name, "first\n")
    write(project, "docs/guide", "a file\n")
    good = record_now(project, "good")
    write(project, long_name, "second\n")
    os.utime(project / "data" / "big.bin")
    with running_ui(project) as ui:
        status, body = post(ui, {"snapshot": good, "paths": None, "dry_run": False})
        assert status == 200, body
        assert body["outcome"]["written"] == [long_name] and body["outcome"]["not_recorded"] == ["data/big.bin"]
        assert "over the size cap" in body["html"]
        assert (project / long_name).read_text() == "first\n" and (project / "data" / "big.bin").read_bytes() == big
        status, undone = post(ui, {"snapshot": body["outcome"]["safety_snapshot"], "paths": None, "dry_run": False,
                                   "undo": True})
        assert status == 200 and (project / long_name).read_text() == "second\n"
        assert (project / "data" / "big.bin").read_bytes() == big

        (project / "docs" / "guide").unlink()
        write(project, "docs/guide/debug.log", "ignored, so never removed\n")  # *.log is ignored
        write(project, long_name, "third\n")
        before = files(project)
        status, body = post(ui, {"snapshot": good, "paths": None, "dry_run": False})
        assert status == 400 and "a directory stands there" in body["error"] and "Nothing was written" in body["error"]
        assert files(project) == before
    assert not [p for p in project.rglob(".ct-*") if ".trajectory" not in p.parts]


def test_a_failed_write_is_put_back_and_named_by_the_page(project: Path) -> None:
    good = half_restorable(project)
    before = files(project)
    with running_ui(project) as ui:
        with file_size_limit(1024 * 1024):  # the UI server runs in this process: its write of big.bin fails
            status, body = post(ui, {"snapshot": good, "paths": None, "dry_run": False})
        assert status >= 400 and "failed writing `src/big.bin`" in body["error"]
        assert "Put back as they were before the restore" in body["error"] and "safety snapshot" in body["error"]
    assert files(project) == before
