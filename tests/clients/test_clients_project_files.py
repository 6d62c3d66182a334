"""Zed's ``.zed/settings.json`` and Continue's ``.continue/mcpServers/code-trajectory.yaml``: shared project files
with no machine path, whose server finds the project from the directory the client starts it in (both start a
project's servers in its root and offer no MCP roots), so a committed set-up in a linked worktree records the
worktree; Zed's per-user ``settings.json`` with ``--local``, one entry per project, undone byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from ruamel.yaml import YAML

from code_trajectory.clients import install as inst
from code_trajectory.clients import jsontext
from code_trajectory.project import has_shadow_repo
from support import git, git_repo, server_command, subprocess_env, write

EXE = "/opt/ct/bin/code-trajectory"
#: A user's Zed settings: JSONC with a comment, a trailing comma and another context server.
ZED_USER = ('// Zed settings\n{\n  "theme": "One Dark",\n  "context_servers": {\n'
            '    "docs": {"source": "custom", "command": "npx", "args": ["-y", "docs"]},\n  },\n}\n')
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "my proj", {"src/app.py": "x = 1\n", ".gitignore": ".trajectory/\n"}, branch="main",
                    commit="init").resolve()


def zed_user_file(home: Path) -> Path:
    return home / ".config" / "zed" / "settings.json"


def test_zed_shared_project_file_holds_no_machine_path(repo: Path) -> None:
    write(repo, ".zed/settings.json", '{\n  // project settings\n  "tab_size": 2,\n}\n')
    before = (repo / ".zed" / "settings.json").read_bytes()
    [change] = inst.install("zed", repo)
    assert change.path == repo / ".zed" / "settings.json" and change.action == "updated" and not change.local
    text = change.path.read_text()
    assert str(repo) not in text and "// project settings" in text
    assert jsontext.loads(text)[0]["context_servers"] == {
        "code-trajectory": {"source": "custom", "command": "code-trajectory", "args": ["serve"]}}
    assert "to undo: code-trajectory uninstall zed --project" in inst.render([change])
    inst.uninstall("zed", repo)
    assert change.path.read_bytes() == before


def test_zed_local_is_the_users_file_one_entry_per_project(repo: Path, tmp_path: Path, isolated_env: Path) -> None:
    other = git_repo(tmp_path / "other" / "my proj", {"b.py": "b = 1\n"}, commit="init").resolve()
    user = write(isolated_env, ".config/zed/settings.json", ZED_USER)
    before = user.read_bytes()
    [first] = inst.install("zed", repo, exe=EXE, local=True)
    [second] = inst.install("zed", other, exe=EXE, local=True)
    assert first.path == second.path == zed_user_file(isolated_env) and first.local
    assert not (repo / ".zed").exists()
    servers = jsontext.loads(user.read_text())[0]["context_servers"]
    assert servers["code-trajectory"] == {"source": "custom", "command": EXE, "args": ["serve", "--project", str(repo)]}
    assert servers["code-trajectory-my-proj"]["args"] == ["serve", "--project", str(other)]  # the same directory name
    assert "docs" in servers and "to undo: code-trajectory uninstall zed" in inst.render([first])
    assert inst.render([first]).rstrip().endswith("--local")

    assert [c.action for c in inst.uninstall("zed", repo, local=True)] == ["removed"]
    assert set(jsontext.loads(user.read_text())[0]["context_servers"]) == {"docs", "code-trajectory-my-proj"}
    assert inst.uninstall("zed", repo)[0].action == "absent"  # the shared file was never written
    inst.uninstall("zed", other, local=True)
    assert user.read_bytes() == before


def entry_of(client: str, checkout: Path) -> tuple[str, list[str]]:
    """The command line of the committed entry, read as the client reads its file."""
    if client == "zed":
        entry = jsontext.loads((checkout / ".zed" / "settings.json").read_text())[0]["context_servers"][
            "code-trajectory"]
        return entry["command"], entry["args"]
    block = YAML(typ="safe").load((checkout / ".continue" / "mcpServers" / "code-trajectory.yaml").read_text())
    [entry] = [s for s in block["mcpServers"] if s["name"] == "code-trajectory"]
    assert "cwd" not in entry  # Continue then starts it in the workspace root
    return entry["command"], entry["args"]


@pytest.mark.anyio
@pytest.mark.parametrize("client", ["zed", "continue"])
async def test_a_committed_set_up_in_a_worktree_records_the_worktree(client: str, repo: Path, tmp_path: Path) -> None:
    """Install, commit the shared file, ``git worktree add``: the entry started as the client starts it (in the
    checkout's root, no roots capability, ``code-trajectory`` found on PATH) records the worktree itself."""
    changes = inst.install(client, repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"share the {client} set-up")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    assert (wt / changes[0].path.relative_to(repo)).is_file()
    command, args = entry_of(client, wt)
    assert (command, args) == ("code-trajectory", ["serve"])
    env = subprocess_env()
    env["PATH"] = os.pathsep.join([str(Path(server_command()[0]).parent), env.get("PATH", "")])
    params = StdioServerParameters(command=command, args=[*args, "--debounce", "0.3"], env=env, cwd=str(wt))
    async with Client(params, mode="legacy") as session:
        answer = (await session.call_tool("get_file_trajectory", {"filepath": "src/app.py"})).content[0].text
        assert "No such file" not in answer and not answer.startswith("Error"), answer
    assert has_shadow_repo(wt) and not (repo / ".trajectory").exists()
    committed = (wt / changes[0].path.relative_to(repo)).read_text()
    assert str(repo) not in committed and str(wt) not in committed
