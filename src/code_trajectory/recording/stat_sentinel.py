"""Where the stat index's sentinel is named: the one path a stat index holds that never exists (see
:mod:`code_trajectory.git.stat_index`), beside the stat cache's database file. Apart from :mod:`.gitvouch` so that
the index seed's child process (:mod:`.index_seed_child`) names it without importing the stat cache.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["sentinel_at", "sentinel_under"]


def sentinel_at(root: Path, cache_path: Path, name: str) -> str | None:
    """The never-created path, relative to ``root`` with ``/`` separators, that the stat index named ``name`` holds
    as its sentinel, for the stat cache whose database file is ``cache_path``; None when that file is not under
    ``root``."""
    return sentinel_under(root, cache_path.with_name(f"statindex-{name}.sentinel"))


def sentinel_under(root: Path, path: Path) -> str | None:
    """``path`` as a stat index names its sentinel: relative to ``root``, with ``/`` separators; None when it is
    not under ``root`` (git compares only paths of its work tree)."""
    rel = os.path.relpath(path, root)
    return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel.replace(os.sep, "/")
