"""Where the start-up scan of a recording session runs, and when its watcher starts (issue 29: a restart records
what changed while stopped <= 1 s beyond ``git status``, and the server answers meanwhile).

- The initial import runs in a child process (:mod:`code_trajectory.recording.importer`: its memory goes back to the
  system when it exits).
- A restart in the background of a large project (a stat cache of :data:`CHILD_SCAN_FROM_BYTES` or more) runs in a
  child process too: ``serve`` starts it before importing the MCP SDK (:mod:`code_trajectory.serving`), and the
  import, CPU-bound, would otherwise hold the interpreter lock against the scan's ``lstat`` loop.
- Any other scan runs in process.

A restart in the background records first and watches afterwards: the watcher's walk of the tree (one watch per
directory) costs about what the scan costs, so it would double the time until the edits made while stopped are
recorded. What changes between the scan's walk and the watches is covered by one rescan, asked for before and after
the watcher starts (:func:`watch_after_scan`); it only ``lstat``s (the stat cache vouches for what the scan read).
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from code_trajectory.recording.catchup import CatchUp
from code_trajectory.recording.fullscan import ProgressFn
from code_trajectory.recording.recorder import Recorder, Snapshot

if TYPE_CHECKING:
    from code_trajectory.recording.watcher import Watcher

log = logging.getLogger(__name__)

#: Size of the stat cache (``.trajectory/state/statcache.sqlite``) from which a restart's start-up scan runs in a
#: child process, bytes: about 15,000 files (a file's row and its index entries take ~270 bytes, measured at
#: 100,000 and 500,000 files). Below, starting a process costs more than it saves.
CHILD_SCAN_FROM_BYTES = 4 << 20


def startup_scan(recorder: Recorder, *, importing: bool, background: bool, catch_up: CatchUp,
                 progress: ProgressFn | None, started: Callable[[subprocess.Popen], None]) -> Snapshot | None:
    """Run the start-up scan of ``recorder``'s project where the module docstring says; its snapshot or None.

    Args:
        importing: nothing is recorded yet (the initial import).
        background: the session starts in the background (a server, ``watch``).
        catch_up: when the previous recorder stopped (:mod:`code_trajectory.recording.catchup`).
        progress: called with ``(phase, done, total)``.
        started: called with a child process once it runs (the session stops it on close).

    Raises:
        StorageError, GitError: the scan failed (in a child: its message).
    """
    # the edits hooks handed over while nothing recorded come first, with their own content (recording.handoff);
    # an in-process reconcile does the same, a child process cannot
    recorder.record_handovers()
    if importing or (background and large(recorder)):
        from code_trajectory.recording.importer import import_in_child

        if importing:
            return import_in_child(recorder, progress, started=started)
        return import_in_child(recorder, progress, started=started, catch_up=catch_up)
    return recorder.reconcile(progress=progress, with_intent=False, catch_up=catch_up)


def large(recorder: Recorder) -> bool:
    """True when ``recorder``'s stat cache is :data:`CHILD_SCAN_FROM_BYTES` or more."""
    try:
        return recorder.stat_cache.path.stat().st_size >= CHILD_SCAN_FROM_BYTES
    except OSError:
        return False


def watch_after_scan(recorder: Recorder, watcher: Watcher, lock: threading.Lock, closing: threading.Event) -> None:
    """Start ``watcher`` after a restart's start-up scan, with a rescan asked for before and after (see the module
    docstring); nothing when ``closing`` is set. ``lock`` is the session's, held while ``close`` takes the watcher.
    A watcher that cannot start is logged (the scan's snapshot stands; the next start watches again)."""
    with lock:
        if closing.is_set():
            return
        recorder.note_changes((), rescan=True)  # before: the watcher never vouches for a checkpoint alone
        try:
            watcher.start()
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.error("cannot watch %s: %s", recorder.root, exc)
            return
    watcher.rescan_soon()  # and after (a scan in between covered less), waking the snapshot loop
