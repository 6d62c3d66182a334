"""Fixtures of the share tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.share_env import Team, make_team


@pytest.fixture
def team(tmp_path: Path) -> Team:
    """Alice and Bob with their own projects and a shared bare remote (see :func:`support.share_env.make_team`)."""
    return make_team(tmp_path)
