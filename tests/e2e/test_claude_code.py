"""Claude Code itself (the CLI from npm, its own code) in a project set up by ``code-trajectory install``.

Issue 24.6: the MCP Inspector is an independent client, but it is not one an agent uses. Here the real
``claude`` binary reads the ``.mcp.json`` and ``.claude/settings.json`` that ``install claude-code --hooks``
wrote, starts our server, and runs our hooks around its own Write, Edit, NotebookEdit and Bash tools.

The CLI is found, in order:

1. ``$CLAUDE_CODE_CLI``: path of a ``claude`` executable;
2. ``.ci/node/node_modules/.bin/claude``: the pinned local install made by ``.ci/run``::

       npm install --prefix .ci/node --save-exact --prefer-offline @anthropic-ai/claude-code@2.1.332

The tests are skipped when neither exists (nothing is downloaded here).

No network: the model is :class:`ScriptedModel`, a Messages API on loopback (``ANTHROPIC_BASE_URL``) that answers
Claude Code's streaming ``POST /v1/messages?beta=true`` with a fixed sequence of tool calls, one per turn. As
measured with Claude Code 2.1.332: every main-loop request carries the tool list (``Write``, ``Edit``, ``Bash``,
``Read``...; ``NotebookEdit`` is deferred but callable), the conversation so far with one assistant message per
earlier turn, and ``"stream": true``; no other endpoint is called when non-essential traffic is disabled.
NotebookEdit, like Edit, refuses a file the session has not read, so the script reads the notebook first. Our MCP
tools are deferred too (``mcp__code-trajectory__<tool>``) and callable; what Claude Code hands the model as their
result is the tool's ``structuredContent`` (JSON), not its text content.

Set-up facts, as measured with 2.1.332 (and consistent with https://code.claude.com/docs/en/mcp):

* a project server from ``.mcp.json`` stays "Pending approval" in a folder whose trust dialog was never accepted,
  even with ``enableAllProjectMcpServers`` in ``.claude/settings.local.json``; the same key in the user's
  ``~/.claude/settings.json`` (here the test's temporary HOME) approves it;
* ``--dangerously-skip-permissions`` is refused as root, so the session allows exactly its tools with
  ``--allowedTools``;
* ``-p --output-format stream-json --verbose`` prints one JSON event per line: ``system/init`` (its ``mcp_servers``
  lists ours, "pending" while it starts), the assistant and user (tool result) messages, then ``result``.

The scripted model answers at once, where a real one takes seconds: its first answer waits until the server has
taken the project's first snapshot (its start-up import, made before any tool call: :class:`HistoryReady`), otherwise the session's first edit can land in that
import, which carries neither the prompt's intent nor the tool's origin. Likewise the server's watcher waits for
15 s of quiet (user ``config.toml``), so that each edit is snapshotted by its PostToolUse hook, never first by the
watcher (2 s by default; a hook took up to 1.5 s on a loaded machine); the Stop hook asks the server for its
checkpoint, which then holds the Bash edit the watcher has not recorded yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from support import REPO_ROOT, git, git_repo, server_command, shadow, subprocess_env, wait_for
from support.loopback import LoopbackServer

pytestmark = pytest.mark.e2e

CLAUDE_CODE_VERSION = "2.1.332"
LOCAL_CLAUDE = REPO_ROOT / ".ci" / "node" / "node_modules" / ".bin" / "claude"
#: The session's prompt: its first line is the intent the UserPromptSubmit hook records.
PROMPT = "Greet the user and bump the notebook\n\nhello.py prints the greeting; nb.ipynb sets x."
INTENT = "Greet the user and bump the notebook"
NOTEBOOK = {"cells": [{"cell_type": "code", "id": "cell-0", "metadata": {}, "source": ["x = 1"], "outputs": [],
                       "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
#: Longest wait for the server's start-up import before the first scripted answer, seconds.
SERVER_READY_SECONDS = 20.0
#: The server's watcher debounce in these tests (user config.toml), seconds: longer than any hook takes.
WATCHER_DEBOUNCE_SECONDS = 15.0
#: Longest run of one ``claude`` command, seconds (a hang detector; a session takes about 10 s).
CLAUDE_TIMEOUT = 240


def _claude() -> str | None:
    override = os.environ.get("CLAUDE_CODE_CLI")
    if override:
        return override
    if LOCAL_CLAUDE.is_file() and os.access(LOCAL_CLAUDE, os.X_OK):
        return str(LOCAL_CLAUDE)
    return None


@pytest.fixture(scope="module")
def claude() -> str:
    found = _claude()
    if found is None:
        pytest.skip("Claude Code CLI not installed: .ci/node has no claude and $CLAUDE_CODE_CLI is unset (install "
                    f"with `npm install --prefix .ci/node @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}`)")
    return found


# -- the scripted model --------------------------------------------------------------------------------------------

def _sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events in the Messages API's streaming format (``event: <type>`` and ``data: <json>``)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _stream(model: str, blocks: list[dict[str, Any]], stop_reason: str) -> list[dict[str, Any]]:
    """The streaming events of one assistant message holding ``blocks`` (text or tool_use)."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [{"type": "content_block_start", "index": index, "content_block": start},
                   {"type": "content_block_delta", "index": index, "delta": delta},
                   {"type": "content_block_stop", "index": index}]
    events += [{"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5}},
               {"type": "message_stop"}]
    return events


class ScriptedModel(LoopbackServer):
    """A Messages API on ``127.0.0.1`` (ephemeral port) answering turn ``n`` of the agent loop with ``turns[n]``.

    Args:
        turns: per turn, the content blocks of the assistant's answer (``{"type": "text", "text": ...}`` or
            ``{"type": "tool_use", "id", "name", "input"}``); the last turn is repeated if more are asked for.
            A turn with a tool_use ends with ``stop_reason: tool_use``, else ``end_turn``.
        before_first: called (in the server's thread) before the first turn is answered.

    The turn is the number of assistant messages in the request's conversation, so a retried request gets the
    same answer. A request without the Write tool (a side query) gets the text ``ok``; ``count_tokens`` gets a
    count; anything else a 404 in the API's error shape. Every request is kept in :attr:`requests`.
    """

    thread_name = "scripted-model"

    def __init__(self, turns: list[list[dict[str, Any]]], before_first: Callable[[], None] | None = None) -> None:
        self.turns = turns
        self.before_first = before_first
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._first = threading.Lock()
        super().__init__()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | list[dict[str, Any]]]:
        """The status and the message (or, for a streaming request, its events) answering ``body`` at ``path``."""
        self.requests.append((path, body))
        route = path.split("?", 1)[0]
        if route == "/v1/messages/count_tokens":
            return 200, {"input_tokens": 10}
        if route != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {route}"}}
        model = str(body.get("model") or "claude")
        if any(tool.get("name") == "Write" for tool in body.get("tools") or []):
            turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
            if turn == 0 and self.before_first is not None:
                with self._first:
                    self.before_first()
            blocks = self.turns[min(turn, len(self.turns) - 1)]
        else:
            blocks = [{"type": "text", "text": "ok"}]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        if body.get("stream"):
            return 200, _stream(model, blocks, stop)
        return 200, {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant", "model": model,
                     "content": blocks, "stop_reason": stop, "stop_sequence": None,
                     "usage": {"input_tokens": 10, "output_tokens": 5}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                status, answer = model.answer(self.path, body if isinstance(body, dict) else {})
                self._send(status, answer)

            def do_GET(self) -> None:
                self._send(*model.answer(self.path, {}))

            def _send(self, status: int, answer: dict[str, Any] | list[dict[str, Any]]) -> None:
                streaming = isinstance(answer, list)
                data = _sse(answer) if streaming else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "text/event-stream" if streaming else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def edit_session(root: Path) -> list[list[dict[str, Any]]]:
    """The scripted turns: Write hello.py, Edit it, Read then NotebookEdit nb.ipynb, ask our server for hello.py's
    trajectory (``mcp__code-trajectory__get_file_trajectory``), append to hello.py with Bash (the last tool step),
    then a final text answer. Paths are absolute, under ``root``, as Claude Code sends them."""
    hello, notebook = str(root / "hello.py"), str(root / "nb.ipynb")

    def tool(n: int, name: str, **tool_input: Any) -> list[dict[str, Any]]:
        return [{"type": "tool_use", "id": f"toolu_{n:02d}", "name": name, "input": tool_input}]

    return [tool(1, "Write", file_path=hello, content="print('hi')\n"),
            tool(2, "Edit", file_path=hello, old_string="'hi'", new_string="'hello'"),
            tool(3, "Read", file_path=notebook),
            tool(4, "NotebookEdit", notebook_path=notebook, cell_id="cell-0", new_source="x = 2",
                 edit_mode="replace"),
            tool(5, "mcp__code-trajectory__get_file_trajectory", filepath="hello.py", depth=5),
            tool(6, "Bash", command="echo x >> hello.py", description="Append a line to hello.py"),
            [{"type": "text", "text": "Done."}]]


# -- running Claude Code --------------------------------------------------------------------------------------------

def claude_env(model_url: str = "http://127.0.0.1:9") -> dict[str, str]:
    """This test's environment for ``claude``: the isolated homes (conftest's isolated_env), our ``src`` first on PYTHONPATH (the
    hooks and the server it starts run this checkout), the scripted model, a dummy key, no traffic beyond the model;
    no inherited Anthropic or Claude Code setting; this installation's ``code-trajectory`` first on PATH. The user
    settings (written under the temporary HOME) approve the projects' ``.mcp.json`` servers; the user's
    ``config.toml`` sets the watcher's debounce to :data:`WATCHER_DEBOUNCE_SECONDS`."""
    env = {k: v for k, v in subprocess_env().items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "CLAUDECODE"))}
    # as for a user of the installed package: code-trajectory (and its python) on PATH, whatever set-up names them
    env["PATH"] = os.pathsep.join(filter(None, [str(Path(server_command()[0]).parent), env.get("PATH")]))
    env.update(ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY="sk-ant-test-dummy", DISABLE_TELEMETRY="1",
               DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_ERROR_REPORTING="1",
               NO_COLOR="1")
    user_settings = Path(env["HOME"]) / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True, exist_ok=True)
    user_settings.write_text(json.dumps({"enableAllProjectMcpServers": True}))
    # the hooks' snapshots come before the server's watcher's, which waits for 2 s of quiet by default: an edit hook
    # took up to 1.5 s on this loaded 2-core machine; a watcher snapshot first would leave the hook nothing to tag
    config = Path(env["CODE_TRAJECTORY_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[trajectory]\ndebounce_seconds = {WATCHER_DEBOUNCE_SECONDS}\n")
    return env


def run_claude(claude: str, cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([claude, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=CLAUDE_TIMEOUT,
                          stdin=subprocess.DEVNULL)


def run_session(claude: str, cwd: Path, ready: Callable[[], None],
                requests: list[tuple[str, dict[str, Any]]] | None = None) -> tuple[list[dict[str, Any]], float]:
    """One ``claude -p PROMPT`` session in ``cwd`` against the scripted :func:`edit_session`; ``ready`` is waited
    for before the first answer. Returns the session's stream-json events and its duration in seconds; the
    requests the scripted model received are added to ``requests`` when given."""
    with ScriptedModel(edit_session(cwd), before_first=ready) as model:
        started = time.monotonic()
        done = run_claude(claude, cwd, claude_env(model.url), "-p", PROMPT, "--output-format", "stream-json",
                          "--verbose", "--allowedTools", "Read", "Write", "Edit", "NotebookEdit", "Bash",
                          "mcp__code-trajectory__get_file_trajectory")
        seconds = time.monotonic() - started
    if requests is not None:
        requests += model.requests
    assert done.returncode == 0, f"claude -p exited {done.returncode}:\n{done.stderr[-3000:]}\n{done.stdout[-3000:]}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    result = events[-1]
    assert result["type"] == "result" and result["subtype"] == "success" and not result["is_error"], result
    assert result["result"] == "Done."
    failed = [block for event in events if event["type"] == "user"
              for block in event["message"]["content"] if isinstance(block, dict) and block.get("is_error")]
    assert not failed, f"Claude Code refused a scripted tool call: {failed}"
    return events, seconds


def tool_result(events: list[dict[str, Any]], tool_use_id: str) -> str:
    """The text of the tool result Claude Code sent back for ``tool_use_id`` (stream-json ``user`` events)."""
    for event in events:
        for block in event["message"]["content"] if event["type"] == "user" else ():
            if isinstance(block, dict) and block.get("tool_use_id") == tool_use_id:
                content = block.get("content")
                return content if isinstance(content, str) else "".join(
                    part.get("text", "") for part in content or () if isinstance(part, dict))
    raise AssertionError(f"no tool result for {tool_use_id}")


def sent_tool_results(requests: list[tuple[str, dict[str, Any]]], tool_use_id: str) -> list[Any]:
    """The ``content`` of every ``tool_result`` block for ``tool_use_id`` in the conversations of ``requests`` (the
    scripted model's), as Claude Code sent it to the model."""
    return [block.get("content") for _path, body in requests for message in body.get("messages") or []
            if isinstance(message.get("content"), list) for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id]


def set_up_project(root: Path) -> Path:
    """A git project (README, nb.ipynb, committed) with ``code-trajectory install claude-code --hooks`` run in it."""
    git_repo(root, {"README.md": "# demo\n", "nb.ipynb": json.dumps(NOTEBOOK, indent=1) + "\n"},
             branch="main", commit="initial")
    done = subprocess.run([*server_command(), "install", "claude-code", "--hooks", "--project", str(root)],
                          env=subprocess_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return root


class HistoryReady:
    """A ``ready`` callback: wait (at most :data:`SERVER_READY_SECONDS`) until ``root``'s history has a commit;
    :attr:`found` says whether it had one by then. Claude Code 2.1.332 speaks MCP 2026-07-28 (no ``initialize``,
    no ``roots/list`` the server can send): the server records its working directory's project from the first
    ``server/discover``, before any tool call, so the history exists before the model's first answer."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.found = False

    def __call__(self) -> None:
        deadline = time.monotonic() + SERVER_READY_SECONDS
        while time.monotonic() < deadline and not self.found:
            self.found = bool(shadow(self.root, "for-each-ref", "refs/heads/"))
            if not self.found:
                time.sleep(0.1)


def assert_session_recorded(root: Path, session_id: str) -> None:
    """``root``'s history holds the scripted session: the prompt's first line as intent, one snapshot per edit tool
    tagged with its ``Trajectory-Origin`` and holding that tool's result, and the Stop hook's named checkpoint
    holding the Bash edit, which no hook saw."""
    fields = "%H%x1f%(trailers:key=Trajectory-Kind,valueonly,separator=)%x1f" \
             "%(trailers:key=Trajectory-Origin,valueonly,separator=)%x1f" \
             "%(trailers:key=Trajectory-Intent,valueonly,separator=)%x1e"
    # (str.strip would take the unit separators: Python counts \x1c-\x1f as white space)
    log = [entry.strip("\n").split("\x1f") for entry in shadow(root, "log", "--all", f"--format={fields}")
           .split("\x1e") if entry.strip("\n")]
    history = "\n".join(" | ".join(entry) for entry in log)
    by_tool: dict[str, str] = {}
    for commit, kind, origin, intent in log:
        for tool in ("Write", "Edit", "NotebookEdit"):
            if origin == f"claude-code; tool={tool}; session={session_id}":
                assert tool not in by_tool, f"two {tool} snapshots:\n{history}"
                assert (kind, intent) == ("snapshot", INTENT), history
                by_tool[tool] = commit
    assert set(by_tool) == {"Write", "Edit", "NotebookEdit"}, f"an edit has no snapshot of its own:\n{history}"
    assert shadow(root, "show", f"{by_tool['Write']}:hello.py") == "print('hi')\n"
    assert shadow(root, "show", f"{by_tool['Edit']}:hello.py") == "print('hello')\n"
    cells = json.loads(shadow(root, "show", f"{by_tool['NotebookEdit']}:nb.ipynb"))["cells"]
    assert "".join(cells[0]["source"]) == "x = 2"

    tags = [line.partition(" ")[::2] for line in shadow(
        root, "for-each-ref", "refs/tags/", "--format=%(refname) %(contents:subject)").splitlines()]
    stops = [ref for ref, subject in tags if subject.startswith("turn ended ") and subject.endswith(f": {INTENT}")]
    assert len(stops) == 1, f"the Stop hook named no checkpoint after the intent: {tags}\n{history}"
    assert shadow(root, "show", f"{stops[0]}^{{commit}}:hello.py") == "print('hello')\nx\n"
    assert (root / "hello.py").read_text() == "print('hello')\nx\n"


# -- the tests ------------------------------------------------------------------------------------------------------

def test_claude_mcp_list_shows_the_installed_server_connected(claude: str, tmp_path: Path) -> None:
    project = set_up_project(tmp_path / "project")
    done = run_claude(claude, project, claude_env(), "mcp", "list")
    assert done.returncode == 0, done.stderr[-3000:]
    ours = [line for line in done.stdout.splitlines() if line.startswith("code-trajectory:")]
    assert len(ours) == 1, done.stdout
    assert "serve" in ours[0] and ours[0].endswith("Connected"), done.stdout  # the command line is install's


def test_claude_code_is_answered_from_the_answers_kept_by_the_last_start(claude: str, tmp_path: Path) -> None:
    """Claude Code 2.1.332 sends the same ``server/discover`` and ``subscriptions/listen`` every time: a start keeps
    the SDK's answers to them (:mod:`code_trajectory.early_answer`), and the next start answers them from those
    before importing the SDK. The kept opening answer is marked between the starts; the second start, a ``claude
    -p`` session whose model waits until the SDK has answered too, finds it by the same key: one opening entry,
    holding the SDK's answer again (a different key would have added a second one beside the marked)."""
    project = set_up_project(tmp_path / "project")
    env = claude_env()
    kept = Path(env["CODE_TRAJECTORY_HOME"]) / "cache" / "opening-answers.json"
    done = run_claude(claude, project, env, "mcp", "list")
    assert done.returncode == 0 and next(line for line in done.stdout.splitlines()
                                         if line.startswith("code-trajectory:")).endswith("Connected"), done.stdout

    def openings() -> tuple[dict[str, Any], list[str]]:
        answers = json.loads(kept.read_text())["answers"]
        return answers, [entry["result"]["instructions"] for entry in answers.values()
                         if "instructions" in entry["result"]]

    answers, found = openings()
    assert len(found) == 1 and found[0].startswith("code-trajectory records"), answers
    assert any("notifications" in entry["result"] for entry in answers.values()), answers  # the listen's
    for entry in answers.values():
        if "instructions" in entry["result"]:
            entry["result"]["instructions"] = "marked instructions"
    kept.write_text(json.dumps({"answers": answers}))

    def sdk_answered() -> None:
        wait_for(lambda: "marked instructions" not in openings()[1], timeout=60)

    with ScriptedModel([[{"type": "text", "text": "Done."}]], before_first=sdk_answered) as model:
        done = run_claude(claude, project, claude_env(model.url), "-p", "hello", "--output-format", "stream-json",
                          "--verbose")
    assert done.returncode == 0, done.stderr[-3000:]
    answers, found = openings()
    assert len(found) == 1 and found[0].startswith("code-trajectory records"), answers


def test_a_claude_session_is_recorded_with_intent_tools_and_stop_checkpoint(claude: str, tmp_path: Path) -> None:
    project = set_up_project(tmp_path / "project")
    ready = HistoryReady(project)
    requests: list[tuple[str, dict[str, Any]]] = []
    events, seconds = run_session(claude, project, ready, requests)
    assert ready.found, "the server recorded nothing before the model's first answer (no tool called yet)"
    init = events[0]
    assert init["type"] == "system" and init["subtype"] == "init", init
    assert {"name": "code-trajectory", "source": "project"}.items() <= next(
        s for s in init["mcp_servers"] if s["name"] == "code-trajectory").items(), init["mcp_servers"]
    assert_session_recorded(project, init["session_id"])
    # Claude Code called our tool through the server it started and the answer shows the hooks' snapshots. As
    # measured with 2.1.332, what reaches the model is the tool's structuredContent (JSON), not its text content
    answer = json.loads(tool_result(events, "toolu_05"))
    assert answer["path"] == "hello.py", answer
    intent = None  # a version's intent is given where it changed, as the text says it
    tools_and_intents = []
    for version in answer["versions"]:
        intent = version.get("intent", intent)
        tools_and_intents.append((version["origin"], intent))  # who edited, as the heading says it
    assert tools_and_intents == [("Claude Code (Write)", INTENT), ("Claude Code (Edit)", INTENT)]
    # the request body the model endpoint receives: the structured content alone, compact JSON as one string; our
    # markdown text is not sent beside it, so the model never reads the same facts twice
    sent = sent_tool_results(requests, "toolu_05")
    assert sent and all(content == sent[0] for content in sent), sent
    assert isinstance(sent[0], str) and json.loads(sent[0]) == answer, sent[0]
    assert sent[0] == json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
    assert "# Trajectory of" not in json.dumps(requests), "the tool's text content reached the model"
    print(f"claude -p session: {seconds:.1f} s")


def test_a_session_in_a_git_worktree_records_into_the_worktree(claude: str, tmp_path: Path) -> None:
    project = set_up_project(tmp_path / "project")
    git(project, "add", ".mcp.json", ".claude/settings.json")
    git(project, "commit", "-q", "-m", "code-trajectory set-up")
    done = subprocess.run([*server_command(), "checkpoint", "--project", str(project), "-m", "before the worktree"],
                          env=subprocess_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    original = shadow(project, "for-each-ref")
    assert original, "the original checkout has a history before the worktree session"
    worktree = tmp_path / "wt"
    git(project, "worktree", "add", "-q", "-b", "feature", str(worktree))

    ready = HistoryReady(worktree)
    events, seconds = run_session(claude, worktree, ready)
    assert ready.found, "the server recorded nothing in the worktree before the model's first answer"
    assert_session_recorded(worktree, events[0]["session_id"])
    assert shadow(project, "for-each-ref") == original, "the worktree's session wrote into the original's history"
    print(f"claude -p session in a worktree: {seconds:.1f} s")
