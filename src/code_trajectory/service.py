"""The trajectory operations, one implementation for both front ends.

:class:`ProjectSession` is one project being recorded (recorder + optional
watcher) and answers every query as markdown. :class:`TrajectoryService` holds
the currently configured project for the MCP server and switches projects.
The MCP tools (:mod:`code_trajectory.server`) and the CLI
(:mod:`code_trajectory.cli`) only parse arguments and call these methods.
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
from collections.abc import Callable

import filelock
from datetime import datetime
from pathlib import Path

from code_trajectory import history, narrative, testruns
from code_trajectory.config import TrajectorySettings
from code_trajectory.errors import (InvalidArgumentError, NotConfiguredError, PathOutsideProjectError,
                                    ProjectError)
from code_trajectory.gitcmd import check_git_version
from code_trajectory.recorder import Recorder, Snapshot
from code_trajectory.shadow_repo import shadow_ref

log = logging.getLogger(__name__)

#: How often a follower tries to take over recording, seconds.
TAKEOVER_POLL_SECONDS = 1.0
MAX_DEPTH = 200
MAX_LIMIT = 1000
#: Commits read when looking for the last session's boundary.
SESSION_SCAN_LIMIT = 5000


def check_range(name: str, value: int, low: int, high: int) -> int:
    """Return ``value`` if ``low <= value <= high``.

    Raises:
        InvalidArgumentError: otherwise (also for a bool or a non-integer).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be an integer between {low} and {high}, got {value!r}")
    if not low <= value <= high:
        raise InvalidArgumentError(f"{name} must be between {low} and {high}, got {value}")
    return value


def resolve_project_root(path: str | os.PathLike[str]) -> Path:
    """Return the absolute, symlink-resolved project directory for ``path``.

    Raises:
        InvalidArgumentError: the path is empty or holds a NUL byte.
        ProjectError: it does not exist or is not a directory.
    """
    text = os.fspath(path)
    if not text or not str(text).strip():
        raise InvalidArgumentError("path must be the absolute path of the project directory")
    if "\0" in str(text):
        raise InvalidArgumentError("path must not contain NUL bytes")
    root = Path(text).expanduser()
    if not root.is_absolute():
        raise InvalidArgumentError(f"path must be absolute, got {text!r}; pass the project's full path")
    try:
        root = root.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ProjectError(f"project directory {text} does not exist or is not reachable: {exc}") from exc
    if not root.is_dir():
        raise ProjectError(f"{root} is not a directory; configure_project needs the project's root directory")
    if root == Path(root.anchor):
        raise InvalidArgumentError("refusing to record the file system root; pass a project directory")
    return root


def _exists(path: Path) -> bool:
    """``path.exists()`` that answers False for names the OS refuses (too long, invalid)."""
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def confine(root: Path, filepath: str) -> str:
    """Turn a client's path into a ``/``-separated path relative to ``root``, confined to it.

    Accepts paths relative to the root or absolute paths inside it. Symlinks in the
    existing part of the path are resolved, so a link pointing outside is refused.

    Raises:
        InvalidArgumentError: empty, NUL byte, or the root itself.
        PathOutsideProjectError: the path resolves outside the project.
    """
    if not isinstance(filepath, str) or not filepath.strip():
        raise InvalidArgumentError("filepath must be a file path relative to the project root, e.g. 'src/app.py'")
    if "\0" in filepath:
        raise InvalidArgumentError("filepath must not contain NUL bytes")
    candidate = Path(filepath) if os.path.isabs(filepath) else root / filepath
    normalized = Path(posixpath.normpath(candidate.as_posix()))
    try:
        rel = normalized.relative_to(root)
    except ValueError:
        raise PathOutsideProjectError(f"{filepath!r} is outside the project {root}; give a path inside it, "
                                      "relative to the project root") from None
    try:
        resolved = normalized.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loop
        raise InvalidArgumentError(f"cannot resolve {filepath!r}: {exc}") from exc
    if resolved != root and root not in resolved.parents:
        raise PathOutsideProjectError(f"{filepath!r} resolves through a symlink to {resolved}, outside the "
                                      f"project {root}")
    text = rel.as_posix()
    if text in ("", "."):
        raise InvalidArgumentError("filepath names the project root itself; give a file inside it")
    return text


class ProjectSession:
    """One project being recorded: the recorder, an optional watcher, and the queries.

    Args:
        root: the project directory (see :func:`resolve_project_root`).
        settings: settings for this project.
        watch: start a watcher (the server and ``watch``); the one-shot CLI commands don't.
        on_snapshot: called with each snapshot the watcher writes.
        force_polling: make the watcher poll (tests).

    Raises:
        GitUnavailableError: git is missing or too old.
        StorageError: the shadow repository cannot be created.
    """

    def __init__(self, root: Path, settings: TrajectorySettings, *, watch: bool = False,
                 on_snapshot: Callable[[Snapshot], None] | None = None, force_polling: bool | None = None,
                 max_native_dirs: int | None = None) -> None:
        check_git_version()
        self.root = root
        self.settings = settings
        self.recorder = Recorder.open(root, settings)
        self.watcher = None
        self._watch = watch
        self._on_snapshot = on_snapshot
        self._force_polling = force_polling
        self._max_native_dirs = max_native_dirs
        self.startup_snapshot: Snapshot | None = None
        self.import_progress: tuple[str, int, int | None] = ("scan", 0, None)
        self.import_error: Exception | None = None
        self._started = threading.Event()
        self._closing = threading.Event()
        self._recording_lock: filelock.FileLock | None = None
        self._progress: Callable[[str, int, int | None], None] | None = None
        #: ``recorder`` when this process records the project, ``follower`` while another one does.
        self.role = "recorder"

    def start(self, progress: Callable[[str, int, int | None], None] | None = None, *,
              background: bool = False) -> Snapshot | None:
        """Start the watcher if asked, then reconcile with the work tree (the start-up snapshot).

        Args:
            progress: called with ``(phase, done, total)`` during the scan.
            background: run the reconcile on a thread and return at once; :attr:`importing`
                tells whether it still runs, :attr:`import_progress` how far it got, and
                :meth:`wait_started` waits for it. Queries answer meanwhile from what is
                recorded so far.

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
            self.recorder.intent.clear()  # the spec: the intent lasts until the server restarts
        return self._start_recording(background)

    def _wait_to_record(self) -> None:
        while not self._closing.wait(TAKEOVER_POLL_SECONDS):
            try:
                self._recording_lock.acquire()
            except filelock.Timeout:
                continue
            except OSError as exc:  # .trajectory removed meanwhile: try again later
                log.debug("cannot take the recorder lock: %s", exc)
                continue
            if self._closing.is_set():
                self._recording_lock.release()
                return
            log.info("the recording process of %s exited; this one records now", self.root)
            self.role = "recorder"
            self._started.clear()
            self._start_recording(background=True)
            return

    def _start_recording(self, background: bool) -> Snapshot | None:
        if self._watch:
            from code_trajectory.watcher import Watcher

            self.watcher = Watcher(self.recorder, self.settings, on_snapshot=self._on_snapshot,
                                   force_polling=self._force_polling, max_native_dirs=self._max_native_dirs)
            self.watcher.start()  # events during the scan are queued, not lost

        def note(phase: str, done: int, total: int | None) -> None:
            self.import_progress = (phase, done, total)
            if self._progress is not None:
                self._progress(phase, done, total)

        def work() -> None:
            try:
                self.startup_snapshot = self.recorder.reconcile(progress=note)
            except Exception as exc:  # noqa: BLE001 - kept for the caller and the summary
                self.import_error = exc
                log.error("start-up scan of %s failed: %s", self.root, exc)
            finally:
                self._started.set()

        if background:
            threading.Thread(target=work, name="trajectory-import", daemon=True).start()
            return None
        work()
        if self.import_error is not None:
            raise self.import_error
        return self.startup_snapshot

    @property
    def importing(self) -> bool:
        """True while the start-up scan runs."""
        return not self._started.is_set()

    def wait_started(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the start-up scan; True when it finished."""
        return self._started.wait(timeout)

    def close(self) -> None:
        """Stop the watcher (snapshotting what is pending), release the recorder lock and resources."""
        self._closing.set()
        if self.watcher is not None:
            self.watcher.stop(flush=True)
            self.watcher = None
        if self._recording_lock is not None and self._recording_lock.is_locked:
            try:
                self._recording_lock.release()
            except OSError:
                pass
        self.recorder.close()

    def check_alive(self) -> None:
        """Raise :class:`ProjectError` when the project directory has gone (removed or moved)."""
        if not self.root.is_dir():
            raise ProjectError(f"the project directory {self.root} no longer exists (removed or moved); recording "
                               "stopped. Call configure_project with its new location.")

    # -- operations ------------------------------------------------------------------------------

    @property
    def branch(self) -> str:
        return self.recorder.project.current_branch()

    def set_intent(self, intent: str) -> str:
        """Set the intent recorded with the following snapshots; return a confirmation."""
        self.check_alive()
        if not isinstance(intent, str):
            raise InvalidArgumentError("intent must be a string")
        clean = self.recorder.intent.set(intent)
        return f"Intent set: \"{clean}\". Snapshots from now on carry it, until it is changed or the server restarts."

    def checkpoint(self, message: str | None = None) -> str:
        """Snapshot the project's exact current state now; return what was recorded."""
        self.check_alive()
        if message is not None and not isinstance(message, str):
            raise InvalidArgumentError("message must be a string or omitted")
        snapshot = self.recorder.checkpoint(message or None)
        if snapshot is None:
            return "Nothing changed since the last snapshot: no checkpoint commit was needed."
        files = "\n".join(narrative.describe_files(snapshot.changes, 30))
        return f"Checkpoint recorded on shadow branch `{snapshot.branch}` as `{snapshot.commit[:12]}`:\n" \
               f"{snapshot.subject}\n\nFiles:\n{files}"

    def consolidate(self, intent: str) -> str:
        """Squash the trailing snapshots into one ``[CONSOLIDATE]`` commit; return what happened."""
        self.check_alive()
        if not isinstance(intent, str):
            raise InvalidArgumentError("intent must be a string")
        result = self.recorder.consolidate(intent)
        if result.commit is None:
            return result.message
        # the consolidated commit has the last snapshot's tree: its test runs still describe it
        testruns.copy_runs(self.recorder.repo, result.squashed_commits[0], result.commit)
        return (f"Consolidated {result.squashed} snapshot(s) on shadow branch `{result.branch}` into "
                f"`{result.commit[:12]}`: {result.message}\nThe squashed snapshots stay reachable through the "
                f"reflog: `git --git-dir=.trajectory reflog {shadow_ref(result.branch)}`.")

    def file_trajectory(self, filepath: str, depth: int = 5) -> str:
        """Markdown history of one file (oldest to newest, with diffs and revert detection)."""
        self.check_alive()
        check_range("depth", depth, 1, MAX_DEPTH)
        rel = confine(self.root, filepath)
        branch = self.branch
        repo = self.recorder.repo
        ref = shadow_ref(branch)
        if repo.resolve(ref) is None:
            latest = self.recorder.latest_commit()  # a new branch starts from the last snapshot
            if latest is None:
                return narrative.never_recorded(rel, self.recorder.policy.explain(rel), _exists(self.root / rel), [])
            ref = latest
        versions = history.file_history(repo, ref, rel)
        if not versions:
            candidates = []
            try:
                out = repo.git.out(["ls-tree", "-r", "-z", "--name-only", "--full-tree", ref])
                candidates = [os.fsdecode(p) for p in out.split(b"\0") if p]
            except Exception:  # noqa: BLE001 - suggestions are a courtesy
                pass
            return narrative.never_recorded(rel, self.recorder.policy.explain(rel), _exists(self.root / rel),
                                            candidates)
        chronological = list(reversed(versions))
        first_seen: dict[str, datetime] = {}
        reverts: dict[str, datetime | None] = {}
        previous_blob: str | None = None
        for version in chronological:
            blob = version.change.new_oid
            key = version.record.oid
            earlier = first_seen.get(blob) if blob != "0" * 40 else None
            reverts[key] = earlier if (earlier is not None and blob != previous_blob) else None
            if blob != "0" * 40:
                first_seen[blob] = version.record.time  # the latest occurrence wins: "matches state from"
            previous_blob = blob
        shown = chronological[-depth:]
        marks = testruns.marks_for(repo, [v.record.oid for v in shown])
        rendered = [narrative.RenderedVersion(v, self._patch(v), reverts[v.record.oid], marks.get(v.record.oid))
                    for v in shown]
        note = None
        last = chronological[-1]
        if last.change.status == "D":
            note = f"The file was deleted at {narrative.fmt_time(last.record.time)} and not recorded since."
        elif last.path != rel:
            note = f"Followed across renames: earlier recorded as `{last.path}`."
        return narrative.file_trajectory(rel, branch, rendered, len(versions), self.settings.token_budget,
                                         state_note=note)

    def _patch(self, version: history.FileVersion) -> str:
        """The version's diff; for the import of a long file, nothing (it is not an edit)."""
        if version.record.is_import:
            text = history.blob_text(self.recorder.repo, version.change.new_oid)
            if text is None or text.count("\n") > narrative.IMPORT_LINES_SHOWN:
                return ""
        return history.file_patch(self.recorder.repo, version)

    def global_trajectory(self, limit: int = 20, since_consolidate: bool = False) -> str:
        """Markdown list of recent commits on the current shadow branch with files and line counts."""
        self.check_alive()
        check_range("limit", limit, 1, MAX_LIMIT)
        if not isinstance(since_consolidate, bool):
            raise InvalidArgumentError("since_consolidate must be true or false")
        branch = self.branch
        repo = self.recorder.repo
        ref = shadow_ref(branch)
        if repo.resolve(ref) is None:
            return narrative.global_trajectory([], branch, self.settings.token_budget,
                                               since_consolidate=since_consolidate, reached_consolidation=False,
                                               more_available=False)
        read = MAX_LIMIT if since_consolidate else limit + 1
        records = history.read_log(repo, [ref], limit=read, first_parent=True)
        reached = False
        if since_consolidate:
            cut = next((i for i, r in enumerate(records) if r.is_consolidation), None)
            if cut is not None:
                records, reached = records[:cut], True
            more = False
        else:
            more = len(records) > limit
            records = records[:limit]
        history.add_line_counts(repo, records)
        return narrative.global_trajectory(records, branch, self.settings.token_budget,
                                           since_consolidate=since_consolidate, reached_consolidation=reached,
                                           more_available=more,
                                           marks=testruns.marks_for(repo, [r.oid for r in records]))

    def session_summary(self, recap: str | None = None, notices: list[str] | None = None) -> str:
        """Markdown summary of the last session and whether a new one starts now."""
        self.check_alive()
        repo = self.recorder.repo
        refs = list(repo.shadow_refs())
        records = history.read_log(repo, refs, limit=SESSION_SCAN_LIMIT, date_order=True)
        gap = self.settings.session_gap_seconds
        sessions = history.sessions(records, gap)
        net = None
        if sessions:
            last = sessions[0]
            if len(last) <= 500:
                history.add_line_counts(repo, last)
            from code_trajectory.diffs import tree_changes

            first = last[-1]
            # the import of the existing tree is where the session starts, not work done in it
            start = first.oid if first.is_import else (first.parents[0] if first.parents else None)
            start_tree = repo.commit_tree_oid(start) if start else None
            net = tree_changes(repo, start_tree, repo.commit_tree_oid(last[0].oid))
        all_notices = list(self.recorder.notices) + list(notices or [])
        if self.role == "follower":
            all_notices.append("another code-trajectory process records this project; this one answers queries "
                               "and takes over when it exits")
        if self.importing:
            phase, done, total = self.import_progress
            all_notices.append(f"the start-up scan is still running ({phase}: {done}"
                               f"{f' of {total}' if total else ''}); the history below may be incomplete")
        if self.import_error is not None:
            all_notices.append(f"the start-up scan failed: {self.import_error}")
        if self.watcher is not None and self.watcher.last_error:
            all_notices.append(self.watcher.last_error)
        if self.watcher is not None and self.watcher.polling and self.watcher.last_error is None:
            all_notices.append(f"{self.watcher.polled_dirs} director(ies) are polled, not watched natively "
                               "(see the server log)")
        return narrative.session_summary(now=datetime.now().astimezone(), gap_seconds=gap, sessions=sessions,
                                         current_intent=self.recorder.intent.get(), current_branch=self.branch,
                                         net_changes=net, pending=self.recorder.has_pending(), recap=recap,
                                         budget_tokens=self.settings.token_budget, notices=all_notices,
                                         tests=self._tests_line())

    # -- test runs -------------------------------------------------------------------------------

    def _tests_line(self) -> str | None:
        """``## Tests`` lines for the summary: last run and when tests were last green."""
        repo = self.recorder.repo
        branch = self.branch
        last = testruns.last_run(repo, branch=branch)
        if last is None:
            return None
        green = last if last.is_green else testruns.last_green(repo, branch=branch)
        lines = ["## Tests", f"- Last run: {narrative.fmt_time(last.started) if last.started else '?'} on "
                 f"`{(last.commit or '?')[:12]}` — {last.summary_line()} (`{last.command}`)"]
        if green is None:
            lines.append(f"- Never green on `{branch}` in the recorded runs.")
        elif green is not last:
            lines.append(f"- Last green: {narrative.fmt_time(green.started) if green.started else '?'} on "
                         f"`{(green.commit or '?')[:12]}`; call `diff_since_green` to see what changed since.")
        else:
            lines.append("- The last run was green.")
        return "\n".join(lines)

    def test_history(self, limit: int = 10) -> str:
        """Markdown list of recorded test runs on the current branch, newest first."""
        check_range("limit", limit, 1, MAX_LIMIT)
        branch = self.branch
        runs = testruns.history(self.recorder.repo, limit, branch=branch)
        if not runs:
            return (f"# Test runs (shadow branch `{branch}`)\n\nNo test runs recorded yet. Run tests through "
                    "`code-trajectory test -- <command>`, the pytest plugin (`pytest --trajectory`), or report a "
                    "run with `record_test_result`.")
        parts = [f"# Test runs (shadow branch `{branch}`), newest first"]
        for run in runs:
            when = narrative.fmt_time(run.started) if run.started else "?"
            duration = f", {run.duration_seconds:.1f} s" if run.duration_seconds is not None else ""
            lines = [f"### {when} — {run.outcome} on `{(run.commit or '?')[:12]}`",
                     f"- Command: `{run.command}` ({run.runner}{duration})", f"- {run.summary_line()}"]
            if run.message:
                lines.append(f"- Note: {run.message}")
            for test, reason in run.failures[:10]:
                lines.append(f"  - `{test}`: {reason}")
            extra = max(0, len(run.failures) - 10) + run.more_failures
            if extra:
                lines.append(f"  - ... and {extra} more")
            parts.append("\n".join(lines))
        return narrative.fit("\n\n".join(parts), self.settings.token_budget)

    def diff_since_green(self, filepath: str | None = None) -> str:
        """What changed since the last snapshot whose tests passed, for one file or the project."""
        repo = self.recorder.repo
        branch = self.branch
        green = testruns.last_green(repo, branch=branch)
        if green is None or green.commit is None:
            return (f"No green test run recorded on `{branch}`: nothing to compare with. Record runs with "
                    "`code-trajectory test -- <command>`, `pytest --trajectory` or `record_test_result`.")
        tip = repo.resolve(shadow_ref(branch))
        head = (f"Last green run: {narrative.fmt_time(green.started) if green.started else '?'} on "
                f"`{green.commit[:12]}` — {green.summary_line()} (`{green.command}`).")
        if tip is None or tip == green.commit:
            return head + "\n\nNothing was recorded since: the latest snapshot is the green one."
        if filepath is not None:
            rel = confine(self.root, filepath)
            versions = [v for v in history.file_history(repo, tip, rel)]
            since = history.read_log(repo, [f"{green.commit}..{tip}"], with_changes=False)
            after = {r.oid for r in since}
            versions = [v for v in versions if v.record.oid in after]
            if not versions:
                return head + f"\n\n`{rel}` has not changed since then."
            chronological = list(reversed(versions))
            marks = testruns.marks_for(repo, [v.record.oid for v in chronological])
            rendered = [narrative.RenderedVersion(v, history.file_patch(repo, v), None, marks.get(v.record.oid))
                        for v in chronological]
            return narrative.file_trajectory(rel, branch, rendered, len(versions), self.settings.token_budget,
                                             state_note=head)
        records = history.read_log(repo, [f"{green.commit}..{tip}"], limit=MAX_LIMIT, first_parent=True)
        history.add_line_counts(repo, records)
        from code_trajectory.diffs import tree_changes

        net = tree_changes(repo, repo.commit_tree_oid(green.commit), repo.commit_tree_oid(tip))
        net_text = "\n".join(["## Net change since the green run"] + narrative.describe_files(net, 40))
        body = narrative.global_trajectory(records, branch, max(1000, self.settings.token_budget - 1500),
                                           since_consolidate=False, reached_consolidation=False,
                                           more_available=False, marks=testruns.marks_for(repo, [r.oid for r in records]),
                                           title="Snapshots since the last green run")
        return narrative.fit(f"{head}\n\n{net_text}\n\n{body}", self.settings.token_budget)

    def record_test_result(self, **fields) -> str:
        """Record a test run the agent performed itself on the current state; return a confirmation."""
        run = testruns.record_agent_result(self.root, recorder=self.recorder, settings=self.settings, **fields)
        return (f"Recorded on snapshot `{(run.commit or '?')[:12]}` (shadow branch `{run.branch}`): "
                f"{run.summary_line()}")


class TrajectoryService:
    """The project the MCP server currently records, switchable at run time.

    Args:
        settings_factory: builds settings for a project root (config files + overrides).
        force_polling: passed to watchers (tests).
    """

    def __init__(self, settings_factory: Callable[[Path], TrajectorySettings], *,
                 force_polling: bool | None = None) -> None:
        self._settings_factory = settings_factory
        self._force_polling = force_polling
        self._session: ProjectSession | None = None
        self._lock = threading.RLock()

    def configure(self, path: str, *, background: bool = False) -> tuple[ProjectSession, bool]:
        """Start recording ``path`` (stopping the previous project); the same path keeps its session.

        Args:
            path: the project directory (absolute).
            background: return as soon as the watcher runs, with the start-up scan going on
                in the background (see :meth:`ProjectSession.start`).

        Returns:
            ``(session, started)``: ``started`` is False when the path was already configured.
        """
        root = resolve_project_root(path)
        with self._lock:
            if self._session is not None and self._session.root == root:
                return self._session, False
            if self._session is not None:
                self._session.close()
                self._session = None
            session = ProjectSession(root, self._settings_factory(root), watch=True,
                                     force_polling=self._force_polling)
            try:
                session.start(background=background)
            except BaseException:
                session.close()
                raise
            self._session = session
            return session, True

    def project(self) -> ProjectSession:
        """Return the configured project.

        Raises:
            NotConfiguredError: none is configured yet.
        """
        session = self._session
        if session is None:
            raise NotConfiguredError("No project is configured. Call configure_project with the absolute path of "
                                     "the project directory first, e.g. configure_project(path=\"/home/me/app\").")
        return session

    def project_root(self) -> Path:
        """The configured project's root (raises :class:`NotConfiguredError` when none)."""
        return self.project().root

    def close(self) -> None:
        """Stop the current project's watcher."""
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None
