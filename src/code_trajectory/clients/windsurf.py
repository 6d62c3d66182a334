"""Windsurf: one ``~/.codeium/windsurf/mcp_config.json`` per user, key ``mcpServers``.

Location and format, as verified (docs corpus, 2026): ``~/.codeium/windsurf/mcp_config.json`` on macOS and Linux,
``%USERPROFILE%\\.codeium\\windsurf\\mcp_config.json`` on Windows; servers under ``mcpServers``, a stdio one with
``command``, ``args``, optional ``env`` (Windsurf MCP docs, https://docs.windsurf.com/windsurf/cascade/mcp, as
cited by https://raw.githubusercontent.com/confluentinc/mcp-confluent/master/docs/configuring-windsurf.md and
https://raw.githubusercontent.com/newtalaria/docs/main/agents/mcp/windsurf.md). The file is per user, so the entry
carries ``--project`` and each project gets its own entry (naming as claude-desktop).
"""

from __future__ import annotations

from code_trajectory.clients.base import UserFileClient


class Windsurf(UserFileClient):
    """``~/.codeium/windsurf/mcp_config.json``, key ``mcpServers``, one entry per project."""

    name = "windsurf"
    title = "Windsurf"
    docs: tuple[str, ...] = ("Windsurf Cascade MCP - https://docs.windsurf.com/windsurf/cascade/mcp",)
    hint = "Press Refresh in Windsurf's MCP panel (Cascade > MCP servers) to load the change."
    home_path = (".codeium", "windsurf", "mcp_config.json")


CLIENT = Windsurf()
