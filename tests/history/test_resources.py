"""The MCP resources and prompts of the narratives (``history/resources.py``) given bad input, through the SDK client:
a refused path is an error that says why (not the SDK's bare "Error creating resource from template"), and what a
resource answers is shown as the tools' text is (control characters escaped)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from support import mcp_client


@pytest.mark.anyio
async def test_a_file_resource_outside_the_project_says_why(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 'hunter2'\n")
    os.symlink(outside, project / "link")
    async with mcp_client(project) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource("trajectory://file/link/secret.py")
        assert "outside" in str(refused.value) and "hunter2" not in str(refused.value)
        assert "Error creating resource" not in str(refused.value)
        # the server keeps answering
        assert "# Trajectory of `src/app.py`" in (await client.read_resource("trajectory://file/src/app.py")
                                                  ).contents[0].text


@pytest.mark.anyio
async def test_a_file_resource_escapes_control_characters(project: Path) -> None:
    async with mcp_client(project) as client:
        text = (await client.read_resource("trajectory://file/src/%1b[31mred.py")).contents[0].text
    assert "\x1b" not in text and "red.py" in text


@pytest.mark.anyio
async def test_a_prompt_without_its_argument_or_unknown_says_so(project: Path) -> None:
    async with mcp_client(project) as client:
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("explain-file", {})
        assert "path" in missing.value.message and missing.value.message != "Internal server error"
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("explain-everything", {})
        assert "explain-everything" in unknown.value.message
        explain = await client.get_prompt("explain-file", {"path": "src/app.py"})
        assert "get_file_trajectory" in explain.messages[0].content.text


@pytest.mark.anyio
async def test_the_explain_file_prompt_checks_its_path_as_the_tool_does(project: Path) -> None:
    """A 5 MB path was echoed twice into a 10 MB prompt; a path outside the project made a prompt to read it."""
    async with mcp_client(project) as client:
        with pytest.raises(MCPError) as huge:
            await client.get_prompt("explain-file", {"path": "a/" * 2_500_000})
        assert "5,000,000 bytes long" in huge.value.message and len(huge.value.message) < 500
        with pytest.raises(MCPError) as outside:
            await client.get_prompt("explain-file", {"path": "../elsewhere.py"})
        assert "outside the project" in outside.value.message
        explain = await client.get_prompt("explain-file", {"path": str(project / "src" / "app.py")})
        assert "`src/app.py`" in explain.messages[0].content.text and str(project) not in explain.messages[0].content.text
