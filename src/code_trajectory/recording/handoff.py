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

1. the hook writes ``<id>.edit`` atomically (:func:`code_trajectory.core.atomic.replace_file`); ``<id>`` is 32 hex
   digits, the hook's ``time.time_ns()`` (16) then 16 random ones, so that the names sort in the order the hooks
   ran. JSON ``{"paths": [str, ...], "client": str, "tool": str, "session": str, "contents": {path: null |
   {"exec": bool, "data": base64}}}``: ``paths`` (one tool call's files: Codex's ``apply_patch`` may name several,
   snapshotted together) relative to the project root, as the hook confined them; ``contents`` each regular file's
   bytes and executable bit as the hook read them (null: the file did not exist), so that the snapshot holds this
   tool call's result even when it is taken after the agent's next edit of the same file (a path not in
   ``contents``, a symlink or a directory, is read from the work tree when recorded); ``before`` (optional) each
   file's content before the tool call, as the tool said (Claude Code's ``tool_response.originalFile``, kept only
   when applying the tool's edit to it gives the content pinned), the same format: an initial import that runs
   while the hand-over waits records the file at that state (:mod:`~code_trajectory.recording.import_handovers`),
   so that the hand-over then records the edit with its origin and intent;
2. the recording process claims the hand-overs oldest first (``rename`` to ``<id>.claimed``), validates each
   (:func:`parse_edit`: exact keys, bounded strings, names of letters, digits and ``._-`` only, paths confined to
   the project, strict base64), snapshots its paths with that content and origin for that agent session, and
   removes the claim. No answer is written: the hook is gone. Every snapshot of the work tree records the waiting
   hand-overs first (:meth:`code_trajectory.recording.recorder.Recorder.record_handovers`, under
   ``.trajectory/write.lock``), so a hand-over never lands after a newer state of its file, nor is it folded into
   another snapshot that would leave it nothing to tag.

A hand-over nobody claimed (the recorder exited between the hook's file and its probe, a worker was killed) waits
for the next recording process or snapshot, or for the next edit hook's worker, which claims every hand-over it
finds; a server that is not ready yet removes one older than a minute. The edit itself is never lost.

This module is imported by the hook on every edit: standard library (``base64`` only when a file is pinned),
:mod:`code_trajectory.core.atomic` and :mod:`code_trajectory.recording.liveness` (whose :func:`recording_now` probes
the lock) only.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.recording.liveness import recording_now

__all__ = ["EDIT_KIND", "REQUEST_DIR", "HandedOverEdit", "Pinned", "edit_origin", "hand_over_edit", "parse_edit",
           "pin", "recording_now", "waiting"]

#: The directory under ``.trajectory/state`` holding requests (shared with the checkpoint requests).
REQUEST_DIR = "requests"
#: Suffix of an edit hand-over file.
EDIT_KIND = "edit"
#: Longest path, client, tool and session accepted in a hand-over, characters; most paths in one hand-over; most
#: bytes of file content one hand-over pins (a larger edit is recorded by the hook itself); largest hand-over file
#: read, bytes (the pinned content in base64, 4/3 of it, and the rest).
MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 64
MAX_PATHS = 64
MAX_PINNED_BYTES = 1 << 20
MAX_HANDOVER_BYTES = MAX_PINNED_BYTES * 4 // 3 + 64 * 1024
_NAME = re.compile(r"^[A-Za-z0-9._-]*$")
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

#: What a hand-over knows of one path's content: ``(executable, bytes)`` of a regular file, or None (no file there).
Pinned = tuple[bool, bytes] | None


class HandedOverEdit:
    """One validated hand-over: ``paths`` (relative to the project root), ``client``, ``tool``, ``session``,
    ``contents``: the content the hook read for some of ``paths`` (see :data:`Pinned`), and ``before``: the content
    some of ``paths`` held before the tool call, as the tool said."""

    __slots__ = ("before", "client", "contents", "paths", "session", "tool")

    def __init__(self, paths: list[str], client: str, tool: str, session: str,
                 contents: dict[str, Pinned] | None = None, before: dict[str, Pinned] | None = None) -> None:
        self.paths, self.client, self.tool, self.session = paths, client, tool, session
        self.contents: dict[str, Pinned] = contents or {}
        self.before: dict[str, Pinned] = before or {}

    @property
    def origin(self) -> str:
        """The snapshot's ``Trajectory-Origin`` (:func:`edit_origin`)."""
        return edit_origin(self.client, self.tool, self.session)


def edit_origin(client: str, tool: str, session: str) -> str:
    """``<client>; tool=<tool>[; session=<session>]``: who made an edit, as a snapshot's ``Trajectory-Origin``."""
    return f"{client}; tool={tool}" + (f"; session={session}" if session else "")


def pin(root: Path, rel: str, limit: int) -> Pinned | str:
    """The content of the file at ``rel`` (relative to ``root``) now: ``(executable, bytes)`` of a regular file of
    at most ``limit`` bytes, None when nothing is there; ``"work tree"`` when it must be read when recorded (a
    symlink, a directory, anything but a regular file, a name on the secret deny list or a content that is a
    secret: never copied into the hand-over, the recorder applies its policy to the work tree's file) and ``"too
    large"`` over ``limit``. The file is opened without following a symlink and never blocks (a FIFO)."""
    from code_trajectory.core.secrets import denied_by_default

    if denied_by_default(rel):
        return "work tree"
    try:
        fd = os.open(root / rel, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return "work tree"  # a symlink (ELOOP), no permission: as recorded from the work tree
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "work tree"
        if st.st_size > limit:
            return "too large"
        chunks, size = [], 0
        while chunk := os.read(fd, max(limit + 1 - size, 1)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return "too large"
        data = b"".join(chunks)
        from code_trajectory.core.secrets import secret_content  # a substring test unless a key's mark is there

        if secret_content(data):  # never copied to disk: the recorder reads it and keeps it out
            return "work tree"
        return bool(st.st_mode & 0o100), data
    except OSError:
        return "work tree"
    finally:
        os.close(fd)


def hand_over_edit(state_dir: Path, paths: list[str], *, root: Path, client: str, tool: str, session: str,
                   told: dict[str, tuple[str | None, str]] | None = None) -> bool:
    """Write the hand-over of one tool call's edit of ``paths`` (relative to ``root``, the project root, at most
    :data:`MAX_PATHS`) for the recording process, which snapshots them together with the content read here.

    ``told``: what the tool said some of ``paths`` held, ``{path: (text before or None when it created the file,
    text after)}`` (untrusted): the text before is pinned as the hand-over's ``before`` when the text after, encoded
    in UTF-8, is the content read here, no secret is in it and it fits in what is left of
    :data:`MAX_PINNED_BYTES`; else it is left out (the edit is handed over all the same).

    Returns:
        True when written; False when it could not be (more than :data:`MAX_PATHS` paths, more than
        :data:`MAX_PINNED_BYTES` bytes of content, no requests directory, a full disk...): the caller then records
        the edit itself.
    """
    if not 1 <= len(paths) <= MAX_PATHS:
        return False  # the hook records so many files itself: one snapshot, none left out
    contents: dict[str, dict | None] = {}
    read: dict[str, tuple[bool, bytes]] = {}
    budget = MAX_PINNED_BYTES
    for rel in paths:
        found = pin(root, rel, budget)
        if found == "too large":
            return False
        if found is None or isinstance(found, tuple):
            if found is not None:
                import base64

                budget -= len(found[1])
                read[rel] = found
            contents[rel] = None if found is None else {"exec": found[0],
                                                        "data": base64.b64encode(found[1]).decode("ascii")}
    fields = {"paths": paths, "client": client[:MAX_NAME_CHARS], "tool": tool[:MAX_NAME_CHARS],
              "session": session[:MAX_NAME_CHARS], "contents": contents}
    if before := _told_before(told or {}, read, budget):
        fields["before"] = before
    payload = json.dumps(fields)
    if len(payload) > MAX_HANDOVER_BYTES:  # ASCII: json.dumps escapes the rest
        return False
    directory = state_dir / REQUEST_DIR
    try:
        if not directory.is_dir() and state_dir.is_dir() and not state_dir.is_symlink():
            directory.mkdir(mode=0o700, exist_ok=True)  # a history only hooks recorded so far: no server made it
        # the name sorts in the order the hooks ran: the recording process records the hand-overs in that order
        name = f"{time.time_ns() & (1 << 64) - 1:016x}{os.urandom(8).hex()}.{EDIT_KIND}"
        replace_file(directory / name, payload, mode=0o600, fsync=False)
    except OSError:
        return False
    return True


def _told_before(told: dict[str, tuple[str | None, str]], read: dict[str, tuple[bool, bytes]],
                 budget: int) -> dict[str, dict | None]:
    """The ``before`` of a hand-over: each path of ``told`` whose text after is the content ``read`` there, with
    the text before (see :func:`hand_over_edit`), within ``budget`` bytes."""
    import base64

    before: dict[str, dict | None] = {}
    for rel, (old, new) in told.items():
        pinned = read.get(rel)
        if pinned is None or not isinstance(old, (str, type(None))) or not isinstance(new, str):
            continue  # no content pinned after the edit: nothing to check the tool's word against
        try:
            if pinned[1] != new.encode("utf-8"):
                continue  # another encoding, line endings the tool changed, or a later save
            data = None if old is None else old.encode("utf-8")
        except UnicodeEncodeError:
            continue
        if data is not None:
            from code_trajectory.core.secrets import secret_content

            if len(data) > budget or secret_content(data):
                continue
            budget -= len(data)
        before[rel] = None if data is None else {"exec": pinned[0],
                                                 "data": base64.b64encode(data).decode("ascii")}
    return before


def parse_edit(data: bytes) -> HandedOverEdit:
    """Validate a hand-over file's bytes (untrusted: anything running as the user can write there).

    Raises:
        ValueError: not a JSON object of exactly ``paths`` (1 to :data:`MAX_PATHS` relative paths of at most
            :data:`MAX_PATH_CHARS` characters each, no NUL, no ``..`` part), ``client``, ``tool`` and ``session`` (at most
            :data:`MAX_NAME_CHARS` characters of letters, digits and ``._-``; ``client`` and ``tool`` not empty),
            and ``contents`` (optional, as an earlier version wrote none: an object whose keys are among ``paths``,
            each null or ``{"exec": bool, "data": strict base64}``) and ``before`` (optional, the same format; with
            ``contents`` at most :data:`MAX_PINNED_BYTES` in all).
    """
    payload = json.loads(data.decode("utf-8"))
    if not isinstance(payload, dict) or set(payload) - {"contents", "before"} != {"paths", "client", "tool",
                                                                                   "session"}:
        raise ValueError("an edit hand-over is an object with exactly the keys paths, client, tool, session, "
                         "contents and before")
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
    contents = _parse_contents(payload.get("contents", {}), paths, "contents")
    used = sum(len(found[1]) for found in contents.values() if found is not None)
    before = _parse_contents(payload.get("before", {}), paths, "before", MAX_PINNED_BYTES - used)
    return HandedOverEdit(paths, client, tool, session, contents, before)


def _parse_contents(contents: object, paths: list[str], key: str, limit: int = MAX_PINNED_BYTES) -> dict[str, Pinned]:
    """The ``contents`` (or ``before``: ``key``) of a hand-over, validated, at most ``limit`` bytes in all (see
    :func:`parse_edit`)."""
    import base64
    import binascii

    if not isinstance(contents, dict) or not set(contents) <= set(paths):
        raise ValueError(f"{key} must be an object whose keys are among paths")
    parsed: dict[str, Pinned] = {}
    total = 0
    for path, value in contents.items():
        if value is None:
            parsed[path] = None
            continue
        if (not isinstance(value, dict) or set(value) != {"exec", "data"} or not isinstance(value["exec"], bool)
                or not isinstance(value["data"], str)):
            raise ValueError("each content must be null or an object of exactly exec (boolean) and data (base64)")
        try:
            data = base64.b64decode(value["data"].encode("ascii"), validate=True)
        except (UnicodeEncodeError, binascii.Error):
            raise ValueError("a content's data is not base64") from None
        total += len(data)
        if total > limit:
            raise ValueError(f"the contents and before exceed {MAX_PINNED_BYTES} bytes")
        parsed[path] = (value["exec"], data)
    return parsed


def waiting(state_dir: Path) -> bool:
    """True when ``state_dir`` (``.trajectory/state``) holds a hand-over nobody claimed yet."""
    try:
        with os.scandir(state_dir / REQUEST_DIR) as entries:
            return any(entry.name.endswith(f".{EDIT_KIND}") for entry in entries)
    except OSError:
        return False
