"""Shared fixtures: an isolated environment and real git repositories in temp dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every per-user location at a temp dir and drop inherited GIT_* variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODE_TRAJECTORY_HOME", str(home / "ct-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("CODE_TRAJECTORY_CONFIG", raising=False)
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    return home


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run git in ``cwd`` as a user would (fixed identity, no global config); return stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Dev",
               GIT_AUTHOR_EMAIL="dev@example.com", GIT_COMMITTER_NAME="Dev", GIT_COMMITTER_EMAIL="dev@example.com")
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, encoding="utf-8",
                          errors="surrogateescape")
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write a file under ``root``, creating parent directories."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project on branch ``main`` with one commit: a source file, a test and a .gitignore."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "src/app.py", "def main():\n    return 1\n")
    write(root, "tests/test_app.py", "from src.app import main\n\n\ndef test_main():\n    assert main() == 1\n")
    write(root, ".gitignore", "build/\nnode_modules/\n*.log\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def plain_dir(tmp_path: Path) -> Path:
    """A project directory that is not a git repository."""
    root = tmp_path / "plain"
    root.mkdir()
    write(root, "notes.txt", "hello\n")
    return root
