"""Issue 16: Claude Code's hooks, installed with ``install claude-code --hooks`` and run as Claude Code runs them
(the installed command line, the documented JSON on stdin); the intent they set reaches a running server."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from code_trajectory.clients.hook_events import intent_from_prompt
from code_trajectory.git import log
from code_trajectory.git.points import points
from code_trajectory.git.shadow import ShadowRepo
from support import git, mcp_client, server_command, shadow, shadow_count, wait_for, wait_hooks_done, write


def install_hooks(project: Path) -> dict[str, str]:
    """Install the server and hooks for Claude Code with this installation's executable; the hook command lines."""
    exe = server_command()
    proc = subprocess.run([*exe, "install", "claude-code", "--hooks", "--project", str(project)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    commands = {}
    for event, groups in settings["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                commands[event] = hook["command"]
    assert set(commands) == {"UserPromptSubmit", "PostToolUse", "Stop"}
    return commands


def hook_env(project: Path) -> dict[str, str]:
    """The environment Claude Code runs a hook in: ``CLAUDE_PROJECT_DIR`` set, ``code-trajectory`` on ``PATH``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PATH"] = os.pathsep.join([str(Path(server_command()[0]).parent), env.get("PATH", "")])
    env["CLAUDE_PROJECT_DIR"] = str(project)
    return env


def run_hook(command: str, payload: object, cwd: Path, project: Path | None = None) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    env = hook_env(project or cwd)
    return subprocess.run(command, shell=True, input=data, capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


def newest(root: Path) -> log.CommitRecord:
    with ShadowRepo(root) as repo:
        return log.read_log(repo, ["refs/heads/shadow/main"], limit=1)[0]


def test_intent_from_prompt() -> None:
    assert intent_from_prompt("deploy with API_KEY=sk-abc123 and password: 'hunter2'") == \
        "deploy with [redacted] and [redacted]"
    assert intent_from_prompt("\n\n  Fix the login bug\nand more") == "Fix the login bug"
    assert len(intent_from_prompt("x" * 500)) == 200
    assert intent_from_prompt("   \n ") is None


def test_hooks_as_claude_code_runs_them(project: Path, tmp_path: Path) -> None:
    hooks = install_hooks(project)
    session = {"session_id": "abc123", "cwd": str(project), "transcript_path": str(tmp_path / "t.jsonl")}
    done = run_hook(hooks["UserPromptSubmit"], {**session, "hook_event_name": "UserPromptSubmit",
                                                 "prompt": "Make main return 2, token=ghp_" + "x" * 36}, project)
    assert done.returncode == 0 and done.stderr == ""
    state = json.loads((project / ".trajectory" / "state" / "intent.json").read_text())
    assert state["intent"] == "Make main return 2, [redacted]"

    write(project, "src/app.py", "def main():\n    return 2\n")
    edit = {**session, "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(project / "src" / "app.py"), "old_string": "return 1",
                           "new_string": "return 2"},
            # as Claude Code 2.1.332 answers its Edit tool (a transcript's toolUseResult)
            "tool_response": {"filePath": str(project / "src" / "app.py"), "oldString": "return 1",
                              "newString": "return 2", "originalFile": "def main():\n    return 1\n",
                              "structuredPatch": [], "userModified": False, "replaceAll": False}}
    assert shadow_count(project) == 0  # the prompt hook made the shadow repository, nothing is recorded yet
    assert run_hook(hooks["PostToolUse"], edit, project).returncode == 0
    wait_hooks_done(project)  # nothing records the project: a worker the hook started takes the snapshot
    # the project imported first, the file as before the edit (the tool's originalFile), then the edit on top
    assert shadow_count(project) == 2
    assert shadow(project, "show", "refs/heads/shadow/main~1:src/app.py") == "def main():\n    return 1\n"
    record = newest(project)
    assert record.origin == {"client": "claude-code", "tool": "Edit", "session": "abc123"}
    assert record.intent == "Make main return 2, [redacted]"

    # an edit outside the project, junk on stdin, a tool that is no edit: exit 0, nothing recorded, a note at most
    outside = {**edit, "tool_input": {"file_path": str(tmp_path / "elsewhere.py")}}
    count = shadow_count(project)
    for payload in (outside, "not json {", [1, 2], {**edit, "tool_name": "Bash", "tool_input": {"command": "ls"}}):
        result = run_hook(hooks["PostToolUse"], payload, project)
        assert result.returncode == 0 and "Traceback" not in result.stderr
    assert shadow_count(project) == count

    # a shell command's change between hooks, then the turn ends: recorded, and a named point
    write(project, "README.md", "made by a shell command\n")
    assert run_hook(hooks["Stop"], {**session, "hook_event_name": "Stop", "stop_hook_active": False},
                    project).returncode == 0
    with ShadowRepo(project) as repo:
        named = points(repo)
    assert named and named[0].message.startswith("turn ended") and "Make main return 2" in named[0].message
    history = subprocess.run([*server_command(), "file", "src/app.py", "--project", str(project)],
                             capture_output=True, text=True, timeout=60).stdout
    assert "edited by Claude Code (Edit)" in history
    assert git(project, "status", "--porcelain", "--untracked-files=all") == \
        " M src/app.py\n?? .claude/settings.json\n?? .mcp.json\n?? README.md\n"


@pytest.mark.anyio
async def test_the_intent_a_hook_sets_appears_on_the_next_snapshot_of_a_running_server(project: Path) -> None:
    hooks = install_hooks(project)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    command = server_command()
    params = StdioServerParameters(command=command[0], env=env,
                                   args=[*command[1:], "serve", "--project", str(project), "--debounce", "0.3"])
    async with Client(params) as client:
        await client.call_tool("get_session_summary", {})  # the server is up and recording
        assert run_hook(hooks["UserPromptSubmit"], {"session_id": "s", "cwd": str(project),
                                                    "prompt": "Rename main to start"}, project).returncode == 0
        count = shadow_count(project)
        write(project, "src/app.py", "def start():\n    return 1\n")  # saved by hand: the watcher records it
        wait_for(lambda: shadow_count(project) > count, timeout=30)
        summary = (await client.call_tool("get_session_summary", {})).content[0].text
        assert "Rename main to start" in summary
    record = newest(project)
    assert record.intent == "Rename main to start" and record.origin is None


@pytest.mark.anyio
async def test_resources_and_prompts_through_the_sdk_client(project: Path) -> None:
    async with mcp_client(project) as client:
        await client.call_tool("set_goal", {"goal": "Ship the hooks"})
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"trajectory://session", "trajectory://recap"} <= resources
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert "trajectory://file/{+path}" in templates
        session = await client.read_resource("trajectory://session")
        assert "# Session summary" in session.contents[0].text
        recap = await client.read_resource("trajectory://recap")
        assert "Ship the hooks" in recap.contents[0].text
        file = await client.read_resource("trajectory://file/src/app.py")
        assert "# Trajectory of `src/app.py`" in file.contents[0].text
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert {"catch-up", "explain-file"} <= prompts
        explain = await client.get_prompt("explain-file", {"path": "src/app.py"})
        assert "get_file_trajectory" in explain.messages[0].content.text


def hook_cli(event: str, payload: object, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``code-trajectory hook <event> [extra]`` with ``payload`` as JSON on stdin, run from ``cwd``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([*server_command(), "hook", event, *extra], input=json.dumps(payload), capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def test_hooks_without_project_never_create_a_history(project: Path, tmp_path: Path) -> None:
    """Issue 21, part 7: stdin's cwd is trusted only to find a project that is already recorded."""
    stranger = tmp_path / "never-recorded"
    (stranger / "sub").mkdir(parents=True)
    for event, extra in (("prompt", {"prompt": "Fix it"}), ("stop", {}),
                         ("edit", {"tool_name": "Write", "tool_input": {"file_path": str(stranger / "a.py")}})):
        done = hook_cli(event, {"session_id": "s", "cwd": str(stranger / "sub"), **extra}, tmp_path)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    assert not any(p.name == ".trajectory" for p in tmp_path.rglob(".trajectory"))
    # git projects are no exception: the project fixture has .git but no .trajectory yet
    assert hook_cli("prompt", {"cwd": str(project / "src"), "prompt": "Fix it"}, tmp_path).returncode == 0
    assert not (project / ".trajectory").exists()
    # once recorded (an explicit --project), a cwd anywhere inside it finds it
    assert hook_cli("prompt", {"prompt": "Start"}, tmp_path, "--project", str(project)).returncode == 0
    assert hook_cli("prompt", {"cwd": str(project / "src"), "prompt": "Go on, pwd=s3cr3t"}, tmp_path).stderr == ""
    state = json.loads((project / ".trajectory" / "state" / "intent.json").read_text())
    assert state["intent"] == "Go on, [redacted]"
    bad = hook_cli("prompt", {"cwd": 12, "prompt": "x"}, tmp_path)
    assert bad.returncode == 0 and "cwd" in bad.stderr and "Traceback" not in bad.stderr


def test_hooks_write_nothing_into_a_trajectory_the_projects_git_tracks(project: Path, tmp_path: Path) -> None:
    """A cloned repository holding a tracked ``.trajectory/`` (HEAD and a state directory): every opening refuses it,
    but the prompt hook's fast path wrote the user's prompt into its state (an untracked file the next ``git add -A``
    commits and pushes), and the edit hook's hand-over a copy of the edited file. Both now write there only when the
    last vetting still holds."""
    write(project, ".trajectory/HEAD", "ref: refs/heads/shadow/main\n")
    write(project, ".trajectory/state/requests/.keep", "")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a history that came with the clone")
    write(project, "notes.md", "private notes\n")
    prompt = hook_cli("prompt", {"cwd": str(project / "src"), "prompt": "Plan the ACME merger (confidential)"}, tmp_path)
    edit = hook_cli("edit", {"cwd": str(project), "session_id": "s", "tool_name": "Write",
                             "tool_input": {"file_path": str(project / "notes.md")}}, tmp_path)
    for done in (prompt, edit):
        assert done.returncode == 0 and "tracked by the project's git" in done.stderr, done.stderr
    state = project / ".trajectory" / "state"
    assert {p.name for p in state.rglob("*")} == {"requests", ".keep"}  # no intent.json, no hand-over


@pytest.mark.parametrize("prompt", [
    "Push it: github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
    "Call it with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX3NlY3JldA",
    "Use glpat-x1Y2z3x1Y2z3x1Y2z3x1Y2z3 and npm_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 and hf_aBcDaBcDaBcDaBcDaBcDaBcDaBcDaBcD",
    "Maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q, the password is hunter2xyz, pwd=s3cr3tpw, passphrase: open sesame",
])
def test_hook_prompt_stores_no_secret(project: Path, tmp_path: Path, prompt: str) -> None:
    """Issue 21, part 4: through the CLI as Claude Code runs it; the secrets of the issue never reach the intent."""
    done = hook_cli("prompt", {"cwd": str(project), "prompt": prompt}, tmp_path, "--project", str(project))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    intent = json.loads((project / ".trajectory" / "state" / "intent.json").read_text())["intent"]
    for secret in ("github_pat_11ABC", "eyJhbGciOiJIUzI1NiJ9", "glpat-x1Y2", "npm_a1B2", "hf_aBcD", "AIzaSyA1b2",
                   "hunter2xyz", "s3cr3tpw", "open sesame"):
        assert secret not in intent, intent
    assert "[redacted]" in intent


def test_hook_prompt_of_a_megabyte_is_handled(project: Path, tmp_path: Path) -> None:
    """Issue 21, part 5: a huge prompt (16 KB of ``a-a-``… took 24.75 s) is redacted only where the intent is taken."""
    for prompt in ("a-" * (1 << 19), "password=x " * 100_000, "\n" * 100_000 + "Fix it"):
        started = time.monotonic()
        done = hook_cli("prompt", {"cwd": str(project), "prompt": prompt}, tmp_path, "--project", str(project))
        assert done.returncode == 0 and done.stderr == "" and time.monotonic() - started < 10  # hook timeout: 10 s


def test_hook_input_over_its_bound_is_refused_in_one_line_and_exits_zero(project: Path, capsys: pytest.CaptureFixture,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's stdin is untrusted: more than ``MAX_INPUT_CHARS`` is not read whole (here a bound of 1,000)."""
    from code_trajectory.clients import hook_events

    monkeypatch.setattr(hook_events, "MAX_INPUT_CHARS", 1000)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(json.dumps({"prompt": "x" * 5000})))
    assert hook_events.run("prompt", ["--project", str(project)], None) == 0
    assert capsys.readouterr().err.strip() == "code-trajectory hook prompt: skipped: the hook input is over 1,000 " \
        "characters; nothing done"
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(json.dumps({"prompt": "Fix the parser"})))
    assert hook_events.run("prompt", ["--project", str(project)], None) == 0
    assert "Fix the parser" in (project / ".trajectory" / "state" / "intent.json").read_text()
