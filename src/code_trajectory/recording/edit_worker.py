"""The edit worker: records the edits hooks handed over while no watcher or server records the project.

An ``edit`` hook always hands its edit over (:func:`code_trajectory.recording.handoff.hand_over_edit`), then probes
``.trajectory/recorder.lock``. When a process holds it, that process claims the hand-over. When none does, the hook
calls :func:`start` and exits: a detached worker (``<this Python> -P -m code_trajectory.recording.edit_worker
<project root>``, a new session, stdin, stdout and stderr on ``/dev/null``, no other descriptor inherited) runs
:func:`drain` and exits, so that the agent's turn waits only for the hook (issue 29: within ~60 ms of Python's
start-up) while the snapshot lands a few hundred milliseconds later, with the hook's origin and its agent session's
intent, as the hook's own snapshot would have. The program is always this interpreter and this module (``-P``: the
project directory is never put on ``sys.path``); only the project root comes from the hook, as an argument.

:func:`drain` takes the recorder lock (without waiting: a process that holds it claims the hand-overs itself),
claims and records every hand-over present, oldest first, each with the content its hook read
(:meth:`~code_trajectory.recording.recorder.Recorder.record_handovers`), declines the checkpoint
requests of that short while (the asker then scans on its own at once), releases the lock, and looks once more: a
hook that wrote its hand-over while the worker held the lock saw the lock held and started no worker, so the worker
takes the lock again and records it. A worker that fails or is killed loses nothing: its unclaimed hand-overs wait
for the next recording process (see :mod:`~code_trajectory.recording.handoff`) or the next edit hook, which drains
them in its own process when one is older than :data:`STUCK_SECONDS` (:func:`stuck`: a failure then reaches the
client's log on the hook's stderr), and the file's content is in the work tree for the next scan.

Where ``os.posix_spawn`` is missing (Windows) :func:`start` returns False and the hook drains in its own process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

#: The module the worker runs (``python -m``); never taken from data.
MODULE = "code_trajectory.recording.edit_worker"
#: Age of an unclaimed hand-over, seconds, past which a hook no longer trusts workers (see :func:`stuck`).
STUCK_SECONDS = 10.0
#: Times the worker takes the lock again for hand-overs written while it held it (each round records them all).
MAX_ROUNDS = 20


def start(root: Path) -> bool:
    """Start a detached worker draining ``root``'s hand-overs (``root``: the absolute project root); True when
    started, False when it could not be (no ``posix_spawn``, no ``sys.executable``, the spawn failed): the caller
    then drains in its own process (:func:`drain`)."""
    spawn = getattr(os, "posix_spawn", None)
    executable = sys.executable
    if spawn is None or not executable or not os.path.isabs(executable):
        return False
    _no_inheritance()
    devnull = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0)]
    try:
        spawn(executable, [executable, "-P", "-m", MODULE, str(root)], os.environ, file_actions=actions, setsid=True)
    except (OSError, ValueError):
        return False
    return True


def _no_inheritance() -> None:
    """Mark every descriptor above stderr close-on-exec: the client's pipes must not wait for the worker's end."""
    try:
        names = os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")
    except OSError:
        return
    for name in names:
        if name.isdigit() and int(name) > 2:
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed meanwhile
                os.set_inheritable(int(name), False)


def stuck(state_dir: Path) -> bool:
    """True when ``state_dir``'s requests directory holds a hand-over older than :data:`STUCK_SECONDS`: while
    nothing records the project, the worker meant to record it failed or was killed (its stderr is ``/dev/null``),
    so the hook drains in its own process, where a failure reaches the client's log."""
    from code_trajectory.recording.handoff import EDIT_KIND, REQUEST_DIR

    oldest = time.time() - STUCK_SECONDS
    try:
        with os.scandir(state_dir / REQUEST_DIR) as entries:
            for entry in entries:
                if entry.name.endswith(f".{EDIT_KIND}"):
                    with contextlib.suppress(OSError):
                        if entry.stat(follow_symlinks=False).st_mtime < oldest:
                            return True
    except OSError:
        return False
    return False


def drain(root: Path) -> int:
    """Record every hand-over of the project at ``root`` while holding its recorder lock; how many were claimed
    (0 when another process holds the lock: it claims them).

    Raises:
        TrajectoryError: the project has no shadow repository, or it cannot be opened.
    """
    import filelock

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.checkpoint_requests import CheckpointAnswer, RequestServer, attach_handovers
    from code_trajectory.recording.handoff import waiting
    from code_trajectory.recording.recorder import Recorder

    recorder = Recorder.open(root, TrajectorySettings.load(root), create=False)
    claimed = 0
    try:
        attach_handovers(recorder)
        state_dir = recorder.repo.state_dir
        lock = filelock.FileLock(str(recorder.repo.git_dir / "recorder.lock"), timeout=0, thread_local=False)
        requests = RequestServer(
            state_dir, lambda _request: CheckpointAnswer(False, "an edit worker takes no checkpoints"),
            drain_edits=recorder.record_handovers)
        for _round in range(MAX_ROUNDS):
            try:
                lock.acquire()
            except (filelock.Timeout, OSError):
                break  # a watcher, a server or another worker records: it claims what is left
            try:
                while handled := requests.poll():
                    claimed += handled
            finally:
                lock.release()
            if not waiting(state_dir):
                break
    finally:
        recorder.close()
    return claimed


def main(argv: list[str]) -> int:
    """``python -m code_trajectory.recording.edit_worker <project root>``: :func:`drain`; exit status 0, or 1 when
    it failed (stderr is ``/dev/null`` when a hook started it: what is left waits for the next worker)."""
    if len(argv) != 1 or not os.path.isabs(argv[0]):
        print("usage: python -m code_trajectory.recording.edit_worker <absolute project root>", file=sys.stderr)
        return 2
    try:
        drain(Path(argv[0]))
    except Exception as exc:  # noqa: BLE001 - nothing is lost: the hand-overs wait for the next worker
        print(f"code-trajectory edit worker: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
