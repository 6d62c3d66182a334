"""The watcher: file events in, debounced snapshots out.

A thread reads change batches from ``watchfiles`` (which already groups and
de-duplicates raw inotify/FSEvents/ReadDirectoryChangesW events), keeps those the
:class:`~code_trajectory.ignore.RecordingPolicy` records, and queues their paths on
the recorder. A second thread turns the queue into snapshots once the project has
been quiet for ``debounce_seconds`` (default 2.0 s), or after
``max_delay_seconds`` of uninterrupted changes, so a burst of saves becomes one
snapshot of the final state and a never-ending stream still gets recorded.

Branch switches: the project's ``HEAD`` file is watched too. A move of ``HEAD``
(checkout, switch, rebase) triggers a full rescan, so a checkout rewriting
thousands of files yields one snapshot on the new branch's shadow ref, whatever
the event queue did meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from code_trajectory.config import TrajectorySettings
from code_trajectory.errors import TrajectoryError
from code_trajectory.recorder import Recorder, Snapshot

log = logging.getLogger(__name__)

#: Longest wait between retries of a snapshot that failed (lock held, disk full), seconds.
MAX_RETRY_DELAY = 30.0


class Watcher:
    """Watches one project and records snapshots through ``recorder``.

    Args:
        recorder: records the snapshots (its policy decides which events count).
        settings: debounce timings.
        on_snapshot: called (on the watcher's thread) with each snapshot written.
        force_polling: poll instead of using native events (tests, network file systems).
    """

    def __init__(self, recorder: Recorder, settings: TrajectorySettings, *,
                 on_snapshot: Callable[[Snapshot], None] | None = None, force_polling: bool | None = None) -> None:
        self.recorder = recorder
        self.root = recorder.root
        self.settings = settings
        self.on_snapshot = on_snapshot
        self.force_polling = force_polling
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._first_change: float | None = None
        self._last_change: float | None = None
        self._threads: list[threading.Thread] = []
        self.last_error: str | None = None
        self.polling = bool(force_polling)
        head = recorder.project.head_file
        self._head_file = str(head) if head else None
        self._git_dir = str(recorder.project.git_dir) if recorder.project.git_dir else None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the event and snapshot threads (returns at once)."""
        for target, name in ((self._watch_loop, "trajectory-events"), (self._snapshot_loop, "trajectory-snapshots")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, *, flush: bool = True, timeout: float = 10.0) -> None:
        """Stop watching; with ``flush``, snapshot what is still pending first."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()
        if flush and self.recorder.has_pending():
            self._flush()

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    # -- events -------------------------------------------------------------------------------

    def _filter(self, change: watchfiles.Change, path: str) -> bool:
        if self._git_dir and (path == self._git_dir or path.startswith(self._git_dir + "/")):
            return path == self._head_file
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return False
        if rel in (".", ""):
            return False
        # a deleted path no longer exists, so it is judged as a file: a deleted recorded directory still
        # passes (its name matches no file-only rule), deletions in .trajectory/ or ignored dirs do not
        return self.recorder.policy.is_recorded(rel, is_dir=None)

    def _watch_loop(self) -> None:
        paths = [self.root]
        if self._git_dir and not self._git_dir.startswith(str(self.root) + "/"):
            paths.append(Path(self._git_dir))  # a linked worktree: its HEAD lives elsewhere
        while not self._stop.is_set():
            try:
                for batch in watchfiles.watch(*paths, watch_filter=self._filter, debounce=400, step=50,
                                              stop_event=self._stop, rust_timeout=1000, yield_on_timeout=False,
                                              raise_interrupt=False, force_polling=self.force_polling,
                                              ignore_permission_denied=True):
                    self._on_batch(batch)
                return
            except Exception as exc:  # noqa: BLE001 - the watch backend failed: fall back to polling
                if self._stop.is_set():
                    return
                if not self.root.is_dir():
                    self.last_error = f"the project directory {self.root} no longer exists; watching stopped"
                    log.error(self.last_error)
                    return
                self.last_error = f"native file watching failed ({exc}); polling instead"
                log.warning(self.last_error)
                self.force_polling = True
                self.polling = True
                self.recorder.note_changes((), rescan=True)  # events may have been lost
                self._touch()

    def _on_batch(self, batch: set[tuple[watchfiles.Change, str]]) -> None:
        rels: list[str] = []
        head_moved = False
        for _change, path in batch:
            if path == self._head_file:
                head_moved = True
                continue
            try:
                rels.append(Path(path).relative_to(self.root).as_posix())
            except ValueError:
                continue
        if head_moved:
            log.info("project HEAD moved (now on %s); rescanning", self.recorder.project.current_branch())
        if rels or head_moved:
            self.recorder.note_changes(rels, rescan=head_moved)
            self._touch()

    def _touch(self) -> None:
        now = time.monotonic()
        with self._wake:
            if self._first_change is None:
                self._first_change = now
            self._last_change = now
            self._wake.notify_all()

    # -- snapshots ----------------------------------------------------------------------------

    def _snapshot_loop(self) -> None:
        retry_delay = 0.5
        while not self._stop.is_set():
            with self._wake:
                if self._last_change is None:
                    self._wake.wait(timeout=1.0)
                    continue
                now = time.monotonic()
                due = min(self._last_change + self.settings.debounce_seconds,
                          (self._first_change or now) + self.settings.max_delay_seconds)
                if now < due:
                    self._wake.wait(timeout=due - now)
                    continue
                self._first_change = self._last_change = None
            if self._flush():
                retry_delay = 0.5
            else:
                # keep the changes and try again later, with a bounded backoff
                time.sleep(min(retry_delay, MAX_RETRY_DELAY))
                retry_delay = min(retry_delay * 2, MAX_RETRY_DELAY)
                self._touch()

    def _flush(self) -> bool:
        try:
            snapshot = self.recorder.flush()
        except TrajectoryError as exc:
            self.last_error = f"snapshot failed, will retry: {exc}"
            log.warning(self.last_error)
            return False
        except Exception as exc:  # noqa: BLE001 - never let the watcher thread die
            self.last_error = f"snapshot failed unexpectedly, will retry: {exc!r}"
            log.exception("snapshot failed unexpectedly")
            return False
        self.last_error = None
        if snapshot is not None and self.on_snapshot is not None:
            try:
                self.on_snapshot(snapshot)
            except Exception:  # noqa: BLE001
                log.exception("snapshot callback failed")
        return True
