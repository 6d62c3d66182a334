"""Codex CLI: the ``[mcp_servers.<name>]`` tables of the project's ``.codex/config.toml`` (shared), or with
``--local`` of the user's ``~/.codex/config.toml``.

Location and format, as verified (docs corpus, 2026): Codex keeps MCP servers in ``config.toml``, one
``[mcp_servers.<name>]`` table each; a stdio server has ``command`` and optional ``args``, ``env``, ``cwd`` ("Codex
MCP", Codex's ``docs/config.md``, https://github.com/openai/codex/pull/6845.diff;
https://www.mcpbundles.com/guides/codex). Config layers: the user's ``$CODEX_HOME/config.toml`` (``CODEX_HOME``
defaults to ``~/.codex``; ``%USERPROFILE%\\.codex`` on Windows) and, in a trusted project, the project's
``.codex/config.toml`` (with ``hooks.json`` beside it: https://developers.openai.com/codex/hooks).

- ``install codex`` writes the shared project file: ``code-trajectory serve`` by name, no ``--project``. As
  measured with Codex CLI 0.169 (``tests/e2e/test_codex_cli.py``): a trusted project's servers start with the
  session, in its working directory (a subdirectory of the project too), so the server finds the project (its git
  top level), and a worktree or a clone records itself. Codex reads the project's ``.codex/`` only once the
  project is trusted (its prompt, or ``[projects."<path>"] trust_level = "trusted"`` in the user's file).
- ``install codex --local`` writes the user's file instead, one entry per project with this machine's absolute
  executable and ``--project`` (naming as claude-desktop's): every Codex session, wherever it runs, starts the
  servers of that file.

The files are edited with ``tomlkit`` (:mod:`.docfile`), which keeps comments and layout. ``codex mcp list`` shows
the server (``tests/clients/test_clients_cli_list.py``). Its hooks (``install codex --hooks``) go to the
project's ``.codex/hooks.json``: see :mod:`code_trajectory.clients.hooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import UserFileClient
from code_trajectory.clients.userdirs import home


class Codex(UserFileClient):
    """``<project>/.codex/config.toml`` (``--local``: ``$CODEX_HOME/config.toml``, default ``~/.codex``), tables
    ``[mcp_servers.<name>]``."""

    name = "codex"
    title = "Codex CLI"
    servers_key = "mcp_servers"
    file_format = "toml"
    global_config = False  # the project's file; the user's (--local) is global: local_is_global
    shared = True
    local_is_global = True
    docs: tuple[str, ...] = ("Codex configuration: MCP servers - https://github.com/openai/codex/blob/main/docs/config.md",
                             "Hooks - https://developers.openai.com/codex/hooks")
    hint = ("Codex reads the project's .codex/ once you trust the project (it asks), then starts the server in its "
            "next session (`codex mcp list` shows it); hooks run once you review them (/hooks).")
    local_hint = "Codex starts it in its next session, wherever it runs (`codex mcp list` shows it)."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        """``<project>/.codex/config.toml`` (``env`` and ``platform`` are not used)."""
        return project / ".codex" / "config.toml"

    def local_config(self, project: Path, env: Mapping[str, str], platform: str) -> tuple[Path, tuple[str, ...]]:
        """``$CODEX_HOME/config.toml`` (an absolute ``CODEX_HOME``), else ``~/.codex/config.toml``; key
        ``mcp_servers``.

        Raises:
            InvalidArgumentError: the environment lacks ``HOME`` (``USERPROFILE`` on Windows).
        """
        codex_home = env.get("CODEX_HOME", "")
        if codex_home and Path(codex_home).is_absolute():
            return Path(codex_home) / "config.toml", (self.servers_key,)
        return home(env, platform, self.title) / ".codex" / "config.toml", (self.servers_key,)

    def new_servers(self) -> Any:
        import tomlkit

        return tomlkit.table(is_super_table=True)  # no bare [mcp_servers] header: only [mcp_servers.<name>]


CLIENT = Codex()
