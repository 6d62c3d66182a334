"""Claude Desktop: one ``claude_desktop_config.json`` per user, shared by every project.

Format and location, as verified (docs corpus, 2026):

- macOS ``~/Library/Application Support/Claude/claude_desktop_config.json``, Windows
  ``%APPDATA%\\Claude\\claude_desktop_config.json`` (MCP user quickstart,
  https://modelcontextprotocol.io/quickstart/user, as cited by
  https://raw.githubusercontent.com/confluentinc/mcp-confluent/master/docs/configuring-claude-desktop.md
  and https://playwright.dev/mcp/clients/claude-desktop). Anthropic ships no Linux build; the
  community builds use ``~/.config/Claude/`` (table in
  https://learn.logeshclouduniverse.com/MasteringMCP/day-14.html), and we honour
  ``XDG_CONFIG_HOME`` there as the XDG base-directory spec asks.
- ``{"mcpServers": {"<name>": {"command": ..., "args": [...], "env": {...}}}}``; no ``type``
  field in any documented example. Other top-level keys (``preferences``) exist and are kept.
- Claude Desktop reads the file at start: it has to be restarted after a change.

Naming: the file is global, so the entry carries ``--project P`` and one entry exists per
project. The first project installed gets ``code-trajectory``; a project whose preferred name is
held by another entry gets ``code-trajectory-<directory name>`` (then that name with the first
8 hex digits of a hash of the full path: :meth:`~code_trajectory.clients.base.StdioClient.alternate_names`). Install and uninstall find a project's entry by its
``--project`` argument, not by its name, so the name never has to be remembered.
"""

from __future__ import annotations

from code_trajectory.clients.base import UserFileClient

FILE_NAME = "claude_desktop_config.json"


class ClaudeDesktop(UserFileClient):
    """The per-user ``claude_desktop_config.json``, key ``mcpServers``, one entry per project."""

    name = "claude-desktop"
    title = "Claude Desktop"
    docs: tuple[str, ...] = ("MCP user quickstart - https://modelcontextprotocol.io/quickstart/user",)
    hint = "Quit and restart Claude Desktop to load the change."
    appdata_path = mac_path = xdg_path = ("Claude", FILE_NAME)


CLIENT = ClaudeDesktop()
