"""The directories no watch group can take, polled by the watcher's snapshot loop.

``watchfiles`` hands paths to its Rust side as UTF-8 strings: a directory whose name is not UTF-8 (``os.fsdecode``
keeps its bytes as surrogates, ``d\\udce9p\\udcf4t``) makes a group fail as it starts, native and polling alike
(``'utf-8' codec can't encode character``). Given to the groups, one such directory (an archive unpacked with
Latin-1 names) killed a group at every start: the watcher rebuilt its watches every 2 s, each rebuild asked for a
rescan and restarted the debounce, so every snapshot waited for ``max_delay_seconds`` (30 s), and an edit that
``git checkout -- file`` undid within those 30 s was never recorded.

Worse, a native group stops at any event about such a name, and the kernel reports a directory's opening to the
watch of its parent: a scan, an ``ls`` or an IDE listing the directory stopped the group watching its parent. So
such directories, and those holding such a name, are kept out of the groups (:meth:`ListingPoll.take`) and the
snapshot loop compares their listings' ``lstat`` facts at each pass (:meth:`ListingPoll.poll`), as a polling group would every
:data:`~code_trajectory.recording.watchgroups.POLL_DELAY_MS`.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Collection

import watchfiles

log = logging.getLogger(__name__)

#: One entry's facts: mode, size, mtime, ctime, inode.
Facts = tuple[int, int, int, int, int]


def watchfiles_can_take(path: str) -> bool:
    """True when a watch group can be given ``path`` (its name encodes as UTF-8)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _listing(directory: str) -> dict[str, Facts] | None:
    """The ``lstat`` facts of each entry of ``directory``, or None when it cannot be listed (removed)."""
    facts: dict[str, Facts] = {}
    try:
        with os.scandir(directory) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                facts[entry.name] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    except OSError:
        return None
    return facts


class ListingPoll:
    """The directories :func:`watchfiles_can_take` refuses, with their listings as last seen (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listings: dict[str, dict[str, Facts]] = {}
        self._reported = False

    def __len__(self) -> int:
        with self._lock:
            return len(self._listings)

    def take(self, dirs: list[str], *, odd_names: Collection[str] = (), replace: bool = False) -> list[str]:
        """The directories of ``dirs`` a watch group can take: not those whose name is not UTF-8, nor those
        holding such a name (``odd_names``), which are polled from now on (``replace``: instead of those polled so
        far, whose last listings are kept)."""
        kept = [d for d in dirs if watchfiles_can_take(d) and d not in odd_names]
        taken = set(kept)
        if len(taken) < len(dirs):
            (log.info if self._reported else log.warning)(
                "%d directories named in, or holding names in, an encoding other than UTF-8 (%s) are polled every "
                "2 s, not watched natively: watchfiles takes UTF-8 paths only", len(dirs) - len(taken),
                next(d for d in dirs if d not in taken).encode("utf-8", "backslashreplace").decode())
            self._reported = True
        with self._lock:
            before = self._listings
            if replace:
                self._listings = {}
            for directory in dirs:
                if directory in taken:
                    continue
                if directory in before and replace:
                    self._listings[directory] = before[directory]
                elif directory not in self._listings:
                    listing = _listing(directory)
                    if listing is not None:
                        self._listings[directory] = listing
        return kept

    def poll(self) -> set[tuple[watchfiles.Change, str]]:
        """What changed in the polled directories since the last poll, as a watch group's batch would say it
        (a directory that can no longer be listed is dropped, its entries reported deleted)."""
        batch: set[tuple[watchfiles.Change, str]] = set()
        with self._lock:
            for directory, before in list(self._listings.items()):
                after = _listing(directory)
                if after is None:
                    del self._listings[directory]
                    after = {}
                elif after == before:
                    continue
                else:
                    self._listings[directory] = after
                for name in before.keys() | after.keys():
                    if name not in after:
                        batch.add((watchfiles.Change.deleted, f"{directory}/{name}"))
                    elif name not in before or stat.S_IFMT(before[name][0]) != stat.S_IFMT(after[name][0]):
                        batch.add((watchfiles.Change.added, f"{directory}/{name}"))
                    elif before[name] != after[name]:
                        batch.add((watchfiles.Change.modified, f"{directory}/{name}"))
        return batch
