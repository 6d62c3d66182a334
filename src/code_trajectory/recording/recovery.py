"""What a recorder does when its shadow repository vanished or is damaged, or the project's git came or went, while
it records.

A deleted ``.trajectory`` is recreated and the loss reported; a snapshot that fails because a killed process left
a lock clears the stale lock and retries; one that fails on a damaged repository moves it aside
(``.trajectory.corrupt-<timestamp>``) and starts a new history. The user hears about each (``Recorder.notices``:
the log, tool answers and the session summary). A ``git init`` in a project recorded without git (or its ``.git``
removed) is followed at once (:meth:`RecoveryMixin.follow_project_git`): the branch, the ignore files and the
tracked set are the new repository's, and ``.trajectory`` is kept out of its ``git clean -fdx`` before the user can
run it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Protocol

import filelock

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import LockContentionError, ProjectError
from code_trajectory.git import health
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import ReflogCursor
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.ignore import RecordingPolicy
from code_trajectory.recording.liveness import note_history_restart
from code_trajectory.recording.opening import identity, policy_for, protect_history
from code_trajectory.recording.statcache import StatCache

log = logging.getLogger(__name__)


class _Recorder(Protocol):
    """What :class:`RecoveryMixin` uses of the :class:`~code_trajectory.recording.recorder.Recorder` it is mixed
    into (the type of ``self`` in its methods)."""

    root: Path
    settings: TrajectorySettings
    repo: ShadowRepo
    project: ProjectRepo
    policy: RecordingPolicy
    _reflog: ReflogCursor
    _lock: threading.RLock
    _pending_rescan: bool
    stat_cache: StatCache
    notices: list[str]
    restart_listeners: list[Callable[[], None]]
    _shadow_id: tuple[int, int] | None
    _write_lock: filelock.FileLock
    _last_tree: str | None
    _last_commit: str | None
    _head_ref: str | None

    def _new_write_lock(self) -> filelock.FileLock: ...

    def _guard(self) -> bool: ...

    def _restart_history(self, notice: str) -> None: ...


class RecoveryMixin:
    """The recovery half of :class:`~code_trajectory.recording.recorder.Recorder` (its attributes ``root``,
    ``repo``, ``_shadow_id``, ``project``, ``policy``, ``stat_cache``, ``notices``, ``restart_listeners`` and its cached tip and
    write lock are used: see :class:`_Recorder`)."""

    # the cached tip, which _restart_history clears (declared here, or mypy takes its None for their type)
    _last_tree: str | None
    _last_commit: str | None
    _head_ref: str | None

    def _guard(self: _Recorder) -> bool:
        """Recreate ``.trajectory`` if it vanished, or take up the new one another process made after it vanished
        (its identity differs from the one this recorder opened); True when it had to (a full rescan is then due)."""
        if self.repo.exists() and identity(self.repo.git_dir) == self._shadow_id:
            return False
        if not self.root.is_dir():
            raise ProjectError(f"the project directory {self.root} no longer exists; call configure_project "
                               "with its new location")
        self._restart_history(f"the shadow repository {self.repo.git_dir} was deleted while recording; its "
                              f"history is lost and a new one started at {datetime.now().strftime('%H:%M:%S')}")
        return True

    def follow_project_git(self: _Recorder) -> None:
        """Take up the project's git repository again: a ``git init`` in a project recorded without git, its ``.git``
        removed, or removed and made again (the watcher calls this when the root's ``.git`` comes, goes or is
        replaced). The branch of later snapshots, the ignore files, the tracked set and the reflog read are then the
        new repository's, ``.trajectory`` is added to its ``info/exclude`` with the marker that keeps ``git clean
        -fdx`` and ``git stash --all`` away from it (:func:`.opening.protect_history`: a new ``info/exclude`` lacks
        the line, and a marker the project's git does not ignore would make ``git add -A`` fail), and a full scan
        is due."""
        found = ProjectRepo.discover(self.root)
        with self._lock:
            self.project = found
            self.policy = policy_for(self.root, self.settings.all_deny_patterns, found)
            self._reflog = ReflogCursor(found)
            self._pending_rescan = True
        problem = protect_history(self.repo, found)
        log.warning("the project's git repository is now %s (branch %s); recording follows it%s",
                    found.git_dir or "none", found.current_branch(), f" ({problem})" if problem else "")
        if problem is not None:
            self.notices.append(problem)

    def _needs_full_scan(self: _Recorder, paths: Iterable[str]) -> bool:
        """Before a snapshot of changed ``paths``: must a full scan (:meth:`reconcile`) take its place?

        True when ``.trajectory`` had to be recreated (:meth:`_guard`) or when one of ``paths`` is an ignore
        file (the recording rules are then reloaded first).

        Raises:
            ProjectError: the project directory no longer exists.
        """
        if self._guard():
            return True
        if any(RecordingPolicy.is_ignore_file(p) for p in paths):
            self.policy.invalidate()
            return True
        return False

    def _restart_history(self: _Recorder, notice: str) -> None:
        """Start a new history in a new ``.trajectory``, then say so once: the log (stderr), :attr:`notices` (tool
        answers, the session summary) and ``.trajectory/state`` (``code-trajectory status``); then call each of
        :attr:`restart_listeners` (the recording session takes the new ``recorder.lock``).

        Raises:
            StorageError, GitError: the new repository cannot be created (the snapshot is retried later, and the
                notice comes once a new history exists).
        """
        self.repo.reset_caches()
        self.repo.ensure()
        self._shadow_id = identity(self.repo.git_dir)
        log.error(notice)
        self.notices.append(notice)
        note_history_restart(self.repo.state_dir, notice)
        protect_history(self.repo, self.project)
        self.stat_cache.close()
        self.stat_cache = StatCache(self.repo.state_dir / "statcache.sqlite")
        self._write_lock = self._new_write_lock()
        self._last_tree = self._last_commit = self._head_ref = None
        for listener in list(self.restart_listeners):
            try:
                listener()
            except Exception:  # the new history is there; a listener must not undo it
                log.exception("a listener of the history restart failed")

    def _recover(self: _Recorder, exc: BaseException) -> bool:
        """React to a failed write: clear stale locks, or replace a damaged repository. True to retry now."""
        if isinstance(exc, LockContentionError):
            return bool(health.clear_stale_locks(self.repo.git_dir))
        if health.looks_corrupt(exc) and self.repo.exists():
            problem = health.verify(self.repo)
            if problem is None:
                return False
            try:  # a second look with no writer half way (a checkpoint of another process, a repack), as an
                # opening takes it (opening._replace_damaged): a history damaged for a moment stays
                with self._write_lock:
                    self.repo.reset_caches()
                    problem = health.verify(self.repo)
                    if problem is None:
                        return False
                    moved = health.move_aside(self.repo)
            except filelock.Timeout:
                return False  # another writer holds it: the snapshot is retried later, and looked at again then
            self._restart_history(f"the shadow repository was damaged ({problem}); it was moved to {moved.name} "
                                  "and a new history started")
            return True
        return False
