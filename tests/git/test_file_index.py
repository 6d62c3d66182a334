"""The file index: maintenance writes it, a file's versions and a symbol's history read through it are those
``git log`` finds (renames, deletions, commits newer than the index, an import kept aside); a damaged, hostile,
stale or non-linear index is passed over for ``git log``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import file_index, file_versions, indexed_log, log
from code_trajectory.git.maintenance import run_maintenance
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import symbol_history
from code_trajectory.recording.recorder import Recorder
from support import git_repo
from support.ui import build_history, record_edit

REF = "refs/heads/shadow/main"
HOT = "src/pkg0/module_000.py"


def _maintain(root: Path) -> None:
    with ShadowRepo(root) as repo:
        assert run_maintenance(repo) is not None


def _record(root: Path, paths: list[str]) -> str:
    """Record ``paths`` (written, moved or deleted already) in one snapshot with the real recorder."""
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        snapshot = recorder.record_paths(paths)
        assert snapshot is not None
        return snapshot.commit
    finally:
        recorder.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history of 300 snapshots with maintenance after 150 and 300 (written once; each test gets a copy)."""
    root = git_repo(tmp_path_factory.mktemp("pristine") / "project", {"README.md": "a project\n"}, branch="main",
                    commit="initial")
    build_history(root, 300, files=4, chunk=150, loose=True, max_functions=30, between=lambda _: _maintain(root))
    return root


@pytest.fixture
def history(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(pristine, copy, symlinks=True)
    return copy


def _versions(repo: ShadowRepo, start: str, path: str, lister: file_versions.Lister | None, **options) -> list[tuple]:
    return [(v.record.oid, v.path, v.change, v.record.subject, v.record.trailers, v.record.parents)
            for v in file_versions.file_history(repo, start, path, lister=lister, **options)]


def _paged(repo: ShadowRepo, start: str, path: str, lister: file_versions.Lister | None) -> list[tuple]:
    return [(v.record.oid, v.path, v.change) for v in file_versions.FileVersions(repo, start, path, lister)]


def _trace(repo: ShadowRepo, tip: str, path: str, symbol: str, index_ref: str | None) -> tuple:
    name, found, _more = symbol_history.trace(repo, tip, path, symbol, 10, index_ref=index_ref)
    return name, [(v.entry.record.oid, v.what, v.diff, v.note) for v in found]


def _every_path(repo: ShadowRepo, tip: str) -> list[str]:
    return repo.git.text(["ls-tree", "-r", "--name-only", tip]).splitlines()


def test_versions_read_through_the_index_are_git_logs_with_renames_deletions_and_newer_commits(
        history: Path) -> None:
    with ShadowRepo(history) as repo:
        stored = file_index.load(repo, REF)
        assert stored is not None and stored.linear and stored.count == 300 and stored.tip == repo.resolve(REF)
        edited, gone = [p for p in _every_path(repo, repo.resolve(REF)) if p != HOT][:2]
    with ShadowRepo(history) as repo:  # the history was written to the shadow repository only
        body = repo.git.out(["show", f"{REF}:{HOT}"])
    (history / "src/moved").mkdir(parents=True)
    (history / "src/moved/module_000.py").write_bytes(body)
    moved = _record(history, [HOT, "src/moved/module_000.py"])  # newer than the index: a rename
    record_edit(history, edited, "def only():\n    return 'replaced whole'\n")
    (history / "src/late.py").write_text("def late():\n    return 1\n")
    deleted = _record(history, [gone, "src/late.py"])  # not in the work tree: deleted
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        lister = indexed_log.open_log(repo, REF, tip)
        assert lister is not None and lister.newer[0] == tip and len(lister.newer) == 3
        paths = _every_path(repo, tip) + [gone, HOT, "no/such/file.py"]
        for path in paths:
            assert _versions(repo, tip, path, lister) == _versions(repo, tip, path, None), path
            assert _paged(repo, tip, path, lister) == _paged(repo, tip, path, None), path
            for limit in (1, 7, 64):
                assert (_versions(repo, tip, path, lister, limit=limit)
                        == _versions(repo, tip, path, None, limit=limit)), (path, limit)
        older = repo.resolve(f"{REF}~150")
        assert _versions(repo, older, HOT, lister) == _versions(repo, older, HOT, None)
        assert _versions(repo, moved, "src/moved/module_000.py", lister)[-1][0] == repo.resolve(f"{REF}~302")
        assert _versions(repo, deleted, gone, lister)[0][2].status == "D"
    _maintain(history)  # the index takes the newer commits in
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        lister = indexed_log.open_log(repo, REF, tip)
        assert lister is not None and lister.newer == [] and lister.index.count == 303
        for path in paths:
            assert _versions(repo, tip, path, lister) == _versions(repo, tip, path, None), path


def test_a_symbols_history_through_the_index_is_the_same_answer_in_process_and_from_the_cli(
        history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        text = repo.git.text(["show", f"{tip}:{HOT}"])
        symbols = [line[4:line.index("(")] for line in text.splitlines() if line.startswith("def f")][:2] + [line[4:line.index("(")] for line in text.splitlines() if line.startswith("def g")][-2:]
        for symbol in symbols:
            assert _trace(repo, tip, HOT, symbol, REF) == _trace(repo, tip, HOT, symbol, None), symbol
        calls = []
        real = log.read_log
        monkeypatch.setattr(log, "read_log", lambda *a, **k: calls.append(k.get("paths")) or real(*a, **k))
        _trace(repo, tip, HOT, "f0", REF)
        assert (HOT,) not in calls  # the versions came from the index, not from a walk of the history
    out = {}
    for name, index in (("indexed", True), ("plain", False)):
        if not index:
            shutil.rmtree(history / ".trajectory" / "state" / "file-index")
        proc = subprocess.run([sys.executable, "-m", "code_trajectory", "symbol", HOT, "f0", "--project",
                               str(history)], capture_output=True, text=True, timeout=120, env=os.environ)
        assert proc.returncode == 0, proc.stderr
        out[name] = proc.stdout
    assert out["indexed"] == out["plain"] and "f0" in out["plain"]


def _rewrite(repo: ShadowRepo, change) -> None:  # type: ignore[no-untyped-def]
    """Write ``change(index)``'s result as the stored index, with a valid digest (a hostile but well-formed file)."""
    stored = file_index.load(repo, REF)
    assert stored is not None
    stored.runs()
    change(stored)
    (repo.state_dir / "file-index").mkdir(exist_ok=True)
    next((repo.state_dir / "file-index").glob("*.bin")).write_bytes(stored.serialize())


def test_a_damaged_hostile_or_stale_index_is_passed_over_for_git_log(history: Path) -> None:
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        key = file_index.path_key(HOT.encode())
        expected = _versions(repo, tip, HOT, None)
        expected_trace = _trace(repo, tip, HOT, "f0", None)
        path = next((repo.state_dir / "file-index").glob("*.bin"))
        good = path.read_bytes()

        def check() -> None:
            lister = indexed_log.open_log(repo, REF, tip)
            assert lister is None or _versions(repo, tip, HOT, lister) == expected
            assert _trace(repo, tip, HOT, "f0", REF) == expected_trace

        for damaged in (good[:-7], good[:40], b"CTFI1\nnot an index", good[:100] + bytes([good[100] ^ 1]) + good[101:]):
            path.write_bytes(damaged)
            assert file_index.load(repo, REF) is None
            check()
        hostile = [
            lambda i: i.paths[key].pop(len(i.paths[key]) // 2),  # a version left out
            lambda i: i.paths[key].insert(0, 0) if i.paths[key][0] else None,  # a commit that did not touch it
            lambda i: i.paths.__setitem__(key, sorted({*i.paths[key], 5, 6, 7})),
            lambda i: setattr(i, "oids", i.oids[20:40] + i.oids[:20] + i.oids[40:]),  # commits out of order
            lambda i: setattr(i, "oids", i.oids[:-20] + bytes(20)),  # a commit that is not there
            lambda i: i.wide.append(i.count + 5),
        ]
        for change in hostile:
            path.write_bytes(good)
            _rewrite(repo, change)
            check()
        path.write_bytes(good)
        assert indexed_log.open_log(repo, REF, repo.resolve(f"{REF}~100")) is not None  # an older tip: in it
        base = repo.git.text(["commit-tree", f"{tip}~100^{{tree}}", "-p", f"{tip}~101", "-m", "rewritten"])
        repo.update_ref(REF, base, tip, "test: history rewritten")
        assert indexed_log.open_log(repo, REF, base) is None  # the index's tip is not an ancestor
        assert _trace(repo, base, HOT, "f0", REF) == _trace(repo, base, HOT, "f0", None)
        assert file_index.update(repo, REF) == 200  # rebuilt from the new tip
        assert indexed_log.open_log(repo, REF, base) is not None
        (repo.git_dir / "shallow").write_text(repo.resolve(f"{REF}~50") + "\n")  # old history dropped
        assert indexed_log.open_log(repo, REF, base) is None
        (repo.git_dir / "shallow").unlink()
        assert indexed_log.open_log(repo, REF, repo.resolve(f"{REF}~3")) is not None


def test_a_merge_makes_the_index_unused_and_a_wide_import_is_a_candidate_for_every_path(
        history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        monkeypatch.setattr(file_index, "WIDE_COMMIT", 2)  # the import of 4 files is kept aside
        shutil.rmtree(repo.state_dir / "file-index")
        assert file_index.update(repo, REF) == 300
        stored = file_index.load(repo, REF)
        assert stored is not None and stored.wide == [0]
        lister = indexed_log.open_log(repo, REF, tip)
        for path in _every_path(repo, tip):
            assert _versions(repo, tip, path, lister) == _versions(repo, tip, path, None), path
        merge = repo.git.text(["commit-tree", f"{tip}^{{tree}}", "-p", tip, "-p", f"{tip}~5", "-m", "merge"])
        repo.update_ref(REF, merge, tip, "test: a merge")
        assert file_index.update(repo, REF) == 1 and not file_index.load(repo, REF).linear
        assert indexed_log.open_log(repo, REF, merge) is None


def test_objects_read_in_one_round_trip_keep_the_cat_file_stream_in_step(history: Path) -> None:
    with ShadowRepo(history) as repo:
        tip = repo.resolve(REF)
        blobs = [v.change.new_oid for v in file_versions.file_history(repo, tip, HOT, limit=5)]
        seen: list[tuple[str, bytes] | None] = []
        repo.each_object([blobs[0], "0" * 40, blobs[1]], seen.append)
        assert seen[1] is None and seen[0] == repo.read_object(blobs[0]) and seen[2] == repo.read_object(blobs[1])

        def fail(_found: object) -> None:
            raise RuntimeError("visit failed")

        with pytest.raises(RuntimeError):
            repo.each_object(blobs, fail)
        assert repo.read_object(blobs[3]) == repo.read_object(blobs[3])[:2]  # answers still in step
        with pytest.raises(ValueError):
            repo.each_object(["HEAD"], seen.append)
