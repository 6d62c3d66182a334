"""Keeping the shadow repository alive through the project's own git: ``git clean -fdx``, ``git stash --all``.

``git clean -x`` and ``git stash --all``/``-u`` remove ignored or untracked directories, and ``.trajectory/`` is
one: the whole history would go. git leaves one kind of untracked directory alone, a nested repository: a
directory holding ``.git`` that is a git directory or a valid gitfile (git's ``dir.c``,
``is_nonbare_repository_dir``: ``read_gitfile_gently(".git")`` succeeds or ``is_git_directory(".git")``).
``git clean`` then skips it unless given ``-f`` twice, and ``git stash --all`` says ``Ignoring path
.trajectory/`` and leaves it in place.

So ``.trajectory/.git`` is a **marker**: a tiny bare repository (``HEAD``, ``objects/``, ``refs/``, a config
with ``core.bare = true``), never written to after. It is bare so that git run *inside* ``.trajectory`` (an
IDE probing folders for repositories, ``git status`` typed there) finds a repository without a work tree:
``git rev-parse --show-toplevel`` and ``git status`` fail ("this operation must be run in a work tree") instead
of showing ``.trajectory`` as a work tree full of changes. The shadow repository itself is untouched: every
command of ours names it (``--git-dir``) and its work tree.

A nested repository is no longer hidden by the ``.gitignore`` inside it (git does not descend into it): the
project's ``git status`` would list ``?? .trajectory/`` and ``git add -A`` would fail on it. The project's
git must ignore it from outside, so ``/.trajectory`` (anchored at the project root, relative to the work
tree's top) is added to the repository's ``info/exclude`` — the per-clone, untracked exclude file of
gitignore(5), never committed, stashed or cleaned — and the marker is written only once that line is there.
A project that is not a git repository gets no marker (no git there to clean it).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.paths import SHADOW_DIR_NAME

log = logging.getLogger(__name__)

MARKER = ".git"
#: The marker's files: a bare repository git recognises (``is_git_directory``: a ``HEAD`` naming a ref under
#: ``refs/``, ``objects/`` and ``refs/`` directories). Its branch name tells whoever runs git there where to go.
MARKER_HEAD = "ref: refs/heads/code-trajectory-marker--use-git--git-dir=.trajectory\n"
MARKER_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
MARKER_README = ("code-trajectory: this empty bare repository marks .trajectory as a nested repository, so\n"
                 "`git clean -fdx` and `git stash --all` of the project leave the history alone.\n"
                 "The history itself is the parent directory: git --git-dir=.trajectory log --all\n")
#: The comment above our line in ``info/exclude``.
EXCLUDE_COMMENT = "# code-trajectory: its shadow repository (a nested repository kept out of the project's git)"

_SPECIAL = re.compile(r"([\\*?\[])")


def exclude_line(prefix: str, name: str = SHADOW_DIR_NAME) -> str:
    """The ``info/exclude`` pattern of the shadow repository ``name`` of a project ``prefix`` below the work
    tree's top (``""`` or ``packages/app/``): ``/packages/app/.trajectory``, glob characters escaped
    (gitignore(5): a backslash quotes them). No trailing slash, so a ``.trajectory`` symlink matches too."""
    return "/" + _SPECIAL.sub(r"\\\1", prefix + name)


#: Largest ``info/exclude`` read, bytes (git's own template is 240).
EXCLUDE_LIMIT = 1 << 20


def is_excluded(info_exclude: Path, line: str) -> bool:
    """Whether ``info_exclude`` holds ``line`` (read bounded, never through a link or from a FIFO)."""
    data = read_bounded(info_exclude, EXCLUDE_LIMIT)
    return data is not None and line in data.decode("utf-8", "surrogateescape").splitlines()


def ensure_excluded(info_exclude: Path, line: str) -> bool:
    """Add ``line`` (with :data:`EXCLUDE_COMMENT`) to ``info_exclude`` unless it is already there; True when
    the line is in the file afterwards. The file is replaced atomically, keeping its other lines and mode."""
    if is_excluded(info_exclude, line):
        return True
    if not os.path.lexists(info_exclude):
        text = ""
    else:  # never through a link or from a FIFO (the project may be a tarball's)
        data = read_bounded(info_exclude, EXCLUDE_LIMIT)
        if data is None:
            log.warning("cannot read %s (not a regular file, or over %d bytes)", info_exclude, EXCLUDE_LIMIT)
            return False
        text = data.decode("utf-8", "surrogateescape")
    addition = ("" if not text or text.endswith("\n") else "\n") + f"{EXCLUDE_COMMENT}\n{line}\n"
    try:
        info_exclude.parent.mkdir(exist_ok=True)
        replace_file(info_exclude, text + addition)
    except OSError as exc:
        log.warning("cannot add %s to %s: %s", line, info_exclude, exc)
        return False
    return True


def has_marker(git_dir: Path) -> bool:
    """True when ``git_dir`` holds the marker exactly as :func:`write_marker` writes it: its ``HEAD`` and its
    ``config`` (a ``.trajectory/.git`` that came with a copied tree, whose config could name programs for git
    run inside ``.trajectory``, is not ours and gets replaced)."""
    marker = git_dir / MARKER
    try:
        if marker.is_symlink():
            return False
        return (read_bounded(marker / "HEAD", 4096) == MARKER_HEAD.encode()
                and read_bounded(marker / "config", 4096) == MARKER_CONFIG.encode())
    except OSError:
        return False


def write_marker(git_dir: Path) -> None:
    """Make ``<git_dir>/.git`` the marker (idempotent; a ``.git`` that is something else is replaced).

    Raises:
        OSError: it cannot be written.
    """
    if has_marker(git_dir):
        return
    marker = git_dir / MARKER
    if marker.is_symlink() or marker.is_file():
        marker.unlink()
    elif marker.is_dir():
        shutil.rmtree(marker)
    tmp = git_dir / f".git.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(mode=0o700)
    for sub in ("objects", "refs"):
        (tmp / sub).mkdir()
    (tmp / "config").write_text(MARKER_CONFIG, "utf-8")
    (tmp / "README").write_text(MARKER_README, "utf-8")
    (tmp / "HEAD").write_text(MARKER_HEAD, "utf-8")  # last: HEAD makes it a repository
    try:
        os.rename(tmp, marker)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not has_marker(git_dir):  # another process wrote it at the same time: fine
            raise


def remove_marker(git_dir: Path) -> None:
    """Remove the marker from ``git_dir`` (a repository moved aside: its own ``.gitignore`` hides it again)."""
    marker = git_dir / MARKER
    if marker.is_dir() and not marker.is_symlink() and (marker / "HEAD").is_file():
        shutil.rmtree(marker, ignore_errors=True)


def protect(git_dir: Path, info_exclude: Path | None, prefix: str) -> str | None:
    """Make the shadow repository ``git_dir`` survive the project's ``git clean``/``git stash`` (see the module
    docstring); None when done or nothing is needed, else what could not be done.

    Args:
        git_dir: ``<project>/.trajectory``.
        info_exclude: the project's ``info/exclude`` (None: the project is not a git repository).
        prefix: the project's path below its work tree's top, ``/``-terminated (``""`` at the top).
    """
    if info_exclude is None:
        return None
    if not ensure_excluded(info_exclude, exclude_line(prefix, git_dir.name)):
        remove_marker(git_dir)  # a marker the project's git does not ignore would show as `?? .trajectory/`
        return (f"cannot write {info_exclude}: `git clean -fdx` or `git stash --all` in the project would delete "
                f"the history in {git_dir}")
    try:
        write_marker(git_dir)
    except OSError as exc:
        return f"cannot write {git_dir / MARKER} ({exc}): `git clean -fdx` would delete the history"
    return None
