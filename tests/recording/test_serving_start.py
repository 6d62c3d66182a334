"""``serve``'s start (:mod:`code_trajectory.serving`): a project with no shadow repository yet is opened on a thread
beside the SDK's import, and what that opening raises reaches the main thread as it would have at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from code_trajectory import serving
from code_trajectory.core.errors import StorageError


def test_a_first_import_is_told_by_the_missing_shadow_repository(tmp_path: Path) -> None:
    assert serving.first_import(str(tmp_path))
    (tmp_path / ".trajectory").mkdir()
    assert not serving.first_import(str(tmp_path))
    (tmp_path / ".trajectory").rmdir()
    (tmp_path / ".trajectory").symlink_to(tmp_path / "elsewhere")  # a dangling link is not a first import either
    assert not serving.first_import(str(tmp_path))


def test_the_opening_runs_on_another_thread_and_its_wait_returns_once_it_is_done() -> None:
    ran_on: list[str] = []
    release = threading.Event()

    def work() -> None:
        release.wait(10)
        ran_on.append(threading.current_thread().name)

    wait = serving.in_background(work)
    assert ran_on == []  # started, not waited for
    release.set()
    wait()
    assert ran_on == ["trajectory-open"]


def test_what_the_opening_raises_is_raised_by_its_wait() -> None:
    def work() -> None:
        raise StorageError("cannot create the shadow repository: disk full")

    wait = serving.in_background(work)
    with pytest.raises(StorageError, match="disk full"):
        wait()
