"""Temporary files a restore writes beside work-tree files, and a killed restore's leftovers.

A restore writes each file to a temporary file in the same directory and renames it over the target. The
temporary name is short and fixed in length whatever the target's name (``.ct-`` then 9 to 16 lower-case hex
digits: a token of the restore and a counter), so it never goes past a file system's 255-byte name limit.

Before its first write a restore leaves a **journal** in the shadow repository (``restore-journal/<token>.json``:
its process id, the token, the directories it writes into, the safety snapshot and the source), removed when
it ends. When a process opens the project and finds the journal of a process that no longer runs (killed), it
removes that restore's temporary files (exact names: its token, in the journal's directories, never following a
symlink) and the journal, and says which safety snapshot undoes the half-done restore. The recorder never
records a name of this form (:func:`is_temp_name`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object
from code_trajectory.git.create import pid_running

log = logging.getLogger(__name__)

PREFIX = ".ct-"
JOURNAL_DIR = "restore-journal"
_TEMP_NAME = re.compile(r"\.ct-[0-9a-f]{9,16}")
_TOKEN = re.compile(r"[0-9a-f]{8}")
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def is_temp_name(name: str) -> bool:
    """True when the file name ``name`` (one component) has the form of a restore's temporary file."""
    return _TEMP_NAME.fullmatch(name) is not None


@dataclass
class Journal:
    """One restore's record of where it writes (see the module docstring).

    Attributes:
        token: 8 hex digits shared by the restore's temporary names.
        dirs: directories written into, relative to the project root (``""`` for the root).
        safety_snapshot: the commit holding the state before the restore; source: the commit restored from.
        pid: the restoring process.
    """

    token: str
    dirs: list[str]
    safety_snapshot: str | None
    source: str
    pid: int
    _counter: itertools.count[int] = field(default_factory=itertools.count, repr=False, compare=False)

    def next_index(self) -> int:
        """A number not given before in this restore (for :meth:`temp_name`)."""
        return next(self._counter)

    def temp_name(self, index: int) -> str:
        """The temporary name of the restore's ``index``-th file (at most 20 bytes below 2**32 files)."""
        return f"{PREFIX}{self.token}{index:x}"

    def owns(self, name: str) -> bool:
        return is_temp_name(name) and name.startswith(PREFIX + self.token)


def begin(git_dir: Path, dirs: set[str], safety_snapshot: str | None, source: str) -> Journal:
    """Write the journal of a restore about to write into ``dirs`` (relative to the project root), atomically.

    Raises:
        OSError: it cannot be written (the restore must not start).
    """
    journal = Journal(secrets.token_hex(4), sorted(dirs), safety_snapshot, source, os.getpid())
    folder = git_dir / JOURNAL_DIR
    folder.mkdir(exist_ok=True)
    replace_file(folder / f"{journal.token}.json",
                 json.dumps({k: v for k, v in journal.__dict__.items() if not k.startswith("_")}))
    return journal


def end(git_dir: Path, journal: Journal) -> None:
    """Remove the journal of a restore that finished (or was put back)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(git_dir / JOURNAL_DIR / f"{journal.token}.json")


def _read(path: Path) -> Journal | None:
    try:
        raw = read_json_object(path)
        if raw is None:
            return None
        journal = Journal(str(raw["token"]), [str(d) for d in raw["dirs"]], raw.get("safety_snapshot"),
                          str(raw.get("source", "")), int(raw["pid"]))
    except (OSError, ValueError, KeyError, TypeError, OverflowError):  # OverflowError: int() of Infinity
        return None
    safety = journal.safety_snapshot  # named in the notice as the snapshot that undoes the restore: a commit id
    if safety is not None and not (isinstance(safety, str) and _COMMIT_ID.fullmatch(safety)):
        return None
    return journal if _TOKEN.fullmatch(journal.token) and journal.pid > 0 else None


def _open_dir(root: Path, rel: str) -> int | None:
    """A descriptor of the directory ``rel`` under ``root``, reached without following any symlink; None when it
    is gone, a symlink or not a directory."""
    fd = os.open(root, _DIR_FLAGS)
    for part in [p for p in rel.split("/") if p]:
        if part in (".", ".."):
            os.close(fd)
            return None
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = child
    return fd


def clear_leftovers(root: Path, git_dir: Path) -> list[str]:
    """Remove the temporary files and journals of restores whose process is gone; return notices for the user.

    Args:
        root: the project root; git_dir: its shadow repository.

    Returns:
        One notice per interrupted restore, naming the safety snapshot that undoes it. Never raises: what cannot
        be removed is logged and left for the next open.
    """
    folder = git_dir / JOURNAL_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    notices = []
    for name in names:
        path = folder / name
        if name.endswith(".tmp"):  # a journal being written when its process died (a minute is plenty to write it)
            try:
                if time.time() - path.stat().st_mtime > 60:
                    _unlink(path)
            except OSError:
                pass
            continue
        journal = _read(path)
        if journal is None:
            log.warning("ignoring an unreadable restore journal %s", path)
            continue
        if pid_running(journal.pid):
            continue
        removed = 0
        for rel in journal.dirs:
            try:
                fd = _open_dir(root, rel)
            except OSError:
                fd = None
            if fd is None:
                continue
            try:
                for entry in os.listdir(fd):
                    if journal.owns(entry) and not stat.S_ISDIR(os.lstat(entry, dir_fd=fd).st_mode):
                        os.unlink(entry, dir_fd=fd)
                        removed += 1
            except OSError as exc:
                log.warning("cannot remove the temporary files of an interrupted restore in %s: %s", rel or ".", exc)
            finally:
                os.close(fd)
        _unlink(path)
        notice = _notice(journal, f"{removed} temporary file(s) it left were removed")
        log.warning("%s", notice)
        notices.append(notice)
    return notices


def interrupted(git_dir: Path) -> list[str]:
    """What :func:`clear_leftovers` would say of the restores whose process is gone, for an opening that changes
    nothing (a read-only command): one notice per journal, naming the safety snapshot that undoes it; nothing is
    removed. Never raises."""
    try:
        names = sorted(n for n in os.listdir(git_dir / JOURNAL_DIR) if not n.endswith(".tmp"))
    except OSError:
        return []
    journals = [j for j in (_read(git_dir / JOURNAL_DIR / n) for n in names) if j is not None]
    return [_notice(j, "its temporary files (`.ct-*`) go at the next command that records (`checkpoint`, "
                       "`restore`, `watch`, the server)") for j in journals if not pid_running(j.pid)]


def _notice(journal: Journal, leftovers: str) -> str:
    undo = (f"restore snapshot {journal.safety_snapshot[:12]} (the safety snapshot taken before it) to undo it"
            if journal.safety_snapshot else "nothing was recorded before it")
    return (f"a restore from {journal.source[:12]} was interrupted (process {journal.pid} ended); some files "
            f"may be restored and others not: {undo}; {leftovers}")


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
