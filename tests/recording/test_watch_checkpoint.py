"""``checkpoint`` while the watcher runs: the pending paths only when the watcher vouches, a full scan otherwise;
new and re-created directories; watch groups replaced without a rescan."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from code_trajectory.recording import watcher as watcher_module
from code_trajectory.recording import watchset
from support import git, wait_for, watching, write
from support import shadow_count as count

LONG = 60.0  # a debounce that never fires during a test: only checkpoints write snapshots


def shadow_file(project: Path, rel: str, ref: str = "refs/heads/shadow/main") -> str:
    return git(project, "--git-dir=.trajectory", "show", f"{ref}:{rel}", check=False)


def shadow_files(project: Path) -> set[str]:
    return set(git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
               .split())


def count_scans(session, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the recorder's full scans of the work tree from now on."""
    calls: list[int] = []
    original = session.recorder._scan

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(session.recorder, "_scan", counted)
    return calls


def test_a_save_just_before_checkpoint_is_in_it_without_a_full_scan(project: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with watching(project, debounce=LONG) as session:
        scans = count_scans(session, monkeypatch)
        for i in range(15):
            write(project, "src/app.py", f"def main():\n    return {i + 10}\n")  # no pause: events in flight
            answer = session.checkpoint(f"round {i}")
            assert "Checkpoint recorded" in answer, answer
            assert shadow_file(project, "src/app.py") == f"def main():\n    return {i + 10}\n"
        assert scans == []
        log = git(project, "--git-dir=.trajectory", "log", "-1", "--format=%B", "refs/heads/shadow/main")
        assert "round 14" in log
        assert "Nothing changed" in session.checkpoint("again")  # nothing pending: no snapshot, still named
        assert scans == []


def test_files_in_a_new_directory_are_checkpointed_and_its_later_edits_seen(project: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with watching(project, debounce=LONG) as session:
        scans = count_scans(session, monkeypatch)
        for i in range(5):
            write(project, f"pkg/deep/m{i}.py", f"M = {i}\n")
        session.checkpoint("new dir")
        assert {f"pkg/deep/m{i}.py" for i in range(5)} <= shadow_files(project)
        write(project, "pkg/deep/m0.py", "M = 'edited'\n")  # seen through the new directory's own watch
        session.checkpoint("edit in it")
        assert shadow_file(project, "pkg/deep/m0.py") == "M = 'edited'\n"
        # delete it and create it again: the kernel dropped the old watch, a new one is set
        shutil.rmtree(project / "pkg")
        session.checkpoint("deleted")
        assert not any(f.startswith("pkg/") for f in shadow_files(project))
        write(project, "pkg/deep/again.py", "A = 1\n")
        session.checkpoint("created again")
        write(project, "pkg/deep/again.py", "A = 2\n")
        session.checkpoint("edited again")
        assert shadow_file(project, "pkg/deep/again.py") == "A = 2\n"
        assert scans == []


def test_replaced_watch_groups_hand_over_without_a_rescan(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watchset, "MAX_EXTRA_GROUPS", 1)  # every second new directory merges the groups
    with watching(project, debounce=LONG) as session:
        scans = count_scans(session, monkeypatch)
        for i in range(4):
            write(project, f"new{i}/a.py", f"A = {i}\n")
            session.checkpoint(f"dir {i}")
        for i in range(4):
            write(project, f"new{i}/a.py", f"A = 'edited {i}'\n")
        write(project, "src/app.py", "EDITED = 1\n")
        session.checkpoint("edits")
        assert all(shadow_file(project, f"new{i}/a.py") == f"A = 'edited {i}'\n" for i in range(4))
        assert shadow_file(project, "src/app.py") == "EDITED = 1\n"
        assert scans == []
        wait_for(lambda: session.watcher.live_groups <= 2)


def test_checkpoint_scans_when_the_watcher_cannot_vouch(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with watching(project, debounce=LONG) as session:
        scans = count_scans(session, monkeypatch)
        # a batch big enough that the kernel's queue may have overflowed: events may be lost
        monkeypatch.setattr(watcher_module, "OVERFLOW_EVENTS", 1)
        write(project, "src/app.py", "A = 1\n")
        session.checkpoint("after overflow")
        assert len(scans) == 1 and shadow_file(project, "src/app.py") == "A = 1\n"
        monkeypatch.setattr(watcher_module, "OVERFLOW_EVENTS", 10 ** 9)
        write(project, "src/app.py", "A = 2\n")
        session.checkpoint("healthy again")
        assert len(scans) == 1 and shadow_file(project, "src/app.py") == "A = 2\n"
        # unhealthy: the watcher reported a problem
        session.watcher.last_error = "snapshot failed, will retry: disk full"
        write(project, "src/app.py", "A = 3\n")
        session.checkpoint("unhealthy")
        assert len(scans) == 2 and shadow_file(project, "src/app.py") == "A = 3\n"
        session.watcher.last_error = None
        # a pending rescan (here: as after a HEAD move)
        session.recorder.note_changes((), rescan=True)
        session.checkpoint("rescan due")
        assert len(scans) == 3
        # a watch group died
        group = session.watcher._groups[0]
        group.error = RuntimeError("backend failed")
        monkeypatch.setattr(group.thread, "is_alive", lambda: False)
        assert session.watcher.vouch() is not None


def checkpoint_scans_once(session, project: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str) -> None:
    """Save ``text`` to ``src/app.py`` and checkpoint ``session``: one full scan, the text recorded; close it."""
    try:
        scans = count_scans(session, monkeypatch)
        write(project, "src/app.py", text)
        session.checkpoint(message)
        assert len(scans) == 1 and shadow_file(project, "src/app.py") == text
    finally:
        session.close()


def test_checkpoint_scans_when_polling_or_without_a_watcher(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    session = ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=LONG), watch=True,
                             force_polling=True)
    session.start()
    checkpoint_scans_once(session, project, monkeypatch, "POLLED = 1\n", "polled")
    one_shot = ProjectSession(project, TrajectorySettings.load(project))  # a CLI checkpoint: no watcher here
    checkpoint_scans_once(one_shot, project, monkeypatch, "CLI = 1\n", "cli")
    assert count(project) >= 3


def test_the_debounce_counts_from_the_last_event_not_from_its_batch(project: Path) -> None:
    import time

    import watchfiles

    from code_trajectory.recording import watchgroups

    with watching(project, debounce=LONG) as session:
        watcher = session.watcher
        # watchfiles yields a batch a step after its last event at the earliest: the window starts then
        watcher._on_batch({(watchfiles.Change.modified, str(project / "src" / "app.py"))})
        assert watcher._last_change <= time.monotonic() - watchgroups.STEP_MS / 1000
        assert watchgroups.DEBOUNCE_MS <= 50 and watchgroups.STEP_MS <= 25  # what watchfiles adds stays small


def test_a_checkpoint_is_told_to_the_snapshot_callback_as_the_watchers_are(project: Path) -> None:
    """``watch`` prints one line per snapshot through ``on_snapshot``: the checkpoints it takes (its own, or asked by
    another process's ``checkpoint``) are lines too, not only the watcher's debounced snapshots."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    seen = []
    s = ProjectSession(project, TrajectorySettings.load(project), on_snapshot=seen.append)
    s.start()
    try:
        (project / "a.py").write_text("a = 1\n")
        s.checkpoint("first")
        s.checkpoint("nothing changed")  # a name, no snapshot: no line
    finally:
        s.close()
    checkpoints = [snap for snap in seen if snap.kind == "checkpoint"]
    assert len(checkpoints) == 1 and "first" in checkpoints[0].subject, seen
