"""Where a project's recap lives: one file per project under ``<CODE_TRAJECTORY_HOME>/recaps/``.

See :mod:`code_trajectory.recap.store` for the naming rules (slug + 128-bit BLAKE2b hash of the path).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from code_trajectory.core import paths as config
from code_trajectory.core.errors import InvalidArgumentError, ProjectError

try:  # BLAKE2 is always CPython's own module; importing it directly skips loading OpenSSL (~4 ms of CLI start-up)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b as _blake2b

RECAPS_DIRNAME = "recaps"
ARCHIVE_DIRNAME = "archived"
_HASH_BYTES = 16  # 128 bits: 32 hex digits in the file name
_SLUG_MAX_CHARS = 48


def normalize_project(project_root: str | os.PathLike[str]) -> str:
    """Return the canonical form of a project path: absolute, ``~`` expanded, symlinks resolved.

    Input: any path to the project directory (need not exist). Output: a string.

    Raises:
        InvalidArgumentError: the path is empty or holds a NUL byte.
        ProjectError: the path cannot be resolved (symlink loop, unreadable parent).
    """
    if not os.fspath(project_root):
        raise InvalidArgumentError("the project path is empty; pass the project directory")
    try:
        return str(Path(project_root).expanduser().resolve(strict=False))
    except ValueError as exc:  # embedded NUL byte
        raise InvalidArgumentError(f"invalid project path {project_root!r}: {exc}") from exc
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop (Python < 3.13)
        raise ProjectError(f"cannot resolve project path {project_root}: {exc}") from exc


def project_key(project_root: str | os.PathLike[str]) -> str:
    """Return the string the file name is derived from: the normalized path (case-folded on Windows)."""
    return os.path.normcase(normalize_project(project_root))


def _slug(path: str) -> str:
    """A short readable ASCII name from the last path components (for people, not identity)."""
    parts = [p for p in re.split(r"[\\/]+", path) if p and not p.endswith(":")]
    tail = "-".join(parts[-2:]) if parts else "root"
    slug = re.sub(r"[^a-z0-9._]+", "-", tail.lower()).strip("-.")
    return slug[-_SLUG_MAX_CHARS:].strip("-.") or "project"


def recap_file_name(project_root: str | os.PathLike[str]) -> str:
    """Return the recap file name of a project: ``<slug>-<128-bit BLAKE2b hex>.json``.

    Deterministic, at most 86 ASCII bytes, characters ``[a-z0-9._-]`` only; distinct
    projects get distinct names (the hash covers the exact path bytes).
    """
    return name_for_key(project_key(project_root))


def name_for_key(key: str) -> str:
    digest = _blake2b(os.fsencode(key), digest_size=_HASH_BYTES).hexdigest()
    return f"{_slug(key)}-{digest}.json"


def recaps_dir() -> Path:
    """Return ``<CODE_TRAJECTORY_HOME>/recaps`` (not created here)."""
    return config.home_dir() / RECAPS_DIRNAME


def recap_path(project_root: str | os.PathLike[str]) -> Path:
    """Return the path of the project's recap file (it may not exist yet)."""
    return recaps_dir() / recap_file_name(project_root)


def has_recap(directory: Path) -> bool:
    """True when ``directory`` has a recap file of its own (it then counts as a project when one is sought)."""
    return recap_path(directory).is_file()


def find_project_root(start: str | os.PathLike[str]) -> Path:
    """The project ``start`` belongs to: the common rule (:func:`code_trajectory.project.find_project_root`), where
    a directory with a recap of its own also counts."""
    from code_trajectory.project import find_project_root as find

    return find(normalize_project(start), marker=has_recap)


def project_from_option(option: str | None) -> Path:
    """The project of a recap command line: ``--project PATH`` or the current directory, found upward as by
    :func:`find_project_root`.

    Raises:
        InvalidArgumentError, ProjectError: the path is not there or is no directory (as every command's
            ``--project``: :func:`code_trajectory.project.project_from_option`).
    """
    from code_trajectory.project import project_from_option as from_option

    return from_option(option, marker=has_recap)
