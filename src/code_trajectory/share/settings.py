"""Settings of sharing, table ``[share]`` of the user's and the project's config files.

Example (``.trajectory/config.toml`` or ``<home>/config.toml``)::

    [share]
    author_id = "alice@example.com"   # default: the project's `git config user.email`
    remote = "origin"                 # default: the current branch's upstream remote, else origin
    auto_push = false                 # push after each consolidation (off by default; your own file only)
    consolidated = false              # push only up to the last [CONSOLIDATE] commit of each branch
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from code_trajectory.core.config import load_table
from code_trajectory.core.errors import ConfigError

#: Keys of ``[share]`` read from the user's own config file only: a ``.trajectory/config.toml`` that came with a
#: tarball of the project (whose ``.git/config`` names the remote) must not make every consolidation push the user's
#: work and intents to that remote.
USER_ONLY = frozenset({"auto_push"})


@dataclass(frozen=True)
class ShareSettings:
    """Settings of ``push``/``pull`` (table ``[share]``).

    Attributes:
        author_id: the id others see this history under (sanitized); None for the project's ``user.email``.
        remote: the remote to share through; None for the current branch's upstream remote, else ``origin``.
        auto_push: push after each consolidation (see :func:`code_trajectory.share.push.maybe_auto_push`); read from
            the user's own config file only (:data:`USER_ONLY`).
        consolidated: push only up to the last consolidation of each branch, never the snapshots after it.
    """

    author_id: str | None = None
    remote: str | None = None
    auto_push: bool = False
    consolidated: bool = False

    @classmethod
    def load(cls, project_root: Path | None = None) -> ShareSettings:
        """Read ``[share]`` from the user's config file and the project's ``.trajectory/config.toml`` (but
        :data:`USER_ONLY` keys, left out of the project's with a warning).

        Raises:
            ConfigError: unknown key or a value of the wrong type.
        """
        table = load_table("share", project_root, user_only=USER_ONLY)
        types: dict[str, Any] = {"author_id": str, "remote": str, "auto_push": bool, "consolidated": bool}
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                raise ConfigError(f"unknown key [share].{key}; known keys: {', '.join(sorted(known))}")
            if not isinstance(value, types[key]):
                raise ConfigError(f"[share].{key} must be a {types[key].__name__}, got {value!r}")
            if types[key] is str and not value.strip():
                raise ConfigError(f"[share].{key} must not be empty; remove the key to use the default")
            values[key] = value.strip() if isinstance(value, str) else value
        return cls(**values)
