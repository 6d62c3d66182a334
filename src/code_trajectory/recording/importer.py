"""The initial import of a project, run in a child process so a long-running server does not keep its memory.

Importing 100,000 files builds and drops millions of small objects; whatever is freed, a process that lives on keeps
much of it (Python's memory arenas stay pinned by the few objects that outlive the import: measured 118-140 MiB
resident after an import in the server, 95 MiB after a restart of the same project, ``bench/watch.py``). A child
process returns all of it to the system when it exits. The child opens the shadow repository, runs the full scan
and writes the import snapshot exactly as :meth:`~code_trajectory.recording.recorder.Recorder.reconcile` does in
process; the parent holds its recorder's lock meanwhile, so no snapshot of its own interleaves (events are queued).

Protocol, the child's stdout, one JSON object a line: ``{"progress": [phase, done, total]}`` any number of times,
then ``{"snapshot": {...}}`` (or ``{"snapshot": null}``: nothing to record) or ``{"error": message}``; logs go to
stderr, which the parent's stderr receives unchanged. The child never outlives the parent: it is killed when the
parent exits (Linux) and exits when the pipe on its stdin closes (:func:`code_trajectory.core.shutdown.die_with_parent`);
killing it loses nothing, since the next start imports again.

The child runs in a session of its own (``setsid``). Linux's scheduler shares the CPU between sessions first
(``kernel.sched_autogroup_enabled``, on by default where processes are not put in cgroups of their own), then
between the threads of a session: in the parent's session, the child, and the ``git diff-files`` of a restart's
scan with its 20 threads of ``lstat`` (git's ``core.preloadIndex``), left ``serve``'s import of the MCP SDK about a
twentieth of the CPU. In a session of its own the scan still takes every CPU the server leaves idle. Measured
on this 2-core machine under a load of 3-7 from other work, alternating: a restart at 500,000 files answered
``initialize`` after 1.08-1.50 s (2.47-4.47 s in the parent's session) and recorded the edit made while stopped
after 2.31-3.08 s (3.01-4.81 s); at 100,000 files 0.82-2.06 s (1.12-2.35 s) and 0.74-1.74 s (0.87-1.79 s).
Signals sent to the parent's process group (a terminal's Ctrl-C) do not reach the child: the parent stops it.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from code_trajectory.core.errors import StorageError
from code_trajectory.recording.catchup import CatchUp
from code_trajectory.recording.recorder import Recorder, Snapshot

ProgressFn = Callable[[str, int, int | None], None]


def import_in_child(recorder: Recorder, progress: ProgressFn | None = None,
                    started: Callable[[subprocess.Popen], None] | None = None, *,
                    catch_up: CatchUp | None = None) -> Snapshot | None:
    """Run the start-up full scan of ``recorder``'s project in a child process; return its snapshot (its file list
    left empty) or None when the work tree matched what was recorded.

    Args:
        recorder: the parent's recorder; its lock is held while the child runs and its pending changes cleared
            (the scan covers them), as an in-process reconcile does.
        progress: called with ``(phase, done, total)`` as the child reports them.
        started: called with the child's process once it runs (to stop it on close, see
            :func:`code_trajectory.core.shutdown.stop_child`).
        catch_up: for the start-up scan of a restart (a large project's, run here too so that it proceeds
            while the server imports the MCP SDK): when the previous recorder stopped (see
            :mod:`code_trajectory.recording.catchup`); None for an import.

    Raises:
        StorageError: the child failed (its message), or could not be started.
    """
    command = [sys.executable, "-P", "-m", "code_trajectory.recording.importer", str(recorder.root), str(os.getpid())]
    if catch_up is not None:
        command.append(repr(catch_up.stopped_at) if catch_up.stopped_at is not None else "")
    with recorder.scanning_elsewhere():
        try:
            # stdin: a pipe the child watches; it exits when the pipe closes (this process exited or stopped it);
            # a session of its own: see the module docstring (the CPU scheduler's share)
            proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                    start_new_session=True)
        except OSError as exc:
            raise StorageError(f"cannot start the import process: {exc}") from exc
        if started is not None:
            started(proc)
        outcome: dict | None = None
        assert proc.stdout is not None
        with proc.stdout:
            for line in proc.stdout:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if "progress" in message and progress is not None:
                    phase, done, total = message["progress"]
                    progress(phase, done, total)
                elif "snapshot" in message or "error" in message:
                    outcome = message
        code = proc.wait()
        if proc.stdin is not None:
            proc.stdin.close()
    if outcome is None or "error" in outcome or code != 0:
        why = (outcome or {}).get("error") or f"the import process exited with status {code}"
        raise StorageError(f"the start-up scan failed: {why}")
    found = outcome["snapshot"]
    if found is None:
        return None
    return Snapshot(found["commit"], found["ref"], found["branch"], found["kind"], found["subject"], [],
                    found["elapsed_ms"])


def main(argv: list[str]) -> int:
    """``python -m code_trajectory.recording.importer ROOT PARENT_PID``: the child's side (see the module's
    protocol)."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import die_with_parent

    if len(argv) > 1:
        die_with_parent(int(argv[1]))
    # no cyclic collector in this short-lived process: an import keeps millions of tuples alive, and each of
    # Python's full collections walks all of them (100,000 files: 0.5 s of 4.9 s of CPU); what little cyclic
    # garbage there is goes with the process
    gc.disable()
    configure_logging()
    root = Path(argv[0])

    def emit(message: dict) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    try:
        recorder = Recorder.open(root, TrajectorySettings.load(root))
        try:
            snap = recorder.reconcile(progress=lambda phase, done, total: emit({"progress": [phase, done, total]}),
                                      with_intent=False,  # the import records what was there before: no task
                                      catch_up=CatchUp(_stopped_at(argv)),  # notes the stash, so a later pop is seen
                                      exiting=True)
        finally:
            recorder.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it
        emit({"error": str(exc)})
        return 1
    emit({"snapshot": None if snap is None else {
        "commit": snap.commit, "ref": snap.ref, "branch": snap.branch, "kind": snap.kind, "subject": snap.subject,
        "files": len(snap.changes), "elapsed_ms": snap.elapsed_ms}})
    return 0


def _stopped_at(argv: list[str]) -> float | None:
    """The previous recorder's stop (epoch seconds) the parent passed, None when none was (or it is not a number)."""
    try:
        return float(argv[2]) if len(argv) > 2 and argv[2] else None
    except ValueError:
        return None


if __name__ == "__main__":
    status = main(sys.argv[1:])
    # everything is written and closed: skip freeing the import's millions of objects one by one at exit
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
