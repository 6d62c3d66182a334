"""Whether anything records a project now, and since when nothing does: for honest answers of one-shot commands.

The recording process holds ``.trajectory/recorder.lock`` (an ``flock``: the kernel releases it when the process
dies) and keeps ``.trajectory/state/recorder.json`` (``pid``, ``started_at``, ``stopped_at``, ISO 8601 UTC), so a
command run while nothing watches can say so, since when, and how to start recording. A recorder that had to start
a new history (``.trajectory`` deleted or damaged while it recorded) notes it in ``.trajectory/state/history-restarts.json``
for ``code-trajectory status``.

An edit hook probes the lock on every edit (:func:`recording_now`): the module's own imports are ``json``, ``os`` and
``pathlib``; ``datetime`` is imported by the functions that use it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json, read_json_object

STATE_FILE = "recorder.json"
#: Where a recorder notes that it started a new history because ``.trajectory`` vanished or was damaged.
RESTARTS_FILE = "history-restarts.json"
#: Restarts kept in that file (the newest).
MAX_RESTARTS_KEPT = 5


def write_recorder_state(state_dir: Path, *, started: bool) -> None:
    """Note that this process started (``started``) or stopped recording; best effort (a failure is ignored)."""
    from datetime import UTC, datetime

    path = state_dir / STATE_FILE
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    data = read_recorder_state(state_dir) if not started else {}
    data.update({"pid": os.getpid(), "started_at": now} if started else {"stopped_at": now})
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        replace_file(path, json.dumps(data))
    except OSError:
        pass


def read_recorder_state(state_dir: Path) -> dict:
    """The last recorder state written (``{}`` when none or unreadable)."""
    return read_json_object(state_dir / STATE_FILE) or {}


def recording_now(git_dir: Path) -> bool:
    """True when a process holds ``<git_dir>/recorder.lock`` (a watcher or server records the project now).

    Every recording process takes that lock through ``filelock``, which uses ``flock(2)`` on POSIX: the probe is a
    non-blocking ``flock`` of the file opened read-only, so it never creates the file and costs no import of
    ``filelock`` (the edit hook asks this on every edit). Where ``fcntl`` is missing (Windows) ``filelock`` probes.
    """
    path = git_dir / "recorder.lock"
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import filelock

        lock = filelock.FileLock(str(path), timeout=0, thread_local=False)
        try:
            lock.acquire()
        except filelock.Timeout:
            return True
        except OSError:
            return False
        lock.release()
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
    except OSError:
        return False  # never created: nothing records here
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def idle_notice(root: Path, repo) -> str | None:
    """A notice for a project nothing records now: since when (the last recorder's stop, else the last snapshot),
    and how to start recording; None while something records it.

    Args:
        root: the project root.
        repo: its :class:`~code_trajectory.git.shadow.ShadowRepo`.
    """
    if recording_now(repo.git_dir):
        return None
    from datetime import UTC, datetime

    from code_trajectory.core.when import parse_stored_time

    state = read_recorder_state(repo.state_dir)
    when = parse_stored_time(state.get("stopped_at"))  # a naive time (a hand-edited file) is UTC, never a crash
    if when is None:
        tip = repo.git.text(["log", "-1", "--format=%cI", "--all"], check=False) if repo.shadow_refs() else ""
        when = parse_stored_time(tip)
    ago = ""
    if when is not None:
        seconds = max(0, int((datetime.now(UTC) - when).total_seconds()))
        ago = (f" since {when.astimezone().strftime('%Y-%m-%d %H:%M')} ({_duration(seconds)} ago)"
               if "stopped_at" in state else f"; the last snapshot was taken {_duration(seconds)} ago")
    return (f"nothing is recording this project now{ago}: edits made meanwhile are not in the history until "
            f"recording starts (the start-up scan then records what changed). Start it with `code-trajectory watch "
            f"{root}` or an MCP client running `code-trajectory serve --project {root}` (`code-trajectory install`).")


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


def note_history_restart(state_dir: Path, notice: str) -> None:
    """Note in ``state_dir`` (the new history's) that a recorder started it and why; best effort."""
    from datetime import UTC, datetime

    entries = history_restarts(state_dir)
    entries.append({"at": datetime.now(UTC).isoformat(timespec="seconds"), "notice": notice[:1000]})
    with contextlib.suppress(OSError):
        replace_file(state_dir / RESTARTS_FILE, json.dumps(entries[-MAX_RESTARTS_KEPT:]))


def history_restarts(state_dir: Path) -> list[dict]:
    """The restarts noted by :func:`note_history_restart`, oldest first: ``{"at": ISO 8601, "notice": text}``
    (malformed entries are dropped: the file is untrusted)."""
    data = read_json(state_dir / RESTARTS_FILE)
    if not isinstance(data, list):
        return []
    return [{"at": e["at"], "notice": e["notice"][:1000]} for e in data[-MAX_RESTARTS_KEPT:]
            if isinstance(e, dict) and isinstance(e.get("at"), str) and isinstance(e.get("notice"), str)]
