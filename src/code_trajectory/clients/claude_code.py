"""Claude Code: the project-scoped ``.mcp.json`` at the project root.

Format, as verified (docs corpus, 2026):

- Claude Code keeps *project-scoped* MCP servers in ``.mcp.json`` at the project root, meant to be
  checked in; ``claude mcp add --scope project`` writes there, and Claude Code asks each user to
  approve those servers the first time it starts in the project ("Connect Claude Code to tools via
  MCP", https://code.claude.com/docs/en/mcp, quoted by
  https://www.developersdigest.tech/mcp-servers/clients/claude-code; scope table in
  https://dev.to/aicoding-guide/claude-mcp-add-scope-local-vs-project-vs-user-and-which-to-pick-4ajm).
- The file is ``{"mcpServers": {"<name>": {...}}}``. A stdio entry has ``command``, ``args`` and
  optional ``env``; ``type`` is the transport and ``"stdio"`` is the default when absent
  (https://github.com/xsyetopz/claudetto/wiki/Claude-Code-MCP, "Claude Code MCP"), and it is what
  ``claude mcp add`` itself writes (``"type": "stdio"``, e.g. https://www.cnblogs.com/LexLuc/p/19164475).
  We write ``"type": "stdio"`` too, so the entry looks like one Claude Code made.

Hooks (``install claude-code --hooks``) go to ``.claude/settings.json``: see
:mod:`code_trajectory.clients.hooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.clients.base import StdioClient


class ClaudeCode(StdioClient):
    """``<project>/.mcp.json``, key ``mcpServers``, entry with ``"type": "stdio"``."""

    name = "claude-code"
    title = "Claude Code"
    servers_key = "mcpServers"
    with_type = True
    docs = ("Connect Claude Code to tools via MCP - https://code.claude.com/docs/en/mcp",
            "Hooks reference - https://docs.anthropic.com/en/docs/claude-code/hooks")
    hint = "Claude Code asks to approve project servers from .mcp.json the next time it starts here."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        return project / ".mcp.json"


CLIENT = ClaudeCode()
