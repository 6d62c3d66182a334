"""Fixtures of the client set-up tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """An empty project directory whose name holds a space (``<tmp>/my proj``, resolved): what the client configs
    and hook commands must quote."""
    root = tmp_path / "my proj"
    root.mkdir()
    return root.resolve()
