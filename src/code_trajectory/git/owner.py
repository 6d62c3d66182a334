"""Which project a shadow repository belongs to, and refusing a ``.trajectory`` symlink to another project's history.

A history lives in its project (``<project>/.trajectory``), or where a ``.trajectory`` symlink leads (kept on
another disk). Every opening that may write notes the project it serves in ``state/project``
(:func:`note_owner`: the project root's real path, rewritten when it differs). A ``.trajectory`` that is a
symlink is refused (:func:`check_belongs`) when the history it leads to is still another project's: the project
``state/project`` names (or, in a history made before that file, the directory holding the history as its own
``.trajectory``) is not this one, and its own ``.trajectory`` still leads to that same directory. Recording there
would write this project's snapshots into the other's history, and every answer would mix the two.

What stays accepted:

- the project reached by another path than the one noted (a bind mount, another spelling on a case-insensitive
  file system): the noted project is the same directory (device and inode) as this one;
- a project moved or renamed: a ``.trajectory`` inside it moves with it (only links are checked); a link to a
  history elsewhere names the old path, which no longer leads to that history (the path is gone, or its
  ``.trajectory`` is another), so the history is this project's, and the next recording notes the new path;
- a project copied with ``cp -a``: a ``.trajectory`` directory is copied with it, a history of the copy's own
  that starts from the original's (as a copied ``.git`` does), noted as the copy's at its first recording. A
  ``.trajectory`` *link* copied with it still leads to the original's history, which the original still uses:
  the copy is refused (the original goes on recording undisturbed) and the message says how to give the copy a
  history of its own, empty or copied from the original's.
"""

from __future__ import annotations

import os
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import UntrustedRepositoryError
from code_trajectory.core.paths import SHADOW_DIR_NAME

#: The project a history serves (its root's real path, in the file system's encoding), relative to the git dir.
OWNER_FILE = Path("state") / "project"
#: Longest owner file read, bytes (a path is at most ``PATH_MAX``, 4096 on Linux).
OWNER_BYTES = 8192


def note_owner(git_dir: Path) -> None:
    """Note in ``git_dir/state/project`` that the history serves the project ``git_dir`` is in (its parent's real
    path); nothing is written when the file says so already.

    Raises:
        OSError: the file cannot be written.
    """
    data = os.fsencode(os.path.realpath(git_dir.parent))
    if read_bounded(git_dir / OWNER_FILE, OWNER_BYTES) == data:  # never through a link nor waiting on a FIFO
        return
    (git_dir / OWNER_FILE.parent).mkdir(mode=0o700, exist_ok=True)
    replace_file(git_dir / OWNER_FILE, data)


def noted_owner(git_dir: Path) -> Path | None:
    """The project ``git_dir/state/project`` names; None when the file is missing, unreadable or not a path."""
    data = read_bounded(git_dir / OWNER_FILE, OWNER_BYTES)
    if not data or b"\0" in data:
        return None
    path = os.fsdecode(data)
    return Path(path) if os.path.isabs(path) else None


def other_owner(git_dir: Path) -> Path | None:
    """The other project whose history the ``.trajectory`` symlink ``git_dir`` leads to (see the module
    docstring); None when ``git_dir`` is not a symlink or the history is this project's or nobody else's."""
    if not os.path.islink(git_dir):
        return None
    target = Path(os.path.realpath(git_dir))
    owner = noted_owner(target)
    if owner is None:  # a history made before the owner file: its own directory's if it lives there in place
        if target.name != SHADOW_DIR_NAME or not _holds_more_than_histories(target.parent):
            return None
        owner = target.parent
    if _same_directory(owner, git_dir.parent):  # this project, by another path (a bind mount, another case)
        return None
    if os.path.realpath(owner / SHADOW_DIR_NAME) != str(target):  # moved, or it has another history now
        return None
    return owner


def _same_directory(one: Path, other: Path) -> bool:
    """True when ``one`` and ``other`` are the same directory: the same device and inode, so also when no path
    leads from one to the other through links (a bind mount, a case-insensitive file system's other spelling);
    their real paths compared when either cannot be looked at."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)


def check_belongs(git_dir: Path) -> None:
    """Refuse the ``.trajectory`` symlink ``git_dir`` when it leads to another project's history
    (:func:`other_owner`); nothing is written in either place.

    Raises:
        UntrustedRepositoryError: one line naming the link, the history, the project it belongs to, and what to do.
    """
    owner = other_owner(git_dir)
    if owner is None:
        return
    target = os.path.realpath(git_dir)
    raise UntrustedRepositoryError(
        f"{git_dir} is a symlink to {target}, the history of another project, {owner} (whose own .trajectory is "
        f"that directory), so code-trajectory will not use it: this project's snapshots would go into that "
        f"project's history and answers would mix the two. Give this project its own history: remove the link "
        f"(`rm '{git_dir}'`) and code-trajectory creates a new one at the next start, or start from a copy of that "
        f"history (`rm '{git_dir}' && cp -a '{target}' '{git_dir}'`)")


def _holds_more_than_histories(directory: Path) -> bool:
    """True when ``directory`` holds anything besides ``.trajectory`` and its moved-aside or temporary siblings:
    a project, not a directory made to keep a history in (``/mnt/big/proj/.trajectory``)."""
    try:
        with os.scandir(directory) as entries:
            return any(entry.name != SHADOW_DIR_NAME and not entry.name.startswith(SHADOW_DIR_NAME + ".")
                       for entry in entries)
    except OSError:
        return False
