"""Zed: the ``context_servers`` object of the project's ``.zed/settings.json`` (shared), or with ``--local`` of the
user's ``settings.json``.

Location and format, as verified (docs corpus, 2026): Zed calls MCP servers *context servers*; a custom one is
added to ``settings.json`` as ``"context_servers": {"<name>": {"source": "custom", "command": ..., "args": [...],
"env": {}}}`` (Zed docs "Model Context Protocol", https://zed.dev/docs/ai/mcp; key and shape also in
https://you.com/docs/build-with-agents/agent-harnesses/zed.md). Older Zed wrote ``"command": {"path", "args",
"env"}`` (https://zed.dev/docs/assistant/context-servers); such an entry of ours is still recognised, and
rewritten in the current shape. Settings are layered: the project's ``.zed/settings.json`` (Zed docs
"Configuring Zed": project settings) over the user's ``~/.config/zed/settings.json`` (``$XDG_CONFIG_HOME/zed``
when set; ``%APPDATA%\\Zed\\settings.json`` on Windows, as documented by
https://docs.rs/sqz-engine/2.1.1/src/sqz_engine/zed_integration.rs.html). Both are JSONC, edited in place
(:mod:`.jsonfile`), so comments and trailing commas stay.

- ``install zed`` writes the shared project file: ``code-trajectory serve`` by name, no ``--project``. Zed starts
  a project's context servers in the project's root directory (zed-industries/zed#35354; a server started before
  the worktree opened ran in ``/``, fixed by restarting it once the directory is known, zed#60879 / #61365) and
  offers no MCP roots (zed#53155 was declined), so the server finds the project from its working directory: the
  git top level above it (a worktree or a clone records itself). A server started in ``/`` or the home directory
  records nothing (:func:`code_trajectory.project.check_recordable`): the agent is told to call
  ``configure_project``.
- ``install zed --local`` writes the user's file instead, one entry per project with this machine's absolute
  executable and ``--project`` (naming as claude-desktop's).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import Exe, UserFileClient


class Zed(UserFileClient):
    """``<project>/.zed/settings.json`` (``--local``: the user's ``settings.json``), key ``context_servers``, entry
    ``{"source": "custom", "command", "args"}``."""

    name = "zed"
    title = "Zed"
    servers_key = "context_servers"
    global_config = False  # the project's file; the user's (--local) is global: local_is_global
    shared = True
    local_is_global = True
    docs: tuple[str, ...] = ("Model Context Protocol - https://zed.dev/docs/ai/mcp",
                             "Configuring Zed (project settings) - https://zed.dev/docs/configuring-zed")
    hint = "Zed picks the change up on its own; the server shows in the Agent panel's settings."

    appdata_path = ("Zed", "settings.json")
    xdg_path = ("zed", "settings.json")

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        """``<project>/.zed/settings.json`` (``env`` and ``platform`` are not used)."""
        return project / ".zed" / "settings.json"

    def local_config(self, project: Path, env: Mapping[str, str], platform: str) -> tuple[Path, tuple[str, ...]]:
        """The user's ``settings.json`` (see :class:`UserFileClient` for the per-OS rule), key ``context_servers``.

        Raises:
            InvalidArgumentError: the environment lacks ``HOME`` (``APPDATA`` on Windows).
        """
        return UserFileClient.config_path(self, project, env, platform), (self.servers_key,)

    def entry(self, exe: Exe, project: Path | str | None) -> dict[str, Any]:
        command, args = self.server_command(exe, project)
        return {"source": "custom", "command": command, "args": args}

    def as_stdio(self, entry: Any) -> Any:
        if isinstance(entry, Mapping) and isinstance(entry.get("command"), Mapping):
            old = entry["command"]
            return {"command": old.get("path"), "args": old.get("args", [])}
        return entry


CLIENT = Zed()
