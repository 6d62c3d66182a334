"""VS Code: the workspace's ``.vscode/mcp.json``.

Format, as verified (docs corpus, 2026), "MCP configuration reference" -
https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (and its newer home
https://code.visualstudio.com/docs/agents/reference/mcp-configuration.md): the file is
``.vscode/mcp.json`` in the workspace; servers sit in a top-level ``servers`` object (beside an
optional ``inputs`` array, kept as is); a stdio server *requires* ``"type": "stdio"`` and
``command``, with optional ``args``, ``env``, ``envFile``.

VS Code's own JSON files accept comments and trailing commas (JSONC: see
https://github.com/microsoft/vscode/issues/191988), so this file may hold them; the reader is
tolerant and install backs such a file up before rewriting it (a rewrite drops the comments).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.clients.base import StdioClient


class VSCode(StdioClient):
    """``<project>/.vscode/mcp.json``, key ``servers``, entry with ``"type": "stdio"``."""

    name = "vscode"
    title = "VS Code"
    servers_key = "servers"
    with_type = True
    docs: tuple[str, ...] = ("MCP configuration reference - https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",)
    hint = "VS Code starts it from the MCP view (or the Start code lens in .vscode/mcp.json)."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        return project / ".vscode" / "mcp.json"


CLIENT = VSCode()
