"""The CLI glue: argparse arguments, the two commands, and one real subprocess in a temp HOME."""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from code_trajectory.clients import commands
from code_trajectory.core.errors import InvalidArgumentError

EXE = "/opt/ct/bin/code-trajectory"


def parse(fill, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="code-trajectory install")
    fill(parser)
    return parser.parse_args(argv)


def test_arguments() -> None:
    args = parse(commands.install_arguments, ["claude-code", "--project", "/p", "--hooks", "--dry-run"])
    assert (args.client, args.project, args.hooks, args.dry_run) == ("claude-code", "/p", True, True)
    args = parse(commands.install_arguments, ["cursor"])
    assert (args.project, args.hooks, args.dry_run) == (None, False, False)
    args = parse(commands.uninstall_arguments, ["vscode", "--dry-run"])
    assert (args.client, args.dry_run) == ("vscode", True) and not hasattr(args, "hooks")
    with pytest.raises(SystemExit):
        parse(commands.uninstall_arguments, ["vscode", "--hooks"])


def test_unknown_client_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(commands.install_arguments, ["emacs"])
    assert exit_.value.code == 2
    assert "invalid choice: 'emacs'" in capsys.readouterr().err


def test_install_and_uninstall_commands(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ns = argparse.Namespace(client="cursor", project=str(proj), hooks=False, dry_run=False, exe=EXE)
    assert commands.install(ns) == 0
    out = capsys.readouterr().out
    path = proj / ".cursor" / "mcp.json"
    assert f'cursor server "code-trajectory": created in {path}' in out
    assert f"to undo: code-trajectory uninstall cursor --project {shlex.quote(str(proj))}" in out
    assert json.loads(path.read_text())["mcpServers"]["code-trajectory"]["command"] == EXE

    assert commands.install(ns) == 0
    assert "already installed" in capsys.readouterr().out

    assert commands.uninstall(argparse.Namespace(client="cursor", project=str(proj), dry_run=True)) == 0
    out = capsys.readouterr().out
    assert "would remove" in out and '-    "code-trajectory": {' in out and "dry run: nothing written" in out
    assert "code-trajectory" in path.read_text()

    assert commands.uninstall(argparse.Namespace(client="cursor", project=str(proj), dry_run=False)) == 0
    assert f'removed from {path}' in capsys.readouterr().out
    assert not path.exists() and not path.parent.exists()  # install created both: uninstall removes both


def test_install_dry_run_prints_the_diff(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ns = argparse.Namespace(client="claude-code", project=str(proj), hooks=True, dry_run=True, exe=EXE)
    assert commands.install(ns) == 0
    out = capsys.readouterr().out
    assert "--- /dev/null" in out and f"+++ {proj / '.mcp.json'}" in out
    assert f"+++ {proj / '.claude' / 'settings.json'}" in out and "hook prompt --project" in out
    assert list(proj.iterdir()) == []


def test_command_errors_are_trajectory_errors(tmp_path: Path) -> None:
    ns = argparse.Namespace(client="vscode", project=str(tmp_path / "missing"), hooks=False, dry_run=False)
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        commands.install(ns)
    ns = argparse.Namespace(client="vscode", project=str(tmp_path), hooks=True, dry_run=False)
    with pytest.raises(InvalidArgumentError, match="--hooks applies to claude-code, gemini, codex only"):
        commands.install(ns)


SCRIPT = textwrap.dedent("""
    import argparse, sys
    from code_trajectory.clients.commands import install, install_arguments, uninstall, uninstall_arguments

    def run(fill, command, argv):
        parser = argparse.ArgumentParser()
        fill(parser)
        return command(parser.parse_args(argv))

    for client in ("claude-code", "claude-desktop", "cursor", "vscode"):
        extra = ["--hooks"] if client == "claude-code" else []
        assert run(install_arguments, install, [client, *extra]) == 0
    assert run(install_arguments, install, ["claude-code", "--local", "--hooks"]) == 0
    print("=== uninstall claude-desktop")
    assert run(uninstall_arguments, uninstall, ["claude-desktop"]) == 0
""")


def real_desktop_config() -> tuple[bool, int | None]:
    """Whether the real user's Claude Desktop config (Linux location) exists, and its mtime (read only)."""
    path = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config" / "Claude" / "claude_desktop_config.json"
    try:
        return True, path.stat().st_mtime_ns
    except OSError:
        return False, None


@pytest.mark.skipif(sys.platform != "linux", reason="the subprocess locates Claude Desktop's Linux file")
def test_subprocess_writes_only_inside_temp_dirs(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "APPDATA", "CODE_TRAJECTORY_HOME")}
    env["HOME"] = str(home)
    real_before = real_desktop_config()
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=proj, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert real_desktop_config() == real_before  # the real user's file was not touched
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["home/.claude.json", "home/.local/share/code-trajectory/installs.json",
                     "proj/.claude/settings.json", "proj/.claude/settings.local.json",
                     "proj/.cursor/mcp.json", "proj/.mcp.json", "proj/.vscode/mcp.json"]
    assert not desktop.exists() and not (home / ".config").exists()  # installed, then uninstalled: gone
    for line in proc.stdout.splitlines():  # every path the commands mention is inside the temp dir
        if line.strip().startswith("warning: `code-trajectory` is not on PATH"):
            continue  # names this installation's script, to link onto PATH
        for word in line.split():
            if word.startswith("/") and not word.startswith("/dev/null"):
                assert word.startswith(str(tmp_path)), line
    assert f"to undo: code-trajectory uninstall cursor --project {proj}" in proc.stdout
    # The shared files hold no machine path.
    for shared in (".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json", ".claude/settings.json"):
        text = (proj / shared).read_text()
        assert str(tmp_path) not in text and '"code-trajectory"' in text.replace('"code-trajectory ', '"code-trajectory"')
    # The local scope's entry runs this installation: its command is an absolute path that starts this version.
    entry = json.loads((home / ".claude.json").read_text())["projects"][str(proj.resolve())]["mcpServers"][
        "code-trajectory"]
    assert entry["args"] == ["serve", "--project", str(proj.resolve())]
    assert os.path.isabs(entry["command"])
    assert entry["command"] in (proj / ".claude" / "settings.local.json").read_text()
    argv = [entry["command"], "--version"] if "-m" not in entry["args"] else \
        [entry["command"], "-m", "code_trajectory", "--version"]
    version = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("code-trajectory ")
