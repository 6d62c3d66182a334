"""A live ``git stash`` is named by its stash entry, also when git wrote its reset into the HEAD reflog a second
later (a loaded machine: ``tests/recording/test_git_operations.py`` recorded ``[RESET] moving to HEAD`` for a
stash whose two entries were read together, the reset's second after the stash's).

The stash is made as ``git stash`` makes it (git's builtin/stash.c: ``stash create``, ``stash store``, then a
hard reset to HEAD), with the wall clock's second turning between the store and the reset.
"""

from __future__ import annotations

import time
from pathlib import Path

from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import STASH_RESET_SECONDS, ReflogCursor, read_reflog
from support import git, git_repo, wait_for, write


def stash_store(root: Path, message: str) -> int:
    """The first half of ``git stash``: the stash commit and its reflog entry; returns the entry's time (epoch s)."""
    oid = git(root, "stash", "create").strip()
    git(root, "stash", "store", "-m", message, oid)
    entries, _ = read_reflog(root / ".git" / "logs" / "refs" / "stash")
    assert entries[-1].message == message
    return entries[-1].timestamp


def reset_after(root: Path, seconds: int) -> int:
    """The second half: ``reset --hard`` to HEAD once the wall clock is ``seconds`` past the stash's second;
    returns the HEAD reflog entry's time.

    git takes its time from ``time(2)``, which glibc reads from the kernel's coarse clock: it can be a few
    milliseconds behind Python's ``time.time()``, so the wait goes 50 ms past the second (CI once saw the reset
    written in the stash's second + 2 right after Python's clock turned to + 3)."""
    stashed = read_reflog(root / ".git" / "logs" / "refs" / "stash")[0][-1].timestamp
    wait_for(lambda: time.time() >= stashed + seconds + 0.05, timeout=seconds + 5, step=0.02)
    git(root, "reset", "-q", "--hard")
    entry = read_reflog(root / ".git" / "logs" / "HEAD")[0][-1]
    assert entry.message == "reset: moving to HEAD"
    return entry.timestamp


def test_a_stash_whose_reset_lands_in_the_next_second_is_the_stash(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "p", {"calc.py": "one\n"}, branch="main", commit="calc")
    cursor = ReflogCursor(ProjectRepo.discover(root))
    write(root, "calc.py", "one\ntwo\n")
    stashed = stash_store(root, "WIP on main: scratch")
    reset = reset_after(root, 1)
    assert reset > stashed  # the case: two seconds, both entries read by one call
    operation = cursor.new_operation()
    assert operation is not None
    assert (operation.kind, operation.label) == ("stash", "[STASH] WIP on main: scratch")
    assert (root / "calc.py").read_text() == "one\n"


def test_a_reset_to_head_long_after_a_stash_is_a_reset(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "p", {"calc.py": "one\n"}, branch="main", commit="calc")
    cursor = ReflogCursor(ProjectRepo.discover(root))
    write(root, "calc.py", "one\ntwo\n")
    stashed = stash_store(root, "WIP on main: scratch")
    reset = reset_after(root, STASH_RESET_SECONDS + 1)
    assert reset - stashed > STASH_RESET_SECONDS  # the case: too late to be the stash's, the user's own
    operation = cursor.new_operation()
    assert operation is not None
    assert (operation.kind, operation.label) == ("reset", "[RESET] moving to HEAD")

