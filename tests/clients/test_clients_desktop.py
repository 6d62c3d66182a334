"""claude-desktop: the per-user file's location per platform, and one entry per project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from code_trajectory.clients import install as inst
from code_trajectory.clients.registry import client
from code_trajectory.core.errors import InvalidArgumentError

EXE = "/opt/ct/bin/code-trajectory"
DESKTOP = client("claude-desktop")


def test_linux_path_uses_home_config(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "h")}
    assert DESKTOP.config_path(tmp_path, env, "linux") == tmp_path / "h" / ".config" / "Claude" / \
        "claude_desktop_config.json"


def test_linux_path_honours_absolute_xdg_config_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "h"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert DESKTOP.config_path(tmp_path, env, "linux") == tmp_path / "xdg" / "Claude" / "claude_desktop_config.json"
    env["XDG_CONFIG_HOME"] = "relative/dir"  # the XDG spec says a relative value is ignored
    assert DESKTOP.config_path(tmp_path, env, "linux") == tmp_path / "h" / ".config" / "Claude" / \
        "claude_desktop_config.json"


def test_darwin_path(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "h"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert DESKTOP.config_path(tmp_path, env, "darwin") == \
        tmp_path / "h" / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"


def test_windows_path_uses_appdata(tmp_path: Path) -> None:
    env = {"APPDATA": str(tmp_path / "Roaming"), "HOME": str(tmp_path / "h")}
    assert DESKTOP.config_path(tmp_path, env, "win32") == tmp_path / "Roaming" / "Claude" / \
        "claude_desktop_config.json"
    env = {"USERPROFILE": str(tmp_path / "me")}
    assert DESKTOP.config_path(tmp_path, env, "win32") == \
        tmp_path / "me" / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"


def test_missing_environment_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="APPDATA is not set"):
        DESKTOP.config_path(tmp_path, {}, "win32")
    with pytest.raises(InvalidArgumentError, match="HOME is not set"):
        DESKTOP.config_path(tmp_path, {}, "darwin")


def test_default_environment_is_the_isolated_one(tmp_path: Path, isolated_env: Path) -> None:
    """Without ``env``, os.environ is used: the autouse fixture points XDG_CONFIG_HOME at a temp dir."""
    project = tmp_path / "p"
    project.mkdir()
    changes = inst.install("claude-desktop", project, exe=EXE, platform="linux")
    assert changes[0].path == isolated_env / ".config" / "Claude" / "claude_desktop_config.json"
    assert changes[0].path.is_file()


def test_win32_install_writes_under_appdata(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    appdata = tmp_path / "AppData" / "Roaming"
    changes = inst.install("claude-desktop", project, exe=EXE, env={"APPDATA": str(appdata)}, platform="win32")
    path = appdata / "Claude" / "claude_desktop_config.json"
    assert changes[0].path == path and changes[0].action == "created"
    assert json.loads(path.read_text())["mcpServers"]["code-trajectory"]["args"] == ["serve", "--project", str(project)]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, str], Path, Path, Path]:
    env = {"HOME": str(tmp_path / "home")}
    one, two = tmp_path / "a" / "web", tmp_path / "b" / "web"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    return env, one, two, DESKTOP.config_path(one, env, "linux")


def test_one_entry_per_project_with_unique_names(setup: tuple[dict[str, str], Path, Path, Path]) -> None:
    env, one, two, path = setup
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"fs": {"command": "npx"}}, "preferences": {"sidebarMode": "chat"}},
                               indent=2) + "\n")
    inst.install("claude-desktop", one, exe=EXE, env=env, platform="linux")
    second = inst.install("claude-desktop", two, exe=EXE, env=env, platform="linux")
    assert second[0].what == 'server "code-trajectory-web"'
    data = json.loads(path.read_text())
    assert list(data) == ["mcpServers", "preferences"] and data["preferences"] == {"sidebarMode": "chat"}
    servers = data["mcpServers"]
    assert list(servers) == ["fs", "code-trajectory", "code-trajectory-web"]
    assert servers["code-trajectory"]["args"][-1] == str(one)
    assert servers["code-trajectory-web"]["args"][-1] == str(two)
    # A third project with the same directory name gets a hashed name.
    three = path.parent.parent.parent / "c" / "web"
    three.mkdir(parents=True)
    third = inst.install("claude-desktop", three, exe=EXE, env=env, platform="linux")
    assert third[0].what.startswith('server "code-trajectory-web-') and len(third[0].what) == len(
        'server "code-trajectory-web-12345678"')
    # Each project finds its own entry again: reinstall is a no-op, a new exe updates only that one.
    assert inst.install("claude-desktop", two, exe=EXE, env=env, platform="linux")[0].action == "unchanged"
    inst.install("claude-desktop", two, exe="/new/code-trajectory", env=env, platform="linux")
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers["code-trajectory-web"]["command"] == "/new/code-trajectory"
    assert servers["code-trajectory"]["command"] == EXE


def test_uninstall_finds_the_entry_by_project(setup: tuple[dict[str, str], Path, Path, Path]) -> None:
    env, one, two, path = setup
    inst.install("claude-desktop", one, exe=EXE, env=env, platform="linux")
    inst.install("claude-desktop", two, exe=EXE, env=env, platform="linux")
    changes = inst.uninstall("claude-desktop", one, env=env, platform="linux")
    assert changes[0].action == "removed" and changes[0].what == 'server "code-trajectory"'
    servers = json.loads(path.read_text())["mcpServers"]
    assert list(servers) == ["code-trajectory-web"] and servers["code-trajectory-web"]["args"][-1] == str(two)
    # The first name is free again for the next project installed.
    assert inst.uninstall("claude-desktop", one, env=env, platform="linux")[0].action == "absent"
    assert inst.uninstall("claude-desktop", two, env=env, platform="linux")[0].action == "removed"
    assert not path.exists()  # install created it: the last uninstall deletes it (issue 24)


def test_foreign_server_called_code_trajectory_is_never_touched(
        setup: tuple[dict[str, str], Path, Path, Path]) -> None:
    env, one, _two, path = setup
    path.parent.mkdir(parents=True)
    foreign = {"command": "docker", "args": ["run", "code-trajectory"]}
    path.write_text(json.dumps({"mcpServers": {"code-trajectory": foreign}}, indent=2) + "\n")
    changes = inst.install("claude-desktop", one, exe=EXE, env=env, platform="linux")
    assert changes[0].what == 'server "code-trajectory-web"'
    assert json.loads(path.read_text())["mcpServers"]["code-trajectory"] == foreign
    inst.uninstall("claude-desktop", one, env=env, platform="linux")
    assert json.loads(path.read_text())["mcpServers"] == {"code-trajectory": foreign}


def test_entry_of_another_project_is_not_removed(setup: tuple[dict[str, str], Path, Path, Path]) -> None:
    env, one, two, path = setup
    inst.install("claude-desktop", one, exe=EXE, env=env, platform="linux")
    raw = path.read_bytes()
    assert inst.uninstall("claude-desktop", two, env=env, platform="linux")[0].action == "absent"
    assert path.read_bytes() == raw


def test_render_says_to_restart_and_how_to_undo(setup: tuple[dict[str, str], Path, Path, Path]) -> None:
    env, one, _two, path = setup
    text = inst.render(inst.install("claude-desktop", one, exe=EXE, env=env, platform="linux"))
    assert f"created in {path}" in text
    assert "restart Claude Desktop" in text
    assert f"to undo: code-trajectory uninstall claude-desktop --project {one}" in text
