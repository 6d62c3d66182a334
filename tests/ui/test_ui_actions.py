"""The restore adapter (code_trajectory.ui.actions) and its endpoint, with the real restore service (its calls
recorded by a spy).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.ui import actions
from code_trajectory.ui.security import CSRF_HEADER, cookie_name, csrf_value
from support.ui import DEMO_V1, DEMO_V3, record_demo, request, running_ui


@pytest.fixture
def restore_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The calls the page makes to the real restore service (recorded, then passed on)."""
    from code_trajectory.restore import service

    calls: list[dict] = []
    real = service.restore

    def spy(root, snapshot, paths=None, *, dry_run=False, force=False):
        calls.append({"root": root, "snapshot": snapshot, "paths": paths, "dry_run": dry_run, "force": force})
        return real(root, snapshot, paths, dry_run=dry_run, force=force)

    monkeypatch.setattr(service, "restore", spy)
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


def test_preview_restore_and_undo_through_the_endpoint(project: Path, restore_calls: list[dict]) -> None:
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
    assert [(c["snapshot"], c["paths"], c["dry_run"], c["force"]) for c in restore_calls] == [
        (commits["v1"], ["src/signing.py"], True, False), (commits["v1"], ["src/signing.py"], False, False),
        (safety, ["src/signing.py"], False, False)]
    assert all(c["root"] == project.resolve() for c in restore_calls)


def test_service_errors_are_shown_not_raised(project: Path, restore_calls: list[dict]) -> None:
    commits = record_demo(project)
    with running_ui(project) as ui:
        status, body = post(ui, {"snapshot": commits["v1"], "paths": ["not/there.py"], "dry_run": True})
    assert status == 400 and "names no file recorded in the snapshot" in body["error"]
