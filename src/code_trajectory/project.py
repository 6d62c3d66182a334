"""Which project a command or a tool call is about: the one discovery rule, and paths confined to it.

Every front end (the CLI, the MCP server, the pytest plugin, the hooks) finds the project the same
way, as git finds its repository (``git rev-parse --show-toplevel``): walking up from a directory,

1. the nearest directory holding a shadow repository (``.trajectory/HEAD``) is the project, unless a linked
   worktree's top comes first (:func:`is_linked_worktree`: Claude Code's ``.claude/worktrees/<name>`` inside the
   project is another checkout, recorded on its own; a submodule or a nested clone stays part of the project
   around it, whose recorder records its files);
2. else the top of the git work tree holding the directory (the nearest ``.git`` entry: a
   directory, or a file for linked worktrees and submodules);
3. else the directory itself.

Standard library only: this module is imported by the light entry points (hooks, ``recap``).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from pathlib import Path

from code_trajectory.core.bounded_read import git_file_target
from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError, ProjectError
from code_trajectory.core.paths import SHADOW_DIR_NAME
from code_trajectory.core.text import shown_name


def has_shadow_repo(directory: Path) -> bool:
    """True when ``directory`` holds a shadow repository (``.trajectory/HEAD`` is a file)."""
    return (directory / SHADOW_DIR_NAME / "HEAD").is_file()


def nothing_recorded(root: Path) -> ProjectError:
    """The error of a command that reads the history of ``root`` (a project root) where there is none: what to run
    to start recording, or, when ``.trajectory`` is there but no directory (a file, a dangling link), that it is in
    the way (a start would refuse it the same way)."""
    shadow = root / SHADOW_DIR_NAME
    if os.path.lexists(shadow) and not shadow.is_dir():
        return ProjectError(f"nothing is recorded for {root}: {shadow} exists and is not a directory, where the "
                            "history is kept; move it away, then start recording")
    return ProjectError(f"nothing is recorded for {root} yet (it has no .trajectory/): start recording with "
                        f"`code-trajectory watch {root}`, or an MCP client running `code-trajectory serve "
                        f"--project {root}` (see `code-trajectory install`)")


def find_project_root(start: str | os.PathLike[str], *,
                      marker: Callable[[Path], bool] | None = None) -> Path:
    """Return the project that ``start`` (a directory) belongs to, by the rule in the module docstring.

    Args:
        start: a directory (absolute or relative to the current directory); resolved first.
        marker: an extra test that makes a directory a project at step 1 (the recap's
            ``--project`` of a subdirectory with a recap of its own).

    Returns:
        The absolute, symlink-resolved project root (it may have no shadow repository yet).
    """
    here = Path(start).expanduser().resolve()
    chain = (here, *here.parents)
    for candidate in chain:
        if has_shadow_repo(candidate) or (marker is not None and marker(candidate)) or is_linked_worktree(candidate):
            return candidate
    for candidate in chain:
        if (candidate / ".git").exists():
            return candidate
    return here


def is_linked_worktree(directory: str | os.PathLike[str]) -> bool:
    """True when ``directory`` is the top of a linked worktree (``git worktree add``): its ``.git`` is a file
    naming a git directory through a ``worktrees`` directory (``<repo>/.git/worktrees/<name>``; a submodule's goes
    through ``modules``), read by :func:`~code_trajectory.core.bounded_read.git_file_target`."""
    target = git_file_target(directory)
    return target is not None and "worktrees" in target.replace("\\", "/").split("/")[:-1]


def enclosing_recorded_project(root: Path) -> Path | None:
    """The recorded project strictly above ``root`` (an ancestor holding ``.trajectory/HEAD``) that covers it, or
    None: a linked worktree's top (``root`` or a directory between) is a project of its own, as in
    :func:`find_project_root`."""
    root = Path(root)
    if is_linked_worktree(root):
        return None
    for candidate in root.parents:
        if has_shadow_repo(candidate):
            return candidate
        if is_linked_worktree(candidate):
            return None
    return None


def _resolved(path: Path) -> Path:
    path = Path(path).expanduser().absolute()
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def check_recordable(root: Path, *, creating: bool) -> None:
    """Refuse directories that must never get a shadow repository: the one guard every front end goes through
    (``Recorder.open``: ``configure_project``, ``serve --project``, ``watch``, ``checkpoint``, the hooks; and
    ``install``, whose server entry runs ``serve --project``).

    Refused, whether or not a ``.trajectory`` already exists there:

    * the file system root;
    * the user's home directory (``Path.home()``, compared after resolving symlinks on both sides, so a
      symlink to it is refused too): it holds every project and tool cache;
    * a directory holding code-trajectory's own storage (:func:`code_trajectory.core.paths.home_dir`:
      ``CODE_TRAJECTORY_HOME`` or the platform's user data directory), or that directory itself: recording it
      would record our own writes, recursively (other tools filled disks that way);
    * when ``creating``, a directory inside a project that is already recorded (its recorder covers it).

    Args:
        root: the resolved project directory.
        creating: True when ``root`` has no shadow repository yet and one would be created.

    Raises:
        ProjectError: ``root`` is refused; the message says what to record instead.
    """
    from code_trajectory.core.paths import HOME_ENV, home_dir

    root = _resolved(root)
    if root == Path(root.anchor):
        raise ProjectError(f"refusing to record {root}: it is the file system root; record a project directory "
                           "instead (configure_project with the project's absolute path, or --project PATH)")
    try:
        user_home = _resolved(Path.home())
    except (RuntimeError, OSError, KeyError):
        user_home = None
    if user_home is not None and root == user_home:
        raise ProjectError(f"refusing to record {root}: it is your home directory, which holds every project and "
                           "tool cache; record a project directory inside it instead (configure_project with "
                           "the project's absolute path, or --project PATH)")
    storage = _resolved(home_dir())
    if storage == root or root in storage.parents:
        raise ProjectError(f"refusing to record {root}: it holds code-trajectory's own storage ({storage}), so "
                           "recording it would record its own writes; record a project directory that does not "
                           f"contain it (or set {HOME_ENV} elsewhere)")
    if creating:
        outer = enclosing_recorded_project(root)
        if outer is not None:
            raise ProjectError(f"{root} is inside {outer}, which is already recorded (its .trajectory/ covers this "
                               f"directory); use the project {outer} (e.g. --project {outer}) instead of starting a "
                               "second history inside it")


def resolve_project_root(path: str | os.PathLike[str]) -> Path:
    """Return the absolute, symlink-resolved project directory for ``path`` (an explicit choice, not searched).

    Raises:
        InvalidArgumentError: the path is empty, relative, holds a NUL byte, or is the file system root.
        ProjectError: it does not exist or is not a directory.
    """
    text = os.fspath(path)
    if not text or not str(text).strip():
        raise InvalidArgumentError("path must be the absolute path of the project directory")
    if "\0" in str(text):
        raise InvalidArgumentError("path must not contain NUL bytes")
    root = Path(text).expanduser()
    if not root.is_absolute():
        raise InvalidArgumentError(f"path must be absolute, got {text!r}; pass the project's full path")
    try:
        root = root.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ProjectError(f"project directory {text} does not exist or is not reachable: {exc}") from exc
    if not root.is_dir():
        raise ProjectError(f"{root} is not a directory; give the project's root directory (configure_project's "
                           "path, the CLI's --project)")
    if root == Path(root.anchor):
        raise InvalidArgumentError("refusing to record the file system root; pass a project directory")
    return root


def project_from_option(option: str | None, *, marker: Callable[[Path], bool] | None = None) -> Path:
    """The project of a command line: ``--project PATH`` or the current directory, found upward.

    ``PATH`` may be the project root or any directory inside it (as ``git -C PATH``).

    Raises:
        InvalidArgumentError, ProjectError: see :func:`resolve_project_root`.
    """
    start = Path(option).expanduser().absolute() if option else Path.cwd()
    resolve_project_root(start)  # clear errors for a missing or non-directory path
    return find_project_root(start, marker=marker)


def path_exists(path: Path) -> bool:
    """``path.exists()`` without following a final symlink, False for names the OS refuses (too long)."""
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


#: Longest path :func:`confine` takes, bytes: Linux's ``PATH_MAX`` (``<linux/limits.h>``), which no path a system
#: call opens may exceed (macOS: 1024).
MAX_PATH_BYTES = 4096


def confine(root: Path, filepath: str) -> str:
    """Turn a client's path into a ``/``-separated path relative to ``root``, confined to it.

    Accepts paths relative to the root or absolute paths inside it. Symlinks in the
    existing part of the path are resolved, so a link pointing outside is refused. A path as answers show it
    (:func:`~code_trajectory.core.text.display_path`: ``bad\\xff.py`` for a name that is not UTF-8, ``\\u202e`` for
    a right-to-left override) names the file it was shown for, unless a file of that literal name exists: an agent
    can pass back what it was shown, which no client could send otherwise (JSON holds no undecodable byte).

    Raises:
        InvalidArgumentError: empty, NUL byte, a character no file name holds, longer than :data:`MAX_PATH_BYTES`,
            or the root itself.
        PathOutsideProjectError: the path resolves outside the project.
    """
    if not isinstance(filepath, str) or not filepath.strip():
        raise InvalidArgumentError("filepath must be a file path relative to the project root, e.g. 'src/app.py'")
    if "\0" in filepath:
        raise InvalidArgumentError("filepath must not contain NUL bytes")
    filepath = _named(root, filepath)
    try:
        size = len(os.fsencode(filepath))  # the bytes a system call is given
    except UnicodeEncodeError:  # a lone surrogate a JSON string may hold: no file name is made of it
        raise InvalidArgumentError("filepath holds a character no file name can hold (a lone UTF-16 surrogate)"
                                   ) from None
    if size > MAX_PATH_BYTES:
        raise InvalidArgumentError(f"filepath is {size:,} bytes long; no path in a project is longer than "
                                   f"{MAX_PATH_BYTES} bytes: give the file's path relative to the project root")
    candidate = Path(filepath) if os.path.isabs(filepath) else root / filepath
    normalized = Path(posixpath.normpath(candidate.as_posix()))
    try:
        rel = normalized.relative_to(root)
    except ValueError:
        raise PathOutsideProjectError(f"{filepath!r} is outside the project {root}; give a path inside it, "
                                      "relative to the project root") from None
    try:
        resolved = normalized.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loop
        raise InvalidArgumentError(f"cannot resolve {filepath!r}: {exc}") from exc
    if resolved != root and root not in resolved.parents:
        raise PathOutsideProjectError(f"{filepath!r} resolves through a symlink to {resolved}, outside the "
                                      f"project {root}")
    text = rel.as_posix()
    if text in ("", "."):
        raise InvalidArgumentError("filepath names the project root itself; give a file inside it")
    return text


def _named(root: Path, filepath: str) -> str:
    """``filepath``, or the name it shows (:func:`~code_trajectory.core.text.shown_name`) when it shows one and no
    file of the literal name exists."""
    name = shown_name(filepath)
    if name is None or path_exists(Path(filepath) if os.path.isabs(filepath) else root / filepath):
        return filepath
    return name


def check_range(name: str, value: int, low: int, high: int) -> int:
    """Return ``value`` if ``low <= value <= high``.

    Raises:
        InvalidArgumentError: otherwise (also for a bool or a non-integer).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be an integer between {low} and {high}, got {value!r}")
    if not low <= value <= high:
        raise InvalidArgumentError(f"{name} must be between {low} and {high}, got {value}")
    return value


def typed_path(root: Path, path: str) -> str:
    """A path as a user types it on the command line, made relative to the project ``root`` (absolute,
    symlink-resolved): relative to the current directory when that lies below ``root`` (``./a.py`` typed in
    ``sub/`` is ``sub/a.py``, as git reads paths and a shell completes them), else as given (typed at the root, or
    outside the project: relative to the root, as the MCP tools take them). An absolute or empty path is returned
    unchanged; :func:`confine` checks every result (``../../x`` from a subdirectory is outside and refused). Standard
    library only, no ``typing`` either: the hooks import this module."""
    if not path or os.path.isabs(path):
        return path
    try:
        here = Path.cwd().resolve()
    except OSError:  # the current directory was removed
        return path
    if here == root or root not in here.parents:
        return path
    return posixpath.normpath(here.relative_to(root).as_posix() + "/" + path.replace(os.sep, "/"))


def add_project_option(parser, *, help_text: str | None = None) -> None:
    """Add ``--project PATH`` to an ``argparse`` parser (default: found from the current directory)."""
    parser.add_argument("--project", default=None, metavar="PATH",
                        help=help_text or "project directory or any directory inside it (default: found from "
                                          "the current directory, as git finds its repository)")
