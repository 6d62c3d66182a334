"""One project being recorded: its recorder, its watcher (when this process records), and the writes.

:class:`ProjectSession` owns the project's :class:`~code_trajectory.recording.recorder.Recorder`
and, for the server and ``watch``, a :class:`~code_trajectory.recording.watcher.Watcher`; exactly
one process records a project (the holder of ``.trajectory/recorder.lock``), the others answer
queries and take over when it exits. The read-only narratives live in
:mod:`code_trajectory.history`, the test status in :mod:`code_trajectory.testruns`; they take a
session and read through its recorder. What those capabilities do when this session consolidates
(carry test runs, push) they register through :mod:`code_trajectory.recording.hooks`.

Its job: the lifecycle of one recorded project (who records, start, take-over, stop) and the writes that must go
through the recording process; its parts live beside it (checkpoints in :mod:`.session_checkpoints`, the start-up
scan in :mod:`.startup`, the answers in :mod:`.answers`, hand-overs in :mod:`.checkpoint_requests`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import filelock

from code_trajectory.core.answer import Answer
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError, ProjectError, StorageError, TrajectoryError
from code_trajectory.core.memory import release_free_memory
from code_trajectory.core.shutdown import stop_child
from code_trajectory.git import messages
from code_trajectory.git.gitcmd import check_git_version
from code_trajectory.git.shadow import shadow_ref
from code_trajectory.recording import answers, checkpoint_requests, edit_worker, handoff, hooks, startup
from code_trajectory.recording.catchup import CatchUp, note_mark
from code_trajectory.recording.checkpoint_requests import RequestServer
from code_trajectory.recording.consolidate import consolidate
from code_trajectory.recording.intent import START_GRACE_SECONDS
from code_trajectory.recording.liveness import idle_notice, read_recorder_state, write_recorder_state
from code_trajectory.recording.recorder import Recorder, Snapshot
from code_trajectory.recording.session_checkpoints import CheckpointMixin

if TYPE_CHECKING:
    from code_trajectory.recording.watcher import Watcher

log = logging.getLogger(__name__)

#: Squashed snapshots listed in a consolidation's answer (the newest).
CONSOLIDATE_LISTED = 20
#: File changes of the start-up snapshot kept in memory beyond the scan (see ``ProjectSession.startup_snapshot``).
KEEP_STARTUP_CHANGES = 1000
#: Longest wait in ``close`` for the import thread to notice that its child was stopped, seconds.
IMPORT_STOP_SECONDS = 2.0
#: How often a follower tries to take over recording, seconds.
TAKEOVER_POLL_SECONDS = 1.0


class ProjectSession(CheckpointMixin):
    """One project being recorded: the recorder, an optional watcher, and the queries.

    Args:
        root: the project directory (see :func:`resolve_project_root`); resolved here (:attr:`root` is absolute,
            without symlinks), so a relative root or one reached through a link is the same project.
        settings: settings for this project.
        watch: start a watcher (the server and ``watch``); the one-shot CLI commands don't.
        on_snapshot: called with each snapshot the watcher writes.
        force_polling: make the watcher poll (tests).
        max_native_dirs: watch at most this many directories natively (tests of the inotify fallback).
        create: create the shadow repository when missing.
        read_only: for the read-only commands: nothing is created, repaired or moved aside, and a damaged history
            raises :class:`DamagedHistoryError` (see :func:`code_trajectory.recording.opening.open_shadow_repository`).

    Raises:
        GitUnavailableError: git is missing or too old.
        StorageError: the shadow repository cannot be created.
    """

    def __init__(self, root: Path, settings: TrajectorySettings, *, watch: bool = False,
                 on_snapshot: Callable[[Snapshot], None] | None = None, force_polling: bool | None = None,
                 max_native_dirs: int | None = None, create: bool = True, read_only: bool = False) -> None:
        check_git_version()
        # git runs in other directories (a temporary one creates the shadow repository) and confine resolves each
        # path: a relative root misread the shadow repository, a linked one put every path outside the project
        self.root = root = Path(root).resolve()
        self.settings = settings
        self.recorder = Recorder.open(root, settings, create=create, read_only=read_only)
        # every snapshot taken here records the edits hooks handed over first, in order (see recording.handoff)
        checkpoint_requests.attach_handovers(self.recorder)
        self.watcher: Watcher | None = None
        self._watch = watch
        self._on_snapshot = on_snapshot
        self._force_polling = force_polling
        self._max_native_dirs = max_native_dirs
        #: the snapshot of the start-up scan (None: nothing had changed); the file changes of a large one
        #: (an initial import) are not kept, only its subject and the rest: they would hold ~40 MB at 100,000 files
        self.startup_snapshot: Snapshot | None = None
        self.import_progress: tuple[str, int, int | None] = ("scan", 0, None)
        self.import_error: Exception | None = None
        self._child: list[subprocess.Popen] = []  # the start-up import's process, when it runs in one
        self._started = threading.Event()
        self._closing = threading.Event()
        self._watch_lock = threading.Lock()
        self._recording_lock: filelock.FileLock | None = None
        self._requests: RequestServer | None = None
        self._progress: Callable[[str, int, int | None], None] | None = None
        #: ``recorder`` when this process records the project, ``follower`` while another one does.
        self.role = "recorder"
        self._scan_started = False
        self._created = datetime.now(UTC)
        #: ``time.monotonic()`` when this session was made: the start of its first answers' short wait
        self.started_monotonic = time.monotonic()

    def start(self, progress: Callable[[str, int, int | None], None] | None = None, *,
              background: bool = False, watch_first: bool = True,
              import_after: threading.Event | None = None) -> Snapshot | None:
        """Start the watcher if asked, then reconcile with the work tree (the start-up snapshot).

        Args:
            progress: called with ``(phase, done, total)`` during the scan.
            background: run the reconcile on a thread and return at once; :attr:`importing`
                tells whether it still runs, :attr:`import_progress` how far it got, and
                :meth:`wait_started` waits for it. Queries answer meanwhile from what is
                recorded so far.
            watch_first: with ``background``, set the watches of an initial import before returning (the
                default: ``configure_project``, whose caller edits right after its answer); False sets them on the
                start-up thread after the import, with a rescan before and after, as a restart does (``serve
                --project``: one watch per directory takes seconds at 20,000 directories, and ``initialize``
                must answer within 1 s, issue 29).
            import_after: with ``background``, an initial import starts once this is set, and a restart's watches
                are set once it is (see :func:`code_trajectory.recording.startup.startup_scan` and
                :func:`~code_trajectory.recording.startup.watch_after_scan`); None: at once.

        Raises:
            TrajectoryError: the start-up reconcile failed (only when not in the background).
        """
        self._progress = progress
        if self._watch:
            # exactly one process records a project: the holder of .trajectory/recorder.lock (flock, released
            # by the kernel when its owner dies); the others answer queries and take over when it exits
            self._recording_lock = filelock.FileLock(str(self.recorder.repo.git_dir / "recorder.lock"),
                                                     timeout=0, thread_local=False)
            try:
                self._recording_lock.acquire()
            except filelock.Timeout:
                self.role = "follower"
                log.info("another process records %s; answering queries and waiting to take over", self.root)
                self._started.set()
                threading.Thread(target=self._wait_to_record, name="trajectory-takeover", daemon=True).start()
                return None
        return self._start_recording(background, watch_first=watch_first, import_after=import_after)

    def _wait_to_record(self) -> None:
        while not self._closing.wait(TAKEOVER_POLL_SECONDS):
            lock = self._recording_lock
            if lock is None:  # only start() runs this thread, once it made the lock
                return
            try:
                lock.acquire()
            except filelock.Timeout:
                continue
            except OSError as exc:  # .trajectory removed meanwhile: try again later
                log.debug("cannot take the recorder lock: %s", exc)
                continue
            if self._closing.is_set():
                lock.release()
                return
            log.info("the recording process of %s exited; this one records now", self.root)
            self.role = "recorder"
            self._started.clear()
            self._start_recording(background=True, took_over=True)
            return

    def _start_recording(self, background: bool, *, watch_first: bool = True,
                         import_after: threading.Event | None = None, took_over: bool = False) -> Snapshot | None:
        self._scan_started = True
        catch_up = CatchUp()
        if self._watch:
            state_dir = self.recorder.repo.state_dir
            previous = read_recorder_state(state_dir)
            catch_up = CatchUp.from_state(previous)  # the scan's changes were made since the last recorder stopped
            # a follower taking over serves a client still at work, whose prompt (``claude -p``) may have reached its
            # hook just before this server started: kept as one set while it ran, not ended with the recorder's
            alive_since = self._created - timedelta(seconds=START_GRACE_SECONDS) if took_over else self._created
            if self.recorder.intent.end_stale(previous, alive_since=alive_since):
                log.info("the intent of an earlier session was ended: a new recording session starts")
            write_recorder_state(state_dir, started=True)
            from code_trajectory.recording import scanchild
            from code_trajectory.recording.watcher import Watcher

            scanchild.attach(self.recorder)  # this process lives on: a large project's full scans run in a child
            self.watcher = Watcher(self.recorder, self.settings, on_snapshot=self._on_snapshot,
                                   force_polling=self._force_polling, max_native_dirs=self._max_native_dirs)
        importing = background and self.recorder.latest_commit() is None
        # a restart in the background (and an import started with watch_first=False) records first, then watches,
        # with a rescan for the gap (see recording.startup); otherwise the watches come first, and events during the
        # scan are queued, not lost
        watch_after_scan = self.watcher is not None and background and (not importing or not watch_first)
        if self.watcher is not None and not watch_after_scan:
            self.watcher.start()
        if self._watch:
            self._requests = RequestServer(self.recorder.repo.state_dir, self._answer_request,
                                           drain_edits=self.recorder.record_handovers,
                                           ready=lambda: self._started.is_set() and self.import_error is None)
            self._requests.start()
            self.recorder.restart_listeners.append(self._relock)

        def note(phase: str, done: int, total: int | None) -> None:
            self.import_progress = (phase, done, total)
            if self._progress is not None:
                self._progress(phase, done, total)

        def work() -> None:
            try:
                snap = startup.startup_scan(self.recorder, importing=importing, background=background,
                                            catch_up=catch_up, progress=note, started=self._adopt,
                                            hold=import_after, closing=self._closing, took_over=took_over)
                if snap is not None and len(snap.changes) > KEEP_STARTUP_CHANGES:
                    snap = dataclasses.replace(snap, changes=[])
                    release_free_memory()
                self.startup_snapshot = snap
            except Exception as exc:  # noqa: BLE001 - kept for the caller and the summary
                self.import_error = exc
                if self._closing.is_set():
                    log.info("start-up scan of %s stopped: the process stops", self.root)
                else:
                    log.error("start-up scan of %s failed: %s", self.root, exc)
            finally:
                if watch_after_scan and self.watcher is not None:  # the start-up ends once the watches are set
                    startup.watch_after_scan(self.recorder, self.watcher, self._watch_lock, self._closing,
                                             ready=None if importing else import_after)
                self._started.set()

        if background:
            threading.Thread(target=work, name="trajectory-import", daemon=True).start()
            return None
        work()
        if self.import_error is not None:
            raise self.import_error
        return self.startup_snapshot

    def _relock(self) -> None:
        """``.trajectory`` was recreated under this recording process: hold the new ``recorder.lock`` (the old one
        went with the deleted directory), so that other processes still see that this one records."""
        old = self._recording_lock
        if old is None or not old.is_locked:
            return
        lock = filelock.FileLock(str(self.recorder.repo.git_dir / "recorder.lock"), timeout=0, thread_local=False)
        try:
            lock.acquire()
        except (filelock.Timeout, OSError) as exc:
            log.warning("cannot hold the recorder lock of the new history (%s); another process may record too", exc)
            return
        self._recording_lock = lock
        with contextlib.suppress(OSError):
            old.release()
        write_recorder_state(self.recorder.repo.state_dir, started=True)

    def _adopt(self, child: subprocess.Popen) -> None:
        """Keep the start-up import's child process, to stop it on :meth:`close` (at once if closing already)."""
        self._child.append(child)
        if self._closing.is_set():
            stop_child(child)

    @property
    def importing(self) -> bool:
        """True while the start-up scan of a started session runs (a one-shot command's session never scans)."""
        return self._scan_started and not self._started.is_set()

    def wait_started(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the start-up scan; True when it finished."""
        return self._started.wait(timeout)

    def close(self) -> None:
        """Stop recording: stop the start-up import's child, snapshot the pending changes at once (no debounce
        wait), note the stop (``recorder.json``'s ``stopped_at``), release the recorder lock and resources.

        While the start-up scan has not completed, the pending changes are not snapshotted: the next start's scan
        records them with everything else.
        """
        self._closing.set()
        for child in self._child:  # an import still running: its snapshot is redone at the next start
            stop_child(child)
        if self._requests is not None:
            self._requests.stop()
            self._requests = None
        if self._child:
            self._started.wait(IMPORT_STOP_SECONDS)  # the import thread notices the child's end
        scanned = self._started.is_set() and self.import_error is None
        with self._watch_lock:  # not while _watch_after_scan starts it
            watcher, self.watcher = self.watcher, None
        if watcher is not None:
            if not scanned:
                log.info("the start-up scan of %s did not complete; the next start records the pending changes",
                         self.root)
            watcher.stop(flush=scanned)
        if self._recording_lock is not None and self._recording_lock.is_locked:
            if scanned:  # the stash as this process leaves it: a stash gone at the next start was popped meanwhile
                note_mark(self.recorder.repo.state_dir, self.recorder.project)
            write_recorder_state(self.recorder.repo.state_dir, started=False)
            with contextlib.suppress(OSError):
                self._recording_lock.release()
            # an edit hook that handed over while this process stopped saw it record, and started no worker
            if scanned and handoff.waiting(self.recorder.repo.state_dir):
                edit_worker.start(self.root)
        self.recorder.close()

    def check_alive(self) -> None:
        """Raise :class:`ProjectError` when the project directory has gone (removed or moved), and
        :class:`StorageError` when its ``.trajectory`` is no longer a directory (a checkout of a branch that tracks
        a file of that name replaced it: every git call on it failed with ``invalid gitfile format``)."""
        if not self.root.is_dir():
            raise ProjectError(f"the project directory {self.root} no longer exists (removed or moved); recording "
                               "stopped. Call configure_project with its new location.")
        git_dir = self.recorder.repo.git_dir
        if git_dir.exists() and not git_dir.is_dir():
            raise StorageError(f"{git_dir} is no longer the shadow repository: it is a file now (a checkout of a "
                               "branch that tracks a file named .trajectory puts it there, and git removes the "
                               "history in its way); the recorded history is gone. Move that file away (or check out "
                               "a branch without it) and call configure_project: recording starts a new history.")

    # -- operations ------------------------------------------------------------------------------

    @property
    def branch(self) -> str:
        return self.recorder.project.current_branch()

    def set_intent(self, intent: str) -> str:
        """Set the intent recorded with the following snapshots; return a confirmation.

        The saves this process's watcher holds back for the debounce were made under the intent before: they are
        snapshotted first, with it (once the start-up scan is done; a failure leaves them pending, logged).
        """
        self.check_alive()
        if not isinstance(intent, str):
            raise InvalidArgumentError("intent must be a string")
        watcher = self.watcher
        if (watcher is not None and watcher.running and self._started.is_set() and self.import_error is None
                and self.recorder.has_pending(wait=False, rescan=False)):  # saves seen: their paths, no full scan
            try:
                watcher.flush_pending()
            except (TrajectoryError, OSError) as exc:
                log.warning("the saves made before the new intent stay pending: %s", exc)
        clean = self.recorder.intent.set(intent)
        return f"Intent set: \"{clean}\". Snapshots from now on carry it, until it is changed."

    @property
    def records_here(self) -> bool:
        """True when this process records the project (it holds ``.trajectory/recorder.lock``)."""
        return self._recording_lock is not None and self._recording_lock.is_locked

    def consolidate(self, intent: str) -> Answer:
        """Squash the trailing snapshots into one ``[CONSOLIDATE]`` commit; return what happened (markdown, and
        its facts as :func:`~code_trajectory.recording.answers.consolidation` data)."""
        self.check_alive()
        if not isinstance(intent, str):
            raise InvalidArgumentError("intent must be a string")
        result = consolidate(self.recorder, intent)
        if result.commit is None:
            return answers.consolidation(result.message, result, CONSOLIDATE_LISTED)
        # the capabilities above react (test runs carried to the same tree, auto push): see recording.hooks
        hooks.consolidated(hooks.Consolidated(self.root, self.recorder.repo, result.commit,
                                              tuple(result.squashed_commits)))
        shown = result.squashed_records[-CONSOLIDATE_LISTED:]
        lines = [f"Consolidated {result.squashed} snapshot(s) of the current task on shadow branch `{result.branch}` "
                 f"into `{result.commit[:12]}`: {result.message}", "", "Squashed, oldest first:"]
        if len(result.squashed_records) > len(shown):
            lines.append(f"- ... {len(result.squashed_records) - len(shown)} older")
        lines += [f"- {r.time.astimezone().strftime('%H:%M:%S')} `{r.oid[:12]}`: "
                  f"{messages.summarize(r.changes, 3) if r.changes else r.subject}" for r in shown]
        lines += ["", result.stopped_at] if result.stopped_at else []
        lines += ["", "Earlier snapshots, checkpoints and other tasks are kept. The squashed snapshots stay reachable "
                  f"through the reflog: `git --git-dir=.trajectory reflog {shadow_ref(result.branch)}`."]
        return answers.consolidation("\n".join(lines), result, CONSOLIDATE_LISTED)

    def status_notices(self) -> list[str]:
        """What a reader of the history must know about the recording itself (damage, follower, scan, watcher,
        and for a one-shot command whether anything records the project now)."""
        notices = list(self.recorder.notices)
        if not self._watch:
            idle = idle_notice(self.root, self.recorder.repo)
            if idle:
                notices.append(idle)
        if self.role == "follower":
            notices.append("another code-trajectory process records this project; this one answers queries "
                           "and takes over when it exits")
        if self.importing:
            phase, done, total = self.import_progress
            notices.append(f"the start-up scan is still running ({phase}: {done}"
                           f"{f' of {total}' if total else ''}); the history below may be incomplete")
        if self.import_error is not None:
            notices.append(f"the start-up scan failed: {self.import_error}")
        if self.watcher is not None and self.watcher.last_error:
            notices.append(self.watcher.last_error)
        if self.watcher is not None and self.watcher.polling and self.watcher.last_error is None:
            notices.append(f"{self.watcher.polled_dirs} director(ies) are polled, not watched natively "
                           "(see the server log)")
        return notices
