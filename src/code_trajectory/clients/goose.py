"""Goose: the ``extensions`` mapping of the user's ``config.yaml``.

Location and format, as verified (docs corpus, 2026), "Configuration Overview" -
https://block.github.io/goose/docs/guides/config-files: the file is ``~/.config/goose/config.yaml`` on macOS and
Linux and ``%APPDATA%\\Block\\goose\\config\\config.yaml`` on Windows (we honour an absolute ``XDG_CONFIG_HOME``, as
Goose's XDG directory strategy does); extensions sit under ``extensions``, keyed by name, and a stdio (command-line)
one is ``{enabled, type: stdio, name, cmd, args, envs, timeout, description}`` (same page, "Extensions", and the
example in https://www.mintlify.com/block/goose/api/extensions/overview). The file is edited with ``ruamel.yaml``
(:mod:`.docfile`), which keeps its comments and layout. Per user: one entry per project.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import Exe, UserFileClient

#: Seconds Goose waits for a tool call (its documented default for new extensions).
TIMEOUT = 300


class Goose(UserFileClient):
    """Goose's ``config.yaml``, key ``extensions``, entry ``{enabled, type: stdio, name, cmd, args, ...}``."""

    name = "goose"
    title = "Goose"
    servers_key = "extensions"
    file_format = "yaml"
    docs: tuple[str, ...] = ("Goose configuration files - https://block.github.io/goose/docs/guides/config-files",)
    hint = "Start a new Goose session to load the extension (goose session, or a new chat in Goose Desktop)."

    appdata_path = ("Block", "goose", "config", "config.yaml")
    xdg_path = ("goose", "config.yaml")

    def entry(self, exe: Exe, project: Path | str | None) -> dict[str, Any]:
        command, args = self.server_command(exe, project)
        where = Path(project) if project is not None else Path.cwd()  # a per-user file: always the absolute project
        return {"enabled": True, "type": "stdio", "name": self.entry_name(where), "cmd": command, "args": args,
                "envs": {}, "timeout": TIMEOUT,
                "description": f"code-trajectory: how the code of {where.name or where} evolved"}

    def named(self, entry: dict[str, Any], name: str) -> dict[str, Any]:
        return {**entry, "name": name}

    def as_stdio(self, entry: Any) -> Any:
        if isinstance(entry, Mapping) and "cmd" in entry:
            return {"command": entry.get("cmd"), "args": entry.get("args", [])}
        return entry


CLIENT = Goose()
