"""The stamp the vetting of a shadow repository leaves (:func:`code_trajectory.git.untrusted.vet`): what its config file
and the project's git index were when it was last checked, read without running git.

The hooks' fast paths (an intent, an edit's hand-over) write into ``.trajectory/state`` without opening the shadow
repository: :func:`still_vetted` tells them whether the last vetting still holds (neither file changed since), so they
never write into a ``.trajectory`` no vetting accepted, such as one the project's git tracks (it came with a clone: the
user's prompt, written there, went into the next ``git add -A``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from code_trajectory.core.bounded_read import git_file_target, read_bounded

#: Where the stamp of the last check is kept, relative to the git dir.
STAMP_FILE = Path("state") / "config-checked"
#: Longest stamp file read (:data:`STAMP_FILE`; one written is under 400 bytes).
STAMP_BYTES = 4096


def file_identity(path: Path) -> str:
    """``path``'s identity and state: inode, ctime, mtime and size (``""`` if missing). A copied or unpacked file gets
    a new inode and ctime, which no user can set."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_ino} {st.st_ctime_ns} {st.st_mtime_ns} {st.st_size}"


def index_stamp(root: Path) -> str:
    """The identity and state (path, inode, ctime, mtime, size) of the git index of the work tree ``root`` is in,
    found as git discovers it, without running git: the nearest ``.git`` upwards, a directory or a file naming the
    git directory (``gitdir: ...``, a linked worktree's or a submodule's). ``"none"`` when there is none, ``"?"``
    when it cannot be told (then every opening checks). Any ``git add``, commit, pull or checkout rewrites the
    index, and with it this stamp."""
    for directory in (root, *root.parents):
        dot_git = directory / ".git"
        try:
            st = os.lstat(dot_git)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) or (stat.S_ISLNK(st.st_mode) and os.path.isdir(dot_git)):
            index = dot_git / "index"
        else:  # read bounded, never through a link, never waiting on a FIFO
            target = git_file_target(directory)
            if target is None:
                return "?"
            index = directory / target / "index"
        try:
            st = os.stat(index)
        except OSError:
            return f"{index} none\n"
        return f"{index} {st.st_ino} {st.st_ctime_ns} {st.st_mtime_ns} {st.st_size}\n"
    return "none\n"


def read_stamp(path: Path) -> str | None:
    """The stamp file ``path`` as text, or None (missing, too large, not a regular file: never through a link, never
    waiting on a FIFO)."""
    data = read_bounded(path, STAMP_BYTES)
    try:
        return data.decode("utf-8", "surrogateescape") if data is not None else None
    except ValueError:
        return None


def still_vetted(git_dir: Path) -> bool:
    """Whether the shadow repository ``git_dir`` (``<project>/.trajectory``) was vetted with its config file and the
    project's git index as they are now: its stamp names both (the config's identity first, then the keys wanted)."""
    identity = file_identity(git_dir / "config")
    index = index_stamp(git_dir.parent)
    found = read_stamp(git_dir / STAMP_FILE)
    if not identity or index == "?" or found is None:
        return False
    first, newline, rest = found.partition("\n")
    return bool(newline) and first.startswith(identity + " ") and rest == index
