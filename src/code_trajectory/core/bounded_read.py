"""Reading a file that may have been planted: regular files only, never through a link, never more than a bound.

Everything under ``.trajectory/`` is untrusted input (see :mod:`code_trajectory.git.untrusted`): a history unpacked
from a tarball or copied from elsewhere is owned by the user and passes the opening's checks, yet any of its small
state files (``state/recorder.json``, ``state/intent.json``, ...) may be a symlink to ``/dev/zero`` (a plain
``read_text`` then reads until memory runs out), a FIFO (the read blocks forever, and with it the server) or a
multi-gigabyte file. The same holds for pattern files in a cloned project (``.gitignore``, ``.gitattributes``).

:func:`read_bounded` opens with ``O_NOFOLLOW`` (a symlink is refused, as git refuses an in-tree ``.gitignore`` or
``.gitattributes`` that is a symlink since 2.32, gitignore(5)) and ``O_NONBLOCK`` (opening a FIFO does not wait for a
writer), checks with ``fstat`` that it holds a regular file of at most ``limit`` bytes, and reads at most
``limit + 1`` bytes (a file that grew meanwhile is refused too). Every failure is ``None``: callers treat the file
as missing, which for a state file means "not known", never a crash.

A cache that SQLite opens itself (``state/statcache.sqlite`` and its ``-wal`` and ``-shm``) cannot be opened this
way: :func:`drop_planted_cache` removes such a file first when it is anything but a regular file (SQLite follows a
symlink, and blocks reading a FIFO).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks read state files through here)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PATTERN_FILE_LIMIT", "STATE_FILE_LIMIT", "drop_planted_cache", "read_bounded", "read_json",
           "read_json_object"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

#: Bound for a JSON state file of ``.trajectory/state`` (bytes). The largest written is ``secret-files.json``,
#: a list of paths; 16 MiB holds ~100,000 long paths.
STATE_FILE_LIMIT = 16 * 1024 * 1024
#: Bound for a pattern file (``.gitignore``, ``.gitattributes``, ``info/exclude``), bytes: git refuses attribute
#: files over 100 MiB (``ATTR_MAX_FILE_SIZE``, git 2.39's attr.c), and the same bound serves ignore files.
PATTERN_FILE_LIMIT = 100 * 1024 * 1024


def read_bounded(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = False) -> bytes | None:
    """The bytes of the regular file ``path``, or None.

    Args:
        path: the file (absolute, or relative to the working directory).
        limit: the largest size accepted, bytes.
        follow_symlinks: follow a symlink at ``path`` (for the user's own files, such as a global excludes file
            kept in a dotfiles repository); what it leads to must still be a regular file within ``limit``.

    Returns:
        The file's bytes; None when it is missing or unreadable, a symlink (unless followed), not a regular file
        (a FIFO, a device, a directory, a socket), or larger than ``limit`` bytes. Never raises ``OSError``.
    """
    try:
        fd = os.open(path, _FLAGS if follow_symlinks else _FLAGS | _NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data if len(data) <= limit else None


#: Longest ``.git`` file read (``gitdir: <path>``: a linked worktree's or a submodule's).
GIT_FILE_BYTES = 4096


def git_file_target(directory: str | os.PathLike[str]) -> str | None:
    """The git directory ``directory/.git`` names when it is a file (``gitdir: <path>``, as git writes it for a
    linked worktree or a submodule; relative to ``directory`` when not absolute), read as :func:`read_bounded`
    reads (regular file only, never through a link, at most :data:`GIT_FILE_BYTES`); None when there is no such
    file or it names none."""
    data = read_bounded(os.path.join(directory, ".git"), GIT_FILE_BYTES)
    line = data.split(b"\n", 1)[0].decode("utf-8", "surrogateescape") if data is not None else ""
    return line[len("gitdir: "):].strip() if line.startswith("gitdir: ") else None


def read_json(path: str | os.PathLike[str], limit: int = STATE_FILE_LIMIT) -> object:
    """The JSON value held by the regular file ``path`` (UTF-8), or None.

    Args:
        path: the file; read with :func:`read_bounded` (no symlink, no FIFO, at most ``limit`` bytes).
        limit: the largest size accepted, bytes (default :data:`STATE_FILE_LIMIT`).

    Returns:
        The decoded value (untrusted: the caller validates its shape); None when the file cannot be read as
        :func:`read_bounded` says, is not UTF-8, or not JSON (too deeply nested included), or holds ``null``.
    """
    data = read_bounded(Path(path), limit)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def read_json_object(path: str | os.PathLike[str], limit: int = STATE_FILE_LIMIT) -> dict[str, Any] | None:
    """The JSON object held by the regular file ``path``, or None: :func:`read_json` when it gives a ``dict``."""
    value = read_json(path, limit)
    return value if isinstance(value, dict) else None


def drop_planted_cache(path: str | os.PathLike[str]) -> None:
    """Remove the cache file ``path`` and its SQLite companions (``-wal``, ``-shm``) where one is a symlink, a FIFO,
    a directory or anything else than a regular file; regular files and missing ones are left alone.

    Raises:
        OSError: such a file could not be removed (the caller's open then fails as it would have).
    """
    for suffix in ("", "-wal", "-shm"):
        name = f"{os.fspath(path)}{suffix}"
        try:
            st = os.lstat(name)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode):
            continue
        if stat.S_ISDIR(st.st_mode):
            os.rmdir(name)  # only an empty one: a planted tree is the user's to look at
        else:
            os.unlink(name)
