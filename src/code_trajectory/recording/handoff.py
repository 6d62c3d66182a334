"""Edits handed over to the recording process: what an agent's edit hook does when a watcher or server records.

An ``edit`` hook (Claude Code's ``PostToolUse``, see ``clients/hook_events.py``) must tag the file an agent's tool
just wrote with its origin (``Trajectory-Origin: claude-code; tool=Edit; session=…``) and the session's intent. The
hook does not snapshot on its own (that costs a Python process the recorder, git plumbing and ``pathspec``): it
writes one small file and exits, and the recording process takes the snapshot (issue 29: a hook within ~30 ms of
Python's own start-up when a server records). When no process records the project (nobody holds
``.trajectory/recorder.lock``), the hook starts a detached worker that records the hand-overs and exits
(:mod:`code_trajectory.recording.edit_worker`).

The hand-over, in ``.trajectory/state/requests/`` beside the checkpoint requests
(:mod:`code_trajectory.recording.checkpoint_requests`, which also claims and reads these files):

1. the hook writes ``<id>.edit`` (``<id>``: 32 random hex digits) atomically (:func:`code_trajectory.core.atomic.
   replace_file`), JSON ``{"paths": [str, ...], "client": str, "tool": str, "session": str}``; ``paths`` (one
   tool call's files: Codex's ``apply_patch`` may name several, snapshotted together) relative to the project root,
   as the hook confined them;
2. the recording process claims it (``rename`` to ``<id>.taken``), validates it (:func:`parse_edit`: exact keys,
   bounded strings, names of letters, digits and ``._-`` only, paths confined to the project), snapshots the paths
   with that origin for that agent session, and removes the claim. No answer is written: the hook is gone.

A hand-over nobody claims (the recorder exited between the hook's file and its probe, a worker was killed) waits
for the next recording process, which claims it once its start-up scan is done, or for the next edit hook's worker,
which claims every hand-over it finds; a server that is not ready yet removes one older than a minute (its
start-up scan records the edit, without the tool's tag). The edit itself is never lost.

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

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook imports this module)

if TYPE_CHECKING:
    from code_trajectory.recording.recorder import Recorder

__all__ = ["EDIT_KIND", "REQUEST_DIR", "HandedOverEdit", "edit_origin", "hand_over_edit", "parse_edit",
           "record_handed_over", "recording_now"]

#: The directory under ``.trajectory/state`` holding requests (shared with the checkpoint requests).
REQUEST_DIR = "requests"
#: Suffix of an edit hand-over file.
EDIT_KIND = "edit"
#: Longest path, client, tool and session accepted in a hand-over, characters; most paths in one hand-over; largest
#: hand-over file read, bytes.
MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 64
MAX_PATHS = 64
MAX_HANDOVER_BYTES = 64 * 1024
_NAME = re.compile(r"^[A-Za-z0-9._-]*$")


class HandedOverEdit:
    """One validated hand-over: ``paths`` (relative to the project root), ``client``, ``tool``, ``session``."""

    __slots__ = ("client", "paths", "session", "tool")

    def __init__(self, paths: list[str], client: str, tool: str, session: str) -> None:
        self.paths, self.client, self.tool, self.session = paths, client, tool, session

    @property
    def origin(self) -> str:
        """The snapshot's ``Trajectory-Origin`` (:func:`edit_origin`)."""
        return edit_origin(self.client, self.tool, self.session)


def edit_origin(client: str, tool: str, session: str) -> str:
    """``<client>; tool=<tool>[; session=<session>]``: who made an edit, as a snapshot's ``Trajectory-Origin``."""
    return f"{client}; tool={tool}" + (f"; session={session}" if session else "")


def hand_over_edit(state_dir: Path, paths: list[str], *, client: str, tool: str, session: str) -> bool:
    """Write the hand-over of one tool call's edit of ``paths`` (relative to the project root, at most
    :data:`MAX_PATHS`) for the recording process, which snapshots them together.

    Returns:
        True when written; False when it could not be (more than :data:`MAX_PATHS` paths or
        :data:`MAX_HANDOVER_BYTES` bytes, no requests directory, a full disk...): the caller then records the edit
        itself.
    """
    if not 1 <= len(paths) <= MAX_PATHS:
        return False  # the hook records so many files itself: one snapshot, none left out
    payload = json.dumps({"paths": paths, "client": client[:MAX_NAME_CHARS], "tool": tool[:MAX_NAME_CHARS],
                          "session": session[:MAX_NAME_CHARS]})
    if len(payload.encode()) > MAX_HANDOVER_BYTES:
        return False
    directory = state_dir / REQUEST_DIR
    try:
        if not directory.is_dir() and state_dir.is_dir() and not state_dir.is_symlink():
            directory.mkdir(mode=0o700, exist_ok=True)  # a history only hooks recorded so far: no server made it
        replace_file(directory / f"{os.urandom(16).hex()}.{EDIT_KIND}", payload, mode=0o600, fsync=False)
    except OSError:
        return False
    return True


def record_handed_over(recorder: Recorder, edit: HandedOverEdit) -> None:
    """Snapshot the files of one hand-over together, tagged with its origin and carrying its agent session's
    intent (what the recording process and the edit worker do with a claimed hand-over); a path outside the
    project is ignored with a warning.

    Raises:
        TrajectoryError: the snapshot could not be written.
    """
    import logging

    from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError
    from code_trajectory.project import confine

    rels = []
    for path in edit.paths:
        try:
            rels.append(confine(recorder.root, path))
        except (PathOutsideProjectError, InvalidArgumentError):
            logging.getLogger(__name__).warning("ignored a handed-over edit outside the project: %r", path)
    if rels:
        with recorder.acting_for(edit.session or None):
            recorder.record_paths(rels, origin=edit.origin)


def parse_edit(data: bytes) -> HandedOverEdit:
    """Validate a hand-over file's bytes (untrusted: anything running as the user can write there).

    Raises:
        ValueError: not a JSON object of exactly ``paths`` (1 to :data:`MAX_PATHS` relative paths of at most
            :data:`MAX_PATH_CHARS` characters each, no NUL, no ``..`` part), ``client``, ``tool`` and ``session`` (at most
            :data:`MAX_NAME_CHARS` characters of letters, digits and ``._-``; ``client`` and ``tool`` not empty).
    """
    payload = json.loads(data.decode("utf-8"))
    if not isinstance(payload, dict) or set(payload) != {"paths", "client", "tool", "session"}:
        raise ValueError("an edit hand-over is an object with exactly the keys paths, client, tool and session")
    paths, client, tool, session = (payload[k] for k in ("paths", "client", "tool", "session"))
    if not isinstance(paths, list) or not 1 <= len(paths) <= MAX_PATHS:
        raise ValueError(f"paths must be a list of 1 to {MAX_PATHS} paths")
    for path in paths:
        if (not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or "\0" in path
                or path.startswith("/") or ".." in path.replace("\\", "/").split("/")):
            raise ValueError("each path must be a non-empty relative path inside the project")
    for name, value in (("client", client), ("tool", tool), ("session", session)):
        if not isinstance(value, str) or len(value) > MAX_NAME_CHARS or not _NAME.match(value):
            raise ValueError(f"{name} must be at most {MAX_NAME_CHARS} letters, digits or ._-")
    if not client or not tool:
        raise ValueError("client and tool must not be empty")
    return HandedOverEdit(paths, client, tool, session)
