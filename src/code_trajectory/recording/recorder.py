"""The recorder: turns changed paths into snapshot commits on the shadow branch.

Two ways in:

* :meth:`Recorder.record_paths` — the hot path. The watcher hands over the paths
  that changed; only they are looked at, hashed and written, and only the trees
  on their paths are rewritten (:mod:`code_trajectory.git.trees`), so the cost does not
  grow with the size of the project.
* :meth:`Recorder.reconcile` — the full scan, at start-up, when the watcher signals a rescan (an ignore
  file changed, events were lost), and for a ``checkpoint`` no running watcher vouches for (else it flushes
  the watcher's paths, see ``ProjectSession.record_checkpoint``): walk the work tree, hash only files whose
  ``lstat`` differs from the stat cache, diff against the last recorded tree.

Either way the new tree is compared with the parent's and an unchanged tree
makes no commit (``None`` is returned: nothing changed is not an error). The
commit is written with ``commit-tree`` and the shadow ref moved with
``update-ref <new> <old>`` — a compare-and-swap — under ``.trajectory/write.lock``
so that two processes never interleave. A snapshot that cannot be written now
(lock held, disk full) keeps its paths pending and is retried; nothing is dropped.

Its neighbours carry the rest: the queue of pending changes and their flush in :mod:`.pending`, recovery in
:mod:`.recovery`, blobs in :mod:`.blobs`, the full scan in :mod:`.reconcile` and :mod:`.fullscan`, messages in
:mod:`code_trajectory.git.messages`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

import filelock

from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import LockContentionError, StorageError
from code_trajectory.git import diffs, health, messages, trees
from code_trajectory.git.messages import AddedFiles, FileChange
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import GitOperation, ReflogCursor
from code_trajectory.git.shadow import ShadowRepo, shadow_ref
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.recording import secretfiles
from code_trajectory.recording.blobs import write_blobs, write_pinned
from code_trajectory.recording.commit_message import Snapshot, compose, mark_oversize
from code_trajectory.recording.conflicts import STATE_FILE as CONFLICTS_FILE
from code_trajectory.recording.conflicts import Conflicts
from code_trajectory.recording.handoff import Pinned, waiting
from code_trajectory.recording.ignore import RecordingPolicy
from code_trajectory.recording.intent import IntentStore
from code_trajectory.recording.opening import (
    WRITE_LOCK_TIMEOUT,
    attach_shadow_repository,
    identity,
    open_shadow_repository,
    policy_for,
    write_lock,
)
from code_trajectory.recording.pending import PendingMixin, noted_at
from code_trajectory.recording.reconcile import ReconcileMixin
from code_trajectory.recording.recovery import RecoveryMixin
from code_trajectory.recording.statcache import StatCache
from code_trajectory.recording.walk_policy import SubtreePolicy
from code_trajectory.recording.worktree import FileInfo, probe, scan

log = logging.getLogger(__name__)


class Recorder(PendingMixin, ReconcileMixin, RecoveryMixin):
    """Records snapshots of one project into its shadow repository.

    Args:
        root: the project root (absolute, existing directory).
        settings: recorder settings (size cap, deny list).
        repo: the shadow repository (created by :meth:`open` if missing).
        project: the project's own git repository (branch, ignore files).
        policy: what is recorded.

    Thread-safe: every write holds an internal lock, and across processes the
    ``.trajectory/write.lock`` file lock.
    """

    def __init__(self, root: Path, settings: TrajectorySettings, repo: ShadowRepo, project: ProjectRepo,
                 policy: RecordingPolicy) -> None:
        self.root = root
        self.settings = settings
        self.repo = repo
        self.project = project
        self.policy = policy
        self.intent = IntentStore(repo.state_dir)
        #: The agent session this process acts for (a Claude Code hook's ``session_id``): an intent another
        #: session set is not carried (see :meth:`IntentStore.get`); None for the server, ``watch`` and the CLI.
        self.agent_session: str | None = None
        self.stat_cache = StatCache(repo.state_dir / "statcache.sqlite")
        self._lock = threading.RLock()
        self._pending: dict[str, float] = {}  # path -> when the watcher noted its change (epoch seconds)
        self._pending_rescan = False
        self._intent_noted: dict[str, float] | None = None  # while a flush writes: what it took of the queue
        self._last_tree: str | None = None
        self._scanned_files = 0  # files the last full scan held in this process (0 when a child scanned)
        self._last_commit: str | None = None
        self._head_ref: str | None = None
        #: When git last touched the project's HEAD, reflog or stash (epoch seconds), until a snapshot consumes it.
        self._git_activity: float | None = None
        self._stash_touched = False
        self._reflog = ReflogCursor(project)
        #: conflicts git left that the recorders saw, until git goes on (whose writes are git's, see .conflicts)
        self._conflicts = Conflicts(repo.state_dir / CONFLICTS_FILE)
        self._write_lock = self._new_write_lock()
        #: Things the user must hear about (history lost or moved aside), newest last.
        self.notices: list[str] = []
        #: The identity of the ``.trajectory`` directory this recorder writes (see ``recovery.shadow_identity``).
        self._shadow_id = identity(repo.git_dir)
        #: Called (no arguments, on the writing thread) after ``.trajectory`` was recreated with a new history.
        self.restart_listeners: list[Callable[[], None]] = []
        #: Records the edits agents' hooks handed over, oldest first (see :meth:`record_handovers`); None: none.
        self.handover_drain: Callable[[], int] | None = None
        self._draining = False

    def _new_write_lock(self) -> filelock.FileLock:
        """``.trajectory/write.lock``, held by every writer of a snapshot (:data:`WRITE_LOCK_TIMEOUT` seconds)."""
        return write_lock(self.repo.git_dir)

    @classmethod
    def open(cls, root: Path, settings: TrajectorySettings, *, create: bool = True,
             attach: bool = False, read_only: bool = False) -> Recorder:
        """Open (creating if needed and ``create``) the shadow repository of ``root`` and return its recorder.

        ``attach``: open it as a helper process of the recorder that opened it (a scan child): no start-up steps
        (:func:`~code_trajectory.recording.opening.attach_shadow_repository`). ``read_only``: for a command that
        only reads: the opening changes nothing, and a damaged history raises ``DamagedHistoryError``
        (:func:`~code_trajectory.recording.opening.open_shadow_repository`).

        Raises:
            ProjectError: ``root`` must not be recorded (see :func:`code_trajectory.project.check_recordable`),
                or it has no shadow repository and ``create`` is False.
            StorageError, GitError: the shadow repository cannot be created.
        """
        project = ProjectRepo.discover(root)
        repo, notices = ((attach_shadow_repository(root), []) if attach else
                         open_shadow_repository(root, create=create, project=project, read_only=read_only))
        repo.max_object_bytes = max(repo.max_object_bytes, settings.max_file_bytes)  # what it records, it reads
        recorder = cls(root, settings, repo, project, policy_for(root, settings.all_deny_patterns, project))
        recorder.notices.extend(notices)
        return recorder

    def close(self) -> None:
        """Release the git processes and the stat cache."""
        self.repo.close()
        self.stat_cache.close()

    # -- writers and hand-overs (the pending changes: see PendingMixin) ----------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold this recorder's lock and ``.trajectory/write.lock``: no snapshot is written meanwhile (re-entrant
        for the holder's thread, so it may :meth:`flush` inside).

        Raises:
            LockContentionError: another process held ``write.lock`` for :data:`WRITE_LOCK_TIMEOUT` seconds.
        """
        with self._lock:
            try:
                with self._write_lock:
                    yield
            except filelock.Timeout as exc:
                raise LockContentionError(f"another process held {self._write_lock.lock_file} for "
                                          f"{WRITE_LOCK_TIMEOUT:.0f} s; try again") from exc

    def wrote(self, commit: str) -> None:
        """Record that ``commit`` was written on the current branch's shadow ref by a caller holding :meth:`writing`."""
        self._last_commit = commit

    @contextlib.contextmanager
    def acting_for(self, agent_session: str | None) -> Iterator[Recorder]:
        """Record for another agent session meanwhile (its intent, see :attr:`agent_session`): every snapshot is
        taken under this recorder's lock, so no other thread's snapshot carries that session's intent."""
        with self._lock:
            saved, self.agent_session = self.agent_session, agent_session
            try:
                yield self
            finally:
                self.agent_session = saved

    def record_handovers(self) -> int:
        """Record the edits hooks handed over and nobody recorded yet, oldest first (:attr:`handover_drain`, which
        takes ``.trajectory/write.lock`` when any waits: see :func:`~.checkpoint_requests.attach_handovers`), holding
        this recorder's lock, so that another thread or process records none of them meanwhile, out of order. Every
        snapshot of the work tree calls this first: a hand-over's content, read by its hook, must never land after a
        newer state of its file, nor its edit be folded into a snapshot that leaves the hand-over nothing to tag.
        With no history yet and hand-overs waiting (an edit worker or a hook started before any server imported
        the project), the project is imported first (its files as before those edits:
        :mod:`~code_trajectory.recording.import_handovers`): an edit recorded on no history made a first snapshot
        holding that file alone, and the import then a snapshot adding every other file.
        How many were recorded; a failure is logged, never raised (the snapshot that asked goes on).
        """
        with self._lock:
            if self.handover_drain is None or self._draining:
                return 0
            self._draining = True
            # a hand-over is an agent's edit of now, labelled with its session's intent of now, whatever the saves
            # of the snapshot that asked were made under
            noted, self._intent_noted = self._intent_noted, None
            try:
                # a directory listing first: latest_commit runs git twice, and every snapshot (the stop's) comes here
                if waiting(self.repo.state_dir) and self.latest_commit() is None:
                    self.reconcile(with_intent=False)  # its own call of this method returns at once (draining)
                return self.handover_drain()
            except Exception as exc:  # noqa: BLE001 - the hand-overs wait for the next snapshot
                log.warning("recording the handed-over edits failed: %s", exc)
                return 0
            finally:
                self._draining = False
                self._intent_noted = noted

    # -- the hot path -----------------------------------------------------------------------

    def record_paths(self, paths: Iterable[str], *, kind: str = messages.KIND_SNAPSHOT,
                     note: str | None = None, restored_from: tuple[str, str] | None = None,
                     origin: str | None = None, with_intent: bool = True,
                     pinned: Mapping[str, Pinned] | None = None) -> Snapshot | None:
        """Snapshot the current content of ``paths`` (relative to the root) on top of the last tree.

        ``origin`` says who made the change when an agent's hook records it (``Trajectory-Origin``);
        ``with_intent=False`` leaves the current intent off (a change that is not the agent's work); ``pinned``
        gives the content of some of ``paths`` as an edit hook read it (:data:`~.handoff.Pinned`), recorded in place
        of the work tree's (under the same rules: ignored paths, size cap, secrets).

        A path that no longer exists is deleted from the tree (with everything under it);
        a directory is rescanned as a whole; an excluded path is removed if recorded.

        Returns:
            The snapshot, or None when the tree did not change.
        """
        started = time.perf_counter()
        with self._lock:
            self.record_handovers()
            if self._needs_full_scan(paths):
                return self.reconcile(kind=kind, note=note, restored_from=restored_from)
            base = self._base_tree()
            looked_ns = time.time_ns()
            changes: dict[str, TreeEntry | None] = {}
            to_hash: list[FileInfo] = []
            to_write: dict[str, tuple[bool, bytes]] = {}
            for rel in sorted(set(paths)):
                rel = rel.strip("/")
                if not rel:
                    continue
                content = pinned.get(rel, "work tree") if pinned else "work tree"
                if content is None or (isinstance(content, tuple)  # over the cap: a size note, from the work tree
                                       and len(content[1]) <= self.settings.max_file_bytes):
                    if content is not None and self.policy.is_recorded(rel, is_dir=False):
                        to_write[rel] = content
                    else:
                        changes[rel] = None
                    continue
                found = probe(self.root, rel)
                if found == "dir":
                    reason = self.policy.explain(rel, is_dir=True)
                    changes[rel] = None
                    if reason is None:
                        sub = scan(self.root / rel, SubtreePolicy(self.policy, rel))
                        to_hash.extend(FileInfo(f"{rel}/{i.rel}", i.mode, i.size, i.mtime_ns, i.ctime_ns, i.ino)
                                       for i in sub.files.values())
                elif isinstance(found, FileInfo) and self.policy.is_recorded(rel, is_dir=False):
                    to_hash.append(found)
                else:
                    changes[rel] = None
            with self.repo.batch():  # blobs and trees in one pack, on disk before the ref moves
                contents: dict[str, str] = {}
                entries, oversize = write_blobs(self.repo, self.root, to_hash, self.settings.max_file_bytes,
                                                secrets=contents)
                written = write_pinned(self.repo, to_write, secrets=contents)
                secretfiles.note_snapshot(self.repo.state_dir, [*(i.rel for i in to_hash), *to_write, *changes],
                                          contents)
                removed = [rel for rel, entry in changes.items() if entry is None]
                changes.update(entries)
                changes.update(written)
                tree = trees.apply_changes(self.repo, base, changes)
            by_rel = {info.rel: info for info in to_hash}
            # the work tree may hold a newer state of a pinned file: its stat data must not vouch for this content
            self.stat_cache.note_recorded(
                hashed=[(by_rel[rel], entry.oid) for rel, entry in entries.items() if entry is not None],
                removed=removed + [rel for rel, entry in entries.items() if entry is None]
                + [rel for rel, entry in written.items() if entry is None],
                base=base, tree=tree, scanned_ns=looked_ns,
                pinned={rel: entry for rel, entry in written.items() if entry is not None})
            # a deleted path may be a whole directory: then let the diff count the files first
            expected = None if any(v is None for v in changes.values()) else len(changes)
            return self._commit(tree, kind=kind, note=note, oversize=oversize, started=started,
                                expected=expected, restored_from=restored_from, origin=origin,
                                with_intent=with_intent)

    def record_entries(self, changes: Mapping[str, TreeEntry | None], *, kind: str = messages.KIND_SNAPSHOT,
                       note: str | None = None, restored_from: tuple[str, str] | None = None) -> Snapshot | None:
        """Snapshot ``changes`` (path relative to the root -> the entry now there, None when removed) on top of
        the last tree without reading the files: for content this process has just written from recorded blobs
        (a restore), whose ids are known. A save that lands on one of them afterwards is recorded by the next
        snapshot (the watcher's, or a scan: the stat cache does not vouch for these files).

        Returns:
            The snapshot, or None when the tree did not change.
        """
        started = time.perf_counter()
        with self._lock:
            self.record_handovers()
            if self._needs_full_scan(()):
                return self.reconcile(kind=kind, note=note, restored_from=restored_from)
            base = self._base_tree()
            with self.repo.batch():
                tree = trees.apply_changes(self.repo, base, dict(changes))
            return self._commit(tree, kind=kind, note=note, oversize={}, started=started, expected=None,
                                restored_from=restored_from)

    def _point_head(self, ref: str) -> None:
        """Make the shadow repository's ``HEAD`` the symbolic ref ``ref`` (the branch being recorded), so a
        plain ``git --git-dir=.trajectory log`` shows it; no git process when it already is."""
        current = (read_bounded(self.repo.git_dir / "HEAD", 4096) or b"").decode("utf-8", "replace")
        if current != f"ref: {ref}\n":  # a symbolic ref's file (gitrepository-layout(5))
            health.clear_stale_locks(self.repo.git_dir)
            self.repo.git.run(["symbolic-ref", "HEAD", ref], check=False)
        self._head_ref = ref

    def checkpoint(self, note: str | None = None, *, kind: str = messages.KIND_CHECKPOINT,
                   reflogs: bool = False) -> Snapshot | None:
        """Snapshot the exact current state now, skipping the debounce (a full scan; see also
        ``ProjectSession.record_checkpoint``).

        Args:
            note: a note stored with the snapshot (its first line and a trailer).
            kind: ``checkpoint`` for the user's checkpoints (consolidation never squashes them);
                ``snapshot`` for automatic ones such as the state a test run ran on.
            reflogs: no watcher saw git's operations since the last snapshot: read them from the project's
                reflogs and commit git's share first (see :meth:`reconcile`).
        """
        return self.reconcile(kind=kind, note=messages.one_line(note) if note else None, reflogs=reflogs)

    # -- internals ----------------------------------------------------------------------------

    def _base_tree(self) -> str | None:
        """The tree the work tree had when last recorded (the start of the next edit).

        When another process (a CLI ``checkpoint`` or ``restore``) appended snapshots to the branch after this
        recorder's last one, the newest of them is the last known state.
        """
        if self._last_tree is not None and self._last_commit is not None:
            tip = self.repo.resolve_ref(shadow_ref(self.project.current_branch()))
            if tip is not None and tip != self._last_commit and self.repo.git.run(
                    ["merge-base", "--is-ancestor", self._last_commit, tip], check=False).returncode == 0:
                self._last_commit, self._last_tree = tip, self.repo.commit_tree_oid(tip)
        if self._last_tree is not None:
            return self._last_tree
        commit = self.repo.resolve(shadow_ref(self.project.current_branch())) or self.latest_commit()
        if commit is None:
            return None
        self._last_commit = commit
        self._last_tree = self.repo.commit_tree_oid(commit)
        return self._last_tree

    def explain(self, rel: str) -> str | None:
        """Why ``rel`` (relative to the root) is not recorded: the policy's reason
        (:meth:`~.ignore.RecordingPolicy.explain`), or the secret the last scan or snapshot found in its content;
        None when it is recorded."""
        return self.policy.explain(rel) or secretfiles.reason(self.repo.state_dir, rel)

    def latest_commit(self, branch: str | None = None) -> str | None:
        """The tip of ``branch``'s shadow ref when given and it exists, else the newest commit across every shadow
        branch (where a new branch starts), or None when nothing is recorded."""
        if branch is not None:
            tip = self.repo.resolve_ref(shadow_ref(branch))
            if tip is not None:
                return tip
        refs = self.repo.shadow_refs()
        if not refs:
            return None
        out = self.repo.git.text(["log", "-1", "--format=%H", "--date-order", *refs.keys()])
        return out or None

    def _commit(self, tree: str, *, kind: str, note: str | None, oversize: dict[str, int],
                started: float, expected: int | None = None,
                imported: AddedFiles | None = None,
                restored_from: tuple[str, str] | None = None, origin: str | None = None,
                with_intent: bool = True, unrecorded: bool = False,
                unrecorded_operation: GitOperation | None = None) -> Snapshot | None:
        """Commit ``tree`` after the branch's tip; ``unrecorded`` for the start-up scan, whose changes were made while
        nothing recorded, with the git operations made meanwhile (``unrecorded_operation``, in place of a live one)."""
        branch = self.project.current_branch()
        ref = shadow_ref(branch)
        index_written = self._git_activity is not None  # git wrote HEAD, a reflog or the index since
        operation = self._take_git_operation() if kind in (messages.KIND_SNAPSHOT, messages.KIND_RECONCILE) else None
        if unrecorded_operation is not None:
            operation = unrecorded_operation
        try:
            with self._write_lock:
                tip = self.repo.resolve_ref(ref)
                parent = tip or self._last_commit or self.latest_commit()
                parent_tree = self.repo.commit_tree_oid(parent) if parent else None
                self._last_tree = tree
                if tree == parent_tree:
                    self._conflicts.unchanged(self.project)
                    return None
                changes: Sequence[FileChange]
                if parent_tree is None and imported is not None:
                    # the first snapshot: every file is new; listing them needs no diff of 100,000 paths
                    changes = imported
                else:
                    changes = diffs.tree_changes(self.repo, parent_tree, tree, expected=expected)
                changes = mark_oversize(changes, oversize)
                split, remember = (self._conflicts.split(self.project, changes, operation, index_written=index_written)
                                   if parent_tree is not None and (operation is not None or kind in (
                                       messages.KIND_SNAPSHOT, messages.KIND_RECONCILE)) else (None, None))
                now = datetime.now().astimezone()
                composed = compose(self.repo, self.project, tree=tree, parent=parent, parent_tree=parent_tree,
                                   changes=changes, kind=kind, branch=branch, now=now,
                                   intent=(self.intent.get(session=self.agent_session,
                                                           as_of=noted_at(self._intent_noted, changes))
                                           if with_intent else None),
                                   operation=operation, note=note, origin=origin, restored_from=restored_from,
                                   unrecorded=unrecorded, split=split)
                parent, kind, message, changes = (composed.parent, composed.kind, composed.message,
                                                  composed.changes)
                offset = now.strftime("%z") or "+0000"
                commit = self.repo.commit_tree(tree, [parent] if parent else [], message,
                                               when=(int(now.timestamp()), offset))
                try:
                    self.repo.update_ref(ref, commit, tip, f"code-trajectory {kind}")
                except LockContentionError:
                    if not health.clear_stale_locks(self.repo.git_dir):  # a lock left by a killed git
                        raise
                    self.repo.update_ref(ref, commit, tip, f"code-trajectory {kind}")
                self._last_commit = commit
                if remember is not None:
                    self._conflicts.written(remember)
                if self._head_ref != ref:
                    self._point_head(ref)
        except filelock.Timeout as exc:
            raise LockContentionError(f"another process held {self._write_lock.lock_file} for "
                                      f"{WRITE_LOCK_TIMEOUT:.0f} s; the snapshot stays pending") from exc
        except OSError as exc:
            raise StorageError(f"cannot write the snapshot: {exc}") from exc
        subject = message.split("\n", 1)[0]
        elapsed = (time.perf_counter() - started) * 1000
        log.info("snapshot kind=%s branch=%s commit=%s files=%d ms=%.1f", kind, branch, commit[:12],
                 len(changes), elapsed)
        return Snapshot(commit, ref, branch, kind, subject, changes, elapsed)
