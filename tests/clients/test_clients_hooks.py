"""Claude Code hooks merged into .claude/settings.json, kept idempotent, and uninstalled."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from code_trajectory.clients import hooks
from code_trajectory.clients import install as inst

EXE = "/opt/my tools/bin/code-trajectory"  # a space: the commands must be quoted


def settings(proj: Path) -> dict:
    return json.loads((proj / ".claude" / "settings.json").read_text())


def user_settings() -> dict:
    return {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write ."}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
        },
        "model": "opus",
    }


def write_settings(proj: Path, data: dict) -> Path:
    path = proj / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def test_hooks_created_with_the_documented_shape(proj: Path) -> None:
    changes = inst.install("claude-code", proj, exe=EXE, hooks=True)
    assert [(c.what, c.action) for c in changes] == [('server "code-trajectory"', "created"), ("hooks", "created")]
    data = settings(proj)
    quoted_exe, quoted_proj = shlex.quote(EXE), '"$CLAUDE_PROJECT_DIR"'  # no machine path in the shared file
    assert data == {"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "timeout": 10,
                                         "command": f"{quoted_exe} hook prompt --project {quoted_proj}"}]}],
        "PostToolUse": [{"matcher": "Edit|Write|MultiEdit|NotebookEdit",
                         "hooks": [{"type": "command", "timeout": 10,
                                    "command": f"{quoted_exe} hook edit --project {quoted_proj}"}]}],
        "Stop": [{"hooks": [{"type": "command", "timeout": 30,
                             "command": f"{quoted_exe} hook stop --project {quoted_proj}"}]}],
    }}
    # The command splits back into the exact argv a shell would run (the variable expanded by that shell).
    assert shlex.split(data["hooks"]["Stop"][0]["hooks"][0]["command"]) == [EXE, "hook", "stop", "--project",
                                                                              "$CLAUDE_PROJECT_DIR"]


def test_merged_with_users_settings_and_hooks(proj: Path) -> None:
    path = write_settings(proj, user_settings())
    changes = inst.install("claude-code", proj, exe=EXE, hooks=True)
    assert changes[1].action == "updated" and changes[1].backup is None
    data = settings(proj)
    assert list(data) == ["permissions", "hooks", "model"]
    assert data["permissions"] == {"allow": ["Bash(npm test)"]} and data["model"] == "opus"
    assert list(data["hooks"]) == ["PostToolUse", "PreToolUse", "UserPromptSubmit", "Stop"]
    post = data["hooks"]["PostToolUse"]
    assert post[0] == user_settings()["hooks"]["PostToolUse"][0]  # the user's own hook, first and intact
    assert post[1]["matcher"] == "Edit|Write|MultiEdit|NotebookEdit"
    assert data["hooks"]["PreToolUse"] == user_settings()["hooks"]["PreToolUse"]
    assert path.read_text().endswith("}\n")


def test_idempotent(proj: Path) -> None:
    write_settings(proj, user_settings())
    inst.install("claude-code", proj, exe=EXE, hooks=True)
    path = proj / ".claude" / "settings.json"
    raw, mtime = path.read_bytes(), path.stat().st_mtime_ns
    changes = inst.install("claude-code", proj, exe=EXE, hooks=True)
    assert [c.action for c in changes] == ["unchanged", "unchanged"]
    assert path.read_bytes() == raw and path.stat().st_mtime_ns == mtime


def test_new_exe_updates_hooks_in_place(proj: Path) -> None:
    write_settings(proj, user_settings())
    inst.install("claude-code", proj, exe=EXE, hooks=True)
    data = settings(proj)
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say done"}]})  # user's, after ours
    write_settings(proj, data)
    changes = inst.install("claude-code", proj, exe="/new/code-trajectory", hooks=True)
    assert changes[1].action == "updated"
    after = settings(proj)
    stop = after["hooks"]["Stop"]
    assert len(stop) == 2 and stop[1] == {"hooks": [{"type": "command", "command": "say done"}]}
    assert stop[0]["hooks"][0]["command"] == '/new/code-trajectory hook stop --project "$CLAUDE_PROJECT_DIR"'
    assert len(after["hooks"]["PostToolUse"]) == 2 and len(after["hooks"]["UserPromptSubmit"]) == 1
    assert EXE not in json.dumps(after)


def test_duplicates_of_our_hook_are_collapsed(proj: Path) -> None:
    ours = hooks.desired_group(hooks.HOOKS[2], EXE, proj)
    write_settings(proj, {"hooks": {"Stop": [ours, json.loads(json.dumps(ours))]}})
    inst.install("claude-code", proj, exe=EXE, hooks=True)
    assert settings(proj)["hooks"]["Stop"] == [ours]


def test_our_hook_inside_a_users_group_is_updated_there(proj: Path) -> None:
    old = {"type": "command", "command": "/old/code-trajectory hook edit --project /x"}
    write_settings(proj, {"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
        {"type": "command", "command": "fmt"}, old]}]}})
    inst.install("claude-code", proj, exe=EXE, hooks=True)
    post = settings(proj)["hooks"]["PostToolUse"]
    assert len(post) == 1 and post[0]["matcher"] == "Write"  # the user's matcher is not changed
    assert post[0]["hooks"][0] == {"type": "command", "command": "fmt"}
    assert post[0]["hooks"][1]["command"].startswith(shlex.quote(EXE) + " hook edit")


def test_uninstall_removes_only_our_hooks(proj: Path) -> None:
    write_settings(proj, user_settings())
    original = (proj / ".claude" / "settings.json").read_bytes()
    inst.install("claude-code", proj, exe=EXE, hooks=True)
    changes = inst.uninstall("claude-code", proj)
    assert [(c.what, c.action) for c in changes] == [('server "code-trajectory"', "removed"), ("hooks", "removed")]
    assert (proj / ".claude" / "settings.json").read_bytes() == original
    again = inst.uninstall("claude-code", proj)
    assert [c.action for c in again] == ["absent", "absent"]
    assert (proj / ".claude" / "settings.json").read_bytes() == original


def test_uninstall_keeps_a_foreign_hook_mentioning_hook_words(proj: Path) -> None:
    foreign = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo hook stop --project x"},
                                             {"type": "command", "command": "other-tool hook stop"}]}]}}
    path = write_settings(proj, foreign)
    raw = path.read_bytes()
    changes = inst.uninstall("claude-code", proj)
    assert changes[1].action == "absent" and path.read_bytes() == raw


def test_settings_hooks_of_the_wrong_type_are_backed_up(proj: Path) -> None:
    path = write_settings(proj, {"hooks": ["nope"], "model": "x"})
    changes = inst.install("claude-code", proj, exe=EXE, hooks=True)
    assert changes[1].backup is not None and json.loads(changes[1].backup.read_text()) == {"hooks": ["nope"],
                                                                                          "model": "x"}
    assert '"hooks" held a list' in changes[1].note
    data = json.loads(path.read_text())
    assert list(data) == ["hooks", "model"] and set(data["hooks"]) == {"UserPromptSubmit", "PostToolUse", "Stop"}


def test_event_of_the_wrong_type_is_backed_up(proj: Path) -> None:
    write_settings(proj, {"hooks": {"Stop": {"not": "a list"}}})
    changes = inst.install("claude-code", proj, exe=EXE, hooks=True)
    assert changes[1].backup is not None and "hooks.Stop held a dict" in changes[1].note
    assert len(settings(proj)["hooks"]["Stop"]) == 1


def test_dry_run_of_hooks_writes_nothing(proj: Path) -> None:
    path = write_settings(proj, user_settings())
    raw = path.read_bytes()
    changes = inst.install("claude-code", proj, exe=EXE, hooks=True, dry_run=True)
    assert path.read_bytes() == raw and not (proj / ".mcp.json").exists()
    assert changes[1].action == "updated" and '+    "UserPromptSubmit": [' in changes[1].diff
    uninstall = inst.uninstall("claude-code", proj, dry_run=True)
    assert [c.action for c in uninstall] == ["absent", "absent"]


def test_render_of_hooks(proj: Path) -> None:
    text = inst.render(inst.install("claude-code", proj, exe=EXE, hooks=True))
    assert f"claude-code hooks: created in {proj / '.claude' / 'settings.json'}" in text
    assert f"to undo: code-trajectory uninstall claude-code --project {shlex.quote(str(proj))}" in text
    text = inst.render(inst.uninstall("claude-code", proj))
    assert "claude-code hooks: removed from" in text and "to undo" not in text
