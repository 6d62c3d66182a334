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

from code_trajectory.clients.base import UserFileClient


class Cline(UserFileClient):
    """VS Code's ``globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json``, key ``mcpServers``."""

    name = "cline"
    title = "Cline"
    docs: tuple[str, ...] = ("Cline MCP servers - https://docs.cline.bot/mcp/configuring-mcp-servers",)
    hint = "Cline reloads the file by itself; check the server under Cline > MCP Servers > Installed."
    appdata_path = mac_path = xdg_path = (
        "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")


CLIENT = Cline()
