"""Native watches as far as the kernel allows, polling for the rest: the watcher's answer to the inotify limits.

Linux counts every inotify watch of a user against ``fs.inotify.max_user_watches``
(``/proc/sys/fs/inotify/max_user_watches``; inside a user namespace also against that namespace's
``/proc/sys/user/max_inotify_watches``) and every inotify instance against ``fs.inotify.max_user_instances``
(``inotify(7)``). The watcher needs one watch per recorded directory, so a large tree, or a user whose editors and
language servers already hold most of the watches, may reach the limit; ``inotify_add_watch`` then fails with
``ENOSPC`` (``watchfiles`` reports it as ``OSError: OS file watch limit reached``).

:class:`NativeWatches` starts the watch groups of a list of directories: one native group over all of them; when a
native group fails, half of its directories are tried again (repeatedly), and once a group starts, what is left is
tried the same way (at most :data:`MAX_NATIVE_GROUPS` native groups per call, so the kernel's budget is used rather
than half of it). Directories that could not be watched natively are polled by one group every
:data:`~code_trajectory.recording.watchgroups.POLL_DELAY_MS`. The first time anything is polled, one warning names
the sysctl to raise; later calls (new directories, rebuilds) log at INFO and update :attr:`NativeWatches.notice`,
which the watcher reports in ``get_session_summary``; the counts go to ``.trajectory/state/watch-limit.json`` for
``code-trajectory status`` (:func:`status_line`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from code_trajectory.core.bounded_read import read_json_object

if TYPE_CHECKING:  # watchgroups imports watchfiles, which `code-trajectory status` (status_line) does without
    from code_trajectory.recording.watchgroups import WatchGroup

log = logging.getLogger(__name__)

#: The sysctl that caps a user's inotify watches (``inotify(7)``, "/proc interfaces").
WATCHES_SYSCTL = "fs.inotify.max_user_watches"
#: The sysctl that caps a user's inotify instances (one per native watch group).
INSTANCES_SYSCTL = "fs.inotify.max_user_instances"
#: Native groups started by one :meth:`NativeWatches.start` at most (each is an inotify instance and a thread).
MAX_NATIVE_GROUPS = 4
#: Native group starts tried by one :meth:`NativeWatches.start` at most (failed ones included).
MAX_ATTEMPTS = 24

#: Longest wait for stopped or failed groups' inotify instances to be closed (which frees their watches), s.
RELEASE_TIMEOUT = 2.0
#: Longest wait for each stopped group's thread, seconds.
STOP_JOIN_SECONDS = 2.0

#: The file in the state directory (``.trajectory/state``) where the recording process notes what it polls.
STATE_FILE = "watch-limit.json"

#: ``make_group(dirs, polling)``: a new, not started watch group over ``dirs``.
GroupFactory = Callable[[list[str], bool], "WatchGroup"]


def limit_reached(error: BaseException | None) -> str | None:
    """The sysctl whose limit a native group's start-up error shows was reached, or None for another error.

    ``watchfiles`` (through the ``notify`` crate) reports ``ENOSPC`` from ``inotify_add_watch`` as
    ``OSError("OS file watch limit reached. about [...]")`` and ``EMFILE`` from ``inotify_init1`` as
    ``"... Too many open files (os error 24)"``.
    """
    text = str(error or "")
    if "watch limit" in text or "os error 28" in text:
        return WATCHES_SYSCTL
    if "Too many open files" in text or "os error 24" in text:
        return INSTANCES_SYSCTL
    return None


def poll_seconds() -> float:
    """How often a polled directory is looked at, seconds (:data:`.watchgroups.POLL_DELAY_MS`)."""
    from code_trajectory.recording.watchgroups import POLL_DELAY_MS

    return POLL_DELAY_MS / 1000


def current_limit(sysctl: str) -> int | None:
    """The limit in force for this process (its user namespace's when that is lower), or None when unreadable."""
    files = {WATCHES_SYSCTL: ("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"),
             INSTANCES_SYSCTL: ("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/user/max_inotify_instances")}
    values = []
    for name in files.get(sysctl, ()):
        try:
            values.append(int(Path(name).read_text()))
        except (OSError, ValueError):
            continue
    return min(values) if values else None


def inotify_instances() -> int | None:
    """Number of inotify instances this process holds (``/proc/self/fd``), or None where that cannot be read."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    count = 0
    for name in names:
        try:
            count += os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify"
        except OSError:
            continue
    return count


def wait_released(before: int | None, timeout: float = RELEASE_TIMEOUT) -> None:
    """Wait until this process holds no more than ``before`` inotify instances: a failed native group's instance
    is closed by ``notify``'s own thread just after the failure, and its watches count until then."""
    deadline = time.monotonic() + timeout
    while before is not None and time.monotonic() < deadline:
        now = inotify_instances()
        if now is None or now <= before:
            return
        time.sleep(0.01)


def watchable(path: str) -> bool:
    """True when ``path`` is a directory this process may watch (``inotify_add_watch`` needs read access)."""
    return os.path.isdir(path) and os.access(path, os.R_OK)


def stop_groups(groups: list[WatchGroup]) -> bool:
    """Stop ``groups`` and wait until their watches are given back to the kernel; False when ``groups`` is empty."""
    before = inotify_instances()
    for group in groups:
        group.stop.set()
    for group in groups:
        group.thread.join(STOP_JOIN_SECONDS)
    wait_released(None if before is None else before - sum(not g.polling for g in groups))
    return bool(groups)


def status_line(state_dir: Path) -> str | None:
    """A line for ``code-trajectory status`` when the process recording the project now polls directories.

    Args:
        state_dir: the shadow repository's state directory (``.trajectory/state``).

    Returns:
        ``- Watcher: N of M recorded directories are polled ...`` naming the sysctl, or None when nothing records
        the project now, the note is another process's (a stale file) or it is unreadable. Only numbers and a
        sysctl from this module's list are taken from the file (it is untrusted).
    """
    from code_trajectory.recording.liveness import read_recorder_state, recording_now

    try:
        data = read_json_object(state_dir / STATE_FILE)
        if data is None:
            return None
        pid, polled, total = (int(data[key]) for key in ("pid", "polled", "total"))
        every = float(data["poll_seconds"])
    except (OSError, ValueError, TypeError, KeyError, OverflowError):  # OverflowError: int() of Infinity
        return None
    if polled <= 0 or pid != read_recorder_state(state_dir).get("pid") or not recording_now(state_dir.parent):
        return None
    sysctl = data.get("sysctl") if data.get("sysctl") in (WATCHES_SYSCTL, INSTANCES_SYSCTL) else None
    why = (f"the kernel's limit {sysctl} was reached (raise it, then restart the server)" if sysctl
           else "they could not be watched natively (see the server's log)")
    return (f"- Watcher: {polled:,} of {total:,} recorded directories are polled every {every:g} s, not watched "
            f"natively: {why}")


class NativeWatches:
    """Starts watch groups natively as far as the kernel allows and polls the rest (see the module docstring).

    Args:
        make_group: makes a group over a list of absolute directories, natively or polling.
        force_polling: poll everything (network file systems, tests).
        max_native_dirs: watch at most this many directories natively per :meth:`start` (None: as many as the
            kernel allows); a knob for tests on machines without user namespaces.
        state_dir: where to note the counts for ``code-trajectory status`` (:data:`STATE_FILE`); None: nowhere.
    """

    def __init__(self, make_group: GroupFactory, *, force_polling: bool = False,
                 max_native_dirs: int | None = None, state_dir: Path | None = None) -> None:
        self.make_group = make_group
        self.state_dir = state_dir
        self._sysctl: str | None = None
        self.force_polling = force_polling
        self.max_native_dirs = max_native_dirs
        #: Directories polled, and all directories started, since the last :meth:`reset`.
        self.polled = 0
        self.total = 0
        #: What a reader must know while directories are polled (None when none is).
        self.notice: str | None = None
        self._warned = False

    def reset(self) -> None:
        """Forget the counts: the caller replaces every group (a rebuild)."""
        self.polled = self.total = 0
        self.notice = self._sysctl = None

    def start(self, dirs: list[str], *, release: Callable[[], bool] | None = None) -> list[WatchGroup]:
        """Start groups watching ``dirs``: natively as far as possible, the rest in one polling group.

        Args:
            dirs: absolute directories, the most important first (they are kept native when halving).
            release: called once, at the first failure from the watch limit, to stop groups being replaced (their
                watches count until then); True when it freed some, then the same size is tried again.

        Returns:
            The started groups (a polling group last, when any). Returns once their watches are in place.
        """
        self.total += len(dirs)
        native = [] if self.force_polling else list(dirs)
        polled = list(dirs) if self.force_polling else []
        cause = "polling was asked for (force_polling)" if self.force_polling else ""
        if self.max_native_dirs is not None and len(native) > self.max_native_dirs:
            polled += native[self.max_native_dirs:]
            native = native[:self.max_native_dirs]
            cause = f"native inotify watches are capped at {self.max_native_dirs} directories (max_native_dirs)"
        groups: list[WatchGroup] = []
        size, attempts, sysctl = len(native), 0, None
        while native and attempts < MAX_ATTEMPTS and sum(not g.polling for g in groups) < MAX_NATIVE_GROUPS:
            attempts += 1
            before = inotify_instances()
            group = self.make_group(native[:size], False)
            if group.start():
                groups.append(group)
                native = native[size:]
                size = min(size, len(native))
                continue
            group.stop.set()
            wait_released(before)  # its watches count until its instance is closed
            error = group.error
            if isinstance(error, (FileNotFoundError, PermissionError)):  # removed or unreadable meanwhile
                kept = [d for d in native if watchable(d)]
                if len(kept) < len(native):
                    native, size = kept, min(size, len(kept))
                    continue
            reached = limit_reached(error)
            sysctl = sysctl or reached
            if reached == WATCHES_SYSCTL and release is not None:
                freed, release = release(), None
                if freed:
                    continue
            cause = cause or f"native watching failed: {error}"
            if size == 1:
                break
            log.info("native watching of %d directories failed (%s); trying %d", size, error, size // 2)
            size //= 2
        polled += native
        if polled:
            group = self.make_group(polled, True)
            group.start()
            groups.append(group)
            self.polled += len(polled)
            self._sysctl = self._sysctl or sysctl
            self._report(sysctl, cause)
        self._save()
        return groups

    def _save(self) -> None:
        """Note the counts in :data:`STATE_FILE` (removed when nothing is polled); best effort."""
        if self.state_dir is None:
            return
        path = self.state_dir / STATE_FILE
        with contextlib.suppress(OSError):
            if self.polled:
                from code_trajectory.core.atomic import replace_file

                replace_file(path, json.dumps({"pid": os.getpid(), "polled": self.polled, "total": self.total,
                                               "sysctl": self._sysctl, "poll_seconds": poll_seconds()}), fsync=False)
            elif path.exists():
                path.unlink()

    def _report(self, sysctl: str | None, cause: str) -> None:
        """Set :attr:`notice`; log it: a warning the first time, INFO later."""
        every = f"{poll_seconds():g} s"
        if sysctl is not None:
            limit = current_limit(sysctl)
            now = f" (now {limit:,})" if limit is not None else ""
            cause = (f"the kernel's inotify limit {sysctl}{now} was reached; raise it, e.g. "
                     f"`sudo sysctl {sysctl}=524288` (and in /etc/sysctl.d/ to keep it), then restart the server")
        self.notice = (f"{self.polled:,} of {self.total:,} recorded directories are polled every {every}, not "
                       f"watched natively: {cause}. A change there is recorded up to {every} later, and a "
                       "checkpoint scans the whole project")
        if self._warned or self.force_polling:  # one warning; none when polling was asked for
            log.info("%d of %d recorded directories are polled now (see the warning before)", self.polled,
                     self.total)
        else:
            self._warned = True
            log.warning(self.notice)
