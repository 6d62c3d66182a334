"""Everything inside ``.trajectory/`` is untrusted (issue 21), through the real ``serve`` over stdio (the MCP SDK
client: a bare ``initialize``, then tool calls) and the timeline page's HTTP API.

The hostile programs of ``tests/support/hostile.py`` would each create a marker file; no marker may appear, and the
server and the page must keep answering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from code_trajectory.ui.security import CSRF_HEADER, cookie_name, csrf_value
from support import file_bytes, git, git_repo, server_command, write
from support.hostile import commit_history_into_project, fired, poison_shadow
from support.ui import record_demo, request, running_ui

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]



def params(env: dict[str, str], project: Path) -> StdioServerParameters:
    command = server_command()
    return StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--debounce", "0.3", "--project",
                                                           str(project)], env=env)


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def recorded_project(root: Path) -> Path:
    """A git project with a history of two versions of ``src/app.py`` recorded by the real recorder."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder

    git_repo(root, {"src/app.py": "def main():\n    return 1\n"}, branch="main", commit="initial")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        recorder.reconcile()
        write(root, "src/app.py", "def main():\n    return 2\n")
        recorder.record_paths(["src/app.py"])
    finally:
        recorder.close()
    return root.resolve()


def cloned_hostile(tmp_path: Path) -> tuple[Path, Path]:
    """An attacker's repository that force-adds its poisoned ``.trajectory``, cloned by the victim."""
    attacker = recorded_project(tmp_path / "attacker")
    markers = poison_shadow(attacker, tmp_path / "attack")
    commit_history_into_project(attacker)
    victim = tmp_path / "victim"
    git(tmp_path, "clone", "-q", str(attacker), str(victim))
    return victim.resolve(), markers


async def test_serve_on_a_poisoned_shadow_answers_and_runs_nothing(server_env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    project = recorded_project(tmp_path / "project")
    markers = poison_shadow(project, tmp_path / "attack")
    async with Client(params(server_env, project)) as client:  # the bare initialize once ran the attack
        await anyio.sleep(1.0)  # the start-up reconcile runs in the background meanwhile
        assert fired(markers) == []
        for name, args in (("get_file_trajectory", {"filepath": "src/app.py"}),
                           ("search_trajectory", {"query": "return"}), ("get_global_trajectory", {}),
                           ("compare", {"from_snapshot": "~1"}), ("get_session_summary", {})):
            result = await client.call_tool(name, args)
            assert not result.is_error, f"{name}: {text(result)}"
        summary = text(await client.call_tool("get_session_summary", {}))
        assert "config held settings code-trajectory does not write" in summary  # the notice, once per opening
        second = poison_shadow(project, tmp_path / "while-serving")  # in place while serving: the overrides hold
        for name, args in (("get_file_trajectory", {"filepath": "src/app.py"}),
                           ("search_trajectory", {"query": "return 2"})):
            result = await client.call_tool(name, args)
            assert not result.is_error and "return 2" in text(result), text(result)
    assert fired(markers) == [] and fired(second) == []


async def test_serve_on_a_cloned_trajectory_refuses_it_and_keeps_answering(server_env: dict[str, str],
                                                                           tmp_path: Path) -> None:
    victim, markers = cloned_hostile(tmp_path)
    async with Client(params(server_env, victim)) as client:
        tools = await client.list_tools()
        assert any(tool.name == "get_file_trajectory" for tool in tools.tools)
        for name, args in (("get_global_trajectory", {}), ("get_file_trajectory", {"filepath": "src/app.py"}),
                           ("search_trajectory", {"query": "return"})):
            result = await client.call_tool(name, args)
            assert result.is_error, text(result)
            assert "tracked by the project's git" in text(result) and "mv " in text(result), text(result)
            assert "\n" not in text(result).strip()
        again = await client.call_tool("configure_project", {"path": str(victim)})
        assert again.is_error and "tracked by the project's git" in text(again)
    assert fired(markers) == []


def ui_get(ui, target: str) -> tuple[int, bytes]:
    status, _, body = request(ui.port, "GET", target, headers={"Cookie": f"{cookie_name(ui.port)}={ui.token}"})
    return status, body


def ui_requests(ui, commits: dict[str, str]) -> None:
    """Every read route of the page and a restore preview answer 200."""
    oid = commits["v2"]
    for target in ("/", f"/?s={oid}", "/?file=src/signing.py", "/fragment/rows", f"/fragment/snapshot/{oid}",
                   "/fragment/file?file=src/signing.py", f"/fragment/diff/{oid}?file=src/signing.py&symbols=1",
                   "/api/poll?tip=", "/?q=sign"):
        status, body = ui_get(ui, target)
        assert status == 200, (target, body[:300])
    headers = {"Cookie": f"{cookie_name(ui.port)}={ui.token}", CSRF_HEADER: csrf_value(ui.token),
               "Content-Type": "application/json", "Origin": ui.url}
    payload = {"snapshot": commits["v1"], "paths": ["src/signing.py"], "dry_run": True}
    status, _, body = request(ui.port, "POST", "/api/restore", headers=headers, body=json.dumps(payload).encode())
    assert status == 200, body[:300]


def test_timeline_page_on_a_poisoned_shadow_runs_nothing(project: Path, tmp_path: Path) -> None:
    commits = record_demo(project)
    markers = poison_shadow(project, tmp_path / "attack")
    with running_ui(project) as ui:
        ui_requests(ui, commits)
        second = poison_shadow(project, tmp_path / "while-serving")  # after the page opened the repository
        ui_requests(ui, commits)
    assert fired(markers) == [] and fired(second) == []


async def test_the_projects_own_files_are_never_imported_by_the_servers_processes(server_env: dict[str, str],
                                                                                  tmp_path: Path) -> None:
    """A client starts the server in the project: a ``json.py`` or ``code_trajectory/`` at its top level must not be
    imported by the start-up import's child (``python -m`` puts the working directory first on ``sys.path``;
    ``-P`` does not), nor by any other child the server starts."""
    marker = tmp_path / "imported"
    project = git_repo(tmp_path / "cloned", {
        "json.py": f"open({str(marker)!r}, 'w').write('json.py ran')\nfrom _json import *\n",
        "re.py": f"open({str(marker)!r}, 'w').write('re.py ran')\n",
        "src/app.py": "def main():\n    return 1\n"}, branch="main", commit="initial").resolve()
    command = server_command()
    server = StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--debounce", "0.3"],
                                   env=server_env, cwd=str(project))
    async with Client(server) as client:
        summary = await client.call_tool("get_session_summary", {})
        assert not summary.is_error
        for _ in range(50):  # the start-up import has recorded the tree
            log = await client.call_tool("get_global_trajectory", {"limit": 5})
            if "start of recording" in text(log):
                break
            await anyio.sleep(0.2)
        assert "start of recording" in text(log), text(log)
    assert not marker.exists(), marker.read_text()


async def test_serve_on_a_link_to_another_projects_history_refuses_it(server_env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    """``beta/.trajectory -> alpha/.trajectory``: the server recorded beta into alpha's history and its tools mixed
    the two. Every tool says why, naming alpha; neither project changes."""
    alpha = recorded_project(tmp_path / "alpha")
    beta = git_repo(tmp_path / "beta", {"b.py": "b = 1\n"}, branch="main", commit="initial").resolve()
    (beta / ".trajectory").symlink_to(alpha / ".trajectory")
    before = file_bytes(alpha), git(alpha, "--git-dir=.trajectory", "for-each-ref"), file_bytes(beta)
    async with Client(params(server_env, beta)) as client:
        for name, args in (("get_global_trajectory", {}), ("search_trajectory", {"query": "return"}),
                           ("get_file_trajectory", {"filepath": "src/app.py"})):
            result = await client.call_tool(name, args)
            assert result.is_error and f"the history of another project, {alpha}" in text(result), text(result)
        write(beta, "b.py", "b = 2\n")
        await anyio.sleep(1.0)  # a watcher would have recorded it by now
    assert (file_bytes(alpha), git(alpha, "--git-dir=.trajectory", "for-each-ref"), file_bytes(beta)) == \
        (before[0], before[1], {**before[2], "b.py": b"b = 2\n"})


async def test_serve_on_a_damaged_history_sets_it_aside_and_says_where(server_env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    """The server records: a history whose ref holds garbage is moved aside, kept as it was, and a new one starts;
    its tools answer, and the session summary says where the damaged one went."""
    project = recorded_project(tmp_path / "project")
    (project / ".trajectory" / "refs" / "heads" / "shadow" / "main").write_text("garbage\n")
    async with Client(params(server_env, project)) as client:
        summary = text(await client.call_tool("get_session_summary", {}))
        assert "was damaged" in summary and "moved to .trajectory.corrupt-" in summary, summary
        result = await client.call_tool("get_global_trajectory", {})
        assert not result.is_error, text(result)
    aside = next(project.glob(".trajectory.corrupt-*"))
    assert (aside / "refs" / "heads" / "shadow" / "main").read_text() == "garbage\n"
