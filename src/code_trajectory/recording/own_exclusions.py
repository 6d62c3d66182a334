"""Our own exclusions, which no ignore rule and no tracked status changes: the names a scan never enters and the
directories that declare themselves generated (see :mod:`.ignore`, precedence 1). Plain functions of names and
paths, shared by the recording policy and the walk.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection

from code_trajectory.core.atomic import TEMP_PREFIX as ATOMIC_TEMP_PREFIX
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.paths import SHADOW_DIR_NAME
from code_trajectory.project import is_linked_worktree
from code_trajectory.recording.gitignore import Rules

__all__ = ["CACHEDIR_SIGNATURE", "GENERATED_MARKERS", "generated_directory", "linked_worktree", "names_screen",
           "never_entered"]

#: Files by which a directory declares itself generated, so it is never recorded (nor watched):
#: ``pyvenv.cfg`` marks a Python virtual environment (PEP 405; ``python -m venv`` writes it first), and
#: ``CACHEDIR.TAG`` a cache directory (the Cache Directory Tagging Specification, https://bford.info/cachedir/,
#: used by cargo, pip, pytest, borg...), recognised by its signature line.
GENERATED_MARKERS = ("pyvenv.cfg", "CACHEDIR.TAG")
CACHEDIR_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"


def never_entered(name: str) -> bool:
    """True for a directory name no rule can ever let a scan enter: ``.git`` and the shadow repository (with its
    damaged copies and one being made). A scan need not watch such a directory's mtime (:mod:`.worktree`)."""
    return name == ".git" or name == SHADOW_DIR_NAME or name.startswith(
        (SHADOW_DIR_NAME + ".corrupt-", SHADOW_DIR_NAME + ".tmp-"))


def names_screen(deny: Rules) -> re.Pattern[str] | None:
    """A regular expression that finds, in file names joined by newlines (none holding one), every name our own
    exclusions could skip for a tracked file (:meth:`~.ignore.RecordingPolicy._builtin_reason`), and more: ``.git``, the
    shadow repository's names, code-trajectory's temporary files (``.ct-...``) and every name a deny pattern could
    decide (:attr:`~.gitignore.Rules.file_names`), ignoring case as the deny list does. None when the deny patterns
    are beyond that translation."""
    if deny.file_names is None:
        return None
    builtin = "|".join((re.escape(".git"), re.escape(SHADOW_DIR_NAME) + ".*", re.escape(ATOMIC_TEMP_PREFIX) + ".*"))
    return re.compile(f"^(?:{builtin}|{deny.file_names.pattern})$", re.MULTILINE | re.IGNORECASE)  # a wider screen


def generated_directory(path: str | os.PathLike[str], listed: Collection[str] | None = None) -> str | None:
    """Why the directory ``path`` is generated (a virtual environment, a tagged cache), or None.

    Costs one ``stat`` per marker (and one short read when ``CACHEDIR.TAG`` exists): a scan asks it of every
    directory, so the paths are joined as strings. ``listed``: the names in the directory as the caller has just read
    them (a walk that lists a directory before judging it): a marker not among them is not looked for.
    """
    base = os.fspath(path)
    if listed is not None and not any(marker in listed for marker in GENERATED_MARKERS):
        return None
    if os.path.isfile(f"{base}/pyvenv.cfg"):
        return "a Python virtual environment (it holds pyvenv.cfg): generated, never recorded"
    tag = read_bounded(f"{base}/CACHEDIR.TAG", 1 << 16, follow_symlinks=True)  # a FIFO there would block the walk
    if tag is not None and tag.startswith(CACHEDIR_SIGNATURE):
        return "a cache directory (it holds a CACHEDIR.TAG): generated, never recorded"
    return None


def linked_worktree(path: str | os.PathLike[str], listed: Collection[str] | None = None) -> str | None:
    """Why the directory ``path`` (below the project root) is never recorded when it is a linked worktree's top
    (:func:`code_trajectory.project.is_linked_worktree`: another checkout of the project, recorded as a project of
    its own), else None. ``listed``: as for :func:`generated_directory` (no ``.git`` among them: not read)."""
    if listed is not None and ".git" not in listed:
        return None
    if is_linked_worktree(path):
        return ("a linked worktree (git worktree add, Claude Code's .claude/worktrees/): another checkout of the "
                "project, recorded as a project of its own")
    return None
