"""Issue 18.5: test history follows branches. On a new branch, ``test-history`` said "No test runs recorded yet"
and ``since-green`` found no green run while ``log`` showed ``tests: 299 passed`` on an ancestor snapshot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import git, write


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_runs_on_ancestors_count_on_a_new_branch(project: Path) -> None:
    ok = cli("test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)  # full suite
    assert ok.returncode == 0, ok.stderr
    git(project, "checkout", "-q", "-b", "feature")
    write(project, "src/app.py", "def main():\n    return 'feature'\n")
    assert cli("checkpoint", "-m", "on feature", cwd=project).returncode == 0
    history = cli("test-history", cwd=project)
    assert history.returncode == 0, history.stderr
    assert "No test runs recorded yet" not in history.stdout
    assert "passed on" in history.stdout and "(on `main`, an ancestor of `feature`)" in history.stdout
    since = cli("since-green", cwd=project).stdout
    assert "Last green run" in since and "an ancestor of `feature`" in since and "src/app.py" in since
    # the other branch's history is still there when asked for by name
    main_history = cli("test-history", "--branch", "main", cwd=project).stdout
    assert "passed on" in main_history and "ancestor" not in main_history
    unknown = cli("test-history", "--branch", "nope", cwd=project)
    assert unknown.returncode == 2 and "recorded branches: `feature`, `main`" in unknown.stderr


def test_bad_path_is_an_error_even_without_a_green_run(project: Path) -> None:
    """Issue 18.10: ``since-green /etc/passwd`` exited 0."""
    assert cli("checkpoint", cwd=project).returncode == 0
    bad = cli("since-green", "/etc/passwd", cwd=project)
    assert bad.returncode == 2 and "outside the project" in bad.stderr
