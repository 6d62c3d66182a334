"""Where state lives: per user (:func:`home_dir`) and per project (:data:`SHADOW_DIR_NAME`); standard library
only, so the fast CLI paths can import it.

All per-user state lives under one directory, :func:`home_dir`: the value of
the environment variable ``CODE_TRAJECTORY_HOME`` when set, otherwise the
platform's user data directory (``platformdirs.user_data_dir("code-trajectory")``,
e.g. ``~/.local/share/code-trajectory`` on Linux).
"""

import os
from pathlib import Path

#: Name of the shadow repository's directory in the project root (not configurable).
SHADOW_DIR_NAME = ".trajectory"
HOME_ENV = "CODE_TRAJECTORY_HOME"
APP_NAME = "code-trajectory"


def home_dir() -> Path:
    """Return the directory holding all per-user state (not created here).

    ``CODE_TRAJECTORY_HOME`` wins when set and non-empty; otherwise the
    platform's user data directory from ``platformdirs``.
    """
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs  # imported lazily: only needed without the override

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
