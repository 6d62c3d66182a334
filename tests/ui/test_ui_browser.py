"""The page in a real headless browser (Playwright + Debian's Chromium), on a history made by the real recorder.

Skipped, with the reason, when playwright or /usr/bin/chromium is missing (``.ci/run`` installs both). The timeline
screenshot is written to ``docs/timeline.png`` when ``CODE_TRAJECTORY_UPDATE_SCREENSHOT=1`` (else to a temporary
directory, so a test run leaves the work tree clean).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from support import REPO_ROOT
from support.ui import (
    DEMO_V1,
    DEMO_V2,
    DEMO_V3,
    browser_missing_reason,
    chromium_page,
    record_demo,
    record_edit,
    running_ui,
)

pytestmark = pytest.mark.skipif(browser_missing_reason() is not None, reason=browser_missing_reason() or "")
TIMEOUT = 15_000  # ms


def only_local(requested: list[str], base: str) -> list[str]:
    """The requested URLs that are not this server's."""
    return [url for url in requested if not url.startswith(base + "/")]


def test_timeline_snapshot_diff_keyboard_file_and_live(project: Path) -> None:
    commits = record_demo(project)
    with running_ui(project) as ui, chromium_page() as (page, requested):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        response = page.goto(ui.entry_url)
        assert response is not None and response.status == 200
        page.wait_for_selector("li.snap")
        assert "token" not in page.url  # dropped from the address bar

        rows = page.locator("li.snap")
        assert rows.count() == 5
        assert rows.first.get_attribute("data-oid") == commits["checkpoint"]
        top = rows.first.inner_text()
        assert "Test the signer" in top and "checkpoint" in top and "3 passed" in top and "salted signatures" in top
        assert "1 failed" in rows.nth(1).inner_text()
        assert "start" in rows.nth(4).inner_text()
        assert page.locator("li.session-head").count() == 1
        assert "5 snapshots" in page.locator("li.session-head").inner_text()
        # the newest snapshot opens beside the list (fetched once the list is painted)
        page.locator(f'#pane article[data-oid="{commits["checkpoint"]}"]').wait_for(timeout=TIMEOUT)
        assert page.locator("li.snap.selected").get_attribute("data-oid") == commits["checkpoint"]

        # click a snapshot: its narrative (symbols) and its highlighted diff
        page.click(f'li.snap[data-oid="{commits["v2"]}"] a')
        article = page.locator(f'#pane article[data-oid="{commits["v2"]}"]')
        article.wait_for(timeout=TIMEOUT)
        assert "added Signer.unsign" in article.inner_text()
        assert article.locator("table.diff.unified tr.add").count() == 6
        assert article.locator("table.diff .hl, table.diff.hl span.k").count() > 0  # Pygments classes
        assert "unsign" in article.locator("tr.add").first.inner_text() or "unsign" in article.inner_text()
        assert f"s={commits['v2']}" in page.url

        # keyboard: ↓ selects the next (older) snapshot, Enter opens it
        page.keyboard.press("ArrowDown")
        assert page.locator("li.snap.selected").get_attribute("data-oid") == commits["v1"]
        page.keyboard.press("Enter")
        page.locator(f'#pane article[data-oid="{commits["v1"]}"]').wait_for(timeout=TIMEOUT)
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")
        assert page.locator("li.snap.selected").get_attribute("data-oid") == commits["tests"]

        # side by side
        page.click("#pane .toggle a[data-view=split]")
        page.locator("#pane table.diff.split").first.wait_for(timeout=TIMEOUT)
        assert page.locator("#pane table.diff.unified").count() == 0

        # the file's trajectory: its versions, each with symbols and diff
        page.click("#pane details.file .file-actions a")
        view = page.locator("#pane article.file-view")
        view.wait_for(timeout=TIMEOUT)
        assert view.locator("details.version").count() == 3
        assert "modified Signer.sign" in view.inner_text()
        assert view.locator("table.diff.split").count() == 3  # the view choice carries over

        # live: a snapshot recorded now shows up without a reload
        new = record_edit(project, "src/live.py", "LIVE = True\n", intent="Go live")
        page.locator(f'li.snap[data-oid="{new}"]').wait_for(timeout=TIMEOUT)
        assert rows.first.get_attribute("data-oid") == new and "Go live" in rows.first.inner_text()
        assert page.locator("li.session-head").count() == 1  # it joined the session: still one header
        assert "6 snapshots" in page.locator("li.session-head").inner_text()
        assert page.locator("#totals").inner_text() == "6 snapshots in 1 session"

        assert only_local(requested, ui.url) == []
        assert errors == []


def test_filters_and_branches(project: Path) -> None:
    commits = record_demo(project)
    with running_ui(project) as ui, chromium_page() as (page, requested):
        page.goto(ui.entry_url)
        page.fill("input[name=q]", "salted")
        page.press("input[name=q]", "Enter")
        page.wait_for_url("**q=salted**")
        assert [r.get_attribute("data-oid") for r in page.locator("li.snap").all()] == [commits["checkpoint"]]
        page.goto(ui.url + "/?path=tests/")
        assert [r.get_attribute("data-oid") for r in page.locator("li.snap").all()] == [commits["tests"],
                                                                                         commits["import"]]
        assert page.locator("#branch option").all_inner_texts() == ["main"]
        assert only_local(requested, ui.url) == []


def record_story(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sessions recorded with the real recorder on a fake clock: yesterday afternoon and this morning."""
    from datetime import datetime, timedelta

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording import recorder as recorder_module
    from code_trajectory.recording.recorder import Recorder
    from code_trajectory.testruns import store
    from code_trajectory.testruns.model import TestRun
    from code_trajectory.testruns.scope import Scope

    class Clock(datetime):
        current = datetime.now().astimezone().replace(hour=9, minute=12, second=5, microsecond=0) - timedelta(days=1)

        @classmethod
        def now(cls, tz=None):
            return cls.current if tz is None else cls.current.astimezone(tz)

    monkeypatch.setattr(recorder_module, "datetime", Clock)
    recorder = Recorder.open(root, TrajectorySettings.load(root))

    def step(minutes: float, rel: str | None = None, text: str | None = None, *, intent: str | None = None,
             checkpoint: str | None = None, run: tuple[str, int, int] | None = None) -> None:
        Clock.current += timedelta(minutes=minutes)
        if intent:
            recorder.intent.set(intent)
        if rel is not None:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        snap = recorder.checkpoint(checkpoint) if checkpoint else recorder.record_paths([rel])
        if run:
            outcome, passed, failed = run
            store.record_run(recorder.repo, TestRun(
                command="pytest -q", outcome=outcome, passed=passed, failed=failed, commit=snap.commit, scope=Scope.full(),
                branch="main", started_at=Clock.current.isoformat(),
                failures=[("tests/test_signing.py::test_roundtrip", "ValueError: bad signature")] if failed else []))

    try:
        recorder.reconcile()
        step(3, "src/app.py", "def main():\n    return 2\n", intent="Make main return the answer")
        step(2, "src/app.py", "def main(argv=None):\n    return 2\n", run=("passed", 1, 0))
        step(6, "README.md", "# Demo\n\nSigned session tokens.\n", intent="Document the project")
        step(60 * 23, "src/signing.py", DEMO_V1, intent="Sign session tokens")
        step(4, "src/signing.py", DEMO_V2)
        step(3, "tests/test_signing.py", "from src.signing import Signer\n\n\ndef test_roundtrip():\n"
                "    s = Signer(b'k')\n    assert s.unsign(s.sign('a')) == 'a'\n", intent="Test the signer",
             run=("failed", 1, 1))
        step(5, "src/signing.py", DEMO_V3, checkpoint="salted signatures", run=("passed", 2, 0))
        step(2, "src/app.py", "from src.signing import Signer\n\n\ndef main(argv=None):\n    return 2\n",
             intent="Wire the signer into main")
    finally:
        recorder.close()


def test_timeline_screenshot(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record_story(project, monkeypatch)
    target = (REPO_ROOT / "docs" / "timeline.png" if os.environ.get("CODE_TRAJECTORY_UPDATE_SCREENSHOT") == "1"
              else tmp_path / "timeline.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    with running_ui(project) as ui, chromium_page(1400, 900) as (page, requested):
        page.goto(ui.entry_url)
        assert page.locator("li.session-head").count() == 2
        row = page.locator("li.snap").nth(1)
        row.locator("a").click()
        page.locator(f'#pane article[data-oid="{row.get_attribute("data-oid")}"] table.diff').first.wait_for(
            timeout=TIMEOUT)
        page.mouse.move(0, 899)
        page.screenshot(path=str(target))
        assert only_local(requested, ui.url) == []
    width, height = struct.unpack(">II", target.read_bytes()[16:24])  # the PNG header
    assert (width, height) == (1400, 900)


def test_requests_without_the_token_are_refused(project: Path) -> None:
    """Another origin (localhost instead of 127.0.0.1 holds no cookie) and a foreign page (its requests are
    cross-site: the strict cookie stays home, and it cannot read the CSRF value) get nothing."""
    commits = record_demo(project)
    with running_ui(project) as ui, chromium_page() as (page, requested):
        assert page.goto(ui.url + "/").status == 401
        page.goto(ui.entry_url)
        status = page.evaluate("""() => fetch('/api/restore', {method: 'POST', headers: {'Content-Type':
            'application/json'}, body: JSON.stringify({snapshot: '%s', paths: null, dry_run: true})})
            .then(r => r.status)""" % commits["v1"])  # noqa: UP031 - the script's braces would need doubling
        assert status == 403  # our own cookie, but no CSRF header
        assert page.goto(f"http://localhost:{ui.port}/").status == 401

        statuses: dict[str, int] = {}
        page.on("response", lambda r: statuses.update({r.request.method + " " + r.url: r.status}))
        forged = f"""<!doctype html><form method=post action="{ui.url}/api/restore" enctype="text/plain">
            <input name='{{"snapshot":"{commits["v1"]}","paths":null,"x":"' value='"}}'></form>
            <a id=go href="{ui.url}/?s={commits["v1"]}">see</a>"""
        page.route("http://evil.test/**", lambda route: route.fulfill(status=200, content_type="text/html",
                                                                       body=forged))
        page.goto("http://evil.test/")
        page.click("#go")  # a link from a foreign site: a cross-site navigation, the strict cookie is not sent
        page.wait_for_url(f"{ui.url}/**", timeout=TIMEOUT)
        page.goto("http://evil.test/")
        page.evaluate("document.forms[0].submit()")  # a forged form POST
        page.wait_for_url(f"{ui.url}/api/restore", timeout=TIMEOUT)
    assert statuses.get(f"GET {ui.url}/?s={commits['v1']}") == 401
    assert statuses.get(f"POST {ui.url}/api/restore") == 401


def restore_and_undo(page, ui, project: Path, commits: dict[str, str]) -> None:
    """Restore ``src/signing.py`` as of ``v1`` from the page, check the file, then Undo from the banner."""
    target = project / "src" / "signing.py"
    assert target.read_text() == DEMO_V3
    page.goto(f"{ui.url}/?s={commits['v1']}&token={ui.token}")
    page.locator("#pane details.file button[data-restore]").first.click()
    dialog = page.locator("dialog#confirm")
    dialog.wait_for(state="visible", timeout=TIMEOUT)
    assert "src/signing.py" in dialog.locator(".what").inner_text()
    confirm = dialog.locator("button[data-confirm]")
    page.wait_for_function("() => !document.querySelector('dialog#confirm button[data-confirm]').disabled",
                           timeout=TIMEOUT)
    assert target.read_text() == DEMO_V3  # the preview wrote nothing
    confirm.click()
    banner = page.locator("#banner .banner-body")
    banner.wait_for(timeout=TIMEOUT)
    assert "Restored" in banner.inner_text() and banner.locator("code.safety").count() == 1
    assert target.read_text() == DEMO_V1
    banner.locator("button[data-undo]").click()
    page.wait_for_function("() => document.querySelector('#banner').innerText.includes('Undone')", timeout=TIMEOUT)
    assert target.read_text() == DEMO_V3
    page.locator("li.snap.k-restore").first.wait_for(timeout=TIMEOUT)  # the restore snapshot appears live


def test_restore_a_file_and_undo_with_the_restore_service(project: Path) -> None:
    commits = record_demo(project)
    with running_ui(project) as ui, chromium_page() as (page, requested):
        restore_and_undo(page, ui, project, commits)
        assert only_local(requested, ui.url) == []
