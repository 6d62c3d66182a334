"""The watcher: file events in, debounced snapshots out.

Which directories are watched: every directory the
:class:`~code_trajectory.recording.ignore.RecordingPolicy` records, each watched on its own
(non-recursively) — ignored trees such as ``node_modules`` or build output are
pruned before anything is watched, so inotify watches stay close to the number of
recorded directories — plus the git directory of the project for its ``HEAD``.
A directory created later is added with its subdirectories (a new watch group, see
:mod:`code_trajectory.recording.watchgroups`); the snapshot of that directory scans just it, so
files created before its watch began are not missed and the rest of the tree is not rescanned.

``watchfiles`` groups and de-duplicates the raw events (adding 10-50 ms); events for paths the
policy does not record are dropped. Snapshots are written once the project has been quiet for
``debounce_seconds`` (default 2.0 s) counted from the last event, or after ``max_delay_seconds`` of
uninterrupted changes, so a burst of saves becomes one snapshot of the final state and a
never-ending stream still gets recorded. :meth:`Watcher.vouch` tells a ``checkpoint`` whether the
pending paths are all that changed since the last snapshot (then it records just them).

A move of the project's ``HEAD`` (checkout, switch, rebase) triggers a full
rescan, so a checkout rewriting thousands of files yields one snapshot on the new
branch's shadow ref. When native watches run out (``fs.inotify.max_user_watches``), the
directories that could not be watched are polled (:mod:`.watchlimit`); one warning and
``get_session_summary`` say so. A batch large enough that the kernel's
event queue may have overflowed (``watchfiles`` does not report it) is rescanned too.
Maintenance of the shadow repository runs on the snapshot thread once the project has been quiet.

Its job: :class:`Watcher`, the state machine from events to snapshots (what a batch of events means, the debounce
clock, the snapshot thread); the watch groups are set, replaced and grown by :mod:`.watchset` (each group in
:mod:`.watchgroups`), and the snapshots written by :mod:`.recorder`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import TrajectoryError
from code_trajectory.git import nested
from code_trajectory.git.maintenance import BackgroundMaintenance, MaintenancePolicy
from code_trajectory.recording import watchgroups
from code_trajectory.recording.listingpoll import ListingPoll
from code_trajectory.recording.opening import identity
from code_trajectory.recording.recorder import Recorder, Snapshot
from code_trajectory.recording.watchgroups import SyncPoint, WatchGroup
from code_trajectory.recording.watchlimit import NativeWatches
from code_trajectory.recording.watchset import SYNC_TIMEOUT, WatchSetMixin

log = logging.getLogger(__name__)

#: Longest wait between retries of a snapshot that failed (lock held, disk full), seconds.
MAX_RETRY_DELAY = 30.0
#: How often the snapshot thread wakes when nothing changes (checks the project still exists), seconds.
IDLE_WAKE_SECONDS = 2.0
#: The same wait when stopping, which must end within a second (issue 22), seconds.
STOP_SYNC_TIMEOUT = 0.5

#: A batch of at least this many events may hide an overflow of the kernel's queue: rescan.
OVERFLOW_EVENTS = watchgroups.overflow_threshold()

class Watcher(WatchSetMixin):
    """Watches one project and records snapshots through ``recorder``.

    Args:
        recorder: records the snapshots (its policy decides which events count).
        settings: debounce timings.
        on_snapshot: called (on the watcher's thread) with each snapshot written.
        force_polling: poll instead of using native events (tests, network file systems).
        max_native_dirs: watch at most this many directories natively and poll the
            rest (None: as many as the system allows). Lets tests exercise the fallback
            taken when the inotify limit is reached.
    """

    def __init__(self, recorder: Recorder, settings: TrajectorySettings, *,
                 on_snapshot: Callable[[Snapshot], None] | None = None, force_polling: bool | None = None,
                 max_native_dirs: int | None = None) -> None:
        self.recorder = recorder
        self.root = recorder.root
        self.settings = settings
        self.on_snapshot = on_snapshot
        self._native = NativeWatches(lambda dirs, polling: self._group(dirs, polling=polling),
                                     force_polling=bool(force_polling), max_native_dirs=max_native_dirs,
                                     state_dir=recorder.repo.state_dir)
        #: Directories whose names no watch group can take, polled by the snapshot loop instead.
        self._listings = ListingPoll()
        #: The polling notice last put in :attr:`last_error` (a failed snapshot's message replaces it until cleared).
        self._polling_notice: str | None = None
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._first_change: float | None = None
        self._last_change: float | None = None
        self._snapshot_thread: threading.Thread | None = None
        self._groups: list[WatchGroup] = []
        #: Replaced groups still handing over their last events (see :meth:`_rebuild`).
        self._retiring: list[WatchGroup] = []
        self._groups_lock = threading.Lock()
        self._watched: set[str] = set()
        self.last_error: str | None = None
        self.maintenance = MaintenancePolicy()
        #: Where tokens prove that the watch groups handed over every event before them (see :meth:`vouch`).
        self.sync = SyncPoint(recorder.repo.state_dir / "sync")
        self._maintainer = BackgroundMaintenance(recorder.repo, cap_bytes=settings.max_history_bytes,
                                                 retention_days=settings.retention_days)
        #: ``<root>/.git``: made, removed or replaced (``git init``, ``rm -rf .git``), the recorder follows the
        #: project's new git repository (see :meth:`_check_groups`); its identity when last looked at.
        self._dot_git = str(self.root / ".git")
        self._root_git = identity(self._dot_git)
        self._follow_git()
        #: The project's ``info/exclude`` as last looked at (see :meth:`_project_git_changed`).
        self._exclude_seen = self._exclude_stamp()

    def _follow_git(self) -> None:
        """Note which files of the recorder's project git repository mean that a git command ran."""
        project = self.recorder.project
        head = project.head_file
        self._head_file = str(head) if head else None
        self._git_dir = str(project.git_dir) if project.git_dir else None
        common = project.common_dir or project.git_dir
        #: The project's git files whose writes mean a git command ran: HEAD (a checkout: rescan), the HEAD
        #: reflog and the stash reflog (the reflog names the operation, see Recorder.note_git_activity).
        self._stash_log = str(common / "logs" / "refs" / "stash") if common else None
        index = project.index_file
        #: The project's index: when it changes, what git tracks may have changed (``git add -f``, ``rm --cached``).
        self._index_file = str(index) if index else None
        self._git_files = {p for p in (self._head_file, self._git_dir and f"{self._git_dir}/logs/HEAD",
                                       self._stash_log, self._index_file) if p}
        self._git_roots = tuple(str(p) for p in {project.git_dir, common} if p)
        #: Directories of the project's git watched (non-recursively) for those files.
        self._git_watch_dirs = [d for d in dict.fromkeys(str(Path(f).parent) for f in self._git_files)
                                if os.path.isdir(d)]

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Watch every recorded directory and start the snapshot thread (returns once watches are set)."""
        self._rebuild()
        self._snapshot_thread = threading.Thread(target=self._snapshot_loop, name="trajectory-snapshots",
                                                 daemon=True)
        self._snapshot_thread.start()

    def stop(self, *, flush: bool = True, timeout: float = 10.0) -> None:
        """Stop watching; with ``flush``, snapshot what is pending at once (see :meth:`flush_pending`: no debounce
        wait) before the threads are joined; a full scan when some directories are polled by a watch group (what
        changed there is known up to 2 s late). A snapshot that fails is logged: the next start's scan records it.

        Args:
            flush: snapshot the pending changes.
            timeout: longest wait for each thread to end, seconds.
        """
        if flush and self.running:
            self._hand_over(STOP_SYNC_TIMEOUT)  # an edit saved just before the stop is pending too
            self._poll_listings()  # and one in a directory no watch group takes (the snapshot loop polls it)
            with self._groups_lock:
                polling = any(g.polling for g in self._groups)
            if polling:  # a polling group (--poll, past the inotify limit) reports up to 2 s late: scan instead
                self.recorder.note_changes((), rescan=True)
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        with self._groups_lock:
            groups, self._groups = self._groups + self._retiring, []
        for group in groups:
            group.stop.set()
        if flush and self.recorder.has_pending():
            try:
                self.flush_pending(hand_over=False, saves_first=True)
            except Exception as exc:  # noqa: BLE001 - stopping goes on; the next start's scan records it
                log.warning("the last snapshot failed (%s); the next start's scan records these changes", exc)
        for group in groups:
            group.thread.join(timeout)
        if self._snapshot_thread is not None:
            self._snapshot_thread.join(timeout)
        self._maintainer.join(timeout)

    def flush_pending(self, *, hand_over: bool = True, saves_first: bool = False) -> Snapshot | None:
        """Snapshot the pending changes now, without waiting for the debounce.

        First every event the operating system delivered before the call is handed to the recorder (native watch
        groups; a polled directory's change may be up to a poll interval late), then the recorder's pending paths
        are recorded (a full scan when a rescan is pending). Thread-safe with the snapshot loop: the recorder's
        lock orders the two, and whichever comes second finds nothing pending.

        Args:
            hand_over: sync with the watch groups first (at most :data:`SYNC_TIMEOUT` seconds).
            saves_first: when a full scan is due, snapshot the saves seen first (see the recorder's ``flush``).

        Returns:
            The snapshot (also passed to ``on_snapshot``), or None when nothing changed.

        Raises:
            TrajectoryError: the snapshot could not be written; the changes stay pending and the snapshot loop
                retries them.
        """
        if hand_over and self.running:
            self._hand_over(SYNC_TIMEOUT)
        with self._wake:
            self._first_change = self._last_change = None
        try:
            snapshot = self.recorder.flush(saves_first=saves_first)
        except BaseException:
            if not self._stop.is_set():
                self._touch()  # the snapshot loop retries
            raise
        self._written(snapshot)
        return snapshot

    @property
    def running(self) -> bool:
        return not self._stop.is_set() and self._snapshot_thread is not None and self._snapshot_thread.is_alive()

    def vouch(self, timeout: float = SYNC_TIMEOUT) -> str | None:
        """Hand every event the OS delivered before this call to the recorder, then say whether the recorder's
        pending paths are all that changed since the last snapshot (so a ``checkpoint`` may record just them).

        Args:
            timeout: longest wait for the watch groups to confirm, seconds.

        Returns:
            None when the watcher vouches for the pending paths; otherwise why it cannot (a full scan is needed):
            not running, an error reported, directories polled, a group dead or not confirming in time, or a
            rescan pending (HEAD moved, an ignore file changed, a possible queue overflow, a failed write).
        """
        if not self.running:
            return "the watcher is not running"
        if self.last_error:
            return f"the watcher reported a problem: {self.last_error}"
        with self._groups_lock:
            groups = list(self._groups)
        if self.polled_dirs or any(g.polling for g in groups):
            return "some directories are polled, not watched natively"
        if not self.sync.available:
            return "the watcher's sync directory was removed"
        if not groups or not self.sync.sync(groups, timeout):
            return "the watch groups did not confirm their events in time"
        if self.recorder.rescan_pending():
            return "a rescan is pending (HEAD moved, an ignore file changed, or events may have been lost)"
        return None

    # -- events -------------------------------------------------------------------------------

    def _filter(self, change: watchfiles.Change, path: str) -> bool:
        if path == self._dot_git:
            return True  # the snapshot loop is woken to follow the project's git (see _check_groups)
        if any(path == g or path.startswith(g + "/") for g in self._git_roots):
            return path in self._git_files
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return False
        if rel in (".", ""):
            return False
        # a deleted path no longer exists, so it is judged as a file: a deleted recorded directory still
        # passes (its name matches no file-only rule); deletions in .trajectory/ or ignored dirs do not
        return self.recorder.policy.is_recorded(rel, is_dir=None)

    def _on_batch(self, batch: set[tuple[watchfiles.Change, str]]) -> None:
        # watchfiles yields a batch once a step brought no new change: the last event is a step old or more
        event_time = time.monotonic() - watchgroups.STEP_MS / 1000
        rels: list[str] = []
        added_dirs: list[str] = []
        deleted: list[str] = []
        head_moved = git_active = stash = index_changed = False
        for change, path in batch:
            if path == self._dot_git:
                with self._wake:
                    self._wake.notify_all()
                continue
            if path == self._index_file:
                index_changed = True
                continue
            if path in self._git_files:
                git_active = True
                head_moved = head_moved or path == self._head_file
                stash = stash or path == self._stash_log
                continue
            try:
                rels.append(Path(path).relative_to(self.root).as_posix())
            except ValueError:
                continue
            if change == watchfiles.Change.added and path not in self._watched and os.path.isdir(path):
                added_dirs.append(path)
            elif change == watchfiles.Change.deleted and path in self._watched:
                deleted.append(path)
        if deleted:
            self._forget_directories(deleted)
        if index_changed:
            flipped = self.recorder.policy.refresh_tracked()  # files git started or stopped tracking
            if flipped:
                rels += flipped
                added_dirs += sorted({str(self.root / "/".join(rel.split("/")[:i])) for rel in flipped
                                      for i in range(1, rel.count("/") + 1)}, key=len)
        if added_dirs:
            self._watch_new_directories(added_dirs)
        if git_active:
            self.recorder.note_git_activity(stash=stash)
        if head_moved:
            log.info("project HEAD moved (now on %s); rescanning", self.recorder.project.current_branch())
        overflow = len(batch) >= OVERFLOW_EVENTS
        if overflow:
            log.warning("%d events in one batch: the kernel's event queue may have overflowed; rescanning", len(batch))
        if rels or head_moved:
            self.recorder.note_changes(rels, rescan=head_moved or overflow)
            self._touch(event_time)

    def rescan_soon(self) -> None:
        """Have the snapshot loop scan the whole work tree after the debounce: for changes that may have come before
        the watches began (see :mod:`code_trajectory.recording.startup`)."""
        self.recorder.note_changes((), rescan=True)
        self._touch()

    def _touch(self, at: float | None = None) -> None:
        """Note a change that happened at ``at`` (``time.monotonic()`` seconds; now when None)."""
        now = time.monotonic() if at is None else at
        with self._wake:
            if self._first_change is None:
                self._first_change = now
            self._last_change = now if self._last_change is None else max(self._last_change, now)
            self._wake.notify_all()

    # -- snapshots ----------------------------------------------------------------------------

    def _snapshot_loop(self) -> None:
        retry_delay = 0.5
        while not self._stop.is_set():
            self._check_groups()
            self._poll_listings()
            with self._wake:
                if self._last_change is None:
                    if self.maintenance.due():
                        self._wake.release()
                        try:
                            self._maintain()
                        finally:
                            self._wake.acquire()
                        continue
                    self._wake.wait(timeout=IDLE_WAKE_SECONDS)
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
                self._stop.wait(min(retry_delay, MAX_RETRY_DELAY))
                retry_delay = min(retry_delay * 2, MAX_RETRY_DELAY)
                self._touch()

    def _check_groups(self) -> None:
        """Notice a removed project, a watch group that died (backend failure), or a ``.git`` made or removed at the
        project's root (``git init``: :meth:`~.recovery.RecoveryMixin.follow_project_git`), and react."""
        if self._project_git_changed():
            self.recorder.follow_project_git()
            self._follow_git()
            self._exclude_seen = self._exclude_stamp()
            self._rebuild()  # the new git directory's HEAD and reflogs watched; a rescan after the debounce
        if not self.root.is_dir():
            self.last_error = f"the project directory {self.root} no longer exists; watching stopped"
            log.error(self.last_error)
            self._stop.set()
            with self._groups_lock:
                for group in self._groups:
                    group.stop.set()
            return
        with self._groups_lock:
            dead = [g for g in self._groups if not g.thread.is_alive() and not g.stop.is_set()]
            native = any(not g.polling for g in self._groups)
        if native and not self.sync.available and self.sync.directory.parent.is_dir():  # .trajectory recreated
            log.warning("the sync directory %s was removed; rebuilding the watches", self.sync.directory)
            self._rebuild()
            return
        if not dead or not self.root.is_dir():  # a project removed meanwhile is handled on the next pass
            return
        log.warning("a watch group stopped (%s); rebuilding the watches", dead[0].error)
        self._rebuild()

    def _project_git_changed(self) -> bool:
        """Whether the root's ``.git`` came, went or is another directory, or the project's ``info/exclude`` changed
        and lacks the shadow repository's line: ``rm -rf .git && git init`` may give the new ``.git`` the inode the
        old one had, but not our line (one ``stat`` a pass; the file is read only when its stamp moved)."""
        root_git = identity(self._dot_git)
        if root_git is not None and os.path.isdir(self._dot_git) and not os.path.lexists(
                os.path.join(self._dot_git, "HEAD")):
            return False  # being made (git init): taken up half made, the new repository was never followed
        exclude = self._exclude_stamp()
        moved, self._root_git = root_git != self._root_git, root_git
        if moved or exclude == self._exclude_seen:
            return moved
        self._exclude_seen = exclude
        project = self.recorder.project
        return project.info_exclude is not None and project.work_tree is not None and not nested.is_excluded(
            project.info_exclude, nested.exclude_line(project.prefix, self.recorder.repo.git_dir.name))

    def _exclude_stamp(self) -> tuple[int, int, int] | None:
        """``(inode, mtime ns, size)`` of the project's ``info/exclude``; None without one (or without git)."""
        path = self.recorder.project.info_exclude
        try:
            st = os.stat(path) if path is not None else None
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size) if st is not None else None

    def _poll_listings(self) -> None:
        """Hand over what changed in the directories no watch group can take (see :mod:`.listingpoll`)."""
        batch = {(change, path) for change, path in self._listings.poll() if self._filter(change, path)}
        if batch:
            self._on_batch(batch)

    def _maintain(self) -> None:
        if self._maintainer.start():
            self.maintenance.done()

    def _flush(self) -> bool:
        try:
            snapshot = self.recorder.flush()
        except TrajectoryError as exc:
            self.last_error = f"snapshot failed, will retry: {exc}"
            log.warning(self.last_error)
            return False
        except Exception as exc:  # never let the watcher thread die
            self.last_error = f"snapshot failed unexpectedly, will retry: {exc!r}"
            log.exception("snapshot failed unexpectedly")
            return False
        if self.last_error and self.last_error.startswith("snapshot failed"):
            self.last_error = self._polling_notice  # the polling notice, when directories are polled
        self._written(snapshot)
        return True

    def _written(self, snapshot: Snapshot | None) -> None:
        """After a snapshot: count it for maintenance and pass it to ``on_snapshot``."""
        if snapshot is None:
            return
        self.maintenance.snapshot_written()
        if not self._stop.is_set() and self.maintenance.rollup_due(self.recorder.repo) and self._maintainer.start():
            self.maintenance.done()
        if self.on_snapshot is not None:
            try:
                self.on_snapshot(snapshot)
            except Exception:
                log.exception("snapshot callback failed")

