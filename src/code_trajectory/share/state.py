"""What was shared where and when: ``.trajectory/state/share.json``, and the lock of push and pull.

Layout (version 1)::

    {"version": 1,
     "pushed": {"origin": {"url": "...", "author_id": "alice@example.com", "time": "2026-05-01T12:00:00+00:00",
                           "refs": {"refs/trajectory/alice@example.com/main":
                                    {"branch": "main", "oid": "<40 hex>", "consolidated": false,
                                     "time": "..."}}}},
     "pulled": {"origin": {"url": "...", "time": "...", "refs": {"refs/remotes-trajectory/bob@example.com/main":
                                                                 "<40 hex>"}}}}

Written atomically (:func:`code_trajectory.core.atomic.replace_file`); an unreadable file reads as empty, and a
remote's entry of another shape as absent, so a damaged or planted state never blocks a push (the remote's refs are
read again anyway).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import filelock

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import STATE_FILE_LIMIT, read_json_object
from code_trajectory.core.errors import StorageError, TrajectoryError

log = logging.getLogger(__name__)

STATE_FILE = "share.json"
LOCK_FILE = "share.lock"
#: How long a push or pull waits for another one to finish, seconds.
LOCK_TIMEOUT = 120.0


def now_iso() -> str:
    """The current time, UTC, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def state_path(state_dir: Path) -> Path:
    """``<state_dir>/share.json``."""
    return Path(state_dir) / STATE_FILE


def load_state(state_dir: Path) -> dict[str, Any]:
    """Read the share state; ``{"version": 1, "pushed": {}, "pulled": {}}`` when missing or unreadable."""
    empty: dict[str, Any] = {"version": 1, "pushed": {}, "pulled": {}}
    data = read_json_object(state_path(state_dir))
    if data is None:
        if os.path.lexists(state_path(state_dir)):
            log.warning("ignoring %s: not a regular file holding a JSON object of at most %d bytes",
                        state_path(state_dir), STATE_FILE_LIMIT)
        return empty
    for key in ("pushed", "pulled"):
        entries = data.get(key)
        # a remote's entry that is no object, or whose refs are no object, is read as nothing shared there
        data[key] = {remote: entry if isinstance(entry.get("refs", {}), dict) else {**entry, "refs": {}}
                     for remote, entry in entries.items() if isinstance(entry, dict)} if isinstance(entries, dict) else {}
    data["version"] = 1
    return data


def save_state(state_dir: Path, data: dict[str, Any]) -> None:
    """Write the share state atomically.

    Raises:
        StorageError: the file cannot be written.
    """
    path = state_path(state_dir)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_file(path, json.dumps(data, indent=1, sort_keys=True))
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc


@contextlib.contextmanager
def share_lock(state_dir: Path) -> Iterator[None]:
    """Hold ``<state_dir>/share.lock``: one push or pull of a project at a time.

    Raises:
        TrajectoryError: another push or pull held it for :data:`LOCK_TIMEOUT` seconds.
    """
    Path(state_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = filelock.FileLock(str(Path(state_dir) / LOCK_FILE), timeout=LOCK_TIMEOUT)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise TrajectoryError(f"another code-trajectory push or pull of this project is running (it holds "
                              f"{Path(state_dir) / LOCK_FILE}); wait for it to finish and try again") from None
    try:
        yield
    finally:
        lock.release()
