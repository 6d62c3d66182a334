"""An edit hook racing its recording process's stop: the stop's snapshot records the saved file first, the hook's
hand-over comes after it. The edit keeps its ``Trajectory-Origin``: the stopping process starts an edit worker for
a hand-over its hook wrote while it still held the lock, and the worker adds the origin to the stop's snapshot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_trajectory.recording import handoff
from support import git, shadow_count, wait_for, watching, write

ORIGIN = "Trajectory-Origin: claude-code; tool=Edit; session=s1"


def tip_message(project: Path) -> str:
    return git(project, "--git-dir=.trajectory", "log", "-1", "--format=%B", "refs/heads/shadow/main")


def stop_then_hand_over(session, monkeypatch: pytest.MonkeyPatch, project: Path, rel: str | list[str]) -> None:
    """Close ``session`` with the hook's hand-over of ``rel`` (a path or a tool call's paths) written right after its last snapshot, before it
    releases the recorder lock (what a hook that saw it record does)."""
    watcher = session.watcher
    stop = watcher.stop

    def stop_and_hook(*args, **kwargs):
        stop(*args, **kwargs)
        assert handoff.hand_over_edit(project / ".trajectory" / "state", rel if isinstance(rel, list) else [rel],
                                      root=project, client="claude-code", tool="Edit", session="s1")

    monkeypatch.setattr(watcher, "stop", stop_and_hook)


def test_a_hand_over_written_while_the_recorder_stops_tags_the_stops_snapshot(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with watching(project, debounce=30) as session:  # the edit is pending when the stop comes
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 'saved just before the stop'\n")
        wait_for(lambda: session.recorder.has_pending(wait=False, rescan=False), timeout=30)
        stop_then_hand_over(session, monkeypatch, project, "src/app.py")
    assert shadow_count(project) == count + 1  # the stop's snapshot, with nothing to add
    wait_for(lambda: ORIGIN in tip_message(project), timeout=60)  # the worker the stopping process started
    assert shadow_count(project) == count + 1 and "saved just before the stop" in git(
        project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py")
    requests = project / ".trajectory" / "state" / "requests"
    wait_for(lambda: not list(requests.iterdir()), timeout=30)
    # the commit without the origin stays reachable through the reflog
    assert ORIGIN not in git(project, "--git-dir=.trajectory", "log", "-1", "--format=%B",
                             "refs/heads/shadow/main@{1}")


def test_a_stops_snapshot_of_other_files_too_is_left_as_recorded(project: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with watching(project, debounce=30) as session:
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 'the agent'\n")
        write(project, "notes.txt", "a shell command's file\n")
        wait_for(lambda: session.recorder.has_pending(wait=False, rescan=False), timeout=30)
        stop_then_hand_over(session, monkeypatch, project, "src/app.py")
    requests = project / ".trajectory" / "state" / "requests"
    wait_for(lambda: not list(requests.iterdir()), timeout=60)  # the worker recorded nothing and tagged nothing
    assert shadow_count(project) == count + 1 and ORIGIN not in tip_message(project)


def test_a_late_hand_over_through_a_symlink_tags_the_snapshot_of_its_target(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``CLAUDE.md`` a link to ``AGENTS.md``: the hook names both (the link, unchanged, and the target the tool
    wrote); the stop's snapshot changed the target only, and is still this edit alone."""
    write(project, "AGENTS.md", "# Agents\n")
    os.symlink("AGENTS.md", project / "CLAUDE.md")
    with watching(project, debounce=30) as session:
        count = shadow_count(project)
        with open(project / "CLAUDE.md", "a") as f:
            f.write("Run the tests first.\n")
        wait_for(lambda: session.recorder.has_pending(wait=False, rescan=False), timeout=30)
        stop_then_hand_over(session, monkeypatch, project, ["CLAUDE.md", "AGENTS.md"])
    requests = project / ".trajectory" / "state" / "requests"
    wait_for(lambda: not list(requests.iterdir()), timeout=60)
    assert shadow_count(project) == count + 1 and ORIGIN in tip_message(project)
