"""The recorder: turns changed paths into snapshot commits on the shadow branch.

Two ways in:

* :meth:`Recorder.record_paths` — the hot path. The watcher hands over the paths
  that changed; only they are looked at, hashed and written, and only the trees
  on their paths are rewritten (:mod:`code_trajectory.trees`), so the cost does not
  grow with the size of the project.
* :meth:`Recorder.reconcile` — the full scan, at start-up, when the watcher
  signals a rescan (an ignore file changed, events were lost), and for
  ``checkpoint``: walk the work tree, hash only files whose ``lstat`` differs from
  the stat cache, diff against the last recorded tree.

Either way the new tree is compared with the parent's and an unchanged tree
makes no commit (``None`` is returned: nothing changed is not an error). The
commit is written with ``commit-tree`` and the shadow ref moved with
``update-ref <new> <old>`` — a compare-and-swap — under ``.trajectory/write.lock``
so that two processes never interleave. A snapshot that cannot be written now
(lock held, disk full) keeps its paths pending and is retried; nothing is dropped.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import filelock

from code_trajectory import diffs, health, messages, packs, trees
from code_trajectory.config import TrajectorySettings
from code_trajectory.errors import (GitError, InvalidArgumentError, LockContentionError, ProjectError,
                                    StorageError)
from code_trajectory.ignore import RecordingPolicy, SubtreePolicy
from code_trajectory.messages import FileChange
from code_trajectory.project_git import ProjectRepo
from code_trajectory.shadow_repo import (MODE_FILE, MODE_SYMLINK, ShadowRepo, TreeEntry, branch_of_ref,
                                         shadow_ref)
from code_trajectory.statcache import StatCache
from code_trajectory.worktree import FileInfo, probe, scan

log = logging.getLogger(__name__)

#: First bytes of the blob stored in place of a file over the size cap.
OVERSIZE_MARKER = b"code-trajectory: content not recorded"
#: Threads reading and compressing files for large batches (I/O and zlib release the GIL).
BLOB_WORKERS = min(4, os.cpu_count() or 1)
#: Files from which a batch is read on worker threads.
PARALLEL_FROM = 64
#: How long a writer waits for ``.trajectory/write.lock`` before giving up for now, seconds.
WRITE_LOCK_TIMEOUT = 10.0

ProgressFn = Callable[[str, int, int | None], None]


@dataclass
class Snapshot:
    """A snapshot commit that was written.

    Attributes:
        commit: the new commit id.
        ref: the shadow ref it was written to.
        branch: the project branch.
        kind: ``snapshot``, ``checkpoint`` or ``reconcile``.
        subject: the commit message's first line.
        changes: the file changes against the parent.
        elapsed_ms: time spent writing it, milliseconds.
    """

    commit: str
    ref: str
    branch: str
    kind: str
    subject: str
    changes: list[FileChange]
    elapsed_ms: float


@dataclass
class ConsolidateResult:
    """Outcome of :meth:`Recorder.consolidate`: ``commit`` is None when nothing was squashed."""

    commit: str | None
    squashed: int
    branch: str
    message: str
    squashed_commits: list[str] = field(default_factory=list)


def format_size(size: int) -> str:
    """Human-readable size in binary units (``12.3 MiB``)."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


class IntentStore:
    """The current intent, shared by every process working on the project.

    Stored in ``.trajectory/state/intent.json`` so a CLI ``intent`` reaches a
    running watcher. Per the spec, it lasts until changed or until the recording
    server restarts (:meth:`clear` at start-up).
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "intent.json"

    def get(self) -> str | None:
        """Return the intent, or None when none is set."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return None
        intent = data.get("intent") if isinstance(data, dict) else None
        return intent if isinstance(intent, str) and intent.strip() else None

    def set(self, intent: str) -> str:
        """Store ``intent`` (whitespace collapsed, at most 200 characters) and return it.

        Raises:
            InvalidArgumentError: the intent is empty.
        """
        clean = messages.one_line(intent or "")
        if not clean:
            raise InvalidArgumentError("intent must be a non-empty sentence, e.g. 'Fix login retry'")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"intent": clean, "set_at": datetime.now(timezone.utc).isoformat()}), "utf-8")
        os.replace(tmp, self.path)
        return clean

    def clear(self) -> None:
        """Forget the intent."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


class Recorder:
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
        self.stat_cache = StatCache(repo.state_dir / "statcache.sqlite")
        self._lock = threading.RLock()
        self._pending: dict[str, None] = {}
        self._pending_rescan = False
        self._last_tree: str | None = None
        self._last_commit: str | None = None
        self._head_ref: str | None = None
        self._write_lock = filelock.FileLock(str(repo.git_dir / "write.lock"), timeout=WRITE_LOCK_TIMEOUT,
                                             thread_local=False)
        #: Things the user must hear about (history lost or moved aside), newest last.
        self.notices: list[str] = []

    # -- health -------------------------------------------------------------------------------

    def _guard(self) -> bool:
        """Recreate ``.trajectory`` if it vanished; True when it had to (a full rescan is then due)."""
        if self.repo.exists():
            return False
        if not self.root.is_dir():
            raise ProjectError(f"the project directory {self.root} no longer exists; call configure_project "
                               "with its new location")
        self._restart_history(f"the shadow repository {self.repo.git_dir} was deleted while recording; its "
                              f"history is lost and a new one started at {datetime.now().strftime('%H:%M:%S')}")
        return True

    def _restart_history(self, notice: str) -> None:
        log.error(notice)
        self.notices.append(notice)
        self.repo.reset_caches()
        self.repo.ensure()
        ensure_gitignore_lists_shadow(self.root)
        self.stat_cache.close()
        self.stat_cache = StatCache(self.repo.state_dir / "statcache.sqlite")
        self._write_lock = filelock.FileLock(str(self.repo.git_dir / "write.lock"), timeout=WRITE_LOCK_TIMEOUT,
                                             thread_local=False)
        self._last_tree = self._last_commit = self._head_ref = None

    def _recover(self, exc: BaseException) -> bool:
        """React to a failed write: clear stale locks, or replace a damaged repository. True to retry now."""
        if isinstance(exc, LockContentionError):
            return bool(health.clear_stale_locks(self.repo.git_dir))
        if health.looks_corrupt(exc) and self.repo.exists():
            problem = health.verify(self.repo)
            if problem is None:
                return False
            moved = health.move_aside(self.repo)
            ensure_gitignore_line(self.root, "/.trajectory.corrupt-*/")
            self._restart_history(f"the shadow repository was damaged ({problem}); it was moved to {moved.name} "
                                  "and a new history started")
            return True
        return False

    @classmethod
    def open(cls, root: Path, settings: TrajectorySettings) -> Recorder:
        """Open (creating if needed) the shadow repository of ``root`` and return its recorder.

        Also lists ``.trajectory/`` in the project's ``.gitignore``.

        Raises:
            StorageError, GitError: the shadow repository cannot be created.
        """
        repo = ShadowRepo(root)
        if repo.git_dir.is_dir():
            health.clear_stale_locks(repo.git_dir)  # e.g. a config.lock left by a process killed mid-creation
        try:
            repo.ensure()
        except LockContentionError:  # the lock was too young to call stale before the retries: now it is not
            if not health.clear_stale_locks(repo.git_dir):
                raise
            repo.ensure()
        notices: list[str] = []
        problem = health.verify(repo)
        if problem is not None:
            moved = health.move_aside(repo)
            repo = ShadowRepo(root)
            repo.ensure()
            ensure_gitignore_line(root, "/.trajectory.corrupt-*/")
            notices.append(f"the shadow repository was damaged ({problem}); it was moved to {moved.name} and a new "
                           "history started")
        project = ProjectRepo.discover(root)
        policy = RecordingPolicy(root, deny_patterns=settings.all_deny_patterns,
                                 info_exclude=project.info_exclude, global_excludes=project.global_excludes())
        ensure_gitignore_lists_shadow(root)
        recorder = cls(root, settings, repo, project, policy)
        recorder.notices.extend(notices)
        return recorder

    def close(self) -> None:
        """Release the git processes and the stat cache."""
        self.repo.close()
        self.stat_cache.close()

    # -- pending changes --------------------------------------------------------------------

    def note_changes(self, paths: Iterable[str], *, rescan: bool = False) -> None:
        """Queue changed paths (relative to the root) for the next :meth:`flush`."""
        with self._lock:
            for path in paths:
                self._pending[path] = None
            if rescan:
                self._pending_rescan = True

    def has_pending(self) -> bool:
        """True when changes are queued."""
        with self._lock:
            return bool(self._pending) or self._pending_rescan

    def flush(self, *, kind: str = messages.KIND_SNAPSHOT) -> Snapshot | None:
        """Write a snapshot of the queued changes now; None when nothing changed.

        On failure the paths stay queued (merged with any that arrive meanwhile) and
        the error is raised for the caller to retry later.
        """
        with self._lock:
            paths, rescan = list(self._pending), self._pending_rescan
            self._pending, self._pending_rescan = {}, False
            try:
                if self._guard():
                    rescan = True
                if rescan:
                    return self.reconcile(kind=messages.KIND_RECONCILE)
                if not paths:
                    return None
                return self.record_paths(paths, kind=kind)
            except BaseException as exc:
                for path in paths:
                    self._pending.setdefault(path, None)
                self._pending_rescan = self._pending_rescan or rescan
                if isinstance(exc, Exception) and self._recover(exc):
                    self._pending_rescan = True
                raise

    # -- the hot path -----------------------------------------------------------------------

    def record_paths(self, paths: Iterable[str], *, kind: str = messages.KIND_SNAPSHOT,
                     note: str | None = None) -> Snapshot | None:
        """Snapshot the current content of ``paths`` (relative to the root) on top of the last tree.

        A path that no longer exists is deleted from the tree (with everything under it);
        a directory is rescanned as a whole; an excluded path is removed if recorded.

        Returns:
            The snapshot, or None when the tree did not change.
        """
        started = time.perf_counter()
        with self._lock:
            if self._guard():
                return self.reconcile(kind=kind, note=note)
            if any(RecordingPolicy.is_ignore_file(p) for p in paths):
                self.policy.invalidate()
                return self.reconcile(kind=kind, note=note)
            base = self._base_tree()
            changes: dict[str, TreeEntry | None] = {}
            to_hash: list[FileInfo] = []
            for rel in sorted(set(paths)):
                rel = rel.strip("/")
                if not rel:
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
                entries, oversize = self._write_blobs(to_hash)
                changes.update(entries)
                tree = trees.apply_changes(self.repo, base, changes)
            # a deleted path may be a whole directory: then let the diff count the files first
            expected = None if any(v is None for v in changes.values()) else len(changes)
            return self._commit(tree, kind=kind, note=note, oversize=oversize, started=started,
                                expected=expected)

    # -- the full scan ------------------------------------------------------------------------

    def reconcile(self, *, kind: str = messages.KIND_RECONCILE, note: str | None = None,
                  progress: ProgressFn | None = None) -> Snapshot | None:
        """Scan the whole work tree and snapshot any difference from the last recorded tree.

        Args:
            kind: ``reconcile`` (start-up, rescan) or ``checkpoint``.
            note: the checkpoint message, if any.
            progress: called with ``(phase, done, total)``; phases ``scan``, ``hash``, ``write``.

        Returns:
            The snapshot, or None when the work tree matches the last snapshot.
        """
        started = time.perf_counter()
        with self._lock:
            self._guard()
            self._pending.clear()
            self._pending_rescan = False
            self.policy.invalidate()  # ignore files may have changed unseen (while stopped, or mid-burst)
            scan_started_ns = time.time_ns()
            result = scan(self.root, self.policy,
                          progress=(lambda n: progress("scan", n, None)) if progress else None)
            for rel, why in result.skipped[:20]:
                log.info("not recorded: %s (%s)", rel, why)
            cached = self.stat_cache.load()
            base = self._base_tree()
            recorded = self._list_tree(base)
            changes: dict[str, TreeEntry | None] = {path: None for path in recorded if path not in result.files}
            to_hash: list[FileInfo] = []
            known: list[tuple[FileInfo, str]] = []
            for rel, info in result.files.items():
                oid = StatCache.trusted(info, cached.get(rel))
                if oid is None:
                    to_hash.append(info)
                    continue
                known.append((info, oid))
                entry = TreeEntry(info.mode, oid)
                if recorded.get(rel) != entry:
                    changes[rel] = entry
            if progress:
                progress("hash", 0, len(to_hash))
            with self.repo.batch():
                entries, oversize = self._write_blobs(to_hash, progress=progress)
                for rel, entry in entries.items():
                    if entry is not None and recorded.get(rel) != entry:
                        changes[rel] = entry
                    elif entry is None:
                        changes[rel] = None
                by_rel = {i.rel: i for i in to_hash}
                known += [(by_rel[rel], e.oid) for rel, e in entries.items() if e is not None]
                if progress:
                    progress("write", 0, len(changes))
                tree = trees.apply_changes(self.repo, base, changes) if changes or base is None else base
            self.stat_cache.replace_all(known, scan_started_ns)
            imported = sorted((p, e) for p, e in changes.items() if e is not None) if base is None else None
            return self._commit(tree, kind=kind, note=note, oversize=oversize, started=started, imported=imported)

    def checkpoint(self, note: str | None = None) -> Snapshot | None:
        """Snapshot the exact current state now, skipping the debounce (a full scan)."""
        return self.reconcile(kind=messages.KIND_CHECKPOINT, note=messages.one_line(note) if note else None)

    # -- internals ----------------------------------------------------------------------------

    def _list_tree(self, tree: str | None) -> dict[str, TreeEntry]:
        if tree is None:
            return {}
        out = self.repo.git.out(["ls-tree", "-r", "-z", "--full-tree", tree])
        entries = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, _kind, oid = meta.split(b" ")
            entries[os.fsdecode(path)] = TreeEntry(mode.decode(), oid.decode())
        return entries

    def _base_tree(self) -> str | None:
        """The tree the work tree had when last recorded (the start of the next edit)."""
        if self._last_tree is not None:
            return self._last_tree
        commit = self.repo.resolve(shadow_ref(self.project.current_branch())) or self.latest_commit()
        if commit is None:
            return None
        self._last_commit = commit
        self._last_tree = self.repo.commit_tree_oid(commit)
        return self._last_tree

    def latest_commit(self) -> str | None:
        """The newest commit across every shadow branch (where a new branch starts), or None."""
        refs = self.repo.shadow_refs()
        if not refs:
            return None
        out = self.repo.git.text(["log", "-1", "--format=%H", "--date-order", *refs.keys()])
        return out or None

    def _write_blobs(self, infos: list[FileInfo], progress: ProgressFn | None = None
                     ) -> tuple[dict[str, TreeEntry | None], dict[str, int]]:
        """Write blobs for ``infos`` (into the current pack batch).

        Returns:
            ``({path: entry, or None when the file vanished}, {oversize path: size})``.
            A file that cannot be read (permissions) gets no entry: its last recorded
            content is kept.
        """
        entries: dict[str, TreeEntry | None] = {}
        oversize: dict[str, int] = {}
        root = str(self.root)
        cap = self.settings.max_file_bytes
        regular = [i for i in infos if i.mode != MODE_SYMLINK and i.size <= cap]
        for info in infos:
            if info.mode == MODE_SYMLINK:
                try:
                    entries[info.rel] = TreeEntry(MODE_SYMLINK, self.repo.write_blob(
                        os.readlink(os.fsencode(os.path.join(root, info.rel)))))
                except (FileNotFoundError, NotADirectoryError):
                    entries[info.rel] = None
                except OSError as exc:
                    log.warning("cannot read the symlink %s: %s", info.rel, exc)
            elif info.size > cap:
                note = (OVERSIZE_MARKER + b" (larger than the size cap of " + format_size(cap).encode() + b")\n"
                        + f"size: {info.size} bytes\nmtime_ns: {info.mtime_ns}\n".encode())
                entries[info.rel] = TreeEntry(MODE_FILE, self.repo.write_blob(note))
                oversize[info.rel] = info.size

        def load(info: FileInfo):
            """Read, hash and compress one file (on a worker thread: I/O and zlib release the GIL)."""
            try:
                data = _read_regular(os.path.join(root, info.rel), cap)
            except (FileNotFoundError, NotADirectoryError):
                return info, "gone"
            except OSError as exc:
                return info, exc
            return info, None if data is None else packs.deflate_blob(data)

        def load_chunk(chunk: list[FileInfo]) -> list:
            return [load(info) for info in chunk]

        chunks = [regular[i:i + 256] for i in range(0, len(regular), 256)]  # one task per 256 files, not per file
        done = 0
        with ThreadPoolExecutor(max_workers=BLOB_WORKERS) if len(regular) > PARALLEL_FROM else _Inline() as pool:
            for results in pool.map(load_chunk, chunks):
                for info, result in results:
                    if result == "gone":
                        entries[info.rel] = None
                    elif isinstance(result, OSError):
                        log.warning("cannot read %s, keeping its last recorded content: %s", info.rel, result)
                    elif result is not None:  # None: grew past the cap since it was looked at; noted next time
                        oid, body = result
                        entries[info.rel] = TreeEntry(info.mode, self.repo.add_deflated_blob(oid, body))
                done += len(results)
                if progress is not None and (done % 4096 < 256 or done == len(regular)):
                    progress("hash", done, len(regular))
        return entries, oversize

    def _commit(self, tree: str, *, kind: str, note: str | None, oversize: dict[str, int],
                started: float, expected: int | None = None,
                imported: list[tuple[str, TreeEntry]] | None = None) -> Snapshot | None:
        branch = self.project.current_branch()
        ref = shadow_ref(branch)
        try:
            with self._write_lock:
                tip = self.repo.resolve_ref(ref)
                parent = tip or self._last_commit or self.latest_commit()
                parent_tree = self.repo.commit_tree_oid(parent) if parent else None
                self._last_tree = tree
                if tree == parent_tree:
                    return None
                if parent_tree is None and imported is not None:
                    # the first snapshot: every file is new; listing them needs no diff of 100,000 paths
                    changes = [FileChange("A", path, new_oid=entry.oid) for path, entry in imported]
                else:
                    changes = diffs.tree_changes(self.repo, parent_tree, tree, expected=expected)
                if oversize:
                    changes = [FileChange(c.status, c.path, c.old_path, c.added, c.deleted, c.old_oid, c.new_oid,
                                          c.counted, f"not stored: {format_size(oversize[c.path])}")
                               if c.path in oversize else c for c in changes]
                now = datetime.now().astimezone()
                if parent is None and kind == messages.KIND_RECONCILE:
                    kind = messages.KIND_IMPORT
                message = messages.snapshot_message(when=now, intent=self.intent.get(), branch=branch,
                                                    changes=changes, kind=kind, note=note)
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
                if self._head_ref != ref:
                    health.clear_stale_locks(self.repo.git_dir)
                    self.repo.git.run(["symbolic-ref", "HEAD", ref], check=False)
                    self._head_ref = ref
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

    # -- consolidation ------------------------------------------------------------------------

    def consolidate(self, intent: str) -> ConsolidateResult:
        """Squash the trailing run of ``[AUTO-TRJ]`` snapshots on the current shadow branch.

        Pending changes are snapshotted first, so the consolidation covers the work up
        to now. The new ``[CONSOLIDATE]`` commit has the last snapshot's tree and the
        commit before the run as parent; the squashed commits stay reachable through
        the branch's reflog.

        Raises:
            InvalidArgumentError: ``intent`` is empty.
        """
        clean = messages.one_line(intent or "")
        if not clean:
            raise InvalidArgumentError("consolidate needs an intent summarising the work, "
                                       "e.g. 'Implemented login retry'")
        with self._lock:
            if self.has_pending():
                self.flush()
            branch = self.project.current_branch()
            ref = shadow_ref(branch)
            with self._write_lock:
                tip = self.repo.resolve(ref)
                if tip is None:
                    return ConsolidateResult(None, 0, branch, f"No snapshots on shadow branch `{branch}` yet: "
                                                              "nothing to consolidate.")
                run: list[str] = []
                base: str | None = None
                out = self.repo.git.out(["log", "--first-parent", "-z", "--format=%H%x1f%P%x1f%s", ref])
                for record in out.split(b"\0"):
                    if not record:
                        continue
                    oid, parents, subject = record.decode("utf-8", "replace").split("\x1f", 2)
                    if not subject.startswith(messages.SNAPSHOT_PREFIX):
                        base = oid
                        break
                    run.append(oid)
                    base = parents.split(" ")[0] if parents else None
                if not run:
                    return ConsolidateResult(None, 0, branch, "Nothing to consolidate: the latest commit on "
                                                              f"`{branch}` is already a consolidation.")
                tree = self.repo.commit_tree_oid(tip)
                base_tree = self.repo.commit_tree_oid(base) if base else None
                if base_tree == tree:
                    return ConsolidateResult(None, 0, branch, f"Nothing to consolidate: the {len(run)} "
                                             "snapshot(s) since the last consolidation net to no change.")
                files = diffs.tree_changes(self.repo, base_tree, tree)
                now = datetime.now().astimezone()
                message = messages.consolidate_message(when=now, intent=clean, branch=branch, squashed=len(run),
                                                       first=run[-1], last=run[0], files=files)
                commit = self.repo.commit_tree(tree, [base] if base else [], message,
                                               when=(int(now.timestamp()), now.strftime("%z") or "+0000"))
                self.repo.update_ref(ref, commit, tip, f"code-trajectory consolidate: squash {len(run)}")
                self._last_commit = commit
        log.info("consolidate branch=%s commit=%s squashed=%d", branch, commit[:12], len(run))
        return ConsolidateResult(commit, len(run), branch, message.split("\n", 1)[0], run)


class _Inline:
    """A stand-in for a thread pool that maps in the calling thread (small batches)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def map(fn, items):
        return map(fn, items)


def _read_regular(path: Path | str, limit: int) -> bytes | None:
    """Read a regular file without following a symlink swapped in meanwhile; None when over ``limit`` bytes."""
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced by a FIFO or device: never block on it
            raise FileNotFoundError(f"{path} is no longer a regular file")
        data = os.read(fd, min(st.st_size, limit) + 1)
        if len(data) <= min(st.st_size, limit):  # short read, or the file grew: read the rest
            chunks = [data]
            while (chunk := os.read(fd, 1 << 20)) and sum(map(len, chunks)) <= limit:
                chunks.append(chunk)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    return None if len(data) > limit else data


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def ensure_gitignore_line(root: Path, line: str) -> bool:
    """Append ``line`` to ``<root>/.gitignore`` unless present (same rules as below)."""
    path = root / ".gitignore"
    try:
        data = path.read_bytes() if path.exists() else b""
        if any(existing.strip() == line.encode() for existing in data.splitlines()):
            return False
        newline = b"\r\n" if b"\r\n" in data else b"\n"
        with path.open("ab") as f:
            f.write((newline if data and not data.endswith(b"\n") else b"") + line.encode() + newline)
    except OSError as exc:
        raise StorageError(f"cannot update {path}: {exc}") from exc
    return True


def ensure_gitignore_lists_shadow(root: Path) -> bool:
    """Append ``.trajectory/`` to ``<root>/.gitignore`` unless a line already lists it.

    Creates the file when missing; keeps existing content and its line endings
    (CRLF files get a CRLF line). Returns True when the file was changed.

    Raises:
        StorageError: the file exists but cannot be read or written.
    """
    path = root / ".gitignore"
    try:
        data = path.read_bytes() if path.exists() else b""
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    listed = {b".trajectory", b".trajectory/", b"/.trajectory", b"/.trajectory/", b".trajectory/*",
              b"/.trajectory/*"}
    if any(line.strip() in listed for line in data.splitlines()):
        return False
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    addition = b""
    if data and not data.endswith(b"\n"):
        addition += newline
    addition += b"# code-trajectory shadow repository" + newline + b".trajectory/" + newline
    try:
        with path.open("ab") as f:
            f.write(addition)
    except OSError as exc:
        raise StorageError(f"cannot add .trajectory/ to {path}: {exc}") from exc
    return True


__all__ = ["Recorder", "Snapshot", "ConsolidateResult", "IntentStore", "OVERSIZE_MARKER", "format_size",
           "ensure_gitignore_lists_shadow", "branch_of_ref"]
