"""A large index is read in a child process (issue 29): its answer comes back as columns, is checked, and a child
that fails or is killed only means that nothing is reused."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording import index_seed
from code_trajectory.recording.index_prepare import Prepared
from code_trajectory.recording.index_seed import IndexSeed
from code_trajectory.recording.index_seed_child import SeedChild, decode, encode
from code_trajectory.recording.tracked import TrackedFiles
from support import git, git_repo

ODD = os.fsdecode(b"odd\nname-\xff.txt")


def a_prepared() -> Prepared:
    rows = [("100644", "a" * 40, 12, 1_700_000_000_123_456_789, 1_700_000_001_000_000_001, 2**32 - 1),
            ("100755", "b" * 40, 0, 0, 5, 7),
            ("100644", "c" * 40, 2**31, 2**62, 1, 1)]
    return Prepared(paths=["a.py", "bin/run.sh", ODD], rows=rows,
                    candidates={"é/racy.txt": ("100644", "d" * 40, 3, 9, 9, 9)},
                    trees={"": (3, 1, "e" * 40), "bin": (1, 0, "f" * 40)}, index_mtime_ns=1_700_000_002_000_000_000,
                    written=(Path("/x/.trajectory/state/seed-1.index"), "1", "0" * 40))


def test_the_answer_comes_back_as_it_was_prepared() -> None:
    prepared = a_prepared()
    back, (paths, modes, oids, sizes, mtimes, ctimes, inos) = decode(encode(prepared))
    assert paths == prepared.paths and ODD in paths
    assert list(zip(modes, oids, sizes, mtimes, ctimes, inos)) == prepared.rows
    assert back.candidates == prepared.candidates and back.trees == prepared.trees
    assert back.index_mtime_ns == prepared.index_mtime_ns and back.written == prepared.written
    assert back.paths == [] and back.rows == []  # the vouched files come back as columns only

    empty, columns = decode(encode(Prepared()))
    assert empty == Prepared() and all(len(column) == 0 for column in columns)


@pytest.mark.parametrize("damage", ["magic", "truncated", "count", "oid length", "mode"])
def test_an_answer_that_does_not_add_up_is_refused(damage: str) -> None:
    data = encode(a_prepared())
    if damage == "magic":
        data = b"X" + data[1:]
    elif damage == "truncated":
        data = data[:-3]
    elif damage == "count":
        data = data.replace(b'"counts": [3, 1]', b'"counts": [2, 1]')
    elif damage == "oid length":
        data = encode(Prepared(paths=["a"], rows=[("100644", "a" * 39, 1, 1, 1, 1)]))
    else:
        data = data.replace(b'"modes": ["100644", "100755"]', b'"modes": ["100644"]')
    with pytest.raises(ValueError):
        decode(data)


def test_the_index_read_in_a_child_vouches_as_on_a_thread(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "project", {f"pkg/m{i}.py": f"m = {i}\n" for i in range(8)} | {ODD: "odd\n"},
                    branch="main", commit="initial")
    time.sleep(1.1)
    git(root, "status", "--porcelain")  # the index written a second after its entries: none racy
    repo = ShadowRepo(root)
    repo.ensure()
    project = ProjectRepo.discover(root)
    answers = []
    for in_child in (False, True):
        seed = IndexSeed(project, repo, max_file_bytes=1 << 20, tracked=TrackedFiles(project), in_child=in_child)
        answers.append((dict(seed.vouched()), dict(seed.trees()), seed({})))
    assert answers[0] == answers[1]
    assert set(answers[1][0]) == {f"pkg/m{i}.py" for i in range(8)} | {ODD}


def test_a_killed_child_leaves_nothing_reused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = git_repo(tmp_path / "project", {"a.py": "a = 1\n"}, branch="main", commit="initial")
    child = SeedChild(ProjectRepo.discover(root), max_file_bytes=1 << 20, stat_cache_path=None)
    child._proc.kill()  # type: ignore[union-attr]  # as the kernel's OOM killer would
    with caplog.at_level(logging.WARNING, logger="code_trajectory.recording.index_seed_child"):
        assert child.result() is None
    assert "not reusing the project's index" in caplog.text
    assert child.result() is None  # asked again: still nothing, no error
    stopped = SeedChild(ProjectRepo.discover(root), max_file_bytes=1 << 20, stat_cache_path=None)
    stopped.close()  # not wanted: stopped, its file closed
    assert stopped.result() is None


def test_a_large_index_is_read_in_a_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = git_repo(tmp_path / "project", {"a.py": "a = 1\n"}, branch="main", commit="initial")
    repo = ShadowRepo(root)
    repo.ensure()
    started: list[SeedChild] = []
    monkeypatch.setattr(index_seed, "SeedChild", lambda *a, **k: started.append(SeedChild(*a, **k)) or started[-1])
    IndexSeed(ProjectRepo.discover(root), repo, max_file_bytes=1 << 20).vouched()
    assert started == []  # a small index: read on a thread
    monkeypatch.setattr(index_seed, "CHILD_FROM_BYTES", 1)
    IndexSeed(ProjectRepo.discover(root), repo, max_file_bytes=1 << 20).vouched()
    assert len(started) == 1
