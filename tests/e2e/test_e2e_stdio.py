"""End-to-end: the real ``code-trajectory serve`` process, spoken to over stdio.

Each test starts the console script from this venv as a subprocess and talks to it
with the official MCP SDK client (``mcp.Client`` over ``StdioServerParameters``),
exactly as an MCP host would. The projects are real git repositories made with real
git in ``tmp_path``; the server's per-user state, ``HOME`` and ``XDG_CONFIG_HOME``
point into ``tmp_path`` and no ``GIT_*`` variable leaks into the server.

One test skips the SDK and drives the server by hand with JSON-RPC lines on stdin,
checking that every line on stdout is JSON (logs must go to stderr).
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from support import git, git_repo, server_command, shadow

pytestmark = pytest.mark.e2e

DEBOUNCE = "0.3"
SNAPSHOT_TIMEOUT = 15.0
#: How long the history must stay unchanged after the start-up import before a test changes the project, seconds
#: (several debounces: the post-import rescan comes one debounce after the watches are set).
SETTLED_SECONDS = 1.5
TRAJECTORY_TOOLS = {"configure_project", "set_trajectory_intent", "get_file_trajectory", "get_global_trajectory",
                    "get_session_summary", "consolidate", "checkpoint"}
HEADING = re.compile(r"^## (?:\S+ )?\d\d:\d\d:\d\d · ([0-9a-f]{12}) · .*$", re.M)


# -- environment and projects ------------------------------------------------------------------------



def make_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository at ``root`` (branch ``main``) with ``files`` committed; returns its resolved path."""
    return git_repo(root, files, branch="main", commit="initial").resolve()


@pytest.fixture
def spaced_repo(tmp_path: Path) -> Path:
    """A git repository (one commit) whose name holds a space: ``<tmp>/my project``."""
    return make_repo(tmp_path / "my project", {
        "src/app.py": "def main():\n    return 1\n",
        "src/util.py": "def helper(x):\n    return x * 2\n",
        "README.md": "# demo\n",
    })


def params(env: dict[str, str], project: Path | None = None) -> StdioServerParameters:
    command = server_command()
    args = [*command[1:], "serve", "--debounce", DEBOUNCE]
    if project is not None:
        args += ["--project", str(project)]
    # started in the home directory, which is never recorded: without --project the server follows its working
    # directory (issue 24), and the test's own checkout must not be it
    return StdioServerParameters(command=command[0], args=args, env=env, cwd=env["HOME"])


# -- helpers over the client ------------------------------------------------------------------------

def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def call(client: Client, name: str, args: dict[str, Any] | None = None) -> str:
    """Call a tool that must succeed; return its text. Structured content, when there is some, carries fields,
    never a second copy of the text (issue 18.9)."""
    result = await client.call_tool(name, args or {})
    body = text(result)
    assert not result.is_error, f"{name}({args}) failed: {body}"
    structured = result.structured_content
    assert structured is None or (isinstance(structured, dict) and "result" not in structured
                                  and body not in json.dumps(structured))
    return body


async def call_error(client: Client, name: str, args: dict[str, Any] | None = None) -> str:
    """Call a tool that must answer with a tool error (isError); return its text."""
    result = await client.call_tool(name, args or {})
    body = text(result)
    assert result.is_error, f"{name}({args}) should have been a tool error, got: {body}"
    return body


def sections(global_text: str) -> list[tuple[str, str]]:
    """(short sha, section text) of each commit in a get_global_trajectory answer, oldest first."""
    marks = list(HEADING.finditer(global_text))
    return [(m.group(1), global_text[m.start():(marks[i + 1].start() if i + 1 < len(marks) else None)])
            for i, m in enumerate(marks)]


async def shas(client: Client) -> set[str]:
    """Commits recorded so far; waits for the start-up import, which `serve --project` runs in the background, and
    then until no commit came for :data:`SETTLED_SECONDS`: the rescan the watcher runs once its watches are set
    (after the import, one debounce later) must not take half of the test's next change (a rename's deletion
    without its new name, seen in CI)."""
    deadline = time.monotonic() + SNAPSHOT_TIMEOUT
    found: set[str] = set()
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        now = {sha for sha, _ in sections(await call(client, "get_global_trajectory", {"limit": 1000}))}
        if now != found:
            found, quiet_since = now, time.monotonic()
        elif found and time.monotonic() - quiet_since >= SETTLED_SECONDS:
            break
        await anyio.sleep(0.1)
    return found


async def wait_for_snapshot(client: Client, seen: set[str], *, contains: str = "") -> tuple[str, str]:
    """Poll get_global_trajectory until a commit not in ``seen`` whose section holds ``contains`` appears.

    Adds every new sha to ``seen``; returns the (sha, section) found.
    """
    deadline = time.monotonic() + SNAPSHOT_TIMEOUT
    last = ""
    while True:
        last = await call(client, "get_global_trajectory", {"limit": 1000})
        new = [(sha, body) for sha, body in sections(last) if sha not in seen]
        seen.update(sha for sha, _ in new)
        for sha, body in new:
            if contains in body:
                return sha, body
        if time.monotonic() > deadline:
            pytest.fail(f"no new snapshot containing {contains!r} within {SNAPSHOT_TIMEOUT} s; last answer:\n{last}")
        await anyio.sleep(0.15)


# -- the tests ----------------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_lists_every_tool_and_configure_is_idempotent(server_env: dict[str, str], spaced_repo: Path) -> None:
    async with Client(params(server_env, spaced_repo)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) >= TRAJECTORY_TOOLS, sorted(tools)
        for name in TRAJECTORY_TOOLS:
            assert tools[name].description, name
            assert tools[name].input_schema["type"] == "object"
        assert tools["get_file_trajectory"].input_schema["required"] == ["filepath"]
        assert tools["get_file_trajectory"].annotations.read_only_hint is True
        assert tools["consolidate"].annotations.read_only_hint is False

        again = await call(client, "configure_project", {"path": str(spaced_repo)})
        assert "Already recording" in again and str(spaced_repo) in again
        # the start-up snapshot recorded the committed files
        first = await call(client, "get_global_trajectory")
        assert "start of recording" in first and "src/app.py" in first
        # the shadow history lives in the project, and the project's own git is untouched
        assert (spaced_repo / ".trajectory").is_dir()
        assert git(spaced_repo, "rev-list", "--count", "HEAD").strip() == "1"
        assert not (spaced_repo / ".gitignore").exists()  # none was created, and none is ever edited
        assert ".trajectory" not in git(spaced_repo, "status", "--porcelain", "--untracked-files=all")


@pytest.mark.anyio
async def test_intent_is_carried_by_the_next_snapshot(server_env: dict[str, str], spaced_repo: Path) -> None:
    async with Client(params(server_env, spaced_repo)) as client:
        seen = await shas(client)
        answer = await call(client, "set_trajectory_intent", {"intent": "Refactoring the helpers"})
        assert "Refactoring the helpers" in answer

        (spaced_repo / "src" / "util.py").write_text("def helper(x):\n    return x * 3\n")
        (spaced_repo / "src" / "extra.py").write_text("VALUE = 42\n")
        _, section = await wait_for_snapshot(client, seen, contains="src/util.py")
        assert "Intent: Refactoring the helpers" in section.splitlines()[0], section  # the heading says why
        assert "modified helper" in section  # the file line names the changed symbol (issue 12); the intent is once, in the message

        # a new intent replaces the old one for the following snapshots
        await call(client, "set_trajectory_intent", {"intent": "Adding a constant"})
        (spaced_repo / "src" / "extra.py").write_text("VALUE = 43\n")
        _, section = await wait_for_snapshot(client, seen, contains="src/extra.py")
        assert "Adding a constant" in section and "Refactoring the helpers" not in section


@pytest.mark.anyio
async def test_file_trajectory_detects_a_revert(server_env: dict[str, str], spaced_repo: Path) -> None:
    target = spaced_repo / "src" / "app.py"
    version_a = "def main():\n    return 'A'\n"
    version_b = "def main():\n    value = 'B'\n    return value\n"
    async with Client(params(server_env, spaced_repo)) as client:
        seen = await shas(client)
        await call(client, "set_trajectory_intent", {"intent": "Trying an idea"})
        for content in (version_a, version_b, version_a):
            target.write_text(content)
            await wait_for_snapshot(client, seen, contains="src/app.py")

        history = await call(client, "get_file_trajectory", {"filepath": "src/app.py", "depth": 5})
        assert history.startswith("# Trajectory of `src/app.py`")
        assert "**[Revert Detected]**" in history
        # the revert mark is on the newest version (the last section), and only there
        last_section = history.rsplit("\n## ", 1)[1]
        assert "**[Revert Detected]** (Matches state from" in last_section
        assert history.count("[Revert Detected]") == 1
        assert "+    value = 'B'" in history and "-    value = 'B'" in history
        # oldest to newest
        assert history.index("## 1.") < history.index("## 2.") < history.index("## 3.")

        one = await call(client, "get_file_trajectory", {"filepath": "src/app.py", "depth": 1})
        assert one.count("\n## ") == 1 and "## 4." in one and "the last 1 of 4" in one  # versions keep their number
        # an absolute path inside the project is accepted too
        absolute = await call(client, "get_file_trajectory", {"filepath": str(target), "depth": 1})
        assert absolute.startswith("# Trajectory of `src/app.py`")


@pytest.mark.anyio
async def test_file_trajectory_follows_a_rename(server_env: dict[str, str], spaced_repo: Path) -> None:
    async with Client(params(server_env, spaced_repo)) as client:
        seen = await shas(client)
        (spaced_repo / "src" / "util.py").rename(spaced_repo / "src" / "helpers.py")
        _, section = await wait_for_snapshot(client, seen, contains="helpers.py")
        assert "util.py" in section, section

        history = await call(client, "get_file_trajectory", {"filepath": "src/helpers.py"})
        assert "renamed from `src/util.py`" in history, history
        assert "return x * 2" in history  # the content from before the rename is in the history
        (spaced_repo / "src" / "helpers.py").write_text("def helper(x):\n    return x + x\n")
        await wait_for_snapshot(client, seen, contains="helpers.py")
        history = await call(client, "get_file_trajectory", {"filepath": "src/helpers.py"})
        assert "renamed from `src/util.py`" in history and "+    return x + x" in history

        gone = await call(client, "get_file_trajectory", {"filepath": "src/nothing_here.py"})
        assert "No snapshot" in gone


@pytest.mark.anyio
async def test_session_summary_checkpoint_and_consolidate(server_env: dict[str, str], spaced_repo: Path) -> None:
    async with Client(params(server_env, spaced_repo)) as client:
        seen = await shas(client)
        await call(client, "set_trajectory_intent", {"intent": "Build the login form"})
        for n in range(3):
            (spaced_repo / "src" / "login.py").write_text(f"ATTEMPTS = {n}\n" + "x = 1\n" * n)
            await wait_for_snapshot(client, seen, contains="src/login.py")

        summary = await call(client, "get_session_summary")
        assert summary.startswith("# Session summary")
        assert "current intent: \"Build the login form\" (set " in summary  # with its age (issue 16.4)
        assert "the current session continues" in summary
        assert "src/login.py" in summary and "Build the login form" in summary

        (spaced_repo / "README.md").write_text("# demo\n\nNow with a login form.\n")
        checkpoint = await call(client, "checkpoint", {"message": "before the risky part"})
        assert "Checkpoint recorded" in checkpoint and "README.md" in checkpoint
        nothing = await call(client, "checkpoint")
        assert "Nothing changed" in nothing
        await anyio.sleep(float(DEBOUNCE) * 3)  # no late snapshot may sneak in after the checkpoint
        log = await call(client, "get_global_trajectory", {"limit": 1000})
        assert "before the risky part" in log

        # a named checkpoint is kept: right after it there is nothing to consolidate (issue 18.3)
        kept = await call(client, "consolidate", {"intent": "Implemented the login form"})
        assert "Nothing to consolidate" in kept and "checkpoint" in kept
        for n in range(2):  # the rest of the task: squashed by the next consolidate, and only that
            (spaced_repo / "src" / "login.py").write_text(f"ATTEMPTS = {n + 10}\n")
            await wait_for_snapshot(client, seen, contains="src/login.py")
        before = sections(await call(client, "get_global_trajectory", {"limit": 1000}))
        done = await call(client, "consolidate", {"intent": "Implemented the login form"})
        match = re.search(r"Consolidated (\d+) snapshot\(s\)", done)
        assert match and int(match.group(1)) == 2, done
        assert "Implemented the login form" in done and "M src/login.py" in done  # what was squashed is listed

        after = await call(client, "get_global_trajectory", {"limit": 1000})
        commits = sections(after)
        assert len(commits) == len(before) - 1 and "[CONSOLIDATE]" in commits[-1][1].splitlines()[0], after
        assert "before the risky part" in after and "start of recording" in commits[0][1].splitlines()[0]
        again = await call(client, "consolidate", {"intent": "Nothing more"})
        assert "Nothing to consolidate" in again

        # since_consolidate stops at the [CONSOLIDATE] commit
        seen.add(commits[-1][0])
        (spaced_repo / "src" / "login.py").write_text("ATTEMPTS = 5\n")
        new_sha, _ = await wait_for_snapshot(client, seen, contains="src/login.py")
        since = await call(client, "get_global_trajectory", {"since_consolidate": True})
        assert "since the last consolidation" in since, since
        assert [sha for sha, _ in sections(since)] == [new_sha], since

        # the file history survives the squash, the squashed work now as one consolidated change
        history = await call(client, "get_file_trajectory", {"filepath": "src/login.py", "depth": 10})
        assert "consolidation" in history
        assert git(spaced_repo, "rev-list", "--count", "HEAD").strip() == "1"  # the project's git untouched


@pytest.mark.anyio
async def test_no_pending_changes_right_after_a_snapshot(server_env: dict[str, str], spaced_repo: Path) -> None:
    slow = params(server_env, spaced_repo)
    slow.args[slow.args.index("--debounce") + 1] = "1.5"  # a long window makes the check deterministic
    async with Client(slow) as client:
        seen = await shas(client)
        (spaced_repo / "src" / "app.py").write_text("def main():\n    return 'pending?'\n")
        await wait_for_snapshot(client, seen, contains="src/app.py")
        for _ in range(10):  # over one second, well inside the 1.5 s debounce a spurious change would start
            summary = await call(client, "get_session_summary")
            assert "waiting for the debounce" not in summary, summary
            await anyio.sleep(0.1)


@pytest.mark.anyio
async def test_unconfigured_server_asks_for_configure_project(server_env: dict[str, str], spaced_repo: Path,
                                                              tmp_path: Path) -> None:
    async with Client(params(server_env)) as client:
        for name, args in [("get_global_trajectory", {}), ("get_session_summary", {}),
                           ("get_file_trajectory", {"filepath": "src/app.py"}),
                           ("set_trajectory_intent", {"intent": "x"}), ("checkpoint", {}),
                           ("consolidate", {"intent": "x"})]:
            message = await call_error(client, name, args)
            assert "configure_project" in message, (name, message)

        assert "absolute" in await call_error(client, "configure_project", {"path": "relative/path"})
        assert "does not exist" in await call_error(client, "configure_project",
                                                    {"path": str(tmp_path / "missing")})
        started = await call(client, "configure_project", {"path": str(spaced_repo)})
        assert started.startswith(f"Recording {spaced_repo}")
        assert "start of recording" in await imported_log(client)

        # switching to another project restarts the recorder there
        other = make_repo(tmp_path / "other", {"main.go": "package main\n"})
        switched = await call(client, "configure_project", {"path": str(other)})
        assert switched.startswith(f"Recording {other}")
        log = await imported_log(client)
        assert "main.go" in log, log


async def imported_log(client: Client) -> str:
    """``get_global_trajectory`` once the start-up import is done: on a loaded machine it may still run, and the
    answer says so and comes at once (as designed), so it is asked again meanwhile (at most 60 s)."""
    log = await call(client, "get_global_trajectory")
    for _ in range(120):
        if "start-up scan is still running" not in log:
            break
        await anyio.sleep(0.5)
        log = await call(client, "get_global_trajectory")
    return log


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors_and_the_server_keeps_answering(server_env: dict[str, str],
                                                                          spaced_repo: Path) -> None:
    (spaced_repo.parent / "secret.txt").write_text("outside\n")
    async with Client(params(server_env, spaced_repo)) as client:
        cases = [
            ("get_file_trajectory", {"filepath": "../../etc/passwd"}, "outside the project"),
            ("get_file_trajectory", {"filepath": "/etc/passwd"}, "outside the project"),
            ("get_file_trajectory", {"filepath": "../secret.txt"}, "outside the project"),
            ("get_file_trajectory", {"filepath": "src/app.py", "depth": 0}, "depth"),
            ("get_file_trajectory", {"filepath": "src/app.py", "depth": 100000}, "depth"),
            ("get_file_trajectory", {"filepath": ""}, "filepath"),
            ("get_global_trajectory", {"limit": 0}, "limit"),
            ("set_trajectory_intent", {"intent": ""}, "intent"),
            ("set_trajectory_intent", {"intent": "   "}, "intent"),
            ("consolidate", {"intent": ""}, "intent"),
            ("get_file_trajectory", {}, "filepath"),  # missing required argument: rejected by the schema
        ]
        for name, args, needle in cases:
            message = await call_error(client, name, args)
            assert needle in message, (name, args, message)
            assert "Traceback" not in message

        # symlink pointing out of the project
        (spaced_repo / "escape").symlink_to(spaced_repo.parent / "secret.txt")
        assert "outside" in await call_error(client, "get_file_trajectory", {"filepath": "escape"})

        # still alive and still recording
        seen = await shas(client)
        await call(client, "set_trajectory_intent", {"intent": "After the errors"})
        (spaced_repo / "src" / "app.py").write_text("def main():\n    return 2\n")
        _, section = await wait_for_snapshot(client, seen, contains="src/app.py")
        assert "After the errors" in section
        assert "configure_project" not in await call(client, "get_session_summary")


def _reader(stream: Any, lines: queue.Queue[str | None]) -> None:
    """Queue the lines of a pipe, then None at its end; the pipe is closed when it ends."""
    with stream:
        for line in iter(stream.readline, ""):
            lines.put(line)
    lines.put(None)


def test_stdout_carries_only_json_rpc(server_env: dict[str, str], spaced_repo: Path) -> None:
    """Drive the server by hand: every stdout line must be a JSON-RPC message."""
    command = server_command()
    proc = subprocess.Popen([*command, "serve", "--project", str(spaced_repo), "--debounce", DEBOUNCE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=server_env, bufsize=1)
    out: queue.Queue[str | None] = queue.Queue()
    err: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, out), daemon=True).start()
    threading.Thread(target=_reader, args=(proc.stderr, err), daemon=True).start()
    stdout_lines: list[str] = []

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def response(request_id: int, timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = out.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"no response to request {request_id} within {timeout} s; stdout so far: {stdout_lines}")
            if line is None:
                pytest.fail(f"server closed stdout before answering {request_id}; stdout: {stdout_lines}")
            stdout_lines.append(line)
            message = json.loads(line)  # raises on anything that is not JSON
            if message.get("id") == request_id:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "by-hand", "version": "0"}}})
        init = response(1)
        assert init["result"]["serverInfo"]["name"] == "code-trajectory"
        assert init["result"]["protocolVersion"] == "2025-06-18"
        assert "tools" in init["result"]["capabilities"]
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        names = {tool["name"] for tool in response(2)["result"]["tools"]}
        assert names >= TRAJECTORY_TOOLS
        # calls that log (errors, snapshots) must still log on stderr only
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "get_file_trajectory", "arguments": {"filepath": "../../etc/passwd"}}})
        assert response(3)["result"]["isError"] is True
        send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
              "params": {"name": "get_file_trajectory", "arguments": {"filepath": "src/app.py", "depth": "x"}}})
        assert response(4)["result"]["isError"] is True
        send({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"})
        assert "error" in response(5)
        (spaced_repo / "src" / "app.py").write_text("def main():\n    return 'by hand'\n")
        send({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
              "params": {"name": "checkpoint", "arguments": {"message": "by hand"}}})
        answer = response(6)["result"]["content"][0]["text"]
        # the point is named on a snapshot holding the save: the checkpoint's own, or the start-up rescan's when
        # that one took it a moment earlier ("Nothing changed since the last snapshot")
        named = re.search(r'Named point "by hand" on `([0-9a-f]{12})`', answer)
        assert named, answer
        assert "by hand" in shadow(spaced_repo, "show", f"{named.group(1)}:src/app.py"), answer
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # EOF: the server shuts down by itself
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("the server did not exit after stdin closed")
    while (line := out.get(timeout=5)) is not None:
        stdout_lines.append(line)
    for line in stdout_lines:
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line
    assert proc.returncode == 0
    stderr_text = "".join(iter(lambda: err.get(timeout=5) or "", ""))
    assert "recording" in stderr_text  # the logs went to stderr
