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
