"""Gemini CLI: the project's ``.gemini/settings.json``, key ``mcpServers``.

Format and location, as verified (docs corpus, 2026): Gemini CLI reads MCP servers from the ``mcpServers`` object
of ``~/.gemini/settings.json`` (user) or ``.gemini/settings.json`` in the project (project scope, what
``gemini mcp add --scope project`` writes); a stdio server has ``command``, ``args`` and optional ``env``,
``cwd``, ``timeout``, ``trust`` ("MCP servers with Gemini CLI",
https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md, also
https://www.geminicli.com/docs/tools/mcp-server). The file may hold comments (Gemini CLI strips them when
reading), which :mod:`.jsonfile` tolerates and backs up before a rewrite.

Folder trust: with ``security.folderTrust`` on, Gemini CLI ignores a project's ``.gemini/settings.json`` until the
folder is trusted (``/permissions``, or the prompt at start; kept in ``~/.gemini/trustedFolders.json``).
``gemini mcp list`` run in the project lists the server (``tests/clients/test_clients_cli_list.py``). Its hooks
(``install gemini --hooks``) go to the same file: see :mod:`code_trajectory.clients.hooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.clients.base import StdioClient


class Gemini(StdioClient):
    """``<project>/.gemini/settings.json``, key ``mcpServers``, entry ``{"command", "args"}``."""

    name = "gemini"
    title = "Gemini CLI"
    servers_key = "mcpServers"
    docs: tuple[str, ...] = ("MCP servers with Gemini CLI - https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",)
    hint = ("Gemini CLI reads .gemini/settings.json only in a trusted folder: trust this folder when it asks "
            "(or with /permissions); `gemini mcp list` then shows the server.")

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        return project / ".gemini" / "settings.json"


CLIENT = Gemini()
