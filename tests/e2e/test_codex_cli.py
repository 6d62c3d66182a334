"""Codex CLI itself (``codex exec`` from npm, its own code) in a project set up by ``code-trajectory install codex
--hooks``: Codex reads the project's ``.codex/config.toml``, starts our server by name (it finds the project from
its working directory, a subdirectory here), and runs the project's ``.codex/hooks.json`` around its own
``apply_patch`` and shell tools.

The CLI is found in the directory ``$CODE_TRAJECTORY_TEST_CLIS`` names (e.g. a ``node_modules/.bin``), else on
``PATH``; the test is skipped otherwise (``npm install --prefix /tmp/clis @openai/codex``; nothing is downloaded
here). Measured with Codex CLI 0.169.

No network: the model is :class:`ScriptedResponses`, a Responses API on loopback (a ``model_providers`` entry with
``wire_api = "responses"``) answering Codex's streaming ``POST /v1/responses`` with one output item per turn:
``apply_patch`` (a freeform ``custom_tool_call`` whose input is the patch: a file added beside the session's
working directory, a file updated one level up), then ``exec_command`` (a shell edit no hook sees), then the final
message. Set-up facts, as measured: ``codex exec`` starts the MCP servers of ``config.toml`` when the session
starts (ours makes its start-up import before the first answer, which waits for it); project hooks are read only in
a trusted project (``[projects."<path>"] trust_level = "trusted"``, what accepting Codex's trust prompt writes) and
run only once reviewed, which ``--dangerously-bypass-hook-trust`` stands in for; Codex runs hooks in the session's
working directory (here a subdirectory of the project), and starts MCP servers there too, with a filtered
environment: the ``code-trajectory`` on ``PATH`` is a wrapper that runs this checkout with this test's homes.
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
PATCH = "*** Begin Patch\n*** Add File: new.py\n+y = 1\n*** Update File: ../app.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
TURNS: list[dict[str, Any]] = [
    {"type": "custom_tool_call", "id": "ctc_1", "status": "completed", "call_id": "call_1", "name": "apply_patch",
     "input": PATCH},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "exec_command",
     "arguments": json.dumps({"cmd": "printf 'made by a shell command\\n' > shell.txt"})},
    {"type": "message", "role": "assistant", "id": "msg_3", "content": [{"type": "output_text", "text": "Done."}]},
]
#: The watcher's debounce in the server Codex starts: the hooks' snapshots come first (see test_claude_code.py).
WATCHER_DEBOUNCE_SECONDS = 15
SERVER_READY_SECONDS = 60
CODEX_TIMEOUT = 300


def find_codex() -> str:
    where = os.environ.get("CODE_TRAJECTORY_TEST_CLIS")
    if where and (Path(where) / "codex").is_file():
        return str(Path(where) / "codex")
    found = shutil.which("codex")
    if found is None:
        pytest.skip("the codex CLI is not installed (not in CODE_TRAJECTORY_TEST_CLIS nor on PATH): npm install "
                    "--prefix /tmp/clis @openai/codex, then run with CODE_TRAJECTORY_TEST_CLIS=/tmp/clis/node_modules/.bin")
    return found


class ScriptedResponses(LoopbackServer):
    """A Responses API on ``127.0.0.1`` (ephemeral port): the ``n``-th ``POST /v1/responses`` streams ``TURNS[n]``
    (the last one again if more are asked for) between ``response.created`` and ``response.completed``; every
    other request gets a 404. ``before_first`` runs before the first answer."""

    thread_name = "scripted-responses"

    def __init__(self, before_first: Callable[[], None]) -> None:
        self.before_first = before_first
        self.paths: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    @property
    def url(self) -> str:
        return super().url + "/v1"

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            turn = sum(1 for p in self.paths if p.endswith("/responses")) - 1
            if turn == 0:
                self.before_first()
        rid = f"resp_{turn}"
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5, "output_tokens_details": None,
                 "total_tokens": 15}
        return [{"type": "response.created", "response": {"id": rid}},
                {"type": "response.output_item.done", "item": TURNS[min(turn, len(TURNS) - 1)]},
                {"type": "response.completed", "response": {"id": rid, "usage": usage}}]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_error(404)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                model.paths.append(self.path)
                if not self.path.endswith("/responses"):
                    self.send_error(404)
                    return
                data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in model.events()).encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def test_a_codex_session_is_recorded_with_intent_patch_and_stop_checkpoint(tmp_path: Path) -> None:
    codex = find_codex()
    root = git_repo(tmp_path / "project", {"app.py": "x = 1\n", "pkg/p.txt": "p\n"}, branch="main",
                    commit="initial").resolve()
    env = {k: v for k, v in subprocess_env().items() if not k.startswith(("OPENAI_", "CODEX_"))}
    ct_home = Path(env["CODE_TRAJECTORY_HOME"])
    # `code-trajectory` on PATH runs this checkout with these homes, whatever environment Codex gives the hooks and
    # the server it starts
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "code-trajectory"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(SRC))} CODE_TRAJECTORY_HOME={shlex.quote(str(ct_home))} "
                       f"exec {shlex.quote(sys.executable)} -m code_trajectory \"$@\"\n")
    wrapper.chmod(0o755)
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    home = Path(env["HOME"])
    done = subprocess.run(["code-trajectory", "install", "codex", "--hooks", "--project", str(root)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]["PostToolUse"][0]["hooks"][0][
        "command"] == "code-trajectory hook edit --project ."
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    with (home / ".codex" / "config.toml").open("a") as config:  # accepting Codex's trust prompt for the project
        config.write(f'\n[projects."{root}"]\ntrust_level = "trusted"\n')
    ct_home.mkdir(parents=True, exist_ok=True)
    (ct_home / "config.toml").write_text(f"[trajectory]\ndebounce_seconds = {WATCHER_DEBOUNCE_SECONDS}\n")

    def ready() -> None:  # the server Codex started has made its start-up import
        deadline = time.monotonic() + SERVER_READY_SECONDS
        while time.monotonic() < deadline and not shadow(root, "for-each-ref", "refs/heads/"):
            time.sleep(0.1)

    with ScriptedResponses(ready) as model:
        provider = f'{{name = "scripted", base_url = "{model.url}", wire_api = "responses"}}'
        done = subprocess.run(
            [codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
             "-c", "model_provider=scripted", "-c", f"model_providers.scripted={provider}", "-c", 'model="gpt-5.5"',
             PROMPT],
            cwd=root / "pkg", env=env, capture_output=True, text=True, timeout=CODEX_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"codex exec exited {done.returncode}:\n{done.stderr[-3000:]}"
    output = done.stdout + done.stderr
    for event in ("UserPromptSubmit", "PostToolUse", "Stop"):
        assert f"hook: {event} Completed" in output, output[-3000:]
    assert (root / "pkg" / "new.py").read_text() == "y = 1\n" and (root / "app.py").read_text() == "x = 2\n"
    assert not (root / "pkg" / ".trajectory").exists()  # the server started in pkg/ recorded the project

    intent = json.loads((root / ".trajectory" / "state" / "intent.json").read_text())
    assert intent["intent"] == INTENT
    fields = "%H%x1f%(trailers:key=Trajectory-Kind,valueonly,separator=)%x1f" \
             "%(trailers:key=Trajectory-Origin,valueonly,separator=)%x1f" \
             "%(trailers:key=Trajectory-Intent,valueonly,separator=)%x1e"
    log = [entry.strip("\n").split("\x1f") for entry in shadow(root, "log", "--all", f"--format={fields}")
           .split("\x1e") if entry.strip("\n")]
    history = "\n".join(" | ".join(entry) for entry in log)
    patched = [commit for commit, kind, origin, why in log
               if origin == f"codex; tool=apply_patch; session={intent['session']}" and (kind, why) == ("snapshot", INTENT)]
    assert len(patched) == 1, f"the apply_patch hook made no snapshot of its own:\n{history}"
    assert shadow(root, "show", f"{patched[0]}:pkg/new.py") == "y = 1\n"
    assert shadow(root, "show", f"{patched[0]}:app.py") == "x = 2\n"
    tags = [line.partition(" ")[::2] for line in shadow(
        root, "for-each-ref", "refs/tags/", "--format=%(refname) %(contents:subject)").splitlines()]
    stops = [ref for ref, subject in tags if subject.startswith("turn ended ") and subject.endswith(f": {INTENT}")]
    assert len(stops) == 1, f"the Stop hook named no checkpoint after the intent: {tags}\n{history}"
    assert shadow(root, "show", f"{stops[0]}^{{commit}}:pkg/shell.txt") == "made by a shell command\n"
