"""`code-trajectory install <client> --hooks` on hand-written JSONC files: the user's bytes outside our entries stay
as they were (a comment after the last server stays with it, an inline hooks array stays on its line, a comment in a
hooks array needs no rewrite and no backup), and uninstall gives the exact bytes back, also after a later edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.clients import jsontext
from support import cli_stdout

MCP = """{
  // team servers
  "mcpServers": {
    "other": {"command": "x", "args": []} // keep this
  }
}
"""

SETTINGS = """{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PostToolUse": [ {"matcher": "Bash", "hooks": [{"type": "command", "command": "fmt"}]} ],
    "Stop": [
      // lint at the end of a turn
      {"hooks": [{"type": "command", "command": "lint"}]}
    ]
  }
}
"""

GEMINI = """{
  "mcpServers": {
    "other": {"command": "x"}, // keep this
  },
  "hooks": {
    "AfterTool": [ {"matcher": "x", "hooks": [{"type": "command", "command": "fmt"}]} ],
    "AfterAgent": [
      /* lint */ {"hooks": [{"type": "command", "command": "lint"}]}
    ]
  }
}
"""


def backups(proj: Path) -> list[Path]:
    return sorted(p for p in proj.rglob("*.bak-*"))


def test_claude_code_install_keeps_every_byte_of_the_users_jsonc(proj: Path) -> None:
    mcp, settings = proj / ".mcp.json", proj / ".claude" / "settings.json"
    settings.parent.mkdir()
    mcp.write_text(MCP)
    settings.write_text(SETTINGS)
    out = cli_stdout(proj, "install", "claude-code", "--hooks")
    assert backups(proj) == [] and "backup" not in out.lower(), out  # nothing lost, so no rewrite and no backup
    installed = mcp.read_text()
    # (a) the comment stays on the user's server's line; ours goes below it
    assert '    "other": {"command": "x", "args": []}, // keep this\n    "code-trajectory": {' in installed
    assert installed.index("// keep this") < installed.index('"code-trajectory"')
    hooks = settings.read_text()
    # (b) the inline array keeps its line: our group is appended on it
    line = next(t for t in hooks.splitlines() if '"PostToolUse"' in t)
    assert line.startswith('    "PostToolUse": [ {"matcher": "Bash", "hooks": [{"type": "command", "command": "fmt"}]}, {')
    assert line.endswith("} ],") and "hook edit" in line
    # (c) the comment in the Stop array stays, with the user's group under it, ours after
    assert '      // lint at the end of a turn\n      {"hooks": [{"type": "command", "command": "lint"}]},\n' in hooks
    assert jsontext.loads(hooks)[0]["hooks"]["Stop"][1]["hooks"][0]["command"].endswith("hook stop --project "
                                                                                         '"$CLAUDE_PROJECT_DIR"')
    cli_stdout(proj, "uninstall", "claude-code")
    assert mcp.read_text() == MCP and settings.read_text() == SETTINGS


def test_uninstall_after_a_later_edit_takes_out_exactly_what_install_put_in(proj: Path) -> None:
    """A comment added after install was lost by uninstall, with no backup: the data matched what the file held
    before install, so those saved bytes were written back over it. Now a file changed since install is edited:
    what remains is the user's file with the later edit, byte for byte."""
    mcp, settings = proj / ".mcp.json", proj / ".claude" / "settings.json"
    settings.parent.mkdir()
    mcp.write_text(MCP)
    settings.write_text(SETTINGS)
    cli_stdout(proj, "install", "claude-code", "--hooks")
    for path in (mcp, settings):
        path.write_text(path.read_text().replace("{\n", "{\n  // edited later\n", 1))
    cli_stdout(proj, "uninstall", "claude-code")
    assert mcp.read_text() == MCP.replace("{\n", "{\n  // edited later\n", 1)
    assert settings.read_text() == SETTINGS.replace("{\n", "{\n  // edited later\n", 1)
    assert backups(proj) == []


def test_gemini_install_with_hooks_in_one_jsonc_file(proj: Path) -> None:
    path = proj / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI)
    out = cli_stdout(proj, "install", "gemini", "--hooks")
    assert backups(proj) == [] and "backup" not in out.lower(), out
    text = path.read_text()
    assert '    "other": {"command": "x"}, // keep this\n    "code-trajectory": {' in text
    assert '/* lint */ {"hooks": [{"type": "command", "command": "lint"}]},\n' in text
    assert '    "AfterTool": [ {"matcher": "x", "hooks": [{"type": "command", "command": "fmt"}]}, {' in text
    assert all(line in text.splitlines() for line in GEMINI.splitlines() if "AfterTool" not in line
               and "keep this" not in line and "lint */" not in line)  # every other line of the user's is intact
    cli_stdout(proj, "uninstall", "gemini")
    assert path.read_text() == GEMINI


VSCODE_COMMENTED_OUT = """{
  // the team's servers
  "servers": {
    // "old": {"type": "stdio", "command": "old-server"}
  },
  "inputs": []
}
"""


def test_vscode_install_into_servers_holding_only_a_commented_out_server(proj: Path) -> None:
    """Reported: ``"servers"`` holding nothing but a commented-out server was rewritten whole (both comments gone
    from the committed file, a backup beside it); after another tool's edit, uninstall could not give them back."""
    mcp = proj / ".vscode" / "mcp.json"
    mcp.parent.mkdir()
    mcp.write_text(VSCODE_COMMENTED_OUT)
    out = cli_stdout(proj, "install", "vscode")
    assert backups(proj) == [] and "backup" not in out.lower(), out
    installed = mcp.read_text()
    assert installed.startswith('{\n  // the team\'s servers\n  "servers": {\n    // "old": {"type": "stdio", '
                                '"command": "old-server"}\n    "code-trajectory": {\n'), installed
    assert jsontext.loads(installed)[0]["servers"]["code-trajectory"]["command"] == "code-trajectory"
    mcp.write_text(installed.replace('"inputs": []', '"inputs": [{"id": "k"}]'))  # another tool, meanwhile
    cli_stdout(proj, "uninstall", "vscode")
    assert mcp.read_text() == VSCODE_COMMENTED_OUT.replace('"inputs": []', '"inputs": [{"id": "k"}]')
    assert backups(proj) == []


@pytest.mark.parametrize("name,rel,event", [("claude-code", ".claude/settings.json", "Stop"),
                                            ("gemini", ".gemini/settings.json", "AfterAgent")])
def test_uninstall_after_a_later_edit_keeps_the_users_empty_hook_event(name: str, rel: str, event: str,
                                                                        proj: Path) -> None:
    """Reported: the user's own empty event (``"Stop": [ // lint here later ]``) was dropped with the ``"hooks"``
    holding it when uninstall took our hook out of it, once the file had changed since install (no exact undo):
    an event is dropped only when it did not exist before install (the ledger's bytes)."""
    path = proj / rel
    path.parent.mkdir()
    original = f'{{\n  "hooks": {{\n    "{event}": [\n      // lint here later\n    ]\n  }}\n}}\n'
    path.write_text(original)
    cli_stdout(proj, "install", name, "--hooks")
    path.write_text(path.read_text().replace('{\n  "hooks"', '{\n  "model": "m",\n  "hooks"', 1))  # another tool
    cli_stdout(proj, "uninstall", name)
    # (and, for Gemini CLI, the servers' object install added to the same file goes too, not left as {})
    assert path.read_text() == original.replace('{\n  "hooks"', '{\n  "model": "m",\n  "hooks"', 1)
    assert backups(proj) == []
