"""Where per-user state lives and how settings are read.

All per-user state lives under one directory, :func:`home_dir`: the value of
the environment variable ``CODE_TRAJECTORY_HOME`` when set, otherwise the
platform's user data directory (``platformdirs.user_data_dir("code-trajectory")``,
e.g. ``~/.local/share/code-trajectory`` on Linux). Per-project state lives in the
project's ``.trajectory/`` directory instead.

Settings come from, lowest precedence first: built-in defaults, the TOML file
``<home>/config.toml`` (or the file named by ``CODE_TRAJECTORY_CONFIG``), the
project's ``.trajectory/config.toml``, then command-line flags. Each part of the
product reads its own table: ``[trajectory]`` here, ``[journal]`` and ``[recap]``
in their modules. Example::

    [trajectory]
    debounce_seconds = 2.0        # quiet time before a snapshot, seconds
    max_delay_seconds = 30.0      # longest a change waits during a never-ending burst, seconds
    session_gap_seconds = 3600    # a gap longer than this starts a new session, seconds
    max_file_bytes = 5242880      # files larger than this are not stored (5 MiB)
    token_budget = 8000           # estimated tokens per tool answer
    compare_token_budget = 20000  # estimated tokens of a `compare` answer
    deny_patterns = ["*.secret"]  # added to the built-in secret deny list (gitignore syntax)
    max_history_bytes = 2147483648  # past this size, snapshots older than the retention window are dropped (2 GiB)
    retention_days = 30           # snapshots younger than this are always kept, days
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import ConfigError
from code_trajectory.core.paths import APP_NAME, HOME_ENV, SHADOW_DIR_NAME, home_dir  # noqa: F401 - re-exported
from code_trajectory.core.secrets import DENY_PATTERNS

CONFIG_ENV = "CODE_TRAJECTORY_CONFIG"


def config_path() -> Path:
    """Return the user config file path: ``CODE_TRAJECTORY_CONFIG`` or ``<home>/config.toml``."""
    override = os.environ.get(CONFIG_ENV)
    return Path(override).expanduser() if override else home_dir() / "config.toml"


#: Largest config file read, bytes (a real one is a few hundred).
CONFIG_FILE_LIMIT = 1024 * 1024


def _read_toml(path: Path, *, follow_symlinks: bool) -> dict[str, Any]:
    if not os.path.lexists(path):
        return {}
    data = read_bounded(path, CONFIG_FILE_LIMIT, follow_symlinks=follow_symlinks)
    if data is None:
        raise ConfigError(f"cannot read config file {path}: not a readable regular file of at most "
                          f"{CONFIG_FILE_LIMIT:,} bytes{'' if follow_symlinks else ' (a symlink is not followed there)'}")
    import tomllib  # only when there is a file: a hook that finds none does not pay for the parser

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc


def load_table(name: str, project_root: Path | None = None, *, user_only: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Return the merged ``[name]`` table of the user and project config files.

    Args:
        name: the table, e.g. ``"trajectory"`` or ``"journal"``.
        project_root: when given, ``<project_root>/.trajectory/config.toml`` overrides
            the user file key by key.
        user_only: keys taken from the user's own file only: in the project's file (which may have come with a
            tarball of the project) they are left out, with a warning.

    Raises:
        ConfigError: a file exists but is not valid TOML, or the table is not a table.
    """
    merged: dict[str, Any] = {}
    paths = [config_path()]
    if project_root is not None:
        paths.append(Path(project_root) / SHADOW_DIR_NAME / "config.toml")
    for path in paths:  # the user's own file may be a link (dotfiles); the project's came with its tree
        table = _read_toml(path, follow_symlinks=path == paths[0]).get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(f"[{name}] in {path} must be a table")
        if path != paths[0] and user_only.intersection(table):
            left = sorted(user_only.intersection(table))
            logging.getLogger(__name__).warning("%s: [%s] %s is read from your own config file only (%s), not the "
                                                "project's: left out", path, name, ", ".join(left), paths[0])
            table = {k: v for k, v in table.items() if k not in user_only}
        merged.update(table)
    return merged


#: Keys of ``[trajectory]`` read from the user's own config file only: a ``.trajectory/config.toml`` that came with
#: a tarball of the project must not turn the secret deny list off (with ``[share] auto_push`` on, every consolidation
#: would then push the project's ``.env`` to its remote).
USER_ONLY = frozenset({"use_default_deny_patterns"})
#: Secret-bearing files that never enter the shadow repository (:data:`code_trajectory.core.secrets.DENY_PATTERNS`).
DEFAULT_DENY_PATTERNS: tuple[str, ...] = DENY_PATTERNS


@dataclass(frozen=True)
class TrajectorySettings:
    """Settings of the recorder, watcher and narratives (table ``[trajectory]``).

    Attributes:
        debounce_seconds: quiet time after the last change before a snapshot, seconds (> 0).
        max_delay_seconds: longest a change may wait for its snapshot while changes keep
            arriving, seconds (>= debounce_seconds).
        session_gap_seconds: a gap between snapshots longer than this separates sessions, seconds.
        max_file_bytes: files larger than this are recorded as a size note, not content, bytes.
        token_budget: estimated token budget of one tool answer (4 characters a token).
        compare_token_budget: the same for ``compare`` (MCP tool and CLI), whose answer is the net change with every
            changed line: 20,000 by default, under the 25,000 tokens Claude Code accepts from an MCP tool unless
            ``MAX_MCP_OUTPUT_TOKENS`` says otherwise (https://code.claude.com/docs/en/mcp, "MCP output limits and
            warnings"). Past it the answer names the files left out and the call for each.
        deny_patterns: extra secret patterns (gitignore syntax) on top of the built-in list.
        use_default_deny_patterns: set False to drop the built-in secret list (not advised).
        max_history_bytes: size of ``.trajectory`` objects past which maintenance drops snapshots
            older than ``retention_days`` (never the latest state of a branch), bytes.
        retention_days: snapshots younger than this are always kept, days.
    """

    debounce_seconds: float = 2.0
    max_delay_seconds: float = 30.0
    session_gap_seconds: float = 3600.0
    max_file_bytes: int = 5 * 1024 * 1024
    token_budget: int = 8000
    compare_token_budget: int = 20000
    deny_patterns: tuple[str, ...] = field(default_factory=tuple)
    use_default_deny_patterns: bool = True
    max_history_bytes: int = 2 * 1024**3
    retention_days: float = 30.0

    @property
    def all_deny_patterns(self) -> tuple[str, ...]:
        """The effective deny list: built-in patterns (unless disabled) plus ``deny_patterns``."""
        base = DEFAULT_DENY_PATTERNS if self.use_default_deny_patterns else ()
        return base + tuple(self.deny_patterns)

    def validated(self) -> TrajectorySettings:
        """Return self after checking ranges.

        Raises:
            ConfigError: a value is out of range.
        """
        if not 0 < self.debounce_seconds <= 3600:
            raise ConfigError(f"debounce_seconds must be in (0, 3600], got {self.debounce_seconds}")
        if self.max_delay_seconds < self.debounce_seconds:
            raise ConfigError("max_delay_seconds must be >= debounce_seconds")
        if self.session_gap_seconds <= 0:
            raise ConfigError("session_gap_seconds must be > 0")
        if self.max_file_bytes < 1:
            raise ConfigError("max_file_bytes must be >= 1")
        if self.token_budget < 500:
            raise ConfigError("token_budget must be >= 500")
        if self.compare_token_budget < 500:
            raise ConfigError("compare_token_budget must be >= 500")
        return self

    @classmethod
    def load(cls, project_root: Path | None = None, **overrides: Any) -> TrajectorySettings:
        """Build settings from defaults, config files and ``overrides`` (``None`` values ignored).

        Raises:
            ConfigError: unknown key, wrong type or out-of-range value.
        """
        table = load_table("trajectory", project_root, user_only=USER_ONLY)
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                raise ConfigError(f"unknown key [trajectory].{key}; known keys: {', '.join(sorted(known))}")
            values[key] = value
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            changes: dict[str, Any] = {k: (tuple(v) if k == "deny_patterns" else v) for k, v in values.items()}
            settings = replace(cls(), **changes)
            for name in ("debounce_seconds", "max_delay_seconds", "session_gap_seconds"):
                object.__setattr__(settings, name, float(getattr(settings, name)))
            object.__setattr__(settings, "retention_days", float(settings.retention_days))
            for name in ("max_file_bytes", "token_budget", "compare_token_budget", "max_history_bytes"):
                object.__setattr__(settings, name, int(getattr(settings, name)))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"bad [trajectory] setting: {exc}") from exc
        if "max_delay_seconds" not in values and settings.max_delay_seconds < settings.debounce_seconds:
            object.__setattr__(settings, "max_delay_seconds", max(30.0, settings.debounce_seconds * 4))
        return settings.validated()
