"""Where the start-up scan of a recording session runs, and when its watcher starts (issue 29: a restart records
what changed while stopped <= 1 s beyond ``git status``, and the server answers meanwhile).

- The initial import runs in a child process (:mod:`code_trajectory.recording.importer`: its memory goes back to the
  system when it exits).
- A restart in the background of a large project (a stat cache of :data:`CHILD_SCAN_FROM_BYTES` or more) runs in a
  child process too: ``serve`` starts it before importing the MCP SDK (:mod:`code_trajectory.serving`), and the
  import, CPU-bound, would otherwise hold the interpreter lock against the scan's ``lstat`` loop.
- Any other scan runs in process.

The initial import of a large project (a git index of :data:`HOLD_IMPORT_FROM_INDEX_BYTES` or more; without
git, :data:`HOLD_IMPORT_FROM_ENTRIES` entries or more) may be held back until the process is ready (``hold``):
``serve --project`` starts it once its MCP server is built, so that the import's process and its git processes do
not compete for the CPU with the server's start (the SDK's import and the tools' schemas, about 0.8 s of CPU), and
``initialize`` is answered within 1 s (issue 29). Such an import takes
seconds to minutes and its watches follow it anyway, so starting it ~0.7 s later changes little; a small one is not
held, so that the first answers still hold it; a restart's scan, which records the edits made while stopped, is
never held. Measured on a 2,000-file project held as a large one would be, 8 alternating runs under a load of 5-7
from other work on this 2-core machine: ``initialize`` answered 1.29 s (median) after the spawn with the import
running meanwhile, 0.90 s when a restart's scan ran instead.

A restart in the background records first and watches afterwards: the watcher's walk of the tree (one watch per
directory) costs about what the scan costs, so it would double the time until the edits made while stopped are
recorded. What changes between the scan's walk and the watches is covered by one rescan, asked for before and after
the watcher starts (:func:`watch_after_scan`); it only ``lstat``s (the stat cache vouches for what the scan read).
In ``serve`` the watches also wait until the server is built (``ready``): their walk holds the interpreter lock,
and run while the SDK is imported it added its own CPU time to ``initialize`` (at 100,000 files, 0.73 s of CPU
until ``initialize`` was answered with the watches waiting, 1.17-1.31 s without).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from code_trajectory.core.errors import StorageError
from code_trajectory.recording.catchup import CatchUp
from code_trajectory.recording.fullscan import ProgressFn
from code_trajectory.recording.recorder import Recorder, Snapshot

if TYPE_CHECKING:
    from code_trajectory.recording.watcher import Watcher

log = logging.getLogger(__name__)

#: Longest an initial import is held back by ``hold``, seconds (the server's start takes ~1 s of CPU; a process that
#: never says it is ready still imports).
HOLD_IMPORT_SECONDS = 10.0
#: Size of the project's git index from which an initial import is held back by ``hold``, bytes: about 10,000
#: tracked files (an entry takes 62 bytes plus its path), whose import takes a few seconds. A smaller import ends
#: within the first answer's short wait (:data:`code_trajectory.recording.service.FIRST_ANSWER_SECONDS`) when it
#: starts at once.
HOLD_IMPORT_FROM_INDEX_BYTES = 1 << 20
#: Entries (files, directories, links) from which the initial import of a project without a git index is held back
#: by ``hold``: as many as the index size above stands for. Counted breadth-first, stopping there (10 ms of
#: ``scandir`` here for 10,000 entries in 400 directories), since such a project's size is not known before its walk. A new ``serve`` of a 100,000-file tree
#: without git (8 runs alternating, 2026-11-26, load ~1): ``initialize`` 0.81 s (median) after the spawn held,
#: 0.94 s started at once; ``get_session_summary`` 0.85 s against 1.01 s.
HOLD_IMPORT_FROM_ENTRIES = 10_000
#: Size of the stat cache (``.trajectory/state/statcache.sqlite``) from which a restart's start-up scan runs in a
#: child process, bytes: about 15,000 files (a file's row and its index entries take ~270 bytes, measured at
#: 100,000 and 500,000 files). Below, starting a process costs more than it saves.
CHILD_SCAN_FROM_BYTES = 4 << 20


def startup_scan(recorder: Recorder, *, importing: bool, background: bool, catch_up: CatchUp,
                 progress: ProgressFn | None, started: Callable[[subprocess.Popen], None],
                 hold: threading.Event | None = None, closing: threading.Event | None = None,
                 took_over: bool = False) -> Snapshot | None:
    """Run the start-up scan of ``recorder``'s project where the module docstring says; its snapshot or None.

    Args:
        importing: nothing is recorded yet (the initial import).
        background: the session starts in the background (a server, ``watch``).
        catch_up: when the previous recorder stopped (:mod:`code_trajectory.recording.catchup`).
        progress: called with ``(phase, done, total)``.
        started: called with a child process once it runs (the session stops it on close).
        hold: the initial import of a large git project starts once this is set, or :data:`HOLD_IMPORT_SECONDS`
            later (see the module docstring); None: at once.
        closing: set when the session closes: a held import is then not started (StorageError).
        took_over: a follower takes over from a recorder that stopped while its own client works on: what changed
            in that gap (under a second) is the live session's, with its intent (git's operations read from the
            reflogs), not "changed while not recording"; a large project's scan in a child labels it as a restart's.

    Raises:
        StorageError, GitError: the scan failed (in a child: its message).
    """
    # the edits hooks handed over while nothing recorded come first, with their own content (recording.handoff);
    # an in-process reconcile does the same, a child process cannot. Not before an import: it records the files of
    # waiting hand-overs as before their edits, which are then recorded on top (recording.import_handovers)
    if not importing:
        recorder.record_handovers()
    if importing or (background and large(recorder)):
        from code_trajectory.recording.importer import import_in_child

        if importing:
            with recorder.scanning_elsewhere():  # held back: nothing is recorded in process meanwhile either
                if hold is not None and (large_index(recorder) or large_tree(recorder)):
                    wait_for(hold, closing, recorder)
                return import_in_child(recorder, progress, started=started)
        return import_in_child(recorder, progress, started=started, catch_up=catch_up)
    if took_over:
        return recorder.reconcile(progress=progress, with_intent=True, reflogs=True)
    return recorder.reconcile(progress=progress, with_intent=False, catch_up=catch_up)


def wait_for(hold: threading.Event, closing: threading.Event | None, recorder: Recorder) -> None:
    """Wait until ``hold`` is set, at most :data:`HOLD_IMPORT_SECONDS`.

    Raises:
        StorageError: ``closing`` was set meanwhile (the import is not started; the next start imports).
    """
    if not wait_ready(hold, closing, f"the import of {recorder.root}"):
        raise StorageError("the import was not started: the project was closed")


def wait_ready(ready: threading.Event, closing: threading.Event | None, what: str) -> bool:
    """Wait until ``ready`` is set, at most :data:`HOLD_IMPORT_SECONDS` (a process that never says it is ready
    goes on anyway: ``what`` goes on, says the log); False when ``closing`` was set meanwhile."""
    deadline = time.monotonic() + HOLD_IMPORT_SECONDS
    while not ready.wait(0.05):
        if closing is not None and closing.is_set():
            return False
        if time.monotonic() > deadline:
            log.info("%s starts without waiting further for the server", what)
            return True
    return True


def large_index(recorder: Recorder) -> bool:
    """True when ``recorder``'s project has a git index of :data:`HOLD_IMPORT_FROM_INDEX_BYTES` or more."""
    index = recorder.project.index_file
    try:
        return index is not None and index.stat().st_size >= HOLD_IMPORT_FROM_INDEX_BYTES
    except OSError:
        return False


def large_tree(recorder: Recorder) -> bool:
    """True when ``recorder``'s project has no git index and holds :data:`HOLD_IMPORT_FROM_ENTRIES` entries or more
    (``.git`` and ``.trajectory`` left out, links not followed, unreadable directories skipped), counted
    breadth-first and no further; remembered for ``recorder`` (a tool call asks again, see :func:`takes_long`)."""
    known = _LARGE_TREES.get(recorder)
    if known is not None:
        return known
    index = recorder.project.index_file
    found = (index is None or not index.is_file()) and _holds_entries(str(recorder.root), HOLD_IMPORT_FROM_ENTRIES)
    _LARGE_TREES[recorder] = found
    return found


_LARGE_TREES: weakref.WeakKeyDictionary[Recorder, bool] = weakref.WeakKeyDictionary()


def _holds_entries(root: str, limit: int) -> bool:
    """True when the tree under ``root`` holds ``limit`` entries or more (see :func:`large_tree`)."""
    count, queue = 0, collections.deque([root])
    while queue:
        try:
            with os.scandir(queue.popleft()) as entries:
                for entry in entries:
                    if entry.name in (".git", ".trajectory"):
                        continue
                    count += 1
                    if count >= limit:
                        return True
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            queue.append(entry.path)
        except OSError:
            continue
    return False


def takes_long(recorder: Recorder) -> bool:
    """True when the start-up scan of ``recorder``'s project takes seconds: its git index or its stat cache is
    large, or it has no git index and many files (:func:`large_index`, :func:`large`, :func:`large_tree`). A first
    answer does not wait for such a scan."""
    return large_index(recorder) or large(recorder) or large_tree(recorder)


def large(recorder: Recorder) -> bool:
    """True when ``recorder``'s stat cache is :data:`CHILD_SCAN_FROM_BYTES` or more."""
    try:
        return recorder.stat_cache.path.stat().st_size >= CHILD_SCAN_FROM_BYTES
    except OSError:
        return False


def watch_after_scan(recorder: Recorder, watcher: Watcher, lock: threading.Lock, closing: threading.Event,
                     ready: threading.Event | None = None) -> None:
    """Start ``watcher`` after a restart's start-up scan, with a rescan asked for before and after (see the module
    docstring); nothing when ``closing`` is set. ``lock`` is the session's, held while ``close`` takes the watcher.
    A watcher that cannot start is logged (the scan's snapshot stands; the next start watches again).

    ``ready``: the watches are set once it is set (``serve``: its server built), at most :data:`HOLD_IMPORT_SECONDS`
    later. Their walk (one watch per directory, the tracked files read from git's index) holds the interpreter
    lock for about as long as the scan takes (0.4-0.5 s of CPU at 100,000 files): run while ``serve`` imports the
    MCP SDK, it delayed ``initialize`` by as much (see the module docstring). What changes meanwhile is covered by
    the rescans, as what changes during the walk is.
    """
    if ready is not None and not wait_ready(ready, closing, f"watching {recorder.root}"):
        return
    with lock:
        if closing.is_set():
            return
        recorder.note_changes((), rescan=True)  # before: the watcher never vouches for a checkpoint alone
        try:
            watcher.start()
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.error("cannot watch %s: %s", recorder.root, exc)
            return
        recorder.note_unseen_git_activity()  # git's operations since the scan, which no watch saw
    watcher.rescan_soon()  # and after (a scan in between covered less), waking the snapshot loop
