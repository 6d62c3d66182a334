"""Where settings come from: the user's own config file, then the project's ``.trajectory/config.toml``, which may
have come with a tarball of the project and so cannot turn the secret deny list off."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from code_trajectory.core.config import DEFAULT_DENY_PATTERNS, TrajectorySettings


def test_the_projects_file_cannot_turn_the_deny_list_off(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "p"
    (root / ".trajectory").mkdir(parents=True)
    (root / ".trajectory" / "config.toml").write_text(
        '[trajectory]\nuse_default_deny_patterns = false\ndeny_patterns = ["*.local"]\ndebounce_seconds = 1.5\n')
    with caplog.at_level(logging.WARNING):
        settings = TrajectorySettings.load(root)
    assert settings.use_default_deny_patterns and settings.debounce_seconds == 1.5
    assert set(DEFAULT_DENY_PATTERNS) <= set(settings.all_deny_patterns) and "*.local" in settings.all_deny_patterns
    assert "use_default_deny_patterns is read from your own config file only" in caplog.text
    # the user's own file may (not advised)
    user = Path(os.environ["CODE_TRAJECTORY_HOME"]) / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[trajectory]\nuse_default_deny_patterns = false\n")
    assert not TrajectorySettings.load(root).use_default_deny_patterns
