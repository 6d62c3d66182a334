"""Reading the project's work tree: what is there, as git would store it.

:func:`scan` walks the whole tree, pruning directories the
:class:`~code_trajectory.recording.ignore.RecordingPolicy` excludes before descending into
them; :func:`probe` looks at one path for the watcher. Neither follows symlinks:
a symlink is recorded as a symlink (its target string), so loops and links that
point outside the project are harmless. FIFOs, sockets and devices are skipped.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.git.shadow import git_mode
from code_trajectory.recording.ignore import RecordingPolicy

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FileInfo:
    """A recordable file: path relative to the root and the ``lstat`` facts the stat cache compares."""

    rel: str
    mode: str
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int

    @classmethod
    def from_stat(cls, rel: str, st: os.stat_result) -> FileInfo | None:
        mode = git_mode(st)
        if mode is None:
            return None
        return cls(rel, mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def signature(self) -> tuple[str, int, int, int, int]:
        return (self.mode, self.size, self.mtime_ns, self.ctime_ns, self.ino)


@dataclass
class ScanResult:
    """Outcome of a full scan: recordable files by path, plus what was skipped and why."""

    files: dict[str, FileInfo]
    skipped: list[tuple[str, str]]
    directories: list[str]


def scan(root: Path, policy: RecordingPolicy, *, progress: Callable[[int], None] | None = None) -> ScanResult:
    """Walk the work tree under ``root`` and return every recordable file.

    Args:
        root: the project root.
        policy: decides what is recorded; excluded directories are never entered.
        progress: called now and then with the number of files found so far.

    Unreadable directories are skipped (logged, listed in ``skipped``).
    """
    files: dict[str, FileInfo] = {}
    skipped: list[tuple[str, str]] = []
    directories: list[str] = [""]
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = list(it)
        except OSError as exc:
            skipped.append((rel_dir, f"unreadable directory: {exc.strerror or exc}"))
            log.warning("skipping unreadable directory %s: %s", rel_dir or ".", exc)
            continue
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir:
                    if not policy.entry_excluded(rel_dir, name, True):
                        stack.append(rel)
                        directories.append(rel)
                    continue
                if policy.entry_excluded(rel_dir, name, False):
                    continue
                info = FileInfo.from_stat(rel, entry.stat(follow_symlinks=False))
            except OSError as exc:
                skipped.append((rel, f"cannot stat: {exc.strerror or exc}"))
                continue
            if info is None:
                skipped.append((rel, "not a regular file or symlink (FIFO, socket or device)"))
                continue
            files[rel] = info
            if progress is not None and len(files) % 5000 == 0:
                progress(len(files))
    return ScanResult(files, skipped, directories)


def probe(root: Path, rel: str) -> FileInfo | str | None:
    """Look at one path: a :class:`FileInfo`, ``"dir"`` for a real directory, or None when absent/unrecordable."""
    try:
        st = os.lstat(root / rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        log.debug("cannot stat %s: %s", rel, exc)
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return FileInfo.from_stat(rel, st)
