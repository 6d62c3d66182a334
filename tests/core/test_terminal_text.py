"""Text from the data never drives the terminal, and text no commit can hold never stops recording: control
characters in file names, intents, checkpoint names and pulled messages; lone surrogates in a hook's prompt or a
planted ``intent.json``. Real CLI in subprocesses, real git in temp dirs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from code_trajectory.core.freetext import free_text
from code_trajectory.core.terminal import SAFE
from support import git, subprocess_env, write

ESCAPES = "\x1b]52;c;cHduZWQ=\x07 \x1b[2J \x9b31m"


def ct(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=root, env=subprocess_env(),
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_free_text_keeps_no_control_character_and_no_lone_surrogate() -> None:
    clean = free_text(f"fix {ESCAPES} the \ud800 login\x00")
    assert not any(ch in clean for ch in "\x1b\x07\x9b\x00\ud800") and clean.startswith("fix ")
    clean.encode("utf-8")  # a commit message can hold it


def test_the_cli_shows_control_characters_instead_of_obeying_them(project: Path) -> None:
    write(project, f"evil{ESCAPES}.txt", "x\n")
    done = ct(project, "checkpoint", "-m", f"name {ESCAPES}")
    assert done.returncode == 0, done.stderr
    shown = ct(project, "log").stdout + done.stdout
    # ESC as its control picture, or in a file name escaped as a look-alike name is (display_path: \x1b)
    assert "evil" in shown and ("\u241b]52" in shown or "\\x1b]52" in shown)
    assert not any(ch in shown for ch in "\x1b\x07\x9b")
    assert "\x1b".translate(SAFE) == "\u241b" and "\t\n\r".translate(SAFE) == "\t\n\r"


def test_a_lone_surrogate_in_an_intent_does_not_stop_recording(project: Path) -> None:
    assert ct(project, "checkpoint", "-m", "start").returncode == 0
    hook = ct(project, "hook", "prompt", "--project", str(project),
              stdin='{"prompt": "ok \\ud800 lone \\u001b[2J", "session_id": "s"}')
    assert hook.returncode == 0
    write(project, "src/app.py", "def main():\n    return 2\n")
    done = ct(project, "checkpoint", "-m", "after the prompt")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    # a planted intent.json: read as text like any other
    state = project / ".trajectory" / "state" / "intent.json"
    state.write_text(json.dumps({"intent": "planted \ud800 \u001b]0;title\u0007", "set_at": None}))
    write(project, "src/app.py", "def main():\n    return 3\n")
    done = ct(project, "checkpoint")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    subjects = git(project, "--git-dir=.trajectory", "log", "--format=%B", "-n", "2")
    assert "\x1b" not in subjects and "planted" in subjects and "ok" in subjects


def test_mcp_answers_and_errors_show_control_characters_too(project: Path) -> None:
    import anyio

    from support import mcp_client

    write(project, f"evil{ESCAPES}.txt", "x\n")

    async def ask() -> tuple[str, str, str]:
        async with mcp_client(project) as client:
            await client.call_tool("checkpoint", {"message": "start"})
            log = await client.call_tool("get_global_trajectory", {"limit": 5})
            bad = await client.call_tool("get_file_trajectory", {"filepath": f"gone{ESCAPES}.py"})
            return log.content[0].text, json.dumps(log.structured_content, ensure_ascii=False), bad.content[0].text

    text, data, error = anyio.run(ask)
    for shown in (text, data, error):
        assert ("\u241b]52" in shown or "\\x1b]52" in shown) and not any(ch in shown for ch in "\x1b\x07\x9b"), shown


def test_a_project_branch_whose_name_is_not_utf8_is_recorded_under_its_escaped_name(project: Path) -> None:
    """git takes any bytes but a few in a branch name (``git checkout -b $'feat\\xff'``); every snapshot of such a
    branch failed to encode it (nothing recorded, a traceback): it is recorded as ``feat%FF``."""
    subprocess.run([b"git", b"checkout", b"-q", b"-b", b"feat\xff"], cwd=project, check=True, env=subprocess_env())
    write(project, "src/app.py", "def main():\n    return 9\n")
    done = ct(project, "checkpoint", "-m", "on the odd branch")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    refs = git(project, "--git-dir=.trajectory", "for-each-ref", "--format=%(refname)", "refs/heads/shadow/")
    assert "refs/heads/shadow/feat%FF" in refs.split()
    shown = ct(project, "log").stdout
    assert "feat%FF" in shown and "on the odd branch" in shown
