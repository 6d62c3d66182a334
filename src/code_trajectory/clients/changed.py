"""An edit of a client's config file is started again when the file changed between its read and its write: a
running client rewrites its own config (Claude Code its ``~/.claude.json``), and its change is never written over
(:func:`code_trajectory.clients.jsonfile.write_if_unchanged` tells)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TypeVar

from code_trajectory.core.errors import TrajectoryError

T = TypeVar("T")
#: How many times an edit starts again when the file changed between its read and its write.
EDIT_TRIES = 5


class Changed(Exception):
    """The file is no longer what an edit read (a client wrote it meanwhile): :func:`retried` tries again."""


def retried(path: Path, once: Callable[[], T]) -> T:
    """``once()`` (an edit of ``path``), tried again while it raises :class:`Changed`, at most :data:`EDIT_TRIES`
    times.

    Raises:
        TrajectoryError: ``path`` changed that many times (nothing was written over it).
    """
    for _attempt in range(EDIT_TRIES):
        with suppress(Changed):
            return once()
    raise TrajectoryError(f"{path} changed {EDIT_TRIES} times while being edited (is the client running and "
                          "rewriting it?); it was left as the client wrote it: run again, or close the client first")
