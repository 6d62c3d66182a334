"""Continue: a block file ``.continue/mcpServers/code-trajectory.yaml`` in the project.

Location and format, as verified (docs corpus, 2026), Continue's "MCP" deep dive -
https://docs.continue.dev/customize/deep-dives/mcp (its example as changed in
https://github.com/continuedev/continue/pull/8021/files, and
https://www.developersdigest.tech/mcp-servers/clients/continue): Continue loads every YAML block file in
``.continue/mcpServers/`` at the workspace root; a block has ``name``, ``version``, ``schema: v1`` and an
``mcpServers`` *list* whose items carry ``name``, ``type`` (``stdio``), ``command``, ``args`` and optional ``env``.
The block file is ours alone: uninstall deletes it once it holds no server. The file is edited with
``ruamel.yaml`` (:mod:`.docfile`), so hand edits to it are kept.

The block is shared (meant to be committed): ``code-trajectory serve`` by name, no ``--project``. Continue starts a
stdio server in the workspace root unless the block gives a ``cwd`` (``resolveCwd`` in Continue's
``core/context/mcp/MCPConnection.ts``, https://github.com/continuedev/continue; the ``cwd`` key came with
https://github.com/continuedev/continue/pull/6280) and declares no MCP roots, so the server finds the project
from its working directory: the git top level above it (a worktree or a clone records itself).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import SERVER_NAME, Exe, StdioClient, kind_of


class NamedList(MutableMapping[str, Any]):
    """A list of ``{"name": ..., ...}`` items seen as a mapping from name to item (first one wins on reads).

    Setting a name replaces that item in place (or appends); deleting removes every item of that name. Items that
    are not mappings with a string ``name`` are kept and invisible.
    """

    def __init__(self, items: list[Any]) -> None:
        self._items = items

    def _named(self, key: str) -> list[int]:
        return [i for i, item in enumerate(self._items) if isinstance(item, Mapping) and item.get("name") == key]

    def __getitem__(self, key: str) -> Any:
        found = self._named(key)
        if not found:
            raise KeyError(key)
        return self._items[found[0]]

    def __setitem__(self, key: str, value: Any) -> None:
        value = {"name": key, **{k: v for k, v in value.items() if k != "name"}}
        found = self._named(key)
        if found:
            self._items[found[0]] = value
        else:
            self._items.append(value)

    def __delitem__(self, key: str) -> None:
        found = self._named(key)
        if not found:
            raise KeyError(key)
        for i in reversed(found):
            del self._items[i]

    def __iter__(self) -> Iterator[str]:
        seen: list[str] = []
        for item in self._items:
            name = item.get("name") if isinstance(item, Mapping) else None
            if isinstance(name, str) and name not in seen:
                seen.append(name)
        return iter(seen)

    def __len__(self) -> int:
        return len(list(iter(self)))


class Continue(StdioClient):
    """``<project>/.continue/mcpServers/code-trajectory.yaml``: a block whose ``mcpServers`` list holds our item."""

    name = "continue"
    title = "Continue"
    servers_key = "mcpServers"
    file_format = "yaml"
    owns_file = True
    docs: tuple[str, ...] = ("Continue MCP - https://docs.continue.dev/customize/deep-dives/mcp",)
    hint = "Continue loads .continue/mcpServers/ blocks in agent mode; reload the window if it does not show."

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        return project / ".continue" / "mcpServers" / f"{SERVER_NAME}.yaml"

    def entry(self, exe: Exe, project: Path | str | None) -> dict[str, Any]:
        command, args = self.server_command(exe, project)
        return {"name": SERVER_NAME, "type": "stdio", "command": command, "args": args}  # one project per file

    def named(self, entry: dict[str, Any], name: str) -> dict[str, Any]:
        return {**entry, "name": name}

    def servers(self, data: MutableMapping[str, Any]) -> tuple[MutableMapping[str, Any], str | None]:
        for key, value in (("name", SERVER_NAME), ("version", "0.0.1"), ("schema", "v1")):
            if key not in data:
                data[key] = value
        found = data.get(self.servers_key)
        note = None
        if not isinstance(found, list):
            if self.servers_key in data:
                note = f'"{self.servers_key}" held {kind_of(found)}, not a list; it was replaced'
            data[self.servers_key] = []
        return NamedList(data[self.servers_key]), note


CLIENT = Continue()
