"""git commands with large output run through temporary files (:mod:`code_trajectory.git.file_output`): the bytes
come back whole, stdin is a given file (or none), and a command over its time is killed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from code_trajectory.git.file_output import run_to_files
from support import git_repo


def test_stdout_and_stderr_come_back_whole(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "r", {f"d{i % 7}/file-{i}\tname.txt": f"{i}\n" for i in range(3000)},
                    branch="main", commit="files")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    found = run_to_files(["git", "ls-files", "-z", "--stage"], cwd=root, env=env, timeout=60)
    expected = subprocess.run(["git", "ls-files", "-z", "--stage"], cwd=root, env=env, capture_output=True,
                              check=True).stdout
    assert found.returncode == 0 and found.stdout == expected and len(expected) > 100_000 and found.stderr == b""
    failed = run_to_files(["git", "rev-parse", "--verify", "no-such-ref"], cwd=root, env=env, timeout=60)
    assert failed.returncode != 0 and failed.stdout == b"" and b"fatal" in failed.stderr


def test_stdin_is_the_given_file_or_nothing(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "r", {"a.txt": "a\n"}, branch="main")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    with tempfile.TemporaryFile() as content:
        content.write(b"hello\n")
        content.seek(0)
        found = run_to_files(["git", "hash-object", "--stdin"], cwd=root, env=env, timeout=60, stdin=content)
    assert found.stdout.strip() == subprocess.run(["git", "hash-object", "--stdin"], input=b"hello\n", cwd=root,
                                                  env=env, capture_output=True, check=True).stdout.strip()
    empty = run_to_files(["git", "hash-object", "--stdin"], cwd=root, env=env, timeout=60)  # no stdin: empty
    assert empty.stdout.strip() == b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_a_command_over_its_time_is_killed(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_to_files([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, env=dict(os.environ),
                     timeout=0.5)
    assert time.monotonic() - started < 20  # killed, not waited for
