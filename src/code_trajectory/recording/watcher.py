"""The watcher: file events in, debounced snapshots out.

Which directories are watched: every directory the
:class:`~code_trajectory.recording.ignore.RecordingPolicy` records, each watched on its own
(non-recursively) — ignored trees such as ``node_modules`` or build output are
pruned before anything is watched, so inotify watches stay close to the number of
recorded directories — plus the git directory of the project for its ``HEAD``.
A directory created later is added with its subdirectories; the snapshot of that
directory rescans it, so files created before its watch began are not missed.

``watchfiles`` groups and de-duplicates the raw events; events for paths the
policy does not record are dropped. Snapshots are written once the project has
been quiet for ``debounce_seconds`` (default 2.0 s), or after
``max_delay_seconds`` of uninterrupted changes, so a burst of saves becomes one
snapshot of the final state and a never-ending stream still gets recorded.

A move of the project's ``HEAD`` (checkout, switch, rebase) triggers a full
rescan, so a checkout rewriting thousands of files yields one snapshot on the new
branch's shadow ref. When native watches run out (the inotify limit,
``/proc/sys/fs/inotify/max_user_watches``), the directories that could not be
watched are polled instead; the log and ``get_session_summary`` say so, and a
rescan covers anything that changed meanwhile. Maintenance of the shadow
repository runs on the snapshot thread once the project has been quiet.
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
from code_trajectory.git.maintenance import BackgroundMaintenance, MaintenancePolicy
from code_trajectory.recording.ignore import RecordingPolicy, SubtreePolicy
from code_trajectory.recording.recorder import Recorder, Snapshot

log = logging.getLogger(__name__)

#: Longest wait between retries of a snapshot that failed (lock held, disk full), seconds.
MAX_RETRY_DELAY = 30.0
#: Poll interval for directories that cannot be watched natively, milliseconds.
POLL_DELAY_MS = 2000
#: How often the snapshot thread wakes when nothing changes (checks the project still exists), seconds.
IDLE_WAKE_SECONDS = 2.0
#: Extra watch groups (directories created since the last full rebuild) before a rebuild merges them.
MAX_EXTRA_GROUPS = 16


def recorded_directories(root: Path, policy: RecordingPolicy) -> list[str]:
    """Every directory under ``root`` (``root`` included) that the policy records, as absolute paths.

    Symlinked directories are not followed; unreadable ones are skipped.
    """
    found = [str(root)]
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = [e for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not policy.entry_excluded(rel_dir, entry.name, True):
                found.append(str(root / rel))
                stack.append(rel)
    return found


class _WatchGroup:
    """One ``watchfiles`` generator over a list of directories, on its own thread."""

    def __init__(self, watcher: Watcher, dirs: list[str], *, polling: bool) -> None:
        self.watcher = watcher
        self.dirs = dirs
        self.polling = polling
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="trajectory-events", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            # step: how often watchfiles checks the stop event and groups changes (ms); 200 keeps an idle
            # watcher near zero CPU while adding little to the 2 s debounce
            for batch in watchfiles.watch(*self.dirs, watch_filter=self.watcher._filter, debounce=400, step=200,
                                          stop_event=self.stop, rust_timeout=1000, yield_on_timeout=True,
                                          raise_interrupt=False, force_polling=self.polling,
                                          poll_delay_ms=POLL_DELAY_MS, recursive=False,
                                          ignore_permission_denied=True):
                self.ready.set()  # the first yield (a timeout or changes) means the watches are in place
                if batch:
                    self.watcher._on_batch(batch)
        except BaseException as exc:  # noqa: BLE001 - reported to the watcher
            self.error = exc
        finally:
            self.ready.set()


class Watcher:
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
        self.force_polling = bool(force_polling)
        self.max_native_dirs = max_native_dirs
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._first_change: float | None = None
        self._last_change: float | None = None
        self._snapshot_thread: threading.Thread | None = None
        self._groups: list[_WatchGroup] = []
        self._groups_lock = threading.Lock()
        self._watched: set[str] = set()
        self.last_error: str | None = None
        self.polled_dirs = 0
        self.maintenance = MaintenancePolicy()
        self._maintainer = BackgroundMaintenance(recorder.repo, cap_bytes=settings.max_history_bytes,
                                                 retention_days=settings.retention_days)
        project = recorder.project
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
        """Stop watching; with ``flush``, snapshot what is still pending first."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        with self._groups_lock:
            groups, self._groups = self._groups, []
        for group in groups:
            group.stop.set()
        for group in groups:
            group.thread.join(timeout)
        if self._snapshot_thread is not None:
            self._snapshot_thread.join(timeout)
        self._maintainer.join(timeout)
        if flush and self.recorder.has_pending():
            self._flush()

    @property
    def running(self) -> bool:
        return not self._stop.is_set() and self._snapshot_thread is not None and self._snapshot_thread.is_alive()

    @property
    def polling(self) -> bool:
        """True when some directories are polled rather than watched natively."""
        return self.polled_dirs > 0

    @property
    def watched_dirs(self) -> int:
        """Number of directories watched (natively or by polling)."""
        return len(self._watched)

    # -- watch groups -------------------------------------------------------------------------

    def _start_groups(self, dirs: list[str]) -> list[_WatchGroup]:
        """Watch ``dirs``: natively as far as possible, the rest by polling."""
        groups: list[_WatchGroup] = []
        native = [] if self.force_polling else list(dirs)
        polled = list(dirs) if self.force_polling else []
        if self.max_native_dirs is not None and len(native) > self.max_native_dirs:
            polled += native[self.max_native_dirs:]
            native = native[:self.max_native_dirs]
        while native:
            group = _WatchGroup(self, native, polling=False)
            group.start()
            group.ready.wait(60)
            if group.error is None:
                groups.append(group)
                break
            if len(native) == 1:
                polled += native
                break
            # out of watches (or another native failure): keep half native, poll the rest
            half = len(native) // 2
            log.warning("native watching of %d directories failed (%s); trying %d", len(native), group.error, half)
            polled += native[half:]
            native = native[:half]
        if polled:
            group = _WatchGroup(self, polled, polling=True)
            group.start()
            group.ready.wait(60)
            groups.append(group)
            self.polled_dirs += len(polled)
            self.last_error = (f"{len(polled)} director(ies) are polled every {POLL_DELAY_MS / 1000:g} s because "
                               "they could not be watched natively (inotify watch limit: raise "
                               "fs.inotify.max_user_watches)")
            log.warning(self.last_error)
        return groups

    def _rebuild(self) -> None:
        """Replace every watch group by one over all recorded directories, then rescan for the gap."""
        dirs = recorded_directories(self.root, self.recorder.policy)
        dirs += [d for d in self._git_watch_dirs if d not in dirs]  # HEAD and reflogs; nothing else passes the filter
        self.polled_dirs = 0
        groups = self._start_groups(dirs)
        with self._groups_lock:
            old, self._groups = self._groups, groups
            self._watched = set(dirs)
        for group in old:
            group.stop.set()
        if old:
            self.recorder.note_changes((), rescan=True)  # changes between the old and new watches
            self._touch()

    def _watch_new_directories(self, paths: list[str]) -> None:
        """Add watches for directories created since the last rebuild (and their subdirectories)."""
        fresh: list[str] = []
        for path in paths:
            if path in self._watched or not os.path.isdir(path) or os.path.islink(path):
                continue
            rel = Path(path).relative_to(self.root).as_posix()
            if not self.recorder.policy.is_recorded(rel, is_dir=True):
                continue
            sub = recorded_directories(Path(path), SubtreePolicy(self.recorder.policy, rel))
            fresh += [d for d in sub if d not in self._watched]
        if not fresh:
            return
        with self._groups_lock:
            many = len(self._groups) >= MAX_EXTRA_GROUPS
        if many:
            self._rebuild()
            return
        groups = self._start_groups(fresh)
        with self._groups_lock:
            self._groups += groups
            self._watched.update(fresh)

    # -- events -------------------------------------------------------------------------------

    def _filter(self, change: watchfiles.Change, path: str) -> bool:
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
        rels: list[str] = []
        added_dirs: list[str] = []
        head_moved = git_active = stash = index_changed = False
        for change, path in batch:
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
            self._check_groups()
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
        """Notice a removed project or a watch group that died (backend failure) and react."""
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
        if not dead:
            return
        if not self.root.is_dir():
            self.last_error = f"the project directory {self.root} no longer exists; watching stopped"
            log.error(self.last_error)
            self._stop.set()
            return
        log.warning("a watch group stopped (%s); rebuilding the watches", dead[0].error)
        self._rebuild()

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
        except Exception as exc:  # noqa: BLE001 - never let the watcher thread die
            self.last_error = f"snapshot failed unexpectedly, will retry: {exc!r}"
            log.exception("snapshot failed unexpectedly")
            return False
        if self.last_error and self.last_error.startswith("snapshot failed"):
            self.last_error = None
        if snapshot is not None:
            self.maintenance.snapshot_written()
            if self.maintenance.rollup_due(self.recorder.repo) and self._maintainer.start():
                self.maintenance.done()
            if self.on_snapshot is not None:
                try:
                    self.on_snapshot(snapshot)
                except Exception:  # noqa: BLE001
                    log.exception("snapshot callback failed")
        return True
