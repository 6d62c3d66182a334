"""Gemini CLI's and Codex CLI's hooks: installed beside their MCP server (``install gemini|codex --hooks``), taken
out byte for byte, and run as each client runs them (the installed command line through a shell, the client's
documented JSON on stdin) against a real recorded project.

Payload shapes: Gemini CLI 0.61's ``docs/hooks/reference.md`` (shipped in the npm package; ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``; ``prompt`` for BeforeAgent; ``tool_name``,
``tool_input``, ``tool_response`` for AfterTool; ``prompt_response``, ``stop_hook_active`` for AfterAgent) and its
hook runner (the command text gets ``$GEMINI_PROJECT_DIR`` replaced by the shell-quoted ``cwd``, then runs in bash
in ``cwd``); Codex's ``codex-rs/hooks/schema/generated/*.command.input.schema.json`` (``session_id``, ``turn_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``model``, ``permission_mode``; ``prompt``; ``tool_name``
``apply_patch`` with the patch in ``tool_input.command``; ``stop_hook_active``, ``last_assistant_message``).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from code_trajectory.clients import install as inst
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import log
from code_trajectory.git.points import points
from code_trajectory.git.shadow import ShadowRepo
from support import git_repo, record_now, server_command, shadow_count, wait_hooks_done, write

GEMINI_SETTINGS = """{
  // the team's Gemini settings
  "general": {"vimMode": true},
  "mcpServers": {
    "docs": {"command": "npx", "args": ["-y", "docs-mcp"]}
  },
  "hooks": {
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
  }
}
"""

CODEX_CONFIG = """# my Codex settings
model = "gpt-5.5"  # the default model

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
"""

CODEX_HOOKS = """{
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}
        ]
    }
}
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed git project whose path holds a space (what the hook commands must quote)."""
    return git_repo(tmp_path / "my proj", {"app.py": "x = 1\n", "old.py": "gone soon\n"}, branch="main",
                    commit="init").resolve()


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*server_command(), *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc


def hooks_of(data: dict) -> dict[str, str]:
    """Event -> command of code-trajectory's hooks in a parsed settings object."""
    return {event: hook["command"] for event, groups in data.get("hooks", {}).items() for group in groups
            for hook in group["hooks"] if "code-trajectory" in hook["command"]}


def run_as_client(command: str, payload: object, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one installed hook command as the clients do: bash -c, in ``cwd``, the event's JSON on stdin."""
    path = os.pathsep.join([str(Path(server_command()[0]).parent), os.environ.get("PATH", "")])
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(["bash", "-c", command], input=data, capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **env, "PATH": path}, timeout=120)


def newest(root: Path) -> log.CommitRecord:
    with ShadowRepo(root) as repo:
        return log.read_log(repo, ["refs/heads/shadow/main"], limit=1)[0]


def changed_files(root: Path, commit: str) -> set[str]:
    out = subprocess.run(["git", "--git-dir", str(root / ".trajectory"), "diff-tree", "--no-commit-id", "-r",
                          "--name-only", f"{commit}~1", commit], capture_output=True, text=True, check=True).stdout
    return set(out.split())


# --- install and uninstall -------------------------------------------------------------------------------------


def test_gemini_hooks_go_beside_the_server_and_come_out_byte_for_byte(repo: Path) -> None:
    settings = repo / ".gemini" / "settings.json"
    write(repo, ".gemini/settings.json", GEMINI_SETTINGS)
    before = settings.read_bytes()
    changes = inst.install("gemini", repo, hooks=True)
    assert [(c.what, c.action) for c in changes] == [('server "code-trajectory" and hooks', "updated")]
    text = settings.read_text()
    assert "// the team's Gemini settings" in text and str(repo) not in text  # shared: no machine path
    data = json.loads("\n".join(line for line in text.splitlines() if not line.strip().startswith("//")))
    assert data["mcpServers"]["code-trajectory"] == {"command": "code-trajectory", "args": ["serve"]}
    word = "$GEMINI_PROJECT_DIR"  # Gemini CLI puts the shell-quoted directory in its place, so it stays unquoted
    assert data["hooks"]["BeforeAgent"] == [{"hooks": [{
        "type": "command", "command": f"code-trajectory hook prompt --project {word}",
        "timeout": 10000}]}]
    assert data["hooks"]["AfterTool"] == [{"matcher": "^(write_file|replace)$", "hooks": [{
        "type": "command", "command": f"code-trajectory hook edit --project {word}",
        "timeout": 10000}]}]
    assert data["hooks"]["AfterAgent"][0]["hooks"][0]["command"].startswith("code-trajectory hook stop --project")
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./guard.sh"  # the user's hook is kept
    assert inst.install("gemini", repo, hooks=True)[0].action == "unchanged"

    undone = inst.uninstall("gemini", repo)
    assert [(c.what, c.action) for c in undone] == [('server "code-trajectory" and hooks', "removed")]
    assert settings.read_bytes() == before


def test_gemini_hooks_in_a_new_file_go_with_its_directory(repo: Path) -> None:
    assert inst.install("gemini", repo, hooks=True, dry_run=True)[0].action == "created"
    assert not (repo / ".gemini").exists()  # a dry run writes nothing
    inst.install("gemini", repo, hooks=True)
    assert set(hooks_of(json.loads((repo / ".gemini" / "settings.json").read_text()))) == {
        "BeforeAgent", "AfterTool", "AfterAgent"}
    assert [c.action for c in inst.uninstall("gemini", repo)] == ["removed"]
    assert not (repo / ".gemini").exists()


def test_codex_server_and_hooks_in_the_project_then_gone(repo: Path) -> None:
    changes = inst.install("codex", repo, hooks=True)
    assert [(c.what, c.path, c.action) for c in changes] == [
        ('server "code-trajectory"', repo / ".codex" / "config.toml", "created"),
        ("hooks", repo / ".codex" / "hooks.json", "created")]
    config = (repo / ".codex" / "config.toml").read_text()
    assert config == '[mcp_servers.code-trajectory]\ncommand = "code-trajectory"\nargs = ["serve"]\n'
    data = json.loads((repo / ".codex" / "hooks.json").read_text())
    assert str(repo) not in json.dumps(data)  # the project's files: no machine path (. is where Codex runs it)
    assert data == {"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "code-trajectory hook prompt --project .",
                                         "timeout": 10}]}],
        "PostToolUse": [{"matcher": "apply_patch", "hooks": [{
            "type": "command", "command": "code-trajectory hook edit --project .", "timeout": 10}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "code-trajectory hook stop --project .",
                             "timeout": 30}]}]}}
    assert [c.action for c in inst.install("codex", repo, hooks=True)] == ["unchanged", "unchanged"]
    assert [c.action for c in inst.uninstall("codex", repo)] == ["removed", "removed"]
    assert not (repo / ".codex").exists()


def test_codex_local_is_the_users_file_and_takes_no_hooks(repo: Path, isolated_env: Path) -> None:
    config = write(isolated_env, ".codex/config.toml", CODEX_CONFIG)
    before = config.read_bytes()
    [change] = inst.install("codex", repo, local=True)
    assert change.path == config and change.local and "# the default model" in config.read_text()
    assert f'"{repo}"' in config.read_text() and not (repo / ".codex").exists()  # per-user: this machine's paths
    with pytest.raises(InvalidArgumentError, match="keeps hooks only in the project's shared .codex/hooks.json"):
        inst.install("codex", repo, local=True, hooks=True)
    assert [c.action for c in inst.uninstall("codex", repo, local=True)] == ["removed"]
    assert config.read_bytes() == before


def test_codex_hooks_merged_into_the_teams_hooks_file_and_given_back(repo: Path) -> None:
    hooks_file = write(repo, ".codex/hooks.json", CODEX_HOOKS)
    before = hooks_file.read_bytes()
    inst.install("codex", repo, hooks=True)
    data = json.loads(hooks_file.read_text())
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "./guard.sh"
    assert set(hooks_of(data)) == {"UserPromptSubmit", "PostToolUse", "Stop"}
    inst.uninstall("codex", repo)
    assert hooks_file.read_bytes() == before


def test_install_hooks_through_the_cli_says_what_it_wrote(repo: Path) -> None:
    out = cli("install", "codex", "--hooks", "--project", str(repo)).stdout
    assert f"codex hooks: created in {repo / '.codex' / 'hooks.json'}" in out
    assert "to undo: code-trajectory uninstall codex" in out
    out = cli("uninstall", "codex", "--project", str(repo)).stdout
    assert "codex hooks: removed from" in out


@pytest.mark.parametrize("client", ["gemini", "codex"])
def test_hook_set_up_in_a_recorded_project_is_recorded_as_set_up(client: str, repo: Path) -> None:
    """install --hooks and uninstall write project files: each is snapshotted at once as set-up (no intent), never
    left for a running recorder to take as the agent's work."""
    record_now(repo)
    done = subprocess.run([*server_command(), "hook", "prompt", "--project", str(repo)], capture_output=True,
                          input=json.dumps({"prompt": "Agent work"}), text=True, timeout=60)
    assert done.returncode == 0
    shared = {".gemini/settings.json"} if client == "gemini" else {".codex/config.toml", ".codex/hooks.json"}
    for what, run in (("install", inst.install), ("uninstall", inst.uninstall)):
        before = shadow_count(repo)
        run(client, repo, **({"hooks": True} if what == "install" else {}))
        assert shadow_count(repo) == before + 1
        record = newest(repo)
        assert record.origin == {"client": "code-trajectory", "tool": f"{what} {client}"} and record.intent is None
        assert changed_files(repo, "refs/heads/shadow/main") == shared


# --- the hooks as the clients run them --------------------------------------------------------------------------


def gemini_command(command: str, cwd: Path) -> str:
    """What Gemini CLI's hook runner makes of the command text: ``$GEMINI_PROJECT_DIR`` replaced by the
    shell-quoted ``cwd`` (its ``expandCommand``, with shell-quote's ``quote``, which quotes as shlex does here)."""
    return command.replace("$GEMINI_PROJECT_DIR", shlex.quote(str(cwd)))


def test_gemini_hooks_as_gemini_runs_them(repo: Path, tmp_path: Path) -> None:
    cli("install", "gemini", "--hooks", "--project", str(repo))
    hooks = hooks_of(json.loads((repo / ".gemini" / "settings.json").read_text()))
    record_now(repo)  # the server Gemini CLI starts at launch records the project before the first prompt
    cwd = repo  # Gemini CLI started in the project: its hooks' cwd and GEMINI_PROJECT_DIR
    env = {"GEMINI_PROJECT_DIR": str(cwd), "GEMINI_CWD": str(cwd), "GEMINI_SESSION_ID": "g-1",
           "CLAUDE_PROJECT_DIR": str(cwd)}
    base = {"session_id": "g-1", "transcript_path": str(tmp_path / "chat.json"), "cwd": str(cwd),
            "timestamp": "2026-11-25T17:40:00.000Z"}

    def run(event: str, payload: object) -> subprocess.CompletedProcess[str]:
        done = run_as_client(gemini_command(hooks[event], cwd), payload, cwd, env)
        assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)  # stdout is Gemini's JSON
        return done

    run("BeforeAgent", {**base, "hook_event_name": "BeforeAgent",
                        "prompt": "Make x two\nand keep the token ghp_" + "a" * 36 + " out"})
    assert json.loads((repo / ".trajectory" / "state" / "intent.json").read_text())["intent"] == "Make x two"

    write(repo, "app.py", "x = 2\n")
    before = shadow_count(repo)
    run("AfterTool", {**base, "hook_event_name": "AfterTool", "tool_name": "replace",
                      "tool_input": {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2",
                                     "instruction": "make x two"},
                      "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": "ok"}})
    wait_hooks_done(repo)  # nothing records the project: a worker the hook started takes the snapshot
    assert shadow_count(repo) == before + 1
    record = newest(repo)
    assert record.origin == {"client": "gemini", "tool": "replace", "session": "g-1"}
    assert record.intent == "Make x two"
    assert changed_files(repo, "refs/heads/shadow/main") == {"app.py"}

    write(repo, "notes/plan.md", "# plan\n")
    run("AfterTool", {**base, "hook_event_name": "AfterTool", "tool_name": "write_file",
                      "tool_input": {"file_path": str(repo / "notes" / "plan.md"), "content": "# plan\n"},
                      "tool_response": {"llmContent": "Successfully created", "returnDisplay": "ok"}})
    wait_hooks_done(repo)
    assert newest(repo).origin == {"client": "gemini", "tool": "write_file", "session": "g-1"}

    write(repo, "shell.txt", "made by run_shell_command\n")  # no AfterTool of ours: the turn's end takes it
    run("AfterAgent", {**base, "hook_event_name": "AfterAgent", "prompt": "Make x two",
                       "prompt_response": "Done.", "stop_hook_active": False})
    with ShadowRepo(repo) as shadow:
        named = points(shadow)
    assert named and named[0].message.startswith("turn ended") and named[0].message.endswith(": Make x two")
    history = cli("file", "app.py", "--project", str(repo)).stdout
    assert "edited by gemini (replace)" in history


def test_codex_hooks_as_codex_runs_them(repo: Path, tmp_path: Path) -> None:
    cli("install", "codex", "--hooks", "--project", str(repo))
    hooks = hooks_of(json.loads((repo / ".codex" / "hooks.json").read_text()))
    record_now(repo)  # recorded before the turn (the server Codex starts does it), so each snapshot has a parent
    sub = repo / "pkg"
    sub.mkdir()
    base = {"session_id": "c-7", "turn_id": "t-1", "transcript_path": None, "cwd": str(sub),
            "model": "gpt-5.5", "permission_mode": "default"}

    def run(payload: object) -> subprocess.CompletedProcess[str]:
        done = run_as_client(hooks[payload["hook_event_name"]] if isinstance(payload, dict) else hooks["Stop"],
                             payload, sub, {})
        assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)  # empty stdout: no decision
        return done

    run({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Split the app, password: hunter2"})
    assert json.loads((repo / ".trajectory" / "state" / "intent.json").read_text())["intent"] == \
        "Split the app, [redacted]"

    # what apply_patch did on disk, then its PostToolUse: paths are the session cwd's, some outside the project
    write(repo, "pkg/new.py", "y = 1\n")
    write(repo, "app.py", "x = 3\n")
    (repo / "old.py").unlink()
    write(repo, "pkg/moved.py", "z = 1\n")
    patch = ("*** Begin Patch\n*** Add File: new.py\n+y = 1\n*** Update File: ../app.py\n@@\n-x = 1\n+x = 3\n"
             f"*** Delete File: {repo / 'old.py'}\n*** Update File: gone.py\n*** Move to: moved.py\n@@\n z = 1\n"
             f"*** Add File: ../../outside.py\n+no\n*** Update File: /etc/passwd\n*** End Patch\n")
    before = shadow_count(repo)
    run({**base, "hook_event_name": "PostToolUse", "tool_name": "apply_patch", "tool_use_id": "call_1",
         "tool_input": {"command": patch}, "tool_response": "Success. Updated the following files: ..."})
    wait_hooks_done(repo)
    assert shadow_count(repo) == before + 1
    record = newest(repo)
    assert record.origin == {"client": "codex", "tool": "apply_patch", "session": "c-7"}
    assert changed_files(repo, "refs/heads/shadow/main") == {"pkg/new.py", "app.py", "old.py", "pkg/moved.py"}

    write(repo, "made-by-shell.txt", "echo > file\n")
    run({**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Split."})
    with ShadowRepo(repo) as shadow:
        named = points(shadow)
    assert named[0].message.startswith("turn ended") and "Split the app" in named[0].message


def test_untrusted_stdin_never_fails_the_agent(repo: Path, tmp_path: Path) -> None:
    """Junk, wrong types and other tools on stdin: exit 0, nothing on stdout, nothing recorded, no traceback; a
    directory that is not recorded gets no history from a hook without --project."""
    record_now(repo)
    count = shadow_count(repo)
    edit = ["hook", "edit", "--project", str(repo)]
    for payload in ("not json {", "[1, 2]", json.dumps({"tool_name": "run_shell_command", "tool_input": {}}),
                    json.dumps({"tool_name": "apply_patch", "tool_input": {"command": 42}}),
                    json.dumps({"tool_name": "write_file", "tool_input": "app.py", "cwd": 7}),
                    json.dumps({"tool_name": "replace", "tool_input": {"file_path": "a\0b"}}),
                    json.dumps({"tool_name": {"x": 1}, "tool_input": {"file_path": "app.py"}}),
                    json.dumps({"tool_name": "apply_patch", "cwd": str(repo),
                                "tool_input": {"command": "*** Update File: ../../x.py\n"}})):
        done = subprocess.run([*server_command(), *edit], input=payload, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == "" and "Traceback" not in done.stderr, done.stderr
    assert shadow_count(repo) == count
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    for event in ("prompt", "stop"):
        done = subprocess.run([*server_command(), "hook", event], capture_output=True,
                              input=json.dumps({"cwd": str(stranger), "prompt": "hi"}), text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == ""
    assert not (stranger / ".trajectory").exists()


def test_an_unknown_event_or_option_is_no_usage_error(repo: Path) -> None:
    """Exit status 2 blocks the prompt or the turn in Claude Code, Gemini CLI and Codex: a hook line from a newer
    set-up (another event, another option) is ignored with a note and exit status 0."""
    payload = json.dumps({"cwd": str(repo), "prompt": "Keep going"})
    for argv in (["hook"], ["hook", "notify", "--project", str(repo)], ["hook", "prompt", "--future", "x", "--project", str(repo)],
                 ["hook", "prompt", f"--project={repo}", "--client"], ["hook", "prompt", "--project"]):
        done = subprocess.run([*server_command(), *argv], input=payload, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == "" and "Traceback" not in done.stderr, (argv, done.stderr)
        assert done.stderr.startswith("code-trajectory hook"), done.stderr
    assert "unknown hook event 'notify'" in subprocess.run(
        [*server_command(), "hook", "notify"], input=payload, capture_output=True, text=True, timeout=60).stderr
    # the options it knows still count when an unknown one is beside them
    state = json.loads((repo / ".trajectory" / "state" / "intent.json").read_text())
    assert state["intent"] == "Keep going"
