"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """Environment of the server process: private state dirs, no GIT_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("CODE_TRAJECTORY_CONFIG", None)
    home = tmp_path / "home"
    for sub in ("", ".config", "state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env.update(CODE_TRAJECTORY_HOME=str(home / "state"), HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               PYTHONUNBUFFERED="1")
    return env
