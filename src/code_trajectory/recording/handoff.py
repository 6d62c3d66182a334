"""Edits handed over to the recording process: what an agent's edit hook does when a watcher or server records.

An ``edit`` hook (Claude Code's ``PostToolUse``, see ``clients/hook_events.py``) must tag the file an agent's tool
just wrote with its origin (``Trajectory-Origin: claude-code; tool=Edit; session=…``) and the session's intent. When
a process records the project (it holds ``.trajectory/recorder.lock``), the hook does not snapshot on its own (that
costs a Python process the recorder, git plumbing and ``pathspec``): it writes one small file and exits, and the
recording process takes the snapshot (issue 29: a hook within ~30 ms of Python's own start-up when a server records).

The hand-over, in ``.trajectory/state/requests/`` beside the checkpoint requests
(:mod:`code_trajectory.recording.checkpoint_requests`, which also claims and reads these files):

1. the hook writes ``<id>.edit`` (``<id>``: 32 random hex digits) atomically (:func:`code_trajectory.core.atomic.
   replace_file`), JSON ``{"path": str, "client": str, "tool": str, "session": str}``; ``path`` relative to the
   project root, as the hook confined it;
2. the recording process claims it (``rename`` to ``<id>.taken``), validates it (:func:`parse_edit`: exact keys,
   bounded strings, names of letters, digits and ``._-`` only, a path confined to the project), snapshots the path
   with that origin for that agent session, and removes the claim. No answer is written: the hook is gone.

A hand-over the recorder never claims (it died between the hook's probe and the file) is removed as stale after
a minute; the edit itself is not lost: the next recorder's start-up scan records it (without the tool's tag).

This module is imported by the hook on every edit: standard library, :mod:`code_trajectory.core.atomic` and
:mod:`code_trajectory.recording.liveness` (whose :func:`recording_now` probes the lock) only.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.recording.liveness import recording_now

__all__ = ["EDIT_KIND", "REQUEST_DIR", "HandedOverEdit", "edit_origin", "hand_over_edit", "parse_edit",
           "recording_now"]

#: The directory under ``.trajectory/state`` holding requests (shared with the checkpoint requests).
REQUEST_DIR = "requests"
#: Suffix of an edit hand-over file.
EDIT_KIND = "edit"
#: Longest path, client, tool and session accepted in a hand-over, characters.
MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 64
_NAME = re.compile(r"^[A-Za-z0-9._-]*$")


class HandedOverEdit:
    """One validated hand-over: ``path`` (relative to the project root), ``client``, ``tool``, ``session``."""

    __slots__ = ("client", "path", "session", "tool")

    def __init__(self, path: str, client: str, tool: str, session: str) -> None:
        self.path, self.client, self.tool, self.session = path, client, tool, session

    @property
    def origin(self) -> str:
        """The snapshot's ``Trajectory-Origin`` (:func:`edit_origin`)."""
        return edit_origin(self.client, self.tool, self.session)


def edit_origin(client: str, tool: str, session: str) -> str:
    """``<client>; tool=<tool>[; session=<session>]``: who made an edit, as a snapshot's ``Trajectory-Origin``."""
    return f"{client}; tool={tool}" + (f"; session={session}" if session else "")


def hand_over_edit(state_dir: Path, path: str, *, client: str, tool: str, session: str) -> bool:
    """Write the hand-over of an edit of ``path`` (relative to the project root) for the recording process.

    Returns:
        True when written; False when it could not be (no requests directory, a full disk...): the caller then
        records the edit itself.
    """
    payload = {"path": path, "client": client[:MAX_NAME_CHARS], "tool": tool[:MAX_NAME_CHARS],
               "session": session[:MAX_NAME_CHARS]}
    try:
        replace_file(state_dir / REQUEST_DIR / f"{os.urandom(16).hex()}.{EDIT_KIND}", json.dumps(payload),
                     mode=0o600, fsync=False)
    except OSError:
        return False
    return True


def parse_edit(data: bytes) -> HandedOverEdit:
    """Validate a hand-over file's bytes (untrusted: anything running as the user can write there).

    Raises:
        ValueError: not a JSON object of exactly ``path`` (a relative path of at most :data:`MAX_PATH_CHARS`
            characters, no NUL, no ``..`` part), ``client``, ``tool`` and ``session`` (at most
            :data:`MAX_NAME_CHARS` characters of letters, digits and ``._-``; ``client`` and ``tool`` not empty).
    """
    payload = json.loads(data.decode("utf-8"))
    if not isinstance(payload, dict) or set(payload) != {"path", "client", "tool", "session"}:
        raise ValueError("an edit hand-over is an object with exactly the keys path, client, tool and session")
    path, client, tool, session = (payload[k] for k in ("path", "client", "tool", "session"))
    if (not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or "\0" in path
            or path.startswith("/") or ".." in path.replace("\\", "/").split("/")):
        raise ValueError("path must be a non-empty relative path inside the project")
    for name, value in (("client", client), ("tool", tool), ("session", session)):
        if not isinstance(value, str) or len(value) > MAX_NAME_CHARS or not _NAME.match(value):
            raise ValueError(f"{name} must be at most {MAX_NAME_CHARS} letters, digits or ._-")
    if not client or not tool:
        raise ValueError("client and tool must not be empty")
    return HandedOverEdit(path, client, tool, session)
