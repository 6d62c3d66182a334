"""Zed: the ``context_servers`` object of the user's ``settings.json``.

Location and format, as verified (docs corpus, 2026): Zed calls MCP servers *context servers*; a custom one is
added to ``settings.json`` as ``"context_servers": {"<name>": {"source": "custom", "command": ..., "args": [...],
"env": {}}}`` (Zed docs "Model Context Protocol", https://zed.dev/docs/ai/mcp; key and shape also in
https://you.com/docs/build-with-agents/agent-harnesses/zed.md). Older Zed wrote ``"command": {"path", "args",
"env"}`` (https://zed.dev/docs/assistant/context-servers); such an entry of ours is still recognised, and
rewritten in the current shape. The user settings file is ``~/.config/zed/settings.json`` on macOS and Linux
(``$XDG_CONFIG_HOME/zed`` when set) and ``%APPDATA%\\Zed\\settings.json`` on Windows (as documented by
https://docs.rs/sqz-engine/2.1.1/src/sqz_engine/zed_integration.rs.html). It is JSONC: Zed's template holds
comments, which a rewrite drops, so :mod:`.jsonfile` backs the file up first. Per user: one entry per project.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import Exe, UserFileClient


class Zed(UserFileClient):
    """Zed's user ``settings.json``, key ``context_servers``, entry ``{"source": "custom", "command", "args"}``."""

    name = "zed"
    title = "Zed"
    servers_key = "context_servers"
    docs: tuple[str, ...] = ("Model Context Protocol - https://zed.dev/docs/ai/mcp",)
    hint = "Zed picks the change up on its own; the server shows in the Agent panel's settings."

    appdata_path = ("Zed", "settings.json")
    xdg_path = ("zed", "settings.json")

    def entry(self, exe: Exe, project: Path | str | None) -> dict[str, Any]:
        command, args = self.server_command(exe, project)
        return {"source": "custom", "command": command, "args": args}

    def as_stdio(self, entry: Any) -> Any:
        if isinstance(entry, Mapping) and isinstance(entry.get("command"), Mapping):
            old = entry["command"]
            return {"command": old.get("path"), "args": old.get("args", [])}
        return entry


CLIENT = Zed()
