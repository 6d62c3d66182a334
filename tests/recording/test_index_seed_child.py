"""A large index is read in a child process (issue 29): its answer comes back as columns, is checked, and a child
that fails or is killed only means that nothing is reused."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

from code_trajectory.git.index_entries import IndexEntries
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording import index_seed
from code_trajectory.recording.index_prepare import Asked, Heard
from code_trajectory.recording.index_seed import IndexSeed
from code_trajectory.recording.index_seed_child import (
    SeedChild,
    columns_of,
    decode_asked,
    decode_heard,
    encode_asked,
    encode_heard,
)
from code_trajectory.recording.tracked import TrackedFiles
from support import git, git_repo, write

ODD = os.fsdecode(b"odd\nname-\xff.txt")


def an_asked() -> Asked:
    rows = [("100644", "a" * 40, 12, 1_700_000_000_123_456_789, 1_700_000_001_000_000_001, 2**32 - 1),
            ("100755", "b" * 40, 0, 0, 5, 7),
            ("100644", "c" * 40, 2**31, 2**62, 1, 1)]
    files = dict(zip([b"a.py", b"bin/run.sh", os.fsencode(ODD)], rows))
    return Asked(1_700_000_002_000_000_000, IndexEntries.from_rows(files),
                 IndexEntries.from_rows({os.fsencode("é/racy.txt"): ("100644", "d" * 40, 3, 9, 9, 9)}))


def a_heard() -> Heard:
    return Heard(changed={"a.py", ODD}, missing={"é/racy.txt"}, trees={"": (3, 1, "e" * 40), "bin": (1, 0, "f" * 40)},
                 written=(Path("/x/.trajectory/state/seed-1.index"), "1", "0" * 40))


def test_the_answers_come_back_as_they_were_told() -> None:
    asked, heard = an_asked(), a_heard()
    data = encode_asked(asked) + encode_heard(heard)
    (paths, modes, oids, sizes, mtimes, ctimes, inos), index_mtime_ns, others, at = decode_asked(data)
    assert paths == list(map(os.fsdecode, asked.files.names)) and ODD in paths  # told as bytes, decoded once here
    assert dict(zip(map(os.fsencode, paths), zip(modes, oids, sizes, mtimes, ctimes, inos))) == asked.files.rows()
    assert others == {"é/racy.txt": asked.others.rows()[os.fsencode("é/racy.txt")]}
    assert (paths, modes, oids, list(sizes), list(mtimes), list(ctimes), list(inos)) == tuple(
        map(list, columns_of(asked.files)))  # as the thread makes them
    assert index_mtime_ns == asked.index_mtime_ns
    assert decode_heard(data, at) == heard

    columns, _mtime, others, at = decode_asked(encode_asked(Asked()) + encode_heard(Heard()))
    assert others == {} and all(len(column) == 0 for column in columns)


@pytest.mark.parametrize("damage", ["magic", "truncated", "count", "oid length", "mode", "heard"])
def test_an_answer_that_does_not_add_up_is_refused(damage: str) -> None:
    data = encode_asked(an_asked())
    if damage == "magic":
        data = b"X" + data[1:]
    elif damage == "truncated":
        data = data[:-3]
    elif damage == "count":
        data = data.replace(b'"counts": [3, 1]', b'"counts": [2, 1]')
    elif damage == "oid length":
        data = data.replace(b'"oid_bytes": 20', b'"oid_bytes": 19')
    elif damage == "mode":
        data = encode_asked(Asked(0, IndexEntries([b"a"], [1 << 20], b"a" * 20, [1], [1], [1], [1])))
    else:
        with pytest.raises(ValueError):
            decode_heard(data + encode_heard(a_heard())[:-1], len(data))
        return
    with pytest.raises(ValueError):
        decode_asked(data)


@pytest.mark.parametrize("subdirectory", [False, True], ids=["top", "subdirectory"])
def test_the_index_read_in_a_child_vouches_as_on_a_thread(tmp_path: Path, subdirectory: bool) -> None:
    top = git_repo(tmp_path / "project", {f"app/pkg/m{i}.py": f"m = {i}\n" for i in range(8)}
                   | {f"app/{ODD}": "odd\n", "other/x.py": "x = 1\n"}, branch="main", commit="initial")
    time.sleep(1.1)
    git(top, "status", "--porcelain")  # the index written a second after its entries: none racy
    write(top, "app/pkg/m1.py", "m = 'edited'\n")  # after git's last look: git names it changed
    root = top / "app" if subdirectory else top
    repo = ShadowRepo(root)
    repo.ensure()
    project = ProjectRepo.discover(root)
    answers = []
    edited = "pkg/m1.py" if subdirectory else "app/pkg/m1.py"
    for in_child in (False, True):
        seed = IndexSeed(project, repo, max_file_bytes=1 << 20, tracked=TrackedFiles(project), in_child=in_child)
        assert edited in seed.vouched()  # told before git's verdict: the walk proceeds meanwhile
        withdrawn = set(seed.withdrawn())
        answers.append((dict(seed.vouched()), withdrawn, dict(seed.trees()), dict(seed({}))))
    assert answers[0] == answers[1]
    inside = {f"pkg/m{i}.py" for i in range(8) if i != 1} | {ODD}
    assert set(answers[1][0]) == (inside if subdirectory else {f"app/{p}" for p in inside} | {"other/x.py"})
    assert answers[1][1] == {edited}  # git's verdict took it back


def test_a_killed_child_leaves_nothing_reused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = git_repo(tmp_path / "project", {"a.py": "a = 1\n"}, branch="main", commit="initial")
    child = SeedChild(ProjectRepo.discover(root), max_file_bytes=1 << 20, stat_cache_path=None)
    child._proc.kill()  # type: ignore[union-attr]  # as the kernel's OOM killer would
    with caplog.at_level(logging.WARNING, logger="code_trajectory.recording.index_seed_child"):
        assert child.asked() is None
    assert "not reusing the project's index" in caplog.text
    assert child.asked() is None and child.heard() is None  # asked again: still nothing, no error
    stopped = SeedChild(ProjectRepo.discover(root), max_file_bytes=1 << 20, stat_cache_path=None)
    stopped.close()  # not wanted: stopped, its files closed
    stopped.close()
    assert stopped.asked() is None and stopped.heard() is None


def test_a_large_index_is_read_in_a_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = git_repo(tmp_path / "project", {"a.py": "a = 1\n"}, branch="main", commit="initial")
    repo = ShadowRepo(root)
    repo.ensure()
    started: list[SeedChild] = []
    monkeypatch.setattr(index_seed, "SeedChild", lambda *a, **k: started.append(SeedChild(*a, **k)) or started[-1])
    IndexSeed(ProjectRepo.discover(root), repo, max_file_bytes=1 << 20).trees()
    assert started == []  # a small index: read on a thread
    monkeypatch.setattr(index_seed, "CHILD_FROM_BYTES", 1)
    IndexSeed(ProjectRepo.discover(root), repo, max_file_bytes=1 << 20).trees()
    assert len(started) == 1


@pytest.mark.parametrize("in_child", [False, True], ids=["thread", "child"])
def test_a_version_4_index_vouches_for_odd_names_as_a_version_2_one(tmp_path: Path, in_child: bool) -> None:
    """A version 4 index (prefix-compressed paths, ``feature.manyFiles``) is not copied but written entry by entry:
    its paths, kept as bytes until then, reach git and come back with their undecodable bytes."""
    root = git_repo(tmp_path / "project", {f"pkg/m{i}.py": f"m = {i}\n" for i in range(4)} | {f"pkg/{ODD}": "odd\n"},
                    branch="main", commit="initial")
    git(root, "update-index", "--index-version", "4")
    time.sleep(1.1)
    git(root, "status", "--porcelain")  # the index written a second after its entries: none racy
    write(root, "pkg/m2.py", "m = 'edited'\n")
    repo = ShadowRepo(root)
    repo.ensure()
    project = ProjectRepo.discover(root)
    seed = IndexSeed(project, repo, max_file_bytes=1 << 20, tracked=TrackedFiles(project), in_child=in_child)
    assert set(seed.vouched()) == {f"pkg/m{i}.py" for i in range(4)} | {f"pkg/{ODD}"}
    assert seed.withdrawn() == {"pkg/m2.py"}
    assert set(seed.vouched()) == {"pkg/m0.py", "pkg/m1.py", "pkg/m3.py", f"pkg/{ODD}"}
