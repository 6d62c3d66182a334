"""The architecture contract: dependencies run one way (``pyproject.toml``'s ``[tool.importlinter]``, README
"Architecture"), checked by import-linter on the real source at every test run, and shown to catch an upward import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_LINT = ("import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def _lint(repo: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` of the checkout at ``repo`` (its ``pyproject.toml``, its ``src``), in a child process."""
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}
    return subprocess.run([sys.executable, "-c", _LINT], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_layers_and_acyclic_contracts_are_kept() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def _copy(tmp_path: Path) -> Path:
    """A copy of this checkout's ``pyproject.toml`` and ``src/code_trajectory`` under ``tmp_path``; its package."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(REPO / "src" / "code_trajectory", tmp_path / "src" / "code_trajectory",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "src" / "code_trajectory"


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """recording importing history (the cycle issue 25 removed), even inside a function, fails the contract."""
    session = _copy(tmp_path) / "recording" / "session.py"
    session.write_text(session.read_text() + "\n\ndef _upward():\n    from code_trajectory.history import narrative\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "code_trajectory.recording is not allowed to import code_trajectory.history" in done.stdout
    assert "code_trajectory.recording.session -> code_trajectory.history.narrative" in done.stdout


def test_a_circle_between_two_modules_of_a_package_breaks_the_contract(tmp_path: Path) -> None:
    """testruns.scope importing testruns.selection back (the circle round 6 removed), even inside a function, fails
    the acyclic contract and names the import to drop."""
    scope = _copy(tmp_path) / "testruns" / "scope.py"
    scope.write_text(scope.read_text() + "\n\ndef _back():\n    from code_trajectory.testruns import selection\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "No cycles are allowed in code_trajectory.testruns." in done.stdout
