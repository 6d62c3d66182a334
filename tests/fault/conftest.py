"""Fixtures of the fault tests: storage that fails under a recording process (a read-only directory, a full disk)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def small_disk(tmp_path: Path):
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture
def read_only():
    """``read_only(directory)`` makes ``directory`` read-only (a read-only bind mount of itself) and returns the
    call that makes it writable again; skips where mounting is not allowed. Undone after the test in any case."""
    mounts: list[Path] = []

    def undo() -> None:
        while mounts:
            subprocess.run(["umount", str(mounts.pop())], capture_output=True)

    def make(directory: Path):
        mounted = subprocess.run(["mount", "--bind", str(directory), str(directory)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
        mounts.append(directory)
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(directory)], capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        return undo

    yield make
    undo()
