"""What a large scan leaves in memory: bounded caches, dropped start-up changes, memory handed back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.memory import release_free_memory
from code_trajectory.git import shadow
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import MODE_FILE, TreeEntry
from code_trajectory.recording import reconcile as reconcile_module
from code_trajectory.recording import session as session_module
from code_trajectory.recording.session import ProjectSession
from support import write


def test_parsed_trees_kept_in_memory_are_bounded_and_read_again(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(shadow, "MAX_CACHED_TREE_ENTRIES", 10)
    repo = ShadowRepo(tmp_path)
    repo.ensure()
    try:
        blob = repo.write_object(b"blob", b"x\n")
        trees = [repo.write_tree({f"f{i}-{j}".encode(): TreeEntry(MODE_FILE, blob) for j in range(4)})
                 for i in range(6)]
        assert repo.cached_trees[0] <= 3 and repo.cached_trees[1] <= 10
        assert set(repo.read_tree(trees[0])) == {f"f0-{j}".encode() for j in range(4)}  # evicted, read from disk
        repo.forget_trees()
        assert repo.cached_trees == (0, 0)
    finally:
        repo.close()


def test_a_large_start_up_scan_keeps_no_file_list_and_no_caches(project: Path, monkeypatch) -> None:
    for i in range(12):
        write(project, f"pkg/m{i}.py", f"x = {i}\n")
    monkeypatch.setattr(session_module, "KEEP_STARTUP_CHANGES", 5)
    monkeypatch.setattr(reconcile_module, "RELEASE_MEMORY_AFTER_FILES", 5)
    released = []
    monkeypatch.setattr(reconcile_module, "release_free_memory", lambda: released.append(True))
    session = ProjectSession(project, TrajectorySettings.load(project), watch=False)
    try:
        snap = session.start(background=False)
        assert snap is not None and snap.subject and snap.changes == []  # 15 files imported, list dropped
        assert released and session.recorder.repo.cached_trees == (0, 0)
        write(project, "pkg/m0.py", "x = 'after the import'\n")
        later = session.recorder.reconcile()  # the dropped caches are rebuilt on demand
        assert [c.path for c in later.changes] == ["pkg/m0.py"]
    finally:
        session.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_free_memory_is_handed_back_on_linux() -> None:
    assert release_free_memory() is True


def test_tool_calls_in_a_row_share_one_release_on_a_background_thread(monkeypatch) -> None:
    import threading

    from code_trajectory.core import memory

    ran = threading.Event()
    calls: list[str] = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: (calls.append(threading.current_thread().name),
                                                               ran.set()))
    for _ in range(5):
        memory.release_soon(0.2)
    assert ran.wait(5) and len(calls) == 1 and calls[0] != threading.current_thread().name



def test_handing_memory_back_runs_no_program() -> None:
    """``malloc_trim`` is looked up among the symbols already loaded: no ``ldconfig -p`` (which
    ``ctypes.util.find_library`` runs) nor any other child process is started, in a fresh interpreter."""
    import subprocess

    from support import subprocess_env

    probe = ("import subprocess, sys\n"
             "class Refused(subprocess.Popen):\n"
             "    def __init__(self, args, *a, **k):\n"
             "        sys.exit(f'ran {args!r}')\n"
             "subprocess.Popen = Refused\n"
             "from code_trajectory.core.memory import release_free_memory\n"
             "print(release_free_memory())\n")
    done = subprocess.run([sys.executable, "-c", probe], env=subprocess_env(), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    import platform

    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert done.stdout.strip() == "True"  # glibc's malloc_trim found without a helper program
