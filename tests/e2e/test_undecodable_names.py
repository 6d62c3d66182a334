"""A file whose name is not UTF-8 (``bad\\xff.py``: any byte string is a Linux file name) in the answers of a real
``code-trajectory serve`` over stdio (the MCP SDK's client). Its path, a lone surrogate in Python
(``surrogateescape``), went raw into the structured content of ``get_session_summary`` and ``compare``, which JSON
cannot carry: the SDK failed to send the answer, ``compare`` became an internal error and the session summary
killed the server. Every answer now spells such a byte out (``\\xff``), as its text shows the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import cli_stdout, git_repo, server_command

pytestmark = pytest.mark.e2e


@pytest.mark.anyio
async def test_answers_naming_a_file_whose_name_is_not_utf8_reach_the_client(server_env: dict[str, str],
                                                                               tmp_path: Path) -> None:
    project = git_repo(tmp_path / "project", {"app.py": "x = 1\n"}, branch="main", commit="initial").resolve()
    bad = os.fsencode(project) + b"/bad\xff.py"
    with open(bad, "w") as f:
        f.write("a = 1\n")
    cli_stdout(project, "checkpoint", "-m", "before")
    with open(bad, "a") as f:
        f.write("b = 2\n")
    cli_stdout(project, "checkpoint", "-m", "after")
    command = server_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--project", str(project)],
                                   env=server_env, cwd=server_env["HOME"])
    async with Client(params) as client:
        for name, args in (("compare", {"from_snapshot": "before", "to_snapshot": "after"}),
                           ("get_session_summary", {}), ("get_global_trajectory", {})):
            result = await client.call_tool(name, args)
            text = "\n".join(block.text for block in result.content)
            assert not result.is_error and "bad\\xff.py" in text, (name, text)
            if name == "compare":
                assert result.structured_content and result.structured_content["files"][0][1] == "bad\\xff.py"
