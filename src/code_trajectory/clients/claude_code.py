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

- ``.mcp.json`` is shared, so the entry is ``{"type": "stdio", "command": "code-trajectory", "args":
  ["serve"]}``: no machine path, no ``--project``. Claude Code does not expand ``${CLAUDE_PROJECT_DIR}``
  in ``.mcp.json`` (it reports the variable missing; found with the real client, issue 24); it starts a
  project's servers in the directory it was started in and lists that directory as the MCP root, from
  which the server finds the project (its git top level: see
  :mod:`code_trajectory.recording.service`).
- The *local* scope (``claude mcp add --scope local``, the default of ``claude mcp add``) keeps a
  user's private servers for one project in ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json``
  when that is set) under ``projects["<absolute project path>"].mcpServers``, and wins over the
  project scope for the same name (scope table cited above). ``install claude-code --local`` writes
  there, with this machine's absolute executable.

Hooks (``install claude-code --hooks``) go to ``.claude/settings.json`` (``--local``:
``.claude/settings.local.json``): see :mod:`code_trajectory.clients.hooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from code_trajectory.clients.base import StdioClient
from code_trajectory.core.errors import InvalidArgumentError


class ClaudeCode(StdioClient):
    """``<project>/.mcp.json``, key ``mcpServers``, entry with ``"type": "stdio"``."""

    name = "claude-code"
    title = "Claude Code"
    servers_key = "mcpServers"
    with_type = True
    local_file_kept = True  # ~/.claude.json is Claude Code's own state
    docs = ("Connect Claude Code to tools via MCP - https://code.claude.com/docs/en/mcp",
            "Hooks reference - https://docs.anthropic.com/en/docs/claude-code/hooks")
    hint = "Claude Code asks to approve project servers from .mcp.json the next time it starts here."
    local_hint = "Claude Code starts it the next time it starts here (`claude mcp list` shows it, local scope)."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        return project / ".mcp.json"

    def local_config(self, project: Path, env: Mapping[str, str], platform: str) -> tuple[Path, tuple[str, ...]]:
        """``~/.claude.json`` (or ``$CLAUDE_CONFIG_DIR/.claude.json``), keys ``projects``, ``<project>``,
        ``mcpServers``.

        Raises:
            InvalidArgumentError: neither ``CLAUDE_CONFIG_DIR`` nor ``HOME`` (``USERPROFILE`` on Windows) is set.
        """
        base = env.get("CLAUDE_CONFIG_DIR") or env.get("HOME") or (env.get("USERPROFILE") if platform == "win32"
                                                                    else None)
        if not base:
            raise InvalidArgumentError("cannot locate Claude Code's ~/.claude.json: HOME is not set; set HOME")
        return Path(base) / ".claude.json", ("projects", str(project), "mcpServers")


CLIENT = ClaudeCode()
