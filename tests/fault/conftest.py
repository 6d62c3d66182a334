"""Fixtures of the fault tests: storage that fails under a recording process (a read-only directory, a full disk)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def tmpfs(tmp_path: Path):
    """``tmpfs(options)`` mounts a tmpfs with ``options`` (``size=4m``, ``nr_inodes=600``) on a new directory under
    the test's temporary directory and returns it; skips where mounting is not allowed. Unmounted after the test."""
    mounts: list[Path] = []

    def make(options: str) -> Path:
        mount = tmp_path / f"tmpfs{len(mounts)}"
        mount.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], capture_output=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.decode().strip()}")
        mounts.append(mount)
        return mount

    yield make
    for mount in mounts:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture
def small_disk(tmpfs):
    return tmpfs("size=4m")


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
