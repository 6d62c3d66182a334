"""The watcher's watch groups over a project's recorded directories: setting them, replacing them, growing them.

:class:`WatchSetMixin` keeps :class:`~code_trajectory.recording.watcher.Watcher`'s watch groups
(:class:`~code_trajectory.recording.watchgroups.WatchGroup`) over every directory the recording policy records, plus
the project's git directories for ``HEAD`` and the reflogs: natively as far as the kernel allows, the rest polled
(:mod:`.watchlimit`). A rebuild replaces every group without a gap (the new groups watch before the old ones stop,
after handing over every event before a sync token); a directory created later gets a group of its own, until
:data:`MAX_EXTRA_GROUPS` of them are merged by a rebuild; a deleted directory is forgotten, so that one made again
under its name is watched again. What the groups' events mean is the watcher's (its ``_on_batch``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Protocol

import watchfiles

from code_trajectory.recording.listingpoll import ListingPoll
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.walk_policy import SubtreePolicy
from code_trajectory.recording.watchgroups import SyncPoint, WatchGroup, recorded_directories
from code_trajectory.recording.watchlimit import NativeWatches, stop_groups

#: Extra watch groups (directories created since the last full rebuild) before a rebuild merges them.
MAX_EXTRA_GROUPS = 8
#: Longest wait of :meth:`Watcher.vouch` for the watch groups to hand over what the OS delivered, seconds.
SYNC_TIMEOUT = 2.0


class _Watcher(Protocol):
    """What :class:`WatchSetMixin` uses of the :class:`~code_trajectory.recording.watcher.Watcher` it is mixed into
    (the type of ``self`` in its methods)."""

    root: Path
    recorder: Recorder
    last_error: str | None
    sync: SyncPoint
    _native: NativeWatches
    _listings: ListingPoll
    _polling_notice: str | None
    _groups: list[WatchGroup]
    _retiring: list[WatchGroup]
    _groups_lock: threading.Lock
    _watched: set[str]
    _git_watch_dirs: list[str]
    _stop: threading.Event

    @property
    def polled_dirs(self) -> int: ...

    def _touch(self, at: float | None = None) -> None: ...

    def _filter(self, change: watchfiles.Change, path: str) -> bool: ...

    def _on_batch(self, batch: set[tuple[watchfiles.Change, str]]) -> None: ...

    def _start_groups(self, dirs: list[str], release: Callable[[], bool] | None = None, *,
                      odd_names: Collection[str] = (), replace: bool = False) -> list[WatchGroup]: ...

    def _release_replaced(self, released: list[WatchGroup]) -> bool: ...

    def _rebuild(self, *, rescan: bool = True, adding: Iterable[str] = ()) -> None: ...

    def _remove_token(self, groups: list[WatchGroup], token: str) -> None: ...


class WatchSetMixin:
    """The watch groups of :class:`~code_trajectory.recording.watcher.Watcher` (see the module docstring; the
    watcher's recorder, groups, their lock and sync point are used: see :class:`_Watcher`)."""

    # the watcher's groups and what they watch, which its other parts read too (declared here, or mypy takes the
    # first value assigned in these methods for their type)
    last_error: str | None
    _polling_notice: str | None
    _groups: list[WatchGroup]
    _retiring: list[WatchGroup]
    _watched: set[str]

    def _hand_over(self: _Watcher, timeout: float) -> bool:
        """Wait until the native watch groups handed over every event delivered before now; False on timeout."""
        with self._groups_lock:
            groups = [g for g in self._groups if not g.polling]
        if not groups or not self.sync.available:
            return False
        return self.sync.sync(groups, timeout)

    @property
    def polled_dirs(self: _Watcher) -> int:
        """Number of directories polled rather than watched natively (by a polling group or the snapshot loop)."""
        return self._native.polled + len(self._listings)

    @property
    def polling(self: _Watcher) -> bool:
        """True when some directories are polled rather than watched natively."""
        return self.polled_dirs > 0

    @property
    def watched_dirs(self: _Watcher) -> int:
        """Number of directories watched (natively or by polling)."""
        return len(self._watched)

    @property
    def live_groups(self: _Watcher) -> int:
        """Number of watch groups whose thread is running (each watches a set of directories)."""
        with self._groups_lock:
            return sum(1 for group in self._groups if group.thread.is_alive())

    def _start_groups(self: _Watcher, dirs: list[str], release: Callable[[], bool] | None = None, *,
                      odd_names: Collection[str] = (), replace: bool = False) -> list[WatchGroup]:
        """Watch ``dirs``: natively as far as the kernel allows, the rest by polling (see :mod:`.watchlimit`);
        those no group can take (named, or holding names, that are not UTF-8: ``odd_names``) by the snapshot loop
        (:mod:`.listingpoll`; ``replace``: instead of those it polled so far); return once the watches are set."""
        groups = self._native.start(self._listings.take(dirs, odd_names=odd_names, replace=replace), release=release)
        if self.last_error is None or self.last_error == self._polling_notice:
            self.last_error = self._native.notice
        self._polling_notice = self._native.notice
        return groups

    def _release_replaced(self: _Watcher, released: list[WatchGroup]) -> bool:
        """Stop the native groups a rebuild replaces (their watches count against the kernel's limit until then;
        a rescan covers the gap); add them to ``released``; False when there were none."""
        with self._groups_lock:
            live = [g for g in self._groups + self._retiring if not g.polling and not g.stop.is_set()]
        released += live
        return stop_groups(live)

    def _group(self: _Watcher, dirs: list[str], *, polling: bool) -> WatchGroup:
        return WatchGroup(dirs, on_batch=self._on_batch, watch_filter=self._filter, polling=polling, sync=self.sync)

    def _rebuild(self: _Watcher, *, rescan: bool = True, adding: Iterable[str] = ()) -> None:
        """Replace every watch group by one over all recorded directories.

        The new groups watch before the old ones stop: a native old group stops once it has handed over every
        event before a token posted after the new watches began, so nothing falls between them. A rescan covers
        the gap when ``rescan`` (a group died: its events are lost), when a polled group is replaced, or when the
        walk finds a directory that was not watched (other than the new directories ``adding``).
        """
        odd_names: set[str] = set()
        dirs = recorded_directories(self.root, self.recorder.policy, odd_names)
        # HEAD and reflogs (nothing else there passes the filter) right after the root: kept native when halving
        dirs[1:1] = [d for d in self._git_watch_dirs if d not in dirs]
        if not self.sync.available:
            self.sync.prepare()
        with self._groups_lock:
            unwatched = bool(self._groups) and not self._watched.union(adding).issuperset(dirs)
        self._native.reset()
        released: list[WatchGroup] = []
        groups = self._start_groups(dirs, release=lambda: self._release_replaced(released), odd_names=odd_names,
                                    replace=True)
        rescan = rescan or bool(released)
        with self._groups_lock:
            old, self._groups = self._groups, groups
            self._watched = set(dirs)
        token = self.sync.post() if any(not g.polling for g in old) else None
        for group in old:
            if group.polling or token is None:
                group.stop.set()
                rescan = True
            else:
                group.retire(token)
                with self._groups_lock:
                    self._retiring.append(group)
        if token is not None:
            threading.Thread(target=self._remove_token, args=(old, token), name="trajectory-retire",
                             daemon=True).start()
        if old and (rescan or unwatched):
            self.recorder.note_changes((), rescan=True)  # changes between the old and new watches
            self._touch()

    def _remove_token(self: _Watcher, groups: list[WatchGroup], token: str) -> None:
        if not self.sync.wait([g for g in groups if not g.polling], token, SYNC_TIMEOUT * 5):
            for group in groups:
                group.stop.set()  # not seen in time (the sync directory was removed?): stop anyway
        self.sync.remove([token])
        with self._groups_lock:
            self._retiring = [g for g in self._retiring if g not in groups]

    def _watch_new_directories(self: _Watcher, paths: list[str]) -> None:
        """Add watches for directories created since the last rebuild (and their subdirectories).

        The new trees are walked again once their watches are in place: a subdirectory created between the
        walk and the watch produced no event that any watch saw (later ones are seen by the new watches).
        """
        tops: list[tuple[Path, str]] = []
        for path in paths:
            if path in self._watched or not os.path.isdir(path) or os.path.islink(path):
                continue
            rel = Path(path).relative_to(self.root).as_posix()
            if self.recorder.policy.is_recorded(rel, is_dir=True):
                tops.append((Path(path), rel))
        for _ in range(3):  # a walk before the watches, one after; a third only if the tree kept growing
            if self._stop.is_set():
                return
            fresh: dict[str, None] = {}
            odd_names: set[str] = set()
            for top, rel in tops:
                fresh.update((d, None) for d in recorded_directories(top, SubtreePolicy(self.recorder.policy, rel),
                                                                     odd_names)
                             if d not in self._watched)
            if not fresh:
                return
            with self._groups_lock:
                many = len(self._groups) >= MAX_EXTRA_GROUPS
            if many:
                self._rebuild(rescan=False, adding=list(fresh))
                return
            groups = self._start_groups(list(fresh), odd_names=odd_names)
            with self._groups_lock:
                self._groups += groups
                self._watched.update(fresh)

    def _forget_directories(self: _Watcher, paths: list[str]) -> None:
        """Drop deleted directories (and everything under them) from the watched set, so that a directory
        created again under the same name gets a new watch (the kernel removed the old one)."""
        with self._groups_lock:
            gone = {p for p in paths if p in self._watched}
            if gone:
                prefixes = tuple(p + "/" for p in gone)
                self._watched = {d for d in self._watched if d not in gone and not d.startswith(prefixes)}
