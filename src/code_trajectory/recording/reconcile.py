"""The full-scan half of :class:`~code_trajectory.recording.recorder.Recorder`: snapshotting the whole work tree.

:meth:`ReconcileMixin.reconcile` runs at start-up, when the watcher signals a rescan (an ignore file changed,
events were lost), and for a ``checkpoint`` no running watcher vouches for: it walks the work tree
(:func:`~code_trajectory.recording.fullscan.full_scan`: only files whose ``lstat`` differs from the stat cache are
hashed; the initial import takes what the project's git index vouches for, :mod:`.index_seed`) and commits the
difference from the last recorded tree through the recorder's one commit path. A large scan's memory is handed
back to the system afterwards; a long-running recorder scans a large project in a child process
(:mod:`.scanchild`), so that it keeps no peak.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.memory import release_free_memory
from code_trajectory.git import messages
from code_trajectory.git.messages import AddedFiles
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.recording import catchup
from code_trajectory.recording.catchup import CatchUp
from code_trajectory.recording.fullscan import FullScan, ProgressFn, full_scan
from code_trajectory.recording.ignore import RecordingPolicy
from code_trajectory.recording.index_seed import IndexSeed
from code_trajectory.recording.statcache import StatCache, unchanged_checker

if TYPE_CHECKING:
    import threading

    from code_trajectory.git.reflog import GitOperation
    from code_trajectory.recording.commit_message import Snapshot

#: Files in a full scan from which its memory is handed back to the system afterwards (see
#: :mod:`code_trajectory.core.memory`); smaller scans leave too little behind to matter.
RELEASE_MEMORY_AFTER_FILES = 10_000


class _Recorder(Protocol):
    """What :class:`ReconcileMixin` uses of the :class:`~code_trajectory.recording.recorder.Recorder` it is mixed
    into (the type of ``self`` in its methods)."""

    root: Path
    settings: TrajectorySettings
    repo: ShadowRepo
    project: ProjectRepo
    policy: RecordingPolicy
    stat_cache: StatCache
    _lock: threading.RLock
    _pending: dict[str, float]
    _pending_rescan: bool
    _last_tree: str | None
    _scanned_files: int
    scan_elsewhere: Callable[[], FullScan | None] | None

    def record_handovers(self) -> int: ...

    def _guard(self) -> bool: ...

    def _base_tree(self) -> str | None: ...

    def latest_commit(self, branch: str | None = None) -> str | None: ...

    def _scan(self: _Recorder, progress: ProgressFn | None) -> FullScan: ...

    def scan_here(self: _Recorder, progress: ProgressFn | None) -> FullScan: ...

    def _release_memory(self: _Recorder) -> None: ...

    def _keep_pending(self: _Recorder, noted: dict[str, float], *, rescan: bool) -> None: ...

    def _commit(self, tree: str, *, kind: str, note: str | None, oversize: dict[str, int],
                started: float, expected: int | None = None,
                imported: AddedFiles | None = None,
                restored_from: tuple[str, str] | None = None, origin: str | None = None,
                with_intent: bool = True, unrecorded: bool = False,
                unrecorded_operation: GitOperation | None = None) -> Snapshot | None: ...


class ReconcileMixin:
    """The full scan of :class:`~code_trajectory.recording.recorder.Recorder` (see the module docstring)."""

    #: A long-running recorder's way to run a full scan in another process (:func:`.scanchild.attach`: ``serve``,
    #: ``watch``): called under the recorder's lock, it returns the scan, or None to scan here. None (a one-shot
    #: command): always here.
    scan_elsewhere: Callable[[], FullScan | None] | None = None

    def work_tree_tree(self: _Recorder) -> str:
        """The tree of the work tree as it is now (a full scan, objects written), without making a snapshot.

        Used to compare a snapshot with the work tree. Pending changes stay pending.
        """
        with self._lock:
            pending, rescan = dict(self._pending), self._pending_rescan
            try:
                tree = self._scan(None).tree
            finally:
                self._pending.update(pending)
                self._pending_rescan = self._pending_rescan or rescan
            return tree

    def reconcile(self: _Recorder, *, kind: str = messages.KIND_RECONCILE, note: str | None = None,
                  progress: ProgressFn | None = None,
                  restored_from: tuple[str, str] | None = None, with_intent: bool = True,
                  catch_up: CatchUp | None = None, exiting: bool = False, reflogs: bool = False) -> Snapshot | None:
        """Scan the whole work tree and snapshot any difference from the last recorded tree.

        Args:
            kind: ``reconcile`` (start-up, rescan) or ``checkpoint``.
            note: the checkpoint message, if any.
            progress: called with ``(phase, done, total)``; phases ``scan``, ``hash``, ``write``.
            with_intent: carry the current intent; False for the start-up scan, which records what changed
                while nothing recorded (no prompt's work: issue 22).
            catch_up: given for the start-up scan: what git did meanwhile labels the snapshot, and the rest is
                "changed while not recording" (:mod:`code_trajectory.recording.catchup`); the stash ids are noted.
            exiting: the process exits after this scan (the import child): its memory is not handed back first.
            reflogs: what git did since the last snapshot (the project's reflogs past the noted mark) is committed
                first as git's, the rest as this snapshot (a one-shot ``checkpoint`` while nothing records: no
                watcher saw the stash or checkout); unlike ``catch_up``, the rest is not said to be unrecorded.

        Returns:
            The snapshot, or None when the work tree matches the last snapshot.
        """
        started = time.perf_counter()
        with self._lock:
            self.record_handovers()
            self._guard()
            noted = dict(self._pending)
            self._pending.clear()
            self._pending_rescan = False
            try:  # what was pending stays pending when nothing is recorded (the scan or the commit failed)
                found = self._scan(progress)
                tree, imported = found.tree, found.imported
                if imported is not None:  # an import: the files of waiting hand-overs as before their edits
                    from code_trajectory.recording.import_handovers import import_tree

                    tree = import_tree(self, found.tree)
                    imported = imported if tree == found.tree else None  # listed by a diff then
                try:
                    operation = None
                    if catch_up is not None or reflogs:
                        last = self.latest_commit()
                        last_time = int(self.repo.git.text(["log", "-1", "--format=%ct", last])) if last else None
                        operation = catchup.unrecorded_operation(self.project, self.repo.state_dir,
                                                                 catch_up or CatchUp(), last_time)
                        catchup.note_mark(self.repo.state_dir, self.project)
                    return self._commit(tree, kind=kind, note=note, oversize=found.oversize, started=started,
                                        imported=imported, restored_from=restored_from,
                                        with_intent=with_intent, unrecorded=catch_up is not None,
                                        unrecorded_operation=operation)
                finally:
                    if self._scanned_files >= RELEASE_MEMORY_AFTER_FILES and not exiting:
                        self._release_memory()
            except BaseException:
                self._keep_pending(noted, rescan=catch_up is None)
                raise

    def _keep_pending(self: _Recorder, noted: dict[str, float], *, rescan: bool) -> None:
        """A full scan recorded nothing (the disk is full, ``.trajectory`` read-only...): what was pending stays
        pending, so that the watcher's retries and a stop record it, and with ``rescan`` (not the start-up scan,
        whose changes the next start records) the next snapshot scans again."""
        for path, at in noted.items():
            self._pending.setdefault(path, at)
        self._pending_rescan = self._pending_rescan or rescan

    def _scan(self: _Recorder, progress: ProgressFn | None) -> FullScan:
        """Scan the whole work tree into a tree (see :func:`~code_trajectory.recording.fullscan.full_scan`): in a
        child process for a long-running recorder of a large project (:mod:`.scanchild`; never an initial import),
        else here (:meth:`scan_here`)."""
        with self._lock:
            if self.scan_elsewhere is not None and self.latest_commit() is not None:
                found = self.scan_elsewhere()
                if found is not None:
                    self.policy.invalidate()  # the ignore files may have changed: the child read them
                    self._scanned_files = 0  # the scan's memory was the child's: nothing to hand back here
                    return found
            return self.scan_here(progress)

    def scan_here(self: _Recorder, progress: ProgressFn | None) -> FullScan:
        """Scan the whole work tree into a tree in this process (see
        :func:`~code_trajectory.recording.fullscan.full_scan`; the child's side of :mod:`.scanchild`)."""
        with self._lock:
            # the initial import: what the project's index knows is read meanwhile, on a thread (the tracked set
            # too, first: the seed takes it once it has read the index)
            importing = self.project.is_git and self._last_tree is None and self.latest_commit() is None
            if importing:
                self.policy.tracked.prefetch()
            seed = (IndexSeed(self.project, self.repo, max_file_bytes=self.settings.max_file_bytes,
                              tracked=self.policy.tracked, stat_cache=self.stat_cache) if importing else None)
            found = full_scan(self.root, self.policy, self.repo, self.stat_cache, self._base_tree,
                              max_file_bytes=self.settings.max_file_bytes, progress=progress, seed=seed)
            self._scanned_files = found.files
            return found

    def unchanged_checker(self: _Recorder) -> Callable[[str, TreeEntry], bool]:
        """``check(path, entry)``: True when the stat cache vouches that the file at ``path`` (relative to the
        root) still holds ``entry`` (see :func:`~code_trajectory.recording.statcache.unchanged_checker`)."""
        return unchanged_checker(self.root, self.stat_cache.load(self.policy.rules_fingerprint()).rows)

    def _release_memory(self: _Recorder) -> None:
        """Hand a large scan's memory back to the system, so a long-running server does not keep its peak.

        The verdicts and trees cached during the scan are dropped first (rebuilt on demand): a few
        thousand long-lived objects allocated among its 100,000s of short-lived ones keep Python's
        memory arenas from being freed (measured: 110 -> 74 MiB resident after a scan of 100,000 files).
        """
        self.policy.invalidate()
        self.repo.forget_trees()
        release_free_memory()

