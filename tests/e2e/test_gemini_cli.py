"""Gemini CLI itself (``gemini -p`` from npm, its own code) in a project set up by ``code-trajectory install gemini
--hooks``: Gemini CLI reads the shared ``.gemini/settings.json``, starts our server by name (it finds the project
from its working directory), and runs our hooks around its own ``write_file``, ``replace`` and shell tools.

The CLI is found in the directory ``$CODE_TRAJECTORY_TEST_CLIS`` names (e.g. a ``node_modules/.bin``), else on
``PATH``; the test is skipped otherwise (``npm install --prefix /tmp/clis @google/gemini-cli``; nothing is
downloaded here). Measured with Gemini CLI 0.61.

No network: the model is :class:`ScriptedGemini`, a Gemini API on loopback (``GOOGLE_GEMINI_BASE_URL`` with API-key
auth) answering ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` with one part per call: ``write_file``
(a new file), ``replace`` (an edit), ``run_shell_command`` (a shell edit no hook sees), then the final text; a
non-streaming ``generateContent`` (Gemini CLI's side questions) gets a short JSON answer. Set-up facts, as
measured: the folder must be trusted (``~/.gemini/trustedFolders.json``) for the project's settings to count;
Gemini CLI then warns once about the project's hooks and runs them; ``--approval-mode yolo`` approves the tools.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from support import SRC, git_repo, shadow, subprocess_env
from support.loopback import LoopbackServer

pytestmark = pytest.mark.e2e

PROMPT = "Add new.py and make x two\nthen note it with a shell command"
INTENT = "Add new.py and make x two"
#: The watcher's debounce in the server Gemini CLI starts: the hooks' snapshots come first (see test_claude_code.py).
WATCHER_DEBOUNCE_SECONDS = 15
SERVER_READY_SECONDS = 60
GEMINI_TIMEOUT = 300


def find_gemini() -> str:
    where = os.environ.get("CODE_TRAJECTORY_TEST_CLIS")
    if where and (Path(where) / "gemini").is_file():
        return str(Path(where) / "gemini")
    found = shutil.which("gemini")
    if found is None:
        pytest.skip("the gemini CLI is not installed (not in CODE_TRAJECTORY_TEST_CLIS nor on PATH): npm install "
                    "--prefix /tmp/clis @google/gemini-cli, then run with "
                    "CODE_TRAJECTORY_TEST_CLIS=/tmp/clis/node_modules/.bin")
    return found


def turns(root: Path) -> list[list[dict[str, Any]]]:
    return [
        [{"functionCall": {"name": "write_file", "args": {"file_path": str(root / "new.py"), "content": "y = 1\n"}}}],
        [{"functionCall": {"name": "replace", "args": {"file_path": str(root / "app.py"), "old_string": "x = 1",
                                                       "new_string": "x = 2", "instruction": "make x two"}}}],
        [{"functionCall": {"name": "run_shell_command",
                           "args": {"command": "printf 'made by a shell command\\n' > shell.txt",
                                    "description": "note it"}}}],
        [{"text": "Done."}],
    ]


class ScriptedGemini(LoopbackServer):
    """A Gemini API on ``127.0.0.1`` (ephemeral port): the ``n``-th streaming call gets ``script[n]`` (the last one
    again if more are asked for); ``before_first`` runs before the first answer."""

    thread_name = "scripted-gemini"

    def __init__(self, script: list[list[dict[str, Any]]], before_first: Callable[[], None]) -> None:
        self.script = script
        self.before_first = before_first
        self.streamed = 0
        self._lock = threading.Lock()
        super().__init__()

    def next_parts(self) -> list[dict[str, Any]]:
        with self._lock:
            turn, self.streamed = self.streamed, self.streamed + 1
            if turn == 0:
                self.before_first()
        return self.script[min(turn, len(self.script) - 1)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        def answer(parts: list[dict[str, Any]]) -> dict[str, Any]:
            return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_error(404)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                if ":streamGenerateContent" in self.path:
                    body, kind = f"data: {json.dumps(answer(model.next_parts()))}\n\n".encode(), "text/event-stream"
                elif ":generateContent" in self.path:  # a side question (next speaker, routing): answered in JSON
                    text = json.dumps({"reasoning": "scripted", "next_speaker": "user", "model_choice": "flash"})
                    body, kind = json.dumps(answer([{"text": text}])).encode(), "application/json"
                elif ":countTokens" in self.path:
                    body, kind = b'{"totalTokens": 10}', "application/json"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def test_a_gemini_session_is_recorded_with_intent_tools_and_turn_checkpoint(tmp_path: Path) -> None:
    gemini = find_gemini()
    root = git_repo(tmp_path / "project", {"app.py": "x = 1\n"}, branch="main", commit="initial").resolve()
    # `code-trajectory` on PATH (the shared entry and the hooks run it by name) runs this checkout
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "code-trajectory"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(SRC))} exec {shlex.quote(sys.executable)} "
                       "-m code_trajectory \"$@\"\n")
    wrapper.chmod(0o755)
    env = {k: v for k, v in subprocess_env().items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    home = Path(env["HOME"])
    done = subprocess.run(["code-trajectory", "install", "gemini", "--hooks", "--project", str(root)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(root): "TRUST_FOLDER"}))
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {
        "selectedType": "gemini-api-key"}}}))
    ct_home = Path(env["CODE_TRAJECTORY_HOME"])
    ct_home.mkdir(parents=True, exist_ok=True)
    (ct_home / "config.toml").write_text(f"[trajectory]\ndebounce_seconds = {WATCHER_DEBOUNCE_SECONDS}\n")

    def ready() -> None:  # the server Gemini CLI started has made its start-up import
        deadline = time.monotonic() + SERVER_READY_SECONDS
        while time.monotonic() < deadline and not shadow(root, "for-each-ref", "refs/heads/"):
            time.sleep(0.1)

    with ScriptedGemini(turns(root), ready) as model:
        env.update(GEMINI_API_KEY="dummy-key", GOOGLE_GEMINI_BASE_URL=model.url, NO_COLOR="1")
        done = subprocess.run([gemini, "-p", PROMPT, "--approval-mode", "yolo", "-m", "gemini-2.5-flash"], cwd=root,
                              env=env, capture_output=True, text=True, timeout=GEMINI_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"gemini -p exited {done.returncode}:\n{done.stderr[-3000:]}"
    assert done.stdout.strip().endswith("Done."), done.stdout[-2000:]
    assert "project-level hooks have been detected" in done.stderr  # Gemini CLI's own notice, then it runs them
    assert (root / "new.py").read_text() == "y = 1\n" and (root / "app.py").read_text() == "x = 2\n"

    intent = json.loads((root / ".trajectory" / "state" / "intent.json").read_text())
    assert intent["intent"] == INTENT
    fields = "%H%x1f%(trailers:key=Trajectory-Kind,valueonly,separator=)%x1f" \
             "%(trailers:key=Trajectory-Origin,valueonly,separator=)%x1f" \
             "%(trailers:key=Trajectory-Intent,valueonly,separator=)%x1e"
    log = [entry.strip("\n").split("\x1f") for entry in shadow(root, "log", "--all", f"--format={fields}")
           .split("\x1e") if entry.strip("\n")]
    history = "\n".join(" | ".join(entry) for entry in log)
    by_tool: dict[str, str] = {}
    for commit, kind, origin, why in log:
        for tool in ("write_file", "replace"):
            if origin == f"gemini; tool={tool}; session={intent['session']}":
                assert tool not in by_tool and (kind, why) == ("snapshot", INTENT), history
                by_tool[tool] = commit
    assert set(by_tool) == {"write_file", "replace"}, f"an edit has no snapshot of its own:\n{history}"
    assert shadow(root, "show", f"{by_tool['write_file']}:new.py") == "y = 1\n"
    assert shadow(root, "show", f"{by_tool['replace']}:app.py") == "x = 2\n"
    tags = [line.partition(" ")[::2] for line in shadow(
        root, "for-each-ref", "refs/tags/", "--format=%(refname) %(contents:subject)").splitlines()]
    stops = [ref for ref, subject in tags if subject.startswith("turn ended ") and subject.endswith(f": {INTENT}")]
    assert len(stops) == 1, f"the AfterAgent hook named no checkpoint after the intent: {tags}\n{history}"
    assert shadow(root, "show", f"{stops[0]}^{{commit}}:shell.txt") == "made by a shell command\n"
