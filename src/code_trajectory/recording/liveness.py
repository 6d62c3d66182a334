"""Whether anything records a project now, and since when nothing does: for honest answers of one-shot commands.

The recording process holds ``.trajectory/recorder.lock`` (an ``flock``: the kernel releases it when the process
dies) and keeps ``.trajectory/state/recorder.json`` (``pid``, ``started_at``, ``stopped_at``, ISO 8601 UTC), so a
command run while nothing watches can say so, since when, and how to start recording. A recorder that had to start
a new history (``.trajectory`` deleted or damaged while it recorded) notes it in ``.trajectory/state/history-restarts.json``
for ``code-trajectory status``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import filelock

STATE_FILE = "recorder.json"
#: Where a recorder notes that it started a new history because ``.trajectory`` vanished or was damaged.
RESTARTS_FILE = "history-restarts.json"
#: Restarts kept in that file (the newest).
MAX_RESTARTS_KEPT = 5


def write_recorder_state(state_dir: Path, *, started: bool) -> None:
    """Note that this process started (``started``) or stopped recording; best effort (a failure is ignored)."""
    path = state_dir / STATE_FILE
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    data = read_recorder_state(state_dir) if not started else {}
    data.update({"pid": os.getpid(), "started_at": now} if started else {"stopped_at": now})
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data), "utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def read_recorder_state(state_dir: Path) -> dict:
    """The last recorder state written (``{}`` when none or unreadable)."""
    try:
        data = json.loads((state_dir / STATE_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recording_now(git_dir: Path) -> bool:
    """True when a process holds the project's ``recorder.lock`` (a watcher or server records it now)."""
    lock = filelock.FileLock(str(git_dir / "recorder.lock"), timeout=0, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        return True
    except OSError:
        return False
    lock.release()
    return False


def idle_notice(root: Path, repo) -> str | None:
    """A notice for a project nothing records now: since when (the last recorder's stop, else the last snapshot),
    and how to start recording; None while something records it.

    Args:
        root: the project root.
        repo: its :class:`~code_trajectory.git.shadow.ShadowRepo`.
    """
    if recording_now(repo.git_dir):
        return None
    state = read_recorder_state(repo.state_dir)
    since = state.get("stopped_at")
    when = None
    if isinstance(since, str):
        try:
            when = datetime.fromisoformat(since)
        except ValueError:
            when = None
    if when is None:
        tip = repo.git.text(["log", "-1", "--format=%cI", "--all"], check=False) if repo.shadow_refs() else ""
        try:
            when = datetime.fromisoformat(tip) if tip else None
        except ValueError:
            when = None
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
    entries = history_restarts(state_dir)
    entries.append({"at": datetime.now(UTC).isoformat(timespec="seconds"), "notice": notice[:1000]})
    try:
        tmp = state_dir / f"{RESTARTS_FILE}.tmp{os.getpid()}"
        tmp.write_text(json.dumps(entries[-MAX_RESTARTS_KEPT:]), "utf-8")
        os.replace(tmp, state_dir / RESTARTS_FILE)
    except OSError:
        pass


def history_restarts(state_dir: Path) -> list[dict]:
    """The restarts noted by :func:`note_history_restart`, oldest first: ``{"at": ISO 8601, "notice": text}``
    (malformed entries are dropped: the file is untrusted)."""
    try:
        data = json.loads((state_dir / RESTARTS_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [{"at": e["at"], "notice": e["notice"][:1000]} for e in data[-MAX_RESTARTS_KEPT:]
            if isinstance(e, dict) and isinstance(e.get("at"), str) and isinstance(e.get("notice"), str)]
