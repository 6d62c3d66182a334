"""Shared fixtures: an isolated environment and real git repositories in temp dirs.

Helper functions (``git``, ``write``, ``git_repo``, ``mcp_client`` ...) live in the ``support`` package beside this
file; tests import them from there (``from support import git``), never from ``conftest``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import git_repo, write


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every per-user location (HOME, CODE_TRAJECTORY_HOME, XDG_CONFIG_HOME) at a temp dir; drop inherited
    GIT_* variables and our own settings variables; check every tool's structured content
    (``core.mcp_util.CHECK_ENV``). Returns the temporary HOME."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODE_TRAJECTORY_HOME", str(home / "ct-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("CODE_TRAJECTORY_CONFIG", raising=False)
    monkeypatch.delenv("CODE_TRAJECTORY_JOURNAL_DIR", raising=False)
    monkeypatch.delenv("CODE_TRAJECTORY_PYTEST", raising=False)
    monkeypatch.setenv("CODE_TRAJECTORY_CHECK_ANSWERS", "1")  # structured content out of its text's order fails
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project on branch ``main`` with one commit: a source file, a test and a .gitignore."""
    return git_repo(tmp_path / "project", {
        "src/app.py": "def main():\n    return 1\n",
        "tests/test_app.py": "from src.app import main\n\n\ndef test_main():\n    assert main() == 1\n",
        ".gitignore": "build/\nnode_modules/\n*.log\n",
    }, branch="main", commit="initial")


@pytest.fixture
def session(project: Path):
    """An open, started :class:`ProjectSession` on :func:`project` (no watcher), closed after the test."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    s = ProjectSession(project, TrajectorySettings.load(project))
    s.start()
    yield s
    s.close()


@pytest.fixture
def plain_dir(tmp_path: Path) -> Path:
    """A project directory that is not a git repository."""
    root = tmp_path / "plain"
    root.mkdir()
    write(root, "notes.txt", "hello\n")
    return root


@pytest.fixture
def anyio_backend() -> str:
    """anyio tests run on asyncio (the MCP SDK's loop)."""
    return "asyncio"


@pytest.fixture
def ct_home(isolated_env: Path) -> Path:
    """The temporary ``CODE_TRAJECTORY_HOME`` of this test (not created)."""
    return Path(os.environ["CODE_TRAJECTORY_HOME"])


@pytest.fixture
def spaced_dir(tmp_path: Path) -> Path:
    """A plain directory (not a git repository) whose name holds a space: ``<tmp>/work/my project``."""
    root = tmp_path / "work" / "my project"
    root.mkdir(parents=True)
    return root

