"""Creating the shadow repository atomically, and clearing what a killed creation left behind.

A new ``.trajectory`` is built complete (``git init``, config, ``info/`` files, ``state/``) in a
temporary sibling directory, ``<project>/.trajectory.tmp-<pid>-<random hex>``, and renamed into place
with one ``rename(2)``. A kill during the creation therefore leaves either no ``.trajectory`` at all or a
complete one, never a half repository; what it leaves is the temporary directory, which the next start
removes (:func:`clear_stale_temp_dirs`) and which is never recorded meanwhile (the recording policy
excludes ``.trajectory.tmp-*``, and its own ``.gitignore`` with ``*`` hides it from the project's git).

Two processes creating the same repository at once both build a temporary directory; ``rename(2)`` of a
directory onto a non-empty directory fails (``ENOTEMPTY``/``EEXIST``, POSIX ``rename``), so the second
rename loses, and the loser drops its copy and uses the winner's repository.

A ``.trajectory`` that is a symlink (to keep the history on another disk) is initialised where it points.
A ``.trajectory`` that exists but is incomplete (an older release killed in the middle of its in-place
``git init``, or a ``HEAD`` deleted by hand) is repaired in place: ``git init`` in an existing repository
"will not overwrite things that are already there" (git-init(1)), so nothing recorded is lost; a damaged
history is then found by :func:`code_trajectory.git.health.verify` and moved aside as before.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import secrets
import shutil
import time
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import StorageError
from code_trajectory.core.paths import SHADOW_DIR_NAME
from code_trajectory.git import owner, untrusted
from code_trajectory.git.gitcmd import Git
from code_trajectory.git.shadow_config import DIFF_DRIVERS

log = logging.getLogger(__name__)

#: Infix of the temporary directory a new shadow repository is built in: ``.trajectory.tmp-<pid>-<hex>``.
TEMP_INFIX = ".tmp-"
#: A temporary directory older than this is stale even if a process with its pid runs (the pid was reused),
#: seconds. Building a repository takes well under a second.
STALE_TEMP_DIR_SECONDS = 600.0
#: How often a creation is tried when another process removed our temporary directory under us.
CREATE_ATTEMPTS = 3

_TEMP_RE = re.compile(r"^(?P<pid>\d+)-[0-9a-f]+$")


def temp_dir_name(git_dir_name: str = SHADOW_DIR_NAME) -> str:
    """The name of a new temporary directory for ``git_dir_name``: ``<name>.tmp-<pid>-<8 hex digits>``."""
    return f"{git_dir_name}{TEMP_INFIX}{os.getpid()}-{secrets.token_hex(4)}"


def is_temp_dir_name(name: str, git_dir_name: str = SHADOW_DIR_NAME) -> bool:
    """True when ``name`` is a temporary directory of :func:`temp_dir_name` (whoever created it)."""
    prefix = git_dir_name + TEMP_INFIX
    return name.startswith(prefix) and _TEMP_RE.match(name[len(prefix):]) is not None


#: The largest process id there can be (``pid_t`` is a signed 32-bit integer; Linux's ``pid_max`` is at most 2**22).
_MAX_PID = 2 ** 31 - 1


def pid_running(pid: int) -> bool:
    """True when a process with this pid exists on this machine (``kill(pid, 0)``; EPERM means it exists).

    On Windows, where ``os.kill(pid, 0)`` would send CTRL_C_EVENT, it cannot tell and answers True (callers
    then rely on the age alone).
    """
    if pid <= 0 or pid > _MAX_PID:  # a number read from a name or a file: os.kill would raise OverflowError
        return False
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True  # cannot tell: assume it runs
    return True


def clear_stale_temp_dirs(git_dir: Path, *, older_than: float = STALE_TEMP_DIR_SECONDS) -> list[Path]:
    """Remove temporary directories of killed creations next to ``git_dir``; return the removed ones.

    A temporary directory (:func:`is_temp_dir_name`) is stale when the process whose pid its name holds
    is not running, or when it is older than ``older_than`` seconds (mtime; the pid was then reused).
    One another process is building right now is kept.

    Args:
        git_dir: the shadow repository's path (``<project>/.trajectory``; it need not exist).
        older_than: age past which a temporary directory is stale whatever its pid, seconds.
    """
    removed: list[Path] = []
    try:
        names = os.listdir(git_dir.parent)
    except OSError:
        return removed
    now = time.time()
    for name in names:
        if not is_temp_dir_name(name, git_dir.name):
            continue
        path = git_dir.parent / name
        match = _TEMP_RE.match(name[len(git_dir.name + TEMP_INFIX):])
        if match is None:  # is_temp_dir_name matched it: not reached
            continue
        pid = int(match.group("pid"))
        try:
            age = now - path.lstat().st_mtime
        except OSError:
            continue
        if pid_running(pid) and age < older_than:
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            log.warning("removed %s, left by a creation of the shadow repository that was killed", path)
            removed.append(path)
    return removed


def configure(git_dir: Path) -> None:
    """Write what a shadow repository needs besides ``git init`` (idempotent; unchanged files are not rewritten).

    The repository is vetted first and its config reduced to the keys of
    :data:`~code_trajectory.git.shadow_config.SHADOW_REPO_CONFIG` (:func:`code_trajectory.git.untrusted.vet`);
    then mode 0700 on the directory, ``.gitignore`` (``*``), ``info/exclude``, ``info/attributes``,
    the ``state/`` directory and the project it serves (:func:`code_trajectory.git.owner.note_owner`).

    Raises:
        UntrustedRepositoryError: the repository is another user's, tracked by the project, or linked elsewhere.
        OSError: a file cannot be written.
        LockContentionError: another process held the config's lock.
    """
    untrusted.vet(git_dir)
    os.chmod(git_dir, 0o700)
    hide_from_project_git(git_dir)
    info = git_dir / "info"
    info.mkdir(exist_ok=True)
    _write_if_changed(info / "exclude", "# code-trajectory: the shadow repository has no index; "
                                        "a stray `git status` here lists nothing\n*\n")
    lines = ["# code-trajectory: git's built-in diff drivers label hunks with the enclosing function"]
    for driver, patterns in DIFF_DRIVERS.items():
        lines += [f"{p} diff={driver}" for p in patterns]
    _write_if_changed(info / "attributes", "\n".join(lines) + "\n")
    (git_dir / "state").mkdir(mode=0o700, exist_ok=True)
    owner.note_owner(git_dir)


def _init(git_dir: Path) -> None:
    Git(git_dir, None).run(["init", "--quiet", "--bare", "--template=", "--initial-branch=shadow/-init-"])


def _complete(git_dir: Path) -> bool:
    return (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir()


def _create_once(git_dir: Path) -> bool | None:
    """One attempt: True created, False another process won the race, None our temporary dir vanished."""
    tmp = git_dir.with_name(temp_dir_name(git_dir.name))
    tmp.mkdir(mode=0o700)
    try:
        hide_from_project_git(tmp)  # first: the project's git never lists the directory being built
        _init(tmp)
        configure(tmp)
        try:
            os.rename(tmp, git_dir)  # replaces an empty directory, fails on a non-empty one
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST) and _complete(git_dir):
                log.info("another process created %s first; using its repository", git_dir)
                return False
            if exc.errno == errno.ENOENT and not tmp.exists():
                return None  # removed as stale by a process that could not see ours (another pid namespace)
            raise
        return True
    except FileNotFoundError:
        if tmp.exists():
            raise
        return None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def ensure_repository(git_dir: Path) -> bool:
    """Make ``git_dir`` a complete shadow repository: created atomically when missing, else repaired and
    its config and ``info/`` files rewritten where they differ.

    Args:
        git_dir: ``<project>/.trajectory``.

    Returns:
        True when this call created the repository; False when it existed, was repaired in place, or
        another process created it at the same time (its repository is then used).

    Raises:
        StorageError: ``git_dir`` exists and is not a directory, or it cannot be written.
        LockContentionError: a ``config.lock`` stayed held (another process writes the config).
        GitError: ``git init`` or ``git config`` failed.
        UntrustedRepositoryError: an incomplete ``git_dir`` to repair is another user's, tracked by the project's
            git, or holds a symlink or a special file (refused before anything is written).
    """
    if git_dir.exists() and not git_dir.is_dir():
        raise StorageError(f"{git_dir} exists and is not a directory; move it away")
    created = False
    try:
        clear_stale_temp_dirs(git_dir)
        if not _complete(git_dir):
            if git_dir.is_symlink():  # a link made to keep the history on another disk: created where it points
                if not git_dir.is_dir():
                    raise StorageError(f"{git_dir} is a symlink to a missing directory; create its target or "
                                       "remove the link")
                untrusted.check_link_target(git_dir)  # an empty directory, or a history of ours
                hide_from_project_git(git_dir)  # first, as in a new directory: marks the target ours
                _init(git_dir)
            elif git_dir.is_dir() and any(git_dir.iterdir()):
                # refused before anything is written: a .trajectory that came with a clone (tracked, holding only
                # HEAD and state/) had its tracked config rewritten by the repair, then was refused
                untrusted.check_owner(git_dir)
                untrusted.check_not_tracked(git_dir)
                untrusted.check_tree(git_dir)
                log.warning("%s is an incomplete git repository; repairing it in place", git_dir)
                _init(git_dir)
            else:
                for _ in range(CREATE_ATTEMPTS):
                    outcome = _create_once(git_dir)
                    if outcome is not None:
                        created = outcome
                        break
                else:
                    raise StorageError(f"cannot create {git_dir}: its temporary directory kept disappearing")
        configure(git_dir)
    except OSError as exc:
        raise StorageError(f"cannot create the shadow repository in {git_dir}: {exc}") from exc
    return created


#: ``.trajectory/.gitignore`` (see :data:`code_trajectory.git.untrusted.SELF_IGNORE`).
SELF_IGNORE = untrusted.SELF_IGNORE


def hide_from_project_git(directory: Path) -> None:
    """Make the project's git ignore ``directory`` (a shadow repository, or one moved aside): ``.gitignore`` with ``*``.

    Raises:
        OSError: the file cannot be written.
    """
    _write_if_changed(directory / ".gitignore", SELF_IGNORE)


def _write_if_changed(path: Path, text: str) -> None:
    if read_bounded(path, len(text.encode()) + 1) == text.encode():  # never through a link nor waiting on a FIFO
        return
    replace_file(path, text)
