"""The changes waiting for a :class:`~code_trajectory.recording.recorder.Recorder`'s next snapshot.

The watcher queues the paths that changed (:meth:`PendingMixin.note_changes`), or a rescan of the whole work tree,
and notes that git wrote the project's ``HEAD``, reflog or stash (:meth:`PendingMixin.note_git_activity`: the next
snapshot may then be a git operation's, read from the reflog). :meth:`PendingMixin.flush` records what is queued
(a full scan when a rescan is due) and keeps it queued when the snapshot fails, to be retried; nothing is dropped.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from code_trajectory.git import messages
from code_trajectory.git.messages import FileChange
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import GitOperation, ReflogCursor
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording import catchup
from code_trajectory.recording.ignore import RecordingPolicy

if TYPE_CHECKING:
    import threading

    from code_trajectory.recording.commit_message import Snapshot

log = logging.getLogger(__name__)


class _Recorder(Protocol):
    """What :class:`PendingMixin` uses of the :class:`~code_trajectory.recording.recorder.Recorder` it is mixed
    into (the type of ``self`` in its methods)."""

    repo: ShadowRepo
    project: ProjectRepo
    _lock: threading.RLock
    _pending: dict[str, float]
    _pending_rescan: bool
    _intent_noted: dict[str, float] | None
    _git_activity: float | None
    _stash_touched: bool
    _reflog: ReflogCursor
    _last_tree: str | None
    _last_commit: str | None

    def _guard(self) -> bool: ...

    def _recover(self, exc: BaseException) -> bool: ...

    def note_git_activity(self, *, stash: bool = False) -> None: ...

    def reconcile(self, *, kind: str = messages.KIND_RECONCILE, note: str | None = None) -> Snapshot | None: ...

    def record_paths(self, paths: Iterable[str], *, kind: str = messages.KIND_SNAPSHOT,
                     note: str | None = None) -> Snapshot | None: ...


class PendingMixin:
    """The pending changes of :class:`~code_trajectory.recording.recorder.Recorder` (see the module docstring; its
    lock, queue and git-activity fields are the recorder's: see :class:`_Recorder`)."""

    # the queue, which the recorder's other parts read too, and the cached tip scanning_elsewhere clears (declared
    # here, or mypy takes the first value assigned in these methods for their type)
    _pending: dict[str, float]
    _pending_rescan: bool
    _intent_noted: dict[str, float] | None
    _git_activity: float | None
    _stash_touched: bool
    _last_tree: str | None
    _last_commit: str | None

    def note_changes(self: _Recorder, paths: Iterable[str], *, rescan: bool = False) -> None:
        """Queue changed paths (relative to the root) for the next :meth:`flush`, each with when it was noted (the
        intent it was changed under is the one in effect then: see :meth:`flush`)."""
        with self._lock:
            now = time.time()
            for path in paths:
                self._pending[path] = now
            if rescan:
                self._pending_rescan = True

    def note_git_activity(self: _Recorder, *, stash: bool = False) -> None:
        """Say that git wrote the project's ``HEAD``, reflog or stash: the next snapshot may be a git operation's.

        The next ordinary snapshot reads the reflog (:meth:`code_trajectory.git.reflog.ReflogCursor.new_operation`):
        when a checkout, reset, merge, rebase, pull, cherry-pick, revert or stash rewrote files, the snapshot is
        recorded as that operation (``[CHECKOUT] feature → main``, no intent), not as the agent's edits.
        """
        with self._lock:
            now = time.time()
            self._git_activity = now if self._git_activity is None else min(self._git_activity, now)
            self._stash_touched = self._stash_touched or stash

    def note_unseen_git_activity(self: _Recorder) -> None:
        """:meth:`note_git_activity` when git wrote the project's reflogs since the last snapshot read them and no
        watch saw it (a checkout between a restart's scan and its watches): the rescan that follows is then
        recorded as git's operation, not as the agent's edit."""
        head, stash = self._reflog.unread()
        if head or stash:
            self.note_git_activity(stash=stash)

    def _take_git_operation(self: _Recorder) -> GitOperation | None:
        """The git operation behind the pending changes, if git was active since the last snapshot (consumed).

        The reflog is read from where the previous snapshot left it, so an operation is never reported twice.
        """
        operation = self._reflog.new_operation()  # always advances, so old entries never come back
        if self._git_activity is None:
            return None
        catchup.note_mark(self.repo.state_dir, self.project)  # the reflogs as recorded (see catchup)
        self._git_activity, self._stash_touched = None, False
        return operation

    @contextlib.contextmanager
    def scanning_elsewhere(self: _Recorder) -> Iterator[None]:
        """Hold this recorder's lock while another process scans and records the project (the start-up import,
        see :mod:`code_trajectory.recording.importer`): pending changes are dropped (the scan covers them) and
        the last recorded tree is read again afterwards."""
        with self._lock:
            self._pending.clear()
            self._pending_rescan = False
            try:
                yield
            finally:
                self._last_tree = self._last_commit = None

    def has_pending(self: _Recorder, *, wait: bool = True, rescan: bool = True) -> bool:
        """True when changes are queued.

        Args:
            wait: take the recorder's lock to answer (a snapshot being written puts its paths back when it fails).
                False answers at once from the fields as they are (a moment old at worst): a full scan, or the
                initial import in its child process, holds the lock for seconds to minutes, and a summary asked
                meanwhile must answer at once (issue 29).
            rescan: a rescan asked for counts (the watcher's start asks for one to cover its walk: it usually finds
                nothing); False: only the paths of saves seen.
        """
        if not self._lock.acquire(blocking=wait):
            return bool(self._pending) or (rescan and self._pending_rescan)
        try:
            return bool(self._pending) or (rescan and self._pending_rescan)
        finally:
            self._lock.release()

    def rescan_pending(self: _Recorder) -> bool:
        """True when the next :meth:`flush` will scan the whole work tree (a rescan was asked for)."""
        return self._pending_rescan

    def flush(self: _Recorder, *, kind: str = messages.KIND_SNAPSHOT, note: str | None = None,
              saves_first: bool = False) -> Snapshot | None:
        """Write a snapshot (``kind``, with ``note``) of the queued changes now; None when nothing changed. On failure
        the paths stay queued (merged with any that arrive meanwhile) and the error is raised to retry later.

        ``saves_first`` (a stopping process): when a rescan is due, the saves seen are snapshotted on their own
        first, in milliseconds, then the full scan runs; a client may kill its server half a second after asking it
        to stop (Claude Code 2.1.332: SIGINT, SIGTERM 0.1 s later, SIGKILL 0.4 s after that), and a full scan after
        an ignore file changed took longer at 6,000 files. Not while git was active (a checkout's files must be
        labelled as git's, by the scan) and not for the ignore files themselves (the scan applies their rules).

        The snapshot carries the intent in effect when the newest of the changes it records was noted
        (:func:`noted_at`): a save held back for the debounce while another process set a new intent
        (``code-trajectory intent``, a prompt's hook) keeps the one it was made under, as the in-process
        ``set_intent`` gets by snapshotting first."""
        with self._lock:
            noted, rescan = self._pending, self._pending_rescan
            paths = list(noted)
            self._pending, self._pending_rescan = {}, False
            self._intent_noted = noted
            try:
                guarded = self._guard()
                rescan = rescan or guarded
                if saves_first and not guarded and self._git_activity is None:
                    saves = [p for p in paths if not RecordingPolicy.is_ignore_file(p)]
                    if saves and (rescan or len(saves) < len(paths)):  # a full scan follows: the saves go first
                        try:
                            self.record_paths(saves, kind=kind)
                        except Exception as exc:  # noqa: BLE001 - the full scan below records them
                            log.warning("the last saves' own snapshot failed (%s); the full scan records them", exc)
                if rescan:
                    return self.reconcile(kind=messages.KIND_RECONCILE if kind == messages.KIND_SNAPSHOT else kind, note=note)
                return self.record_paths(paths, kind=kind, note=note) if paths else None
            except BaseException as exc:
                for path, at in noted.items():
                    self._pending.setdefault(path, at)
                self._pending_rescan = self._pending_rescan or rescan
                if isinstance(exc, Exception) and self._recover(exc):
                    self._pending_rescan = True
                raise
            finally:
                self._intent_noted = None


def noted_at(noted: Mapping[str, float] | None, changes: Iterable[FileChange]) -> float | None:
    """When the newest of ``changes`` was noted (epoch seconds): the latest time ``noted`` (path or directory,
    relative to the root -> when the watcher saw it change) gives a changed path (either side of a rename) or a
    directory above it; the latest of ``noted`` when it names none of them (a rescan's), None when ``noted`` is
    None or empty (a snapshot nothing queued: its changes are of now)."""
    if not noted:
        return None
    latest = max(noted.values())
    found: float | None = None
    for change in changes:
        for path in (change.path, change.old_path):
            while path:
                at = noted.get(path)
                if at is not None and (found is None or at > found):
                    if at == latest:  # none is later: a checkout's 100,000 changes are not all looked up
                        return at
                    found = at
                path = path.rpartition("/")[0]
    return found if found is not None else latest
