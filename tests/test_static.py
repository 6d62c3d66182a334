"""Static checks in the test run: a type error (mypy) or a lint finding (ruff) fails the suite, and so CI.

Both tools come with the ``dev`` extra (``pip install -e .[dev]``), which CI installs; a test is skipped, saying
why, only where the tool is not installed. Their configuration is ``pyproject.toml``'s ``[tool.mypy]`` (default
mode for the package, mypy's strict flags for ``core/`` and ``git/``) and ``[tool.ruff]``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO_ROOT

#: A generous bound for one run (a full mypy run takes ~15-20 s on two cores), seconds: a hang detector.
TIMEOUT = 600


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (it comes with `pip install -e .[dev]`)")


def _run(args: list[str], cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def test_mypy_finds_no_type_error_in_the_package(tmp_path: Path) -> None:
    _require("mypy")
    # a fresh cache in a temp dir: the result never depends on an earlier run's cache
    proc = _run(["mypy", "--cache-dir", str(tmp_path / "mypy-cache")])
    assert proc.returncode == 0, f"mypy found errors:\n{proc.stdout}{proc.stderr}"
    assert "Success: no issues found" in proc.stdout, proc.stdout


def test_mypy_with_the_project_configuration_fails_on_a_type_error(tmp_path: Path) -> None:
    """The gate is not vacuous: the same configuration reports a wrong type (and an unexplained ignore)."""
    _require("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text('count: int = "three"\n', encoding="utf-8")
    proc = _run(["mypy", "--config-file", str(REPO_ROOT / "pyproject.toml"), "--cache-dir",
                 str(tmp_path / "mypy-cache"), str(bad)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bad.py:1: error: Incompatible types in assignment" in proc.stdout, proc.stdout


def test_ruff_finds_nothing_in_src_tests_and_bench() -> None:
    _require("ruff")
    proc = _run(["ruff", "check", "--no-cache", "src", "tests", "bench"])
    assert proc.returncode == 0, f"ruff found problems:\n{proc.stdout}{proc.stderr}"
