"""Issue 24: a set-up that travels with the repository. The committed files hold no machine path, so a linked
worktree or a clone of them records itself, never the original; the server finds the project from the client's
roots or working directory (the git top level, never a subdirectory) and follows roots/list_changed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ListRootsResult, Root

from code_trajectory.project import has_shadow_repo
from support import git, server_command, shadow_count, subprocess_env, write

SHARED = (".mcp.json", ".claude/settings.json")
#: roots are what Claude Code, Cursor and VS Code send today; the SDK marks them deprecated (SEP-2577)
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*server_command(), *args], cwd=cwd, env=env or team_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def team_env(project: Path | None = None) -> dict[str, str]:
    """A teammate's environment: ``code-trajectory`` on PATH (as the README asks), ``CLAUDE_PROJECT_DIR`` for hooks."""
    env = subprocess_env()
    env["PATH"] = os.pathsep.join([str(Path(server_command()[0]).parent), env.get("PATH", "")])
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    return env


@pytest.fixture
def committed(project: Path) -> Path:
    """``project`` with ``install claude-code --hooks`` run and the shared files committed (``.trajectory`` ignored)."""
    cli("install", "claude-code", "--hooks", cwd=project)
    (project / ".gitignore").write_text((project / ".gitignore").read_text() + ".trajectory/\n")
    git(project, "add", ".gitignore", *SHARED)
    git(project, "commit", "-q", "-m", "share the code-trajectory set-up")
    return project


def entry_params(checkout: Path, cwd: Path) -> StdioServerParameters:
    """How Claude Code starts the server of ``checkout``'s committed ``.mcp.json``, in ``cwd``."""
    entry = json.loads((checkout / ".mcp.json").read_text())["mcpServers"]["code-trajectory"]
    return StdioServerParameters(command=entry["command"], args=[*entry["args"], "--debounce", "0.3"],
                                 env=team_env(checkout), cwd=str(cwd))


async def until(predicate, timeout: float = 30.0) -> None:
    """Wait (without blocking the client's event loop: it answers roots/list) until ``predicate()`` is true."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.1)


def roots_of(*directories: Path):
    current = list(directories)

    async def callback(_ctx) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=d.as_uri(), name=d.name) for d in current])

    return callback, current


def test_shared_files_hold_no_machine_path(committed: Path, tmp_path: Path) -> None:
    for rel in SHARED:
        text = (committed / rel).read_text()
        assert str(tmp_path) not in text and str(Path(server_command()[0]).parent) not in text, rel
    entry = json.loads((committed / ".mcp.json").read_text())["mcpServers"]["code-trajectory"]
    assert entry == {"type": "stdio", "command": "code-trajectory", "args": ["serve"]}
    hooks = json.loads((committed / ".claude/settings.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == 'code-trajectory hook stop --project "$CLAUDE_PROJECT_DIR"'


@pytest.mark.anyio
@pytest.mark.parametrize("with_roots", [True, False], ids=["roots", "cwd"])
async def test_a_worktree_of_the_committed_set_up_records_itself(committed: Path, tmp_path: Path,
                                                                 with_roots: bool) -> None:
    wt = tmp_path / "wt"
    git(committed, "worktree", "add", "-q", "-b", "feature", str(wt))
    callback, _ = roots_of(wt)
    kwargs = {"list_roots_callback": callback} if with_roots else {}
    async with Client(entry_params(wt, wt), mode="legacy", **kwargs) as client:
        summary = (await client.call_tool("get_session_summary", {})).content[0].text
        assert not summary.startswith("Error"), summary
        assert has_shadow_repo(wt) and not (committed / ".trajectory").exists()
        count = shadow_count(wt, "refs/heads/shadow/feature")
        write(wt, "src/app.py", "def main():\n    return 2\n")
        await until(lambda: shadow_count(wt, "refs/heads/shadow/feature") > count)
    assert not (committed / ".trajectory").exists()


@pytest.mark.anyio
async def test_a_client_of_the_2026_protocol_is_recorded_from_its_first_discover(committed: Path) -> None:
    """A client of protocol 2026-07-28 (the SDK's default mode; Claude Code 2.1.332 speaks it) sends no
    ``initialize`` nor ``notifications/initialized``, and the server cannot ask it for roots: the server records
    the project of its working directory once ``server/discover`` is answered, before any tool call, and its
    watcher records a save made before the first tool call."""
    async with Client(entry_params(committed, committed)) as client:
        assert client.protocol_version == "2026-07-28"
        await until(lambda: shadow_count(committed) > 0)  # the initial import: no tool called
        count = shadow_count(committed)
        write(committed, "src/app.py", "def main():\n    return 4\n")
        await until(lambda: shadow_count(committed) > count)
        answer = (await client.call_tool("get_file_trajectory", {"filepath": "src/app.py"})).content[0].text
        assert "return 4" in answer, answer


@pytest.mark.anyio
async def test_a_clone_records_itself_and_its_hooks_too(committed: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(committed), str(clone))
    hooks = json.loads((clone / ".claude/settings.json").read_text())["hooks"]
    prompt = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    done = subprocess.run(prompt, shell=True, cwd=clone, env=team_env(clone), capture_output=True, text=True,
                          input=json.dumps({"session_id": "s1", "cwd": str(clone), "prompt": "Work in the clone"}),
                          timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads((clone / ".trajectory/state/intent.json").read_text())["intent"] == "Work in the clone"
    async with Client(entry_params(clone, clone), mode="legacy") as client:
        await client.call_tool("get_session_summary", {})
    assert has_shadow_repo(clone) and not (committed / ".trajectory").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("with_roots", [True, False], ids=["roots", "cwd"])
async def test_started_in_a_subdirectory_records_the_repository(committed: Path, with_roots: bool) -> None:
    sub = committed / "src"
    callback, _ = roots_of(sub)
    kwargs = {"list_roots_callback": callback} if with_roots else {}
    async with Client(entry_params(committed, sub), mode="legacy", **kwargs) as client:
        answer = (await client.call_tool("get_file_trajectory", {"filepath": "src/app.py"})).content[0].text
        assert "No such file" not in answer and not answer.startswith("Error"), answer
    assert has_shadow_repo(committed) and not (sub / ".trajectory").exists()


@pytest.mark.anyio
async def test_roots_list_changed_switches_the_project(committed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(committed), str(other))
    callback, current = roots_of(committed / "src")
    async with Client(entry_params(committed, tmp_path), mode="legacy", list_roots_callback=callback) as client:
        await client.call_tool("get_session_summary", {})
        assert has_shadow_repo(committed) and not has_shadow_repo(other)
        current[:] = [other / "tests"]
        await client.send_roots_list_changed()
        await until(lambda: has_shadow_repo(other))
        count = shadow_count(other)
        write(other, "src/app.py", "def main():\n    return 3\n")
        await until(lambda: shadow_count(other) > count)
    assert not (other / "tests" / ".trajectory").exists()


@pytest.mark.anyio
async def test_configure_project_stops_following_the_roots(committed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(committed), str(other))
    callback, current = roots_of(committed)
    async with Client(entry_params(committed, committed), mode="legacy", list_roots_callback=callback) as client:
        await client.call_tool("configure_project", {"path": str(committed)})
        current[:] = [other]
        await client.send_roots_list_changed()
        summary = (await client.call_tool("get_session_summary", {})).content[0].text
        assert not summary.startswith("Error")
    assert not (other / ".trajectory").exists()


def test_not_on_path_is_said_with_what_to_do(project: Path) -> None:
    env = subprocess_env()
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "code-trajectory").exists()) or os.defpath
    exe = server_command()
    proc = subprocess.run([*exe, "install", "claude-code"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "`code-trajectory` is not on PATH" in proc.stdout and "install claude-code --local" in proc.stdout
    # the package's name, not the command's (`pipx install code-trajectory` fetches whatever PyPI holds by that
    # name), and a --local command that runs here, where `code-trajectory` is not on PATH
    assert "`pipx install code-trajectory-mcp`" in proc.stdout and "install code-trajectory`" not in proc.stdout
    assert f"`{exe[0]}" in proc.stdout.split("or run ", 1)[1], proc.stdout
    assert "warning" not in cli("install", "cursor", cwd=project).stdout  # on PATH: nothing to say


def test_a_shared_hook_outside_claude_code_starts_no_history(committed: Path, tmp_path: Path) -> None:
    """Without ``CLAUDE_PROJECT_DIR`` the shared hook gets ``--project ""``: it acts only on a recorded project."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(committed), str(clone))
    prompt = json.loads((clone / ".claude/settings.json").read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    env = team_env()
    env.pop("CLAUDE_PROJECT_DIR", None)
    done = subprocess.run(prompt["command"], shell=True, cwd=clone, env=env, capture_output=True, text=True,
                          input=json.dumps({"session_id": "s", "cwd": str(clone), "prompt": "x"}), timeout=120)
    assert done.returncode == 0 and not (clone / ".trajectory").exists()


@pytest.mark.anyio
async def test_an_unexpanded_workspace_variable_follows_the_roots(committed: Path, tmp_path: Path) -> None:
    """A client that passes ``${workspaceFolder}`` as written (the shared Cursor/VS Code entry) still records the
    project of its roots."""
    cli("install", "cursor", cwd=committed)
    entry = json.loads((committed / ".cursor/mcp.json").read_text())["mcpServers"]["code-trajectory"]
    assert entry["args"] == ["serve", "--project", "${workspaceFolder}"]
    callback, _ = roots_of(committed / "tests")
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=team_env(), cwd=str(tmp_path))
    async with Client(params, mode="legacy", list_roots_callback=callback) as client:
        answer = (await client.call_tool("get_file_trajectory", {"filepath": "src/app.py"})).content[0].text
        assert "No such file" not in answer and not answer.startswith("Error"), answer
    assert has_shadow_repo(committed) and not (committed / "tests" / ".trajectory").exists()
