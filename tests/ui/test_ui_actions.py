"""The restore adapter (code_trajectory.ui.actions) and its endpoint, against the interface of issue 13.

The real service is used when it is installed; these tests put a stand-in with the same interface in
``sys.modules`` (see ``ui_support.fake_restore_module``) so the adapter, the endpoint and the page's fragments are
checked before it is merged.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest
from ui_support import DEMO_V1, DEMO_V3, fake_restore_module, record_demo, request, running_ui

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.ui import actions
from code_trajectory.ui.security import CSRF_HEADER, cookie_name, csrf_value

RESTORE_INSTALLED = importlib.util.find_spec("code_trajectory.restore") is not None


@pytest.fixture
def fake_service(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    calls: list[dict] = []
    package = types.ModuleType("code_trajectory.restore")
    package.__path__ = []  # a package
    monkeypatch.setitem(sys.modules, "code_trajectory.restore", package)
    monkeypatch.setitem(sys.modules, "code_trajectory.restore.service", fake_restore_module(calls))
    return calls


def post(ui, payload: dict) -> tuple[int, dict]:
    headers = {"Cookie": f"{cookie_name(ui.port)}={ui.token}", CSRF_HEADER: csrf_value(ui.token),
               "Content-Type": "application/json", "Origin": ui.url}
    status, _, body = request(ui.port, "POST", "/api/restore", headers=headers, body=json.dumps(payload).encode())
    return status, json.loads(body)


def test_request_validation() -> None:
    oid = "a" * 40
    assert actions.check_request(oid, None) == (oid, None)
    assert actions.check_request(oid, ["src/a.py", "b c/d.txt"]) == (oid, ["src/a.py", "b c/d.txt"])
    for snapshot, paths in (("HEAD", None), ("A" * 40, None), (oid, []), (oid, "src/a.py"), (oid, ["/etc/passwd"]),
                            (oid, ["a/../../x"]), (oid, ["a\0b"]), (oid, [3]), (None, None)):
        with pytest.raises(InvalidArgumentError):
            actions.check_request(snapshot, paths)


@pytest.mark.skipif(RESTORE_INSTALLED, reason="the restore service is installed: nothing is missing")
def test_missing_service_is_a_clear_501(project: Path) -> None:
    commits = record_demo(project)
    assert not actions.service_available()
    with pytest.raises(actions.RestoreUnavailableError, match="not available in this build"):
        actions.restore(project, commits["v1"], None, dry_run=True)
    with running_ui(project) as ui:
        status, body = post(ui, {"snapshot": commits["v1"], "paths": None, "dry_run": True})
    assert status == 501 and "restore service" in body["error"]


def test_preview_restore_and_undo_through_the_endpoint(project: Path, fake_service: list[dict]) -> None:
    commits = record_demo(project)
    target = project / "src" / "signing.py"
    assert target.read_text() == DEMO_V3
    with running_ui(project) as ui:
        status, preview = post(ui, {"snapshot": commits["v1"], "paths": ["src/signing.py"], "dry_run": True})
        assert status == 200 and target.read_text() == DEMO_V3  # a dry run writes nothing
        assert preview["outcome"]["dry_run"] and preview["outcome"]["written"] == ["src/signing.py"]
        assert "safety snapshot first" in preview["html"]

        status, done = post(ui, {"snapshot": commits["v1"], "paths": ["src/signing.py"], "dry_run": False,
                                 "label": "src/signing.py as of v1"})
        assert status == 200 and target.read_text() == DEMO_V1
        safety = done["outcome"]["safety_snapshot"]
        assert safety and done["outcome"]["commit"]
        assert "Restored" in done["html"] and safety[:10] in done["html"] and "data-undo" in done["html"]
        assert f'data-snapshot="{safety}"' in done["html"] and "src/signing.py as of v1" in done["html"]

        status, undone = post(ui, {"snapshot": safety, "paths": ["src/signing.py"], "dry_run": False, "undo": True})
        assert status == 200 and target.read_text() == DEMO_V3
        assert "Undone" in undone["html"]
    assert [(c["snapshot"], c["paths"], c["dry_run"], c["force"]) for c in fake_service] == [
        (commits["v1"], ["src/signing.py"], True, False), (commits["v1"], ["src/signing.py"], False, False),
        (safety, ["src/signing.py"], False, False)]
    assert all(c["root"] == project.resolve() for c in fake_service)


def test_service_errors_are_shown_not_raised(project: Path, fake_service: list[dict]) -> None:
    commits = record_demo(project)
    with running_ui(project) as ui:
        status, body = post(ui, {"snapshot": commits["v1"], "paths": ["not/there.py"], "dry_run": True})
    assert status == 400 and "not/there.py is not in snapshot" in body["error"]
