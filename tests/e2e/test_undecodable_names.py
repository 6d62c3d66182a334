"""A file whose name is not UTF-8 (``bad\\xff.py``: any byte string is a Linux file name) in the answers of a real
``code-trajectory serve`` over stdio (the MCP SDK's client). Its path, a lone surrogate in Python
(``surrogateescape``), went raw into the structured content of ``get_session_summary`` and ``compare``, which JSON
cannot carry: the SDK failed to send the answer, ``compare`` became an internal error and the session summary
killed the server. Every answer now spells such a byte out (``\\xff``), as its text shows the path."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import cli_stdout, git_repo, server_command

pytestmark = pytest.mark.e2e


def _recorded(tmp_path: Path) -> Path:
    """A project whose file ``bad\\xff.py`` (``def a``) gained ``def b`` between checkpoints ``before`` and
    ``after``."""
    project = git_repo(tmp_path / "project", {"app.py": "x = 1\n"}, branch="main", commit="initial").resolve()
    bad = os.fsencode(project) + b"/bad\xff.py"
    with open(bad, "w") as f:
        f.write("def a():\n    return 1\n")
    cli_stdout(project, "checkpoint", "-m", "before")
    with open(bad, "a") as f:
        f.write("def b():\n    return 2\n")
    cli_stdout(project, "checkpoint", "-m", "after")
    return project


def _serve(project: Path, env: dict[str, str]) -> StdioServerParameters:
    command = server_command()
    return StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--project", str(project)], env=env,
                                 cwd=env["HOME"])


@pytest.mark.anyio
async def test_answers_naming_a_file_whose_name_is_not_utf8_reach_the_client(server_env: dict[str, str],
                                                                               tmp_path: Path) -> None:
    project = _recorded(tmp_path)
    async with Client(_serve(project, server_env)) as client:
        for name, args in (("compare", {"from_snapshot": "before", "to_snapshot": "after"}),
                           ("get_session_summary", {}), ("get_global_trajectory", {})):
            result = await client.call_tool(name, args)
            text = "\n".join(block.text for block in result.content)
            assert not result.is_error and "bad\\xff.py" in text, (name, text)
            if name == "compare":
                assert result.structured_content and result.structured_content["files"][0][1] == "bad\\xff.py"


@pytest.mark.anyio
async def test_the_name_an_answer_shows_passed_back_names_the_file(server_env: dict[str, str], tmp_path: Path) -> None:
    """``bad\\xff.py``, as answers show the file, passed back to each tool taking a path (and the CLI's commands):
    each said no snapshot had recorded it (and suggested ``bad\\xff.py`` again), restore that it named nothing."""
    project = _recorded(tmp_path)
    shown = "bad\\xff.py"
    async with Client(_serve(project, server_env)) as client:
        for name, args, expected in (
                ("get_file_trajectory", {"filepath": shown}, "modified (+2)"),
                ("get_symbol_trajectory", {"filepath": shown, "symbol": "b"}, "# Trajectory of `b` in `bad\\xff.py`"),
                ("compare", {"from_snapshot": "before", "to_snapshot": "after", "filepath": shown}, "- M `bad\\xff.py`"),
                ("search_trajectory", {"query": "return 2", "path": shown}, "1 snapshot added or removed it"),
                ("restore", {"snapshot": "before", "paths": [shown], "dry_run": True}, "Would write (1): `bad\\xff.py`")):
            result = await client.call_tool(name, args)
            text = "\n".join(block.text for block in result.content)
            assert not result.is_error and expected in text, (name, text)
    assert "modified (+2)" in cli_stdout(project, "file", shown)
    assert "Would write (1)" in cli_stdout(project, "restore", "before", shown, "--dry-run")


def test_a_request_holding_a_lone_surrogate_is_answered_with_an_error(server_env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    """A file name as Python holds it (``"bad\\udcff.py"``) sent as JSON: the SDK's reader refuses the lone surrogate
    and its dispatcher dropped the request, unanswered: the client waited forever. It is answered with a parse error
    saying how to name the file; the requests around it are answered as always."""
    project = _recorded(tmp_path)

    def call(request_id: int, filepath: str) -> dict:
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"name": "get_file_trajectory", "arguments": {"filepath": filepath}}}

    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}, call(2, "bad\udcff.py"), call(3, "bad\\xff.py")]
    sent = "".join(json.dumps(line) + "\n" for line in lines)  # json.dumps writes the surrogate as \udcff
    assert "\\udcff" in sent
    command = server_command()
    answers: dict[int, dict] = {}
    with subprocess.Popen([*command, "serve", "--project", str(project)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=server_env,
                          cwd=server_env["HOME"]) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            server.stdin.write(sent.encode())
            server.stdin.flush()
            deadline = time.monotonic() + 60  # a hang detector: unanswered, the request waited forever
            while len(answers) < 3 and select.select([server.stdout], [], [], max(0, deadline - time.monotonic()))[0]:
                line = server.stdout.readline()
                if not line:
                    break
                answer = json.loads(line)
                answers[answer["id"]] = answer
            server.stdin.close()
            assert server.wait(timeout=60) == 0
        finally:
            if server.poll() is None:
                server.kill()
    assert sorted(answers) == [1, 2, 3], answers
    error = answers[2]["error"]
    assert error["code"] == -32700 and "lone UTF-16 surrogate (\\udcff)" in error["message"], error
    assert "bad\\xff.py" in error["message"], error
    assert "modified (+2)" in answers[3]["result"]["content"][0]["text"], answers[3]
