"""What the per-branch indexes that maintenance keeps (:mod:`.search_index`, :mod:`.file_index`) share: bringing
one index per shadow ref up to date, dropping those of refs that are gone, and asking whether a ref still descends
from the tip an index covers (a rewritten ref makes the index stale: it is rebuilt)."""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import GitError
from code_trajectory.git.shadow import ShadowRepo

__all__ = ["is_ancestor", "load", "update_all"]

log = logging.getLogger(__name__)

T = TypeVar("T")


def load(path: Path, parse: Callable[[bytes], T], *, limit: int, what: str) -> T | None:
    """The index stored at ``path``, parsed by ``parse``; None when there is none, it is not a regular file of at
    most ``limit`` bytes (a planted link or FIFO: :func:`~code_trajectory.core.bounded_read.read_bounded`), or
    ``parse`` rejects it (``ValueError``, ``struct.error``: logged as ``what``, and the query takes its plain path).
    """
    data = read_bounded(path, limit)
    if data is None:
        return None
    try:
        return parse(data)
    except (ValueError, struct.error) as exc:
        log.warning("%s ignored: %s", what, exc)
        return None


def update_all(repo: ShadowRepo, *, what: str, directory: Path, path_of: Callable[[ShadowRepo, str], Path],
               update: Callable[[ShadowRepo, str], int]) -> None:
    """Bring the index of every shadow ref up to date (``update(repo, ref)``, returning the commits added) and
    delete the ``*.bin`` files of ``directory`` that belong to no ref (``path_of(repo, ref)`` names a ref's file).

    A ref whose index cannot be updated (``GitError``, ``OSError``) is logged as ``what`` and left to the query's
    plain path; maintenance goes on.
    """
    wanted = set()
    for ref in repo.shadow_refs():
        wanted.add(path_of(repo, ref).name)
        try:
            added = update(repo, ref)
        except (GitError, OSError) as exc:
            log.warning("%s of %s not updated: %s", what, ref, exc)
            continue
        if added:
            log.info("%s of %s: %d commit(s) added", what, ref, added)
    for stale in directory.glob("*.bin") if directory.is_dir() else []:
        if stale.name not in wanted:
            stale.unlink(missing_ok=True)


def is_ancestor(repo: ShadowRepo, old: str, new: str) -> bool:
    """True when commit ``old`` is ``new`` or one of its ancestors (``git merge-base --is-ancestor``)."""
    proc = repo.git.run(["merge-base", "--is-ancestor", "--end-of-options", old, new], check=False)
    return proc.returncode == 0
