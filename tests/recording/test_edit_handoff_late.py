"""An edit hook racing its recording process's stop: the stop's snapshot records the saved file first, the hook's
hand-over comes after it. The edit keeps its ``Trajectory-Origin``: the stopping process starts an edit worker for
a hand-over its hook wrote while it still held the lock, and the worker adds the origin to the stop's snapshot."""

from __future__ import annotations

import os
import sys
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


def test_a_test_run_over_a_late_tag_is_recorded_on_the_tagged_copy(project: Path) -> None:
    """``code-trajectory test`` records its run on the tip it found; the edit worker added a late hand-over's origin
    to that tip while the command ran: the run was written on the commit the branch no longer holds, and
    ``test-history`` said "No test runs recorded yet"."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder
    from code_trajectory.testruns.service import run_and_record
    from code_trajectory.testruns.store import history

    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        recorder.reconcile()
        write(project, "src/app.py", "def main():\n    return 2\n")  # the agent's save, a stop's snapshot took it
        before = recorder.record_paths(["src/app.py"])
        assert before is not None
        hand_over_and_drain = (  # what the worker does while the tests run
            "import sys; from pathlib import Path; from code_trajectory.recording import edit_worker, handoff; "
            "root = Path(sys.argv[1]); "
            "assert handoff.hand_over_edit(root / '.trajectory' / 'state', ['src/app.py'], root=root, "
            "client='claude-code', tool='Edit', session='s1'); "
            "edit_worker.drain(root); print('1 passed in 0.01s')")
        run, status = run_and_record(project, [sys.executable, "-c", hand_over_and_drain, str(project)],
                                     recorder=recorder, echo=False)
        tip = git(project, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main").strip()
        assert status == 0 and run.record_error is None
        assert ORIGIN in tip_message(project) and tip != before.commit  # the tag happened during the run
        assert run.commit == tip
        assert [r.commit for r in history(recorder.repo, tip=tip)] == [tip]
    finally:
        recorder.close()


def test_a_planted_tip_of_any_shape_is_left_as_it_is(project: Path) -> None:
    """The tip read to tag a late hand-over is untrusted (a `.trajectory` that came with a tarball): a commit header
    line without a value, or a committer time that is no number, is no edit of this hand-over: nothing is written
    and nothing is raised."""
    from code_trajectory.recording.handover_tag import tag_recorded_edit

    with watching(project) as session:
        repo = session.recorder.repo
        ref = f"refs/heads/shadow/{session.branch}"
        tip = git(project, "--git-dir", str(repo.git_dir), "rev-parse", ref).strip()
        tree = git(project, "--git-dir", str(repo.git_dir), "rev-parse", f"{tip}^{{tree}}").strip()
        for header in (f"tree {tree}\nparent {tip}\nbare\ncommitter A <a@b> 1700000000 +0000\n",
                       f"tree {tree}\nparent {tip}\ncommitter A <a@b> soon +0000\n"):
            body = header + "\n[AUTO-TRJ] x\n\nTrajectory-Kind: snapshot\n"
            (project.parent / "planted").write_text(body)
            planted = git(project, "--git-dir", str(repo.git_dir), "hash-object", "-t", "commit", "-w",
                          "--literally", str(project.parent / "planted")).strip()
            git(project, "--git-dir", str(repo.git_dir), "update-ref", ref, planted)
            assert tag_recorded_edit(session.recorder, ["src/app.py"], "claude-code; tool=Edit") is None
            assert git(project, "--git-dir", str(repo.git_dir), "rev-parse", ref).strip() == planted
