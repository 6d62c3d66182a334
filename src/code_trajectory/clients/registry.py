"""The clients ``install`` knows, by command-line name.

To add a client: write a module with a ``CLIENT`` object satisfying
:class:`code_trajectory.clients.base.Client` and list it in :data:`CLIENTS`.
"""

from __future__ import annotations

from code_trajectory.clients import (
    claude_code,
    claude_desktop,
    cline,
    codex,
    continue_dev,
    cursor,
    gemini,
    goose,
    vscode,
    windsurf,
    zed,
)
from code_trajectory.clients.base import Client
from code_trajectory.core.errors import InvalidArgumentError

#: Every client by name, in the order shown to people.
CLIENTS: dict[str, Client] = {c.name: c for c in (claude_code.CLIENT, claude_desktop.CLIENT, cursor.CLIENT,
                                                  vscode.CLIENT, gemini.CLIENT, codex.CLIENT, windsurf.CLIENT,
                                                  zed.CLIENT, cline.CLIENT, continue_dev.CLIENT, goose.CLIENT)}


def client(name: str) -> Client:
    """The client called ``name``.

    Raises:
        InvalidArgumentError: no client has that name; the message lists the valid names.
    """
    try:
        return CLIENTS[name]
    except KeyError:
        raise InvalidArgumentError(f"unknown client {name!r}; choose one of: {', '.join(CLIENTS)}") from None
