"""Codex CLI: the ``[mcp_servers.<name>]`` tables of the user's ``~/.codex/config.toml``.

Location and format, as verified (docs corpus, 2026): Codex keeps MCP servers in ``$CODEX_HOME/config.toml``
(``CODEX_HOME`` defaults to ``~/.codex``; ``%USERPROFILE%\\.codex`` on Windows), one ``[mcp_servers.<name>]``
table each; a stdio server has ``command`` and optional ``args``, ``env``, ``cwd`` ("Codex MCP", Codex's
``docs/config.md``, https://github.com/openai/codex/pull/6845.diff; https://www.mcpbundles.com/guides/codex;
https://dev.to/vibeidedev/codex-mcp-add-configure-and-debug-mcp-servers-in-codex-cli-1j1p). A project's own
``.codex/config.toml`` is read only once the project is trusted, so we write the user file, which the Codex
CLI, IDE extension and app all read; one entry per project (naming as claude-desktop). The file is edited with
``tomlkit`` (:mod:`.docfile`), which keeps its comments and layout. ``codex mcp list`` shows the server
(``tests/clients/test_clients_cli_list.py``). Its hooks (``install codex --hooks``) go to the project's
``.codex/hooks.json``, meant to be committed: see :mod:`code_trajectory.clients.hooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import UserFileClient
from code_trajectory.clients.userdirs import home


class Codex(UserFileClient):
    """``$CODEX_HOME/config.toml`` (default ``~/.codex``), tables ``[mcp_servers.<name>]``."""

    name = "codex"
    title = "Codex CLI"
    servers_key = "mcp_servers"
    file_format = "toml"
    docs: tuple[str, ...] = ("Codex configuration: MCP servers - https://github.com/openai/codex/blob/main/docs/config.md",)
    hint = ("Codex starts the server in its next session; `codex mcp list` shows it. Hooks in .codex/hooks.json run "
            "in a trusted project once you review them (Codex asks; /hooks).")

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        codex_home = env.get("CODEX_HOME", "")
        if codex_home and Path(codex_home).is_absolute():
            return Path(codex_home) / "config.toml"
        return home(env, platform, self.title) / ".codex" / "config.toml"

    def new_servers(self) -> Any:
        import tomlkit

        return tomlkit.table(is_super_table=True)  # no bare [mcp_servers] header: only [mcp_servers.<name>]


CLIENT = Codex()
