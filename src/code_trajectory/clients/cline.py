"""Cline (VS Code extension ``saoudrizwan.claude-dev``): its per-user ``cline_mcp_settings.json``.

Location and format, as verified (pages corpus, 2026): Cline keeps MCP servers in VS Code's global storage for the
extension, ``<VS Code user dir>/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json`` where the
user dir is ``~/Library/Application Support/Code/User`` (macOS), ``~/.config/Code/User`` (Linux) and
``%APPDATA%\\Code\\User`` (Windows) (https://alperhankendi.github.io/Ctxo/docs/integrations/cline,
https://docs.neurolink.ink/docs/mcp/configuration). Servers sit under ``mcpServers``; a stdio entry has
``command``, ``args``, optional ``env``, and Cline adds ``disabled`` and ``alwaysAllow``
(https://tryglen.com/mcp/clients/cline), which we leave to its UI. Per user: one entry per project.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.clients.base import StdioClient
from code_trajectory.clients.userdirs import appdata, home, xdg_config

_TAIL = ("Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")


class Cline(StdioClient):
    """VS Code's ``globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json``, key ``mcpServers``."""

    name = "cline"
    title = "Cline"
    servers_key = "mcpServers"
    global_config = True
    docs: tuple[str, ...] = ("Cline MCP servers - https://docs.cline.bot/mcp/configuring-mcp-servers",)
    hint = "Cline reloads the file by itself; check the server under Cline > MCP Servers > Installed."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        if platform == "win32":
            return appdata(env, platform, self.title).joinpath(*_TAIL)
        if platform == "darwin":
            return (home(env, platform, self.title) / "Library" / "Application Support").joinpath(*_TAIL)
        return xdg_config(env, platform, self.title).joinpath(*_TAIL)


CLIENT = Cline()
