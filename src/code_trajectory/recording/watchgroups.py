"""Watch groups and sync points: the event side of the watcher.

A :class:`WatchGroup` runs one ``watchfiles`` generator over a list of directories (each watched
non-recursively) on its own thread and hands every batch to the watcher.

A :class:`SyncPoint` lets the watcher prove that every event the operating system delivered before
a given moment has been handed over. Each native group also watches a private directory,
``.trajectory/state/sync``; to sync, a new empty file (a *token*) is created there. The kernel queues
events of one inotify instance in order, so when a group's batch holds the token, every event the
group's watches produced before it is in that batch or an earlier one — and the group hands the
other events of the batch over before it reports the token. A ``checkpoint`` syncs before it
trusts the watcher's pending paths (a file saved just before the call is included), a new group
is ready once it sees a token, and a group replaced by another one stops once it has handed over
everything before a token (no events fall between the two, so no rescan is needed).

Polled groups (``force_polling`` or the inotify watch limit) cannot sync: their events arrive up
to a poll interval late.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import watchfiles

from code_trajectory.recording.listingpoll import watchfiles_can_take
from code_trajectory.recording.walk_policy import WalkPolicy

log = logging.getLogger(__name__)

#: watchfiles' own grouping: the longest it collects a batch once changes arrive, milliseconds.
DEBOUNCE_MS = 50
#: watchfiles' step: how often it checks for changes and the stop event; a batch is yielded once a step brings
#: no new change, so it adds one to two steps to each event, milliseconds.
STEP_MS = 10
#: How long watchfiles waits with no change before yielding an empty batch (checks that the group lives), ms.
IDLE_TIMEOUT_MS = 1000
#: Poll interval for directories that cannot be watched natively, milliseconds.
POLL_DELAY_MS = 2000
#: How often a token is created again while a new group starts (its first one may precede its watches), seconds.
READY_REPOST_SECONDS = 0.05
#: Longest wait for a native group to start watching, seconds.
READY_TIMEOUT = 60.0

Batch = set[tuple[watchfiles.Change, str]]


def recorded_directories(root: Path, policy: WalkPolicy, odd_names: set[str] | None = None) -> list[str]:
    """Every directory under ``root`` (``root`` included) that the policy records, as absolute paths.

    Symlinked directories are not followed; unreadable ones are skipped. Those holding a name that is not UTF-8
    are added to ``odd_names`` (an event about it, even its opening, stops a watch group: see
    :mod:`.listingpoll`).
    """
    found = [str(root)]
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                listed = list(it)
        except OSError:
            continue
        if odd_names is not None and not all(watchfiles_can_take(e.name) for e in listed):
            odd_names.add(str(root / rel_dir) if rel_dir else str(root))
        entries = [e for e in listed if e.is_dir(follow_symlinks=False)]
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not policy.entry_excluded(rel_dir, entry.name, True):
                found.append(str(root / rel))
                stack.append(rel)
    return found



def overflow_threshold() -> int:
    """Events in one batch from which the kernel's inotify queue may have overflowed: a quarter of
    ``/proc/sys/fs/inotify/max_queued_events`` (``watchfiles`` does not report the overflow itself)."""
    try:
        return max(256, int(Path("/proc/sys/fs/inotify/max_queued_events").read_text()) // 4)
    except (OSError, ValueError):
        return 4096


class SyncPoint:
    """Tokens created in ``directory`` that every native watch group reports once seen.

    Args:
        directory: a directory only this process writes (created if missing; left-over tokens removed).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.prefix = f"{directory}/"
        self._cond = threading.Condition()
        self._counter = itertools.count(1)
        self._ino: int | None = None
        self.prepare()

    def prepare(self) -> bool:
        """Create the directory (its parent must exist) and remove tokens left by a killed process; False when
        it cannot be created."""
        try:
            self.directory.mkdir(exist_ok=True)  # not its parents: .trajectory is the recorder's to create
            for entry in os.scandir(self.directory):
                if entry.name.startswith("t-"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)
            self._ino = self.directory.stat().st_ino
        except OSError as exc:
            log.warning("cannot prepare the sync directory %s: %s", self.directory, exc)
            return False
        return True

    @property
    def available(self) -> bool:
        """True when the directory is the one :meth:`prepare` made (groups started since then watch it)."""
        try:
            return self.directory.stat().st_ino == self._ino
        except OSError:
            return False

    def post(self) -> str | None:
        """Create a new token; its name, or None when the directory is gone."""
        name = f"t-{os.getpid()}-{next(self._counter)}"
        try:
            with open(self.prefix + name, "xb"):
                pass
        except OSError:
            return None
        return name

    def remove(self, names: Iterable[str]) -> None:
        """Delete tokens once waited for (their deletion events are ignored)."""
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(self.prefix + name)

    def seen(self, group: WatchGroup, names: set[str]) -> None:
        """Called by ``group`` once it handed over every event of the batch that held the tokens ``names``."""
        with self._cond:
            group.tokens |= names
            self._cond.notify_all()

    def wait(self, groups: list[WatchGroup], name: str, timeout: float) -> bool:
        """Wait until every live group in ``groups`` saw token ``name``; False on timeout or when one died."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if any(not g.thread.is_alive() and not g.stop.is_set() for g in groups):
                    return False
                if all(name in g.tokens or g.stop.is_set() for g in groups):
                    for g in groups:
                        g.tokens.discard(name)
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))  # a dying group does not notify

    def sync(self, groups: list[WatchGroup], timeout: float) -> bool:
        """Post a token and wait for every group in ``groups`` to see it (see :meth:`wait`)."""
        name = self.post()
        if name is None:
            return False
        try:
            return self.wait(groups, name, timeout)
        finally:
            self.remove([name])


class WatchGroup:
    """One ``watchfiles`` generator over ``dirs`` on its own thread.

    Args:
        dirs: absolute directories, each watched non-recursively.
        on_batch: called on the group's thread with each batch (the filter already applied, tokens removed).
        watch_filter: ``watchfiles`` filter ``(change, path) -> bool``; tokens pass on their own.
        polling: poll instead of native events.
        sync: the sync point; native groups also watch its directory.
    """

    def __init__(self, dirs: list[str], *, on_batch: Callable[[Batch], None],
                 watch_filter: Callable[[watchfiles.Change, str], bool], polling: bool, sync: SyncPoint) -> None:
        self.dirs = dirs
        self.polling = polling
        self.sync = sync
        self.on_batch = on_batch
        self.watch_filter = watch_filter
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        #: Tokens seen and not yet waited for (guarded by the sync point's lock).
        self.tokens: set[str] = set()
        #: Stop once this token is seen (the group was replaced), set by :meth:`retire`.
        self.retire_token: str | None = None
        self.thread = threading.Thread(target=self._run, name="trajectory-events", daemon=True)

    def start(self) -> bool:
        """Start watching; return once the watches are in place (True) or failed (False, :attr:`error` says why)."""
        self.thread.start()
        if self.polling or not self.sync.available:
            self.ready.wait(READY_TIMEOUT)
        else:
            posted: list[str] = []
            deadline = time.monotonic() + READY_TIMEOUT
            try:
                while time.monotonic() < deadline:
                    name = self.sync.post()  # the first yield that holds it means the watches are in place
                    if name is not None:
                        posted.append(name)
                    if self.ready.wait(READY_REPOST_SECONDS):
                        break
            finally:
                self.sync.remove(posted)
        return self.error is None and self.ready.is_set()

    def retire(self, token: str) -> None:
        """Stop once every event before ``token`` is handed over (another group watches from now on)."""
        self.retire_token = token

    def _filter(self, change: watchfiles.Change, path: str) -> bool:
        if path.startswith(self.sync.prefix):
            return True
        return self.watch_filter(change, path)

    def _run(self) -> None:
        dirs = self.dirs if self.polling else [*self.dirs, str(self.sync.directory)]
        try:
            for batch in watchfiles.watch(*dirs, watch_filter=self._filter, debounce=DEBOUNCE_MS, step=STEP_MS,
                                          stop_event=self.stop, rust_timeout=IDLE_TIMEOUT_MS, yield_on_timeout=True,
                                          raise_interrupt=False, force_polling=self.polling,
                                          poll_delay_ms=POLL_DELAY_MS, recursive=False,
                                          # True would make watchfiles ignore EVERY error of a native watch, the
                                          # kernel's watch limit included: directories past it went unwatched
                                          ignore_permission_denied=self.polling):
                self.ready.set()  # the first yield (a timeout or changes) means the watches are in place
                if not batch:
                    continue
                tokens = {path[len(self.sync.prefix):] for change, path in batch
                          if change == watchfiles.Change.added and path.startswith(self.sync.prefix)}
                rest = {(change, path) for change, path in batch if not path.startswith(self.sync.prefix)}
                if rest:
                    self.on_batch(rest)
                if tokens:
                    self.sync.seen(self, tokens)
                    if self.retire_token is not None and self.retire_token in tokens:
                        self.stop.set()
                        break
        except BaseException as exc:  # noqa: BLE001 - reported to the watcher
            self.error = exc
        finally:
            self.ready.set()
