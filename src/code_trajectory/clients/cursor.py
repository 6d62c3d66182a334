"""Cursor: the project's ``.cursor/mcp.json``.

Format, as verified (docs corpus, 2026): Cursor reads ``.cursor/mcp.json`` in the project (and
``~/.cursor/mcp.json`` for every project); servers sit under ``mcpServers``; a local (stdio) server
has ``command``, ``args`` and optional ``env``, and Cursor infers the transport from ``command``
(the example in Cursor's docs has no ``type``). Sources: "Model Context Protocol" -
https://docs.cursor.com/context/model-context-protocol; the example copied from
https://cursor.com/docs/mcp in https://www.developersdigest.tech/mcp-servers/clients/cursor;
"How to Connect MCP Servers to Cursor" - https://www.mcpbundles.com/guides/cursor.

The file is shared (committed), so the entry runs ``code-trajectory`` by name with ``serve --project
${workspaceFolder}``: Cursor interpolates ``${workspaceFolder}`` in ``mcp.json`` (the "config
interpolation" of https://cursor.com/docs/mcp). A client that leaves it unexpanded still works: the
server then follows the client's roots or working directory (:mod:`code_trajectory.server`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.clients.base import StdioClient


class Cursor(StdioClient):
    """``<project>/.cursor/mcp.json``, key ``mcpServers``, entry ``{"command", "args"}``."""

    name = "cursor"
    title = "Cursor"
    servers_key = "mcpServers"
    docs = ("Model Context Protocol - https://docs.cursor.com/context/model-context-protocol",
            "https://cursor.com/docs/mcp")
    #: expanded by the client to the open folder (``${workspaceFolder}``: see the module docstring)
    project_arg: str | None = "${workspaceFolder}"
    hint = "Cursor lists it under Settings > MCP; switch it on there if it is off."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        return project / ".cursor" / "mcp.json"


CLIENT = Cursor()
