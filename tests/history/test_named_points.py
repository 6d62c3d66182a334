"""Issue 23.4: named points are markers in every timeline, also when named while nothing changed (the name points at
an existing snapshot), and the user's names are listed apart from the automatic ones ("turn ended …", "before
restore of …").

Before, a checkpoint named when nothing changed appeared in no ``get_global_trajectory``, ``get_session_summary``,
``log`` or UI output; the only way to see the names was a wrong name's error, crowded with automatic names. Real git
in temp dirs; the CLI as a process (``checkpoint``, ``hook stop``, ``restore``, ``log``, ``session``), the server
through the MCP SDK client, and the timeline UI over HTTP.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.git.points import AUTO_TURN, name_point, points
from code_trajectory.git.shadow import ShadowRepo
from support import mcp_client, record_now, server_command, subprocess_env, write
from support.ui import request, running_ui


def cli(project: Path, *args: str, stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*server_command(), *args, "--project", str(project)], input=stdin, capture_output=True,
                          text=True, timeout=60, env=subprocess_env())
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (proc.returncode == 0) == ok, proc.stderr
    return proc


@pytest.fixture
def named(project: Path) -> Path:
    """A history with the user's points (one named when nothing changed), a turn's end and a restore's safety point."""
    cli(project, "checkpoint", "-m", "before the refactor")
    write(project, "src/app.py", "def main():\n    return 2\n")
    cli(project, "checkpoint", "-m", "refactor done")
    out = cli(project, "checkpoint", "-m", "release candidate").stdout  # nothing changed: a name, no snapshot
    assert "no new snapshot" in out, out
    cli(project, "hook", "stop", stdin=json.dumps({"session_id": "s1", "cwd": str(project),
                                                   "hook_event_name": "Stop"}))
    cli(project, "restore", "before the refactor")  # names "before restore of …" on the state it replaces
    return project


def test_log_and_session_show_the_points_and_list_the_users_names_apart(named: Path) -> None:
    log_text = cli(named, "log").stdout
    # named while nothing changed: under the snapshot it names, after the name given with that snapshot
    entry = next(e for e in log_text.split("\n## ") if '"release candidate" (' in e)
    # the heading says the name given with the snapshot; a name given later is a marker under it
    assert "checkpoint: refactor done" in entry and 'Named point "release candidate" (' in entry, log_text
    assert "2 automatic points (1 turn ended, 1 before restore;" in entry, entry
    names = next(line for line in log_text.splitlines() if line.startswith("Named points:"))
    assert '"release candidate"' in names and '"refactor done"' not in names  # said once, in its heading
    assert "turn ended" not in names.split("; automatic:")[0] and "before restore" not in names.split("; automatic:")[0]
    assert "; automatic: 2 (1 turn ended, 1 before restore)" in names, names

    summary = cli(named, "session").stdout
    assert '"release candidate"' in summary and "automatic: 2" in summary, summary

    # a wrong name's error lists the user's names first, the automatic ones after
    error = cli(named, "restore", "release candidat", ok=False).stderr
    assert error.index('"release candidate"') < error.index("Automatic ones (2)"), error
    assert error.index('"refactor done"') < error.index("turn ended"), error


@pytest.mark.anyio
async def test_the_tools_mark_the_points_in_text_and_data_in_timeline_order(named: Path) -> None:
    async with mcp_client(named) as client:
        answer = await client.call_tool("get_global_trajectory", {"limit": 10})
        assert not answer.is_error and '"release candidate" (' in answer.content[0].text
        marks = answer.structured_content["named_points"]  # those the headings do not name already
        assert [m["name"] for m in marks] == ["release candidate"]
        assert [m["t"] for m in marks] == sorted(m["t"] for m in marks)
        ids = {row[1] for row in answer.structured_content["snapshots"]}
        assert all(m["on"] in ids for m in marks)

        summary = await client.call_tool("get_session_summary", {})
        assert '"release candidate"' in summary.content[0].text
        assert [m["name"] for m in summary.structured_content["named_points"]][2] == "release candidate"

        # named through the tool while nothing changed: a marker at once
        await client.call_tool("checkpoint", {"message": "after the restore"})
        await client.call_tool("checkpoint", {"message": "ship it"})
        text = (await client.call_tool("get_global_trajectory", {"limit": 3})).content[0].text
        assert 'Named points "after the restore"' in text and '"ship it"' in text, text


def test_the_timeline_page_shows_the_points(named: Path) -> None:
    with running_ui(named) as ui:
        status, _, body = request(ui.port, "GET", f"/?token={ui.token}")
        page = body.decode()
        assert status == 200 and "⚑ release candidate" in page and "⚑ refactor done" in page
        auto = page.split('class="point auto" title="')[1]  # counted apart, listed in the title
        title, shown = auto.split('">', 1)
        assert title.startswith("turn ended ") and "\nbefore restore of " in title and "⚑" not in title
        assert shown.startswith("2 automatic points</span>")
        cookie = {"Cookie": f"{_cookie(ui.port)}={ui.token}"}
        status, _, body = request(ui.port, "GET", "/fragment/rows?branch=main", headers=cookie)
        rows = json.loads(body)["html"]
        assert status == 200 and "⚑ before the refactor" in rows and "⚑ release candidate" in rows

        # a point named while the page is open and nothing changed: no new row, the live update brings its marker
        tip = page.split('data-tip="')[1].split('"')[0]
        known = page.split('data-points="')[1].split('"')[0]
        status, _, body = request(ui.port, "GET", f"/api/poll?branch=main&tip={tip}&points={known}", headers=cookie)
        assert status == 200 and "points" not in json.loads(body)  # nothing new
        cli(named, "checkpoint", "-m", "seen live")
        status, _, body = request(ui.port, "GET", f"/api/poll?branch=main&tip={tip}&points={known}", headers=cookie)
        update = json.loads(body)
        assert update["html"] == "" and update["points_key"] != known
        assert "⚑ seen live" in update["points"][tip] and "⚑ before the refactor" not in update["points"][tip]


def test_points_named_before_they_were_marked_are_told_by_their_pattern(project: Path) -> None:
    cli(project, "checkpoint", "-m", "mine")
    with ShadowRepo(project) as repo:
        tip = repo.resolve("refs/heads/shadow/main")
        assert tip is not None
        # as older versions named them: no Trajectory-Automatic line
        name_point(repo, tip, "turn ended 10:00:00: Fix the login retry", "main")
        name_point(repo, tip, "before restore of 0123456789ab (~1)", "main")
        name_point(repo, tip, "turn ended soon", "main", automatic=AUTO_TURN)
        found = {p.message: p.automatic for p in points(repo)}
    assert found == {"mine": None, "turn ended 10:00:00: Fix the login retry": "turn",
                     "before restore of 0123456789ab (~1)": "restore", "turn ended soon": "turn"}


def _cookie(port: int) -> str:
    from code_trajectory.ui.security import cookie_name

    return cookie_name(port)


def test_two_checkpoints_without_a_name_in_one_second_get_two_names(project: Path) -> None:
    """The automatic name is the time to the second: a second one within it is ``(2)``, so that each names its own
    snapshot (``compare 'checkpoint 10:00:00'`` picked the newer one of two)."""
    write(project, "src/app.py", "x = 1\n")
    repo_points = []
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    s = ProjectSession(project, TrajectorySettings.load(project))
    s.start()
    try:
        tip = s.recorder.latest_commit(s.branch) or s.recorder.checkpoint("start").commit
        first = name_point(s.recorder.repo, tip, "", s.branch)
        second = name_point(s.recorder.repo, tip, "", s.branch)
        repo_points = points(s.recorder.repo)
    finally:
        s.close()
    if second.message.split(" ")[1] == first.message.split(" ")[1]:  # the same second (almost always)
        assert second.message == f"{first.message} (2)"
    assert first.message != second.message and all(p.automatic == "unnamed" for p in repo_points[:2])


def test_a_restores_safety_snapshot_is_not_listed_as_the_users_name(project: Path) -> None:
    """A restore of named paths notes its safety snapshot "safety snapshot before restoring <id>": an unknown point
    lists it among the automatic names, not as one the user gave."""
    cli(project, "checkpoint", "-m", "base")
    (project / "src" / "app.py").write_text("def main():\n    return 5\n")
    cli(project, "restore", "base", "src/app.py")
    done = subprocess.run([sys.executable, "-m", "code_trajectory", "compare", "nonexistent"], cwd=project,
                          env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    users = done.stderr.split("(named by you", 1)[0]
    assert '"base"' in users and "safety snapshot before restoring" not in users, done.stderr


@pytest.mark.anyio
async def test_the_file_history_says_a_checkpoint_named_on_a_snapshot_already_taken(project: Path) -> None:
    """An agent's checkpoint after the debounce fired finds nothing new and names the snapshot before it: the symbol
    history and the log said ``checkpoint: before rack3`` on that snapshot, the file history only its intent."""
    write(project, "src/app.py", "def main():\n    return 1\n")
    record_now(project)
    cli(project, "intent", "Handle", "missing", "cookies")
    write(project, "src/app.py", "def main():\n    return 2\n")
    record_now(project)
    assert "no new snapshot" in cli(project, "checkpoint", "-m", "before rack3").stdout
    text = cli(project, "file", "src/app.py").stdout
    newest = text.split("\n## ")[-1]
    assert "· checkpoint: before rack3 · Intent: Handle missing cookies" in newest.splitlines()[0], text
    async with mcp_client(project) as client:
        answer = await client.call_tool("get_file_trajectory", {"filepath": "src/app.py"})
        assert answer.structured_content["versions"][-1]["checkpoint"] == "before rack3"


def test_a_checkpoint_asked_for_twice_while_nothing_changed_names_its_snapshot_once(project: Path) -> None:
    """The same `checkpoint -m NAME` run twice in a row (nothing changed between) made a second tag of that name on
    the same snapshot: the session summary listed the name twice and the log counted 2 names in its headings where
    one was shown. A name given again on another snapshot is still a new point (the newest wins in restore)."""
    cli(project, "checkpoint", "-m", "stable ✓")
    second = cli(project, "checkpoint", "-m", "stable ✓").stdout
    assert 'Named point "stable ✓"' in second and "no new snapshot" in second, second
    assert [p.message for p in points(ShadowRepo(project))].count("stable ✓") == 1
    names = next(line for line in cli(project, "session").stdout.splitlines() if line.startswith("Named points:"))
    assert names.count('"stable ✓"') == 1, names
    write(project, "src/app.py", "def main():\n    return 3\n")
    cli(project, "checkpoint", "-m", "other")
    cli(project, "checkpoint", "-m", "stable ✓")  # the same name on a newer snapshot: a point of its own
    assert [p.message for p in points(ShadowRepo(project))].count("stable ✓") == 2


def test_a_window_without_the_users_names_does_not_say_there_are_none(project: Path) -> None:
    """A ``log`` page whose snapshots carry only an automatic point said ``Named points: none named by you``, read
    as "you named nothing" while the user's checkpoint was just older than the page (the restore's heading even
    names it)."""
    cli(project, "checkpoint", "-m", "keep this")
    write(project, "src/app.py", "def main():\n    return 3\n")
    cli(project, "restore", "keep this")  # a safety snapshot with its automatic point, then the restore
    page = cli(project, "log", "--limit", "2").stdout
    assert 'checkpoint "keep this"' in page, page  # the restore's heading names the user's checkpoint
    line = next(x for x in page.splitlines() if x.startswith("Named points:"))
    assert line == "Named points: none named by you on these snapshots; automatic: 1 (1 before restore)", line
    whole = next(x for x in cli(project, "log").stdout.splitlines() if x.startswith("Named points:"))
    assert "none named by you" not in whole and "automatic: 1" in whole, whole
