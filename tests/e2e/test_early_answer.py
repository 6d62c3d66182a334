"""End-to-end: the real ``code-trajectory serve`` answers a client's opening request from the answer its SDK gave
the same request at an earlier start (:mod:`code_trajectory.early_answer`), and the session goes on as always.

A kept answer is marked (its instructions changed in the cache file) before the second start: the client seeing
the mark proves the early answer was sent; the file holding the SDK's answer again afterwards proves the SDK
handled the same request and its own answer was compared and kept, not sent twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from code_trajectory.early_answer import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    ShippedAnswers,
    shipped_build,
)
from support import git_repo, server_command

pytestmark = pytest.mark.e2e

MARK = "instructions kept by an earlier start"


def serve(env: dict[str, str], project: Path) -> StdioServerParameters:
    command = server_command()
    return StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--project", str(project)],
                                 env=env, cwd=env["HOME"])


def cache_file(env: dict[str, str]) -> Path:
    return Path(env["CODE_TRAJECTORY_HOME"]) / "cache" / "opening-answers.json"


def kept_results(env: dict[str, str]) -> list[dict[str, Any]]:
    return [entry["result"] for entry in json.loads(cache_file(env).read_text())["answers"].values()]


def mark_kept_answers(env: dict[str, str]) -> int:
    """Change the instructions of every kept opening answer to :data:`MARK`, and the description of every tool of a
    kept ``tools/list`` answer; returns how many opening answers there are."""
    path = cache_file(env)
    data = json.loads(path.read_text())
    openings = 0
    for entry in data["answers"].values():
        if "instructions" in entry["result"]:
            entry["result"]["instructions"] = MARK
            openings += 1
        for tool in entry["result"].get("tools", []):
            tool["description"] = MARK
    path.write_text(json.dumps(data))
    return openings


def kept_instructions(env: dict[str, str]) -> list[str]:
    return [result["instructions"] for result in kept_results(env) if "instructions" in result]


def kept_tool_descriptions(env: dict[str, str]) -> set[str]:
    return {tool["description"] for result in kept_results(env) for tool in result.get("tools", [])}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "project", {"app.py": "def main():\n    return 1\n"}, branch="main",
                    commit="initial").resolve()


@pytest.mark.anyio
async def test_the_sdk_client_is_answered_from_the_kept_answer_and_the_session_works(
        server_env: dict[str, str], repo: Path) -> None:
    async with Client(serve(server_env, repo)) as client:
        first = client.instructions
        assert first and MARK not in first
        # answered by the SDK after its answer to initialize, which is kept before it is sent (a client that left at
        # once could leave before that, on a loaded machine)
        await client.list_tools()
    assert mark_kept_answers(server_env) == 1
    with anyio.fail_after(60):
        async with Client(serve(server_env, repo)) as client:
            assert client.instructions == MARK  # the answer sent before the SDK was imported
            assert "get_file_trajectory" in {tool.name for tool in (await client.list_tools()).tools}
            answer = await client.call_tool("get_file_trajectory", {"filepath": "app.py"})
            assert not answer.is_error and "app.py" in answer.content[0].text
    assert kept_instructions(server_env) == [first]  # the SDK's own answer replaced the marked one
    assert MARK not in kept_tool_descriptions(server_env)


def exchange(env: dict[str, str], project: Path, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Start ``serve --project``, send ``messages`` (JSON lines), read one answer per request, close stdin; the
    answers, parsed (a line that is not JSON fails the test: stdout is JSON-RPC only), and any line after them."""
    command = server_command()
    with subprocess.Popen([*command, "serve", "--debounce", "0.3", "--project", str(project)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                          cwd=env["HOME"]) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            server.stdin.write("".join(json.dumps(message) + "\n" for message in messages).encode())
            server.stdin.flush()
            answers = [json.loads(server.stdout.readline()) for message in messages if "id" in message]
            server.stdin.close()
            answers += [json.loads(line) for line in server.stdout.read().splitlines()]
            assert server.wait(timeout=60) == 0
        finally:
            if server.poll() is None:
                server.kill()
    return answers


def test_an_initialize_client_is_answered_once_with_its_own_id(server_env: dict[str, str], repo: Path) -> None:
    opening = {"jsonrpc": "2.0", "id": 7, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "raw", "version": "1"}}}
    session = [opening, {"jsonrpc": "2.0", "method": "notifications/initialized"},
               {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]
    first = exchange(server_env, repo, session)
    assert [answer["id"] for answer in first] == [7, 8]
    assert mark_kept_answers(server_env) == 1
    second = exchange(server_env, repo, [{**opening, "id": "again"}, *session[1:]])
    assert [answer["id"] for answer in second] == ["again", 8]  # the SDK's answer to the opening is not sent twice
    assert second[0]["result"]["instructions"] == MARK
    assert second[0]["result"]["protocolVersion"] == "2025-06-18"
    # the list kept by the first start, answered before the SDK was imported (marked), once
    assert {tool["description"] for tool in second[1]["result"]["tools"]} == {MARK}
    assert [tool["name"] for tool in second[1]["result"]["tools"]] == [tool["name"] for tool in first[1]["result"]["tools"]]
    assert kept_instructions(server_env) == [first[0]["result"]["instructions"]]  # the SDK's answers kept again
    assert MARK not in kept_tool_descriptions(server_env)
    third = exchange(server_env, repo, session)
    assert third[1]["result"]["tools"] == first[1]["result"]["tools"]


def claude_code_start(env: dict[str, str], project: Path) -> tuple[list[dict[str, Any]], str]:
    """What Claude Code 2.1.332 sends a server it starts (as a loopback recording of its traffic shows):
    ``server/discover``, ``subscriptions/listen``, and once the subscription is acknowledged ``server/discover``
    again and the lists of prompts, resources and tools; here all at once. Returns every message ``serve`` wrote
    (one a request: the answers and the acknowledgement; then any written once stdin closed) and what it logged."""
    meta = {PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_INFO_META_KEY: {"name": "claude-code", "version": "9"},
            CLIENT_CAPABILITIES_META_KEY: {"roots": {"listChanged": True}}}
    requests = [{"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
                 "params": {"_meta": meta}},
                {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
                 "params": {"_meta": meta, "notifications": {"toolsListChanged": True, "promptsListChanged": True,
                                                             "resourcesListChanged": True}}},
                *({"jsonrpc": "2.0", "id": n, "method": method, "params": {"_meta": meta}}
                  for n, method in enumerate(["server/discover", "prompts/list", "resources/list", "tools/list"]))]
    command = server_command()
    with subprocess.Popen([*command, "serve", "--project", str(project)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=env["HOME"]) as server:
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        try:
            server.stdin.write("".join(json.dumps(message) + "\n" for message in requests).encode())
            server.stdin.flush()
            messages = [json.loads(server.stdout.readline()) for _ in range(len(requests))]
            server.stdin.close()
            messages += [json.loads(line) for line in server.stdout.read().splitlines()]
            assert server.wait(timeout=60) == 0
        finally:
            if server.poll() is None:
                server.kill()
        return messages, server.stderr.read().decode()


def test_claude_codes_first_requests_are_answered_from_the_kept_answers_once(server_env: dict[str, str],
                                                                             repo: Path) -> None:
    """Claude Code asks for the lists only once ``subscriptions/listen`` is acknowledged: a start that kept the
    SDK's answers acknowledges it and answers the lists before the SDK is imported (the marked answers), each once,
    and keeps the SDK's own answers again."""
    first, _ = claude_code_start(server_env, repo)
    acknowledged = [m for m in first if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert len(acknowledged) == 1 and acknowledged[0]["params"]["_meta"] == {
        "io.modelcontextprotocol/subscriptionId": "listen:0"}
    answered = {m["id"]: m["result"] for m in first if "result" in m}
    assert set(answered) == {"server-discover-probe-1", 0, 1, 2, 3}  # the subscription stays open
    assert mark_kept_answers(server_env) == 1  # both discover requests have one key
    path = cache_file(server_env)
    data = json.loads(path.read_text())
    for entry in data["answers"].values():  # the kept acknowledgement, marked
        if "notifications" in entry["result"]:
            entry["result"]["marked"] = True
    path.write_text(json.dumps(data))

    second, log = claude_code_start(server_env, repo)
    acknowledged = [m for m in second if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert len(acknowledged) == 1 and acknowledged[0]["params"]["marked"] is True  # sent early, the SDK's dropped
    assert acknowledged[0]["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen:0"}
    results = [m for m in second if "result" in m]
    assert sorted(map(str, (m["id"] for m in results))) == sorted(map(str, answered))  # each once
    by_id = {m["id"]: m["result"] for m in results}
    assert by_id["server-discover-probe-1"]["instructions"] == by_id[0]["instructions"] == MARK
    assert {tool["description"] for tool in by_id[3]["tools"]} == {MARK}
    assert by_id[1] == answered[1] and by_id[2] == answered[2]
    assert "differs from the SDK's" in log
    assert MARK not in kept_tool_descriptions(server_env) and MARK not in kept_instructions(server_env)
    assert not any(result.get("marked") for result in kept_results(server_env))


def test_an_opening_request_the_sdk_refuses_is_never_kept(server_env: dict[str, str], repo: Path) -> None:
    broken = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 2025}}
    for _ in range(2):
        answers = exchange(server_env, repo, [broken])
        assert [answer["id"] for answer in answers] == [1] and "error" in answers[0]
    assert not cache_file(server_env).exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_right_after_the_early_answer_is_an_orderly_stop(
        server_env: dict[str, str], repo: Path, signum: signal.Signals) -> None:
    """The early answer goes out before the server is built: a client that stops the server as soon as it is
    answered (Claude Code quitting at once: SIGINT, then SIGTERM) still gets the orderly stop and status 0, not
    death by the signal (the stop handlers were set only once the project was being opened)."""
    opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "raw", "version": "1"}}}
    exchange(server_env, repo, [opening])  # keeps the SDK's answer
    assert mark_kept_answers(server_env) == 1
    command = server_command()
    with subprocess.Popen([*command, "serve", "--project", str(repo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=server_env, cwd=server_env["HOME"]) as server:
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        try:
            server.stdin.write((json.dumps(opening) + "\n").encode())
            server.stdin.flush()
            assert json.loads(server.stdout.readline())["result"]["instructions"] == MARK  # the early answer
            server.send_signal(signum)
            assert server.wait(timeout=60) == 0, server.stderr.read().decode()
        finally:
            if server.poll() is None:
                server.kill()
        assert f"stopping on {signum.name}" in server.stderr.read().decode()


def opening_request(method: str, version: str) -> dict[str, Any]:
    """The opening request of protocol ``version``: ``initialize`` (a handshake version) or ``server/discover``
    (2026-07-28, with the envelope Claude Code 2.1.332 sends)."""
    client = {"name": "shipped-answers", "version": "1"}
    if method == "initialize":
        params: dict[str, Any] = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    else:
        params = {"_meta": {PROTOCOL_VERSION_META_KEY: version, CLIENT_CAPABILITIES_META_KEY: {},
                            CLIENT_INFO_META_KEY: client}}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def sdk_answers(base: Path, project: Path) -> dict[str, dict]:
    """``{"<method> <version>": result}``: the SDK's answer to the opening request of every protocol version it
    speaks, from a real ``serve`` started with a new home each (the answer it keeps is the SDK's own, whatever was
    sent early)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    answers = {}
    for method, versions in (("initialize", HANDSHAKE_PROTOCOL_VERSIONS), ("server/discover", MODERN_PROTOCOL_VERSIONS)):
        for version in versions:
            home = base / f"{method.replace('/', '-')}-{version}"
            for sub in (".config", "state"):
                (home / sub).mkdir(parents=True, exist_ok=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(CODE_TRAJECTORY_HOME=str(home / "state"), HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
            (answer,) = exchange(env, project, [opening_request(method, version)])
            assert "result" in answer, answer
            (kept,) = json.loads(cache_file(env).read_text())["answers"].values()
            answers[f"{method} {version}"] = kept["result"]
    return answers


def test_the_shipped_opening_answers_are_the_sdks_and_a_first_start_sends_them(tmp_path: Path, repo: Path) -> None:
    """``code_trajectory/opening_answers.json`` holds what the SDK answers each protocol version's opening request
    with this build (a first start sends it before the SDK is imported: it must be the SDK's answer). Recompute
    after changing the server's instructions or capabilities, or the SDK:
    ``PYTHONPATH=src:tests python tests/e2e/test_early_answer.py --recompute``."""
    shipped, build = json.loads(ShippedAnswers().path.read_text()), shipped_build()
    assert build is not None
    ours = ("code-trajectory", "server.py")
    assert {k: shipped["build"][k] for k in ours} == {k: build[k] for k in ours}, (
        "recompute the shipped opening answers (see this test's docstring)")
    if shipped["build"] != build:  # another release of the SDK installed: the shipped answers are not used with it
        for key in shipped["answers"]:
            method, version = key.split(" ")
            assert ShippedAnswers().get(method, opening_request(method, version)["params"]) is None, key
        return
    assert shipped["answers"] == sdk_answers(tmp_path / "homes", repo)


def recompute() -> None:
    """Write ``code_trajectory/opening_answers.json`` from a real ``serve`` of this build (see the test above)."""
    with tempfile.TemporaryDirectory() as tmp:
        project = git_repo(Path(tmp) / "project", {"app.py": "x = 1\n"}, branch="main", commit="initial").resolve()
        data = {"build": shipped_build(), "answers": sdk_answers(Path(tmp) / "homes", project)}
    path = ShippedAnswers().path
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(data['answers'])} opening answers to {path}")


if __name__ == "__main__":
    if "--recompute" in sys.argv:
        recompute()
