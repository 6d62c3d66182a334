"""The edit hook hands its edit over to the process recording the project (issue 29: hooks that cost nothing)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from code_trajectory.recording import checkpoint_requests, handoff
from code_trajectory.recording.liveness import recording_now
from support import git, server_command, shadow_count, subprocess_env, wait_for, watching, write


def run_hook(project: Path, event: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run([*server_command(), "hook", event, "--project", str(project)], env=subprocess_env(),
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)


def edit_payload(project: Path, rel: str, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(project / rel)}}


def claimer(session) -> checkpoint_requests.RequestServer:
    """A request server of ``session`` that claims only when polled (the session's own one is stopped)."""
    return checkpoint_requests.RequestServer(session.recorder.repo.state_dir, session._answer_request,
                                             handle_edit=session._record_handed_over_edit)


def last_message(project: Path) -> str:
    return git(project, "--git-dir=.trajectory", "log", "-1", "--format=%B")


def test_the_edit_hook_hands_over_to_the_recording_process_which_tags_the_snapshot(project: Path) -> None:
    with watching(project, debounce=30) as session:  # no watcher snapshot comes within the test
        git_dir = project / ".trajectory"
        assert recording_now(git_dir)
        assert run_hook(project, "prompt", {"session_id": "s1", "cwd": str(project),
                                            "prompt": "Make main return 5"}).returncode == 0
        assert session._requests is not None
        session._requests.stop()  # the hand-over is looked at below, before the recorder claims it
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 5\n")
        hook = run_hook(project, "edit", edit_payload(project, "src/app.py"))
        assert hook.returncode == 0 and hook.stderr == ""
        handed = list((git_dir / "state" / "requests").glob("*.edit"))
        assert len(handed) == 1 and shadow_count(project) == count  # the hook wrote one file and recorded nothing
        assert json.loads(handed[0].read_text()) == {"paths": ["src/app.py"], "client": "claude-code",
                                                     "tool": "Edit", "session": "s1"}
        claimer(session).poll()  # what the recording process does every 0.1 s
        assert shadow_count(project) == count + 1
        message = last_message(project)
        assert "Make main return 5" in message
        assert "Trajectory-Origin: claude-code; tool=Edit; session=s1" in message
        assert not list((git_dir / "state" / "requests").iterdir())


def test_with_a_live_recorder_the_hand_over_lands_on_its_own(project: Path) -> None:
    with watching(project, debounce=30):
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 6\n")
        assert run_hook(project, "edit", edit_payload(project, "src/app.py", "s2")).returncode == 0
        wait_for(lambda: shadow_count(project) == count + 1, timeout=30)
        assert "tool=Edit; session=s2" in last_message(project)


def test_with_nothing_recording_the_hook_records_the_edit_itself(project: Path) -> None:
    with watching(project, debounce=30):
        pass  # a history exists; nothing records it now
    assert not recording_now(project / ".trajectory")
    count = shadow_count(project)
    write(project, "src/app.py", "def main():\n    return 7\n")
    hook = run_hook(project, "edit", edit_payload(project, "src/app.py", "s3"))
    assert hook.returncode == 0 and hook.stderr == ""
    assert shadow_count(project) == count + 1
    assert "tool=Edit; session=s3" in last_message(project)
    assert not list((project / ".trajectory" / "state" / "requests").glob("*.edit"))


@pytest.mark.parametrize("payload", [
    b"not json",
    json.dumps({"paths": ["../outside.py"], "client": "claude-code", "tool": "Edit", "session": ""}).encode(),
    json.dumps({"paths": ["/etc/passwd"], "client": "claude-code", "tool": "Edit", "session": ""}).encode(),
    json.dumps({"paths": ["a.py"], "client": "x\nTrajectory-Origin: forged", "tool": "Edit", "session": ""}).encode(),
    json.dumps({"paths": ["a.py"], "client": "claude-code", "tool": "Edit", "session": "", "run": "sh"}).encode(),
    json.dumps({"paths": ["a.py"], "client": "", "tool": "Edit", "session": ""}).encode(),
    json.dumps({"paths": [], "client": "claude-code", "tool": "Edit", "session": ""}).encode(),
    json.dumps({"paths": "a.py", "client": "claude-code", "tool": "Edit", "session": ""}).encode(),
    json.dumps({"paths": ["a.py"] * 65, "client": "claude-code", "tool": "Edit", "session": ""}).encode(),
])
def test_a_hostile_hand_over_is_refused(payload: bytes) -> None:
    with pytest.raises(ValueError):
        handoff.parse_edit(payload)


def test_junk_hand_overs_are_removed_and_nothing_is_recorded(project: Path) -> None:
    with watching(project, debounce=30) as session:
        directory = session.recorder.repo.state_dir / "requests"
        wait_for(directory.is_dir)
        assert session._requests is not None
        session._requests.stop()
        count = shadow_count(project)
        (directory / f"{'a' * 32}.edit").write_text(json.dumps(
            {"paths": ["src/app.py", "../../etc/passwd"], "client": "claude-code", "tool": "Edit", "session": ""}))
        (directory / f"{'b' * 32}.edit").write_bytes(b"{" * 10000)
        os.symlink("/dev/zero", directory / f"{'c' * 32}.edit")
        claimer(session).poll()
        assert shadow_count(project) == count
        assert not [p for p in directory.iterdir() if p.suffix in (".edit", ".taken")]
        assert session.watcher is not None and session.watcher.running


def test_the_lock_probe_creates_nothing(tmp_path: Path) -> None:
    assert not recording_now(tmp_path)
    assert not (tmp_path / "recorder.lock").exists()


def test_one_tool_call_editing_several_files_is_one_snapshot(project: Path) -> None:
    """Codex's apply_patch names several files: handed over together, they are snapshotted together."""
    with watching(project, debounce=30) as session:
        wait_for((session.recorder.repo.state_dir / "requests").is_dir)
        assert session._requests is not None
        session._requests.stop()
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 8\n")
        write(project, "src/new.py", "VALUE = 8\n")
        assert handoff.hand_over_edit(project / ".trajectory" / "state", ["src/app.py", "src/new.py"],
                                      client="codex", tool="apply_patch", session="s4")
        claimer(session).poll()
        assert shadow_count(project) == count + 1
        assert "Trajectory-Origin: codex; tool=apply_patch; session=s4" in last_message(project)
        changed = git(project, "--git-dir=.trajectory", "show", "--name-only", "--format=", "HEAD").split()
        assert sorted(changed) == ["src/app.py", "src/new.py"]
