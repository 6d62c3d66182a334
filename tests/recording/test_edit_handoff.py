"""The edit hook hands its edit over to the process recording the project (issue 29: hooks that cost nothing)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import filelock
import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import checkpoint_requests, edit_worker, handoff
from code_trajectory.recording.liveness import recording_now
from code_trajectory.recording.recorder import Recorder
from support import git, server_command, shadow_count, subprocess_env, wait_for, wait_hooks_done, watching, write


def run_hook(project: Path, event: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run([*server_command(), "hook", event, "--project", str(project)], env=subprocess_env(),
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)


def edit_payload(project: Path, rel: str, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(project / rel)}}


def claimer(session) -> checkpoint_requests.RequestServer:
    """A request server of ``session`` that claims only when polled (the session's own one is stopped)."""
    return checkpoint_requests.RequestServer(session.recorder.repo.state_dir, session._answer_request,
                                             drain_edits=session.recorder.record_handovers)


def hand_over(project: Path, paths: list[str], client: str, tool: str, session: str) -> bool:
    """What an edit hook hands over for ``paths`` (relative to ``project``), content as it is now."""
    return handoff.hand_over_edit(project / ".trajectory" / "state", paths, root=project, client=client, tool=tool,
                                  session=session)


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
        assert json.loads(handed[0].read_text()) == {
            "paths": ["src/app.py"], "client": "claude-code", "tool": "Edit", "session": "s1",
            "contents": {"src/app.py": {"exec": False, "data": base64.b64encode(b"def main():\n    return 5\n").decode()}}}
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


def test_with_nothing_recording_a_worker_records_the_edit_after_the_hook_returned(project: Path) -> None:
    with watching(project, debounce=30):
        pass  # a history exists; nothing records it now
    git_dir = project / ".trajectory"
    assert not recording_now(git_dir)
    assert run_hook(project, "prompt", {"session_id": "s3", "cwd": str(project),
                                        "prompt": "Make main return 7"}).returncode == 0
    count = shadow_count(project)
    write(project, "src/app.py", "def main():\n    return 7\n")
    writers = filelock.FileLock(str(git_dir / "write.lock"), timeout=10, thread_local=False)
    with writers:  # the worker waits for it: the hook must not
        hook = run_hook(project, "edit", edit_payload(project, "src/app.py", "s3"))
        assert hook.returncode == 0 and hook.stderr == "" and hook.stdout == ""  # and its pipes were closed
        assert shadow_count(project) == count  # the hook returned before the edit was recorded
        wait_for(lambda: recording_now(git_dir))  # the worker holds the recorder lock, waiting for the writers
    wait_for(lambda: shadow_count(project) == count + 1, timeout=30)
    message = last_message(project)
    assert "Make main return 7" in message and "Trajectory-Origin: claude-code; tool=Edit; session=s3" in message
    wait_hooks_done(project)
    assert not list((git_dir / "state" / "requests").iterdir())


def test_hand_overs_nobody_claimed_are_recorded_by_the_next_hooks_worker(project: Path) -> None:
    with watching(project, debounce=30):
        pass
    count = shadow_count(project)
    write(project, "src/left.py", "LEFT = 1\n")  # a worker was killed before it claimed this one
    assert hand_over(project, ["src/left.py"], "gemini", "write_file", "s5")
    write(project, "src/app.py", "def main():\n    return 9\n")
    assert run_hook(project, "edit", edit_payload(project, "src/app.py", "s6")).returncode == 0
    wait_for(lambda: shadow_count(project) == count + 2, timeout=30)
    wait_hooks_done(project)
    origins = git(project, "--git-dir=.trajectory", "log", "-2", "--format=%(trailers:key=Trajectory-Origin,valueonly)",
                  "refs/heads/shadow/main").split("\n")
    assert sorted(filter(None, origins)) == ["claude-code; tool=Edit; session=s6", "gemini; tool=write_file; session=s5"]


def test_a_hand_over_a_failed_worker_left_makes_the_next_hook_record_in_its_own_process(project: Path) -> None:
    with watching(project, debounce=30):
        pass
    state = project / ".trajectory" / "state"
    count = shadow_count(project)
    write(project, "src/left.py", "LEFT = 2\n")
    assert hand_over(project, ["src/left.py"], "codex", "apply_patch", "s10")
    (left,) = (state / "requests").glob("*.edit")
    old = left.stat().st_mtime - edit_worker.STUCK_SECONDS - 5
    os.utime(left, (old, old))  # its worker died (no lock held) long ago
    assert edit_worker.stuck(state)
    write(project, "src/app.py", "def main():\n    return 13\n")
    hook = run_hook(project, "edit", edit_payload(project, "src/app.py", "s10"))
    assert hook.returncode == 0 and hook.stderr == ""
    assert shadow_count(project) == count + 2  # recorded before the hook returned: no worker this time
    assert not handoff.waiting(state) and not recording_now(project / ".trajectory")


def test_the_worker_leaves_the_hand_overs_to_the_process_that_records(project: Path) -> None:
    with watching(project, debounce=30) as session:
        assert session._requests is not None
        session._requests.stop()
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 10\n")
        assert hand_over(project, ["src/app.py"], "claude-code", "Edit", "s7")
        assert edit_worker.drain(project) == 0  # the server holds the recorder lock: the worker stands aside
        assert handoff.waiting(session.recorder.repo.state_dir) and shadow_count(project) == count
        claimer(session).poll()
        assert shadow_count(project) == count + 1 and "session=s7" in last_message(project)


def test_a_worker_declines_checkpoint_requests_and_drains_in_rounds(project: Path) -> None:
    """A checkpoint asked while a worker holds the lock is answered at once (the asker scans on its own)."""
    with watching(project, debounce=30):
        pass
    state = project / ".trajectory" / "state"
    count = shadow_count(project)
    for n in range(12):  # more than one listing's worth (8 per poll)
        write(project, f"src/m{n}.py", f"N = {n}\n")
        assert hand_over(project, [f"src/m{n}.py"], "claude-code", "Write", "s8")
    asked: list = []
    thread = threading.Thread(target=lambda: asked.append(checkpoint_requests.ask(state, "mid", name_only=False)))
    thread.start()
    assert edit_worker.drain(project) >= 12
    thread.join(30)
    assert shadow_count(project) == count + 12
    assert not handoff.waiting(state)
    if asked and asked[0] is not None:  # claimed by the worker (not withdrawn first): declined, not taken
        assert not asked[0].ok and "no checkpoints" in asked[0].text


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
    *(json.dumps({"paths": ["a.py"], "client": "claude-code", "tool": "Edit", "session": "", "contents": contents})
      .encode() for contents in [
          {"b.py": None},  # content of a path the hand-over does not name
          {"a.py": {"exec": False, "data": "not base64!"}},
          {"a.py": {"exec": "yes", "data": ""}},
          {"a.py": {"exec": False, "data": "", "mode": "120000"}},
          {"a.py": "cHJpbnQoKQ=="},
          {"a.py": {"exec": False, "data": base64.b64encode(b"x" * (handoff.MAX_PINNED_BYTES + 1)).decode()}},
          ["a.py"]]),
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
        assert not [p for p in directory.iterdir() if p.suffix in (".edit", ".taken", ".claimed")]
        assert session.watcher is not None and session.watcher.running


def test_a_hand_over_pins_regular_files_only_and_a_large_edit_is_left_to_the_hook(project: Path) -> None:
    state = project / ".trajectory" / "state"
    state.mkdir(parents=True)
    write(project, "small.py", "A = 1\n")
    os.symlink("small.py", project / "link.py")
    (project / "big.bin").write_bytes(b"x" * (handoff.MAX_PINNED_BYTES + 1))
    assert handoff.pin(project, "small.py", 100) == (False, b"A = 1\n")
    assert handoff.pin(project, "gone.py", 100) is None  # pinned as absent: recorded as a deletion
    assert handoff.pin(project, "link.py", 100) == "work tree"  # never followed: read when recorded
    assert handoff.pin(project, "src", 100) == "work tree"
    assert handoff.pin(project, "small.py", 3) == "too large"
    write(project, "config/.env", "API_KEY=never-copied\n")  # a secret's bytes are never copied into a hand-over
    write(project, "notes.txt", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n")
    assert handoff.pin(project, "config/.env", 100) == "work tree" == handoff.pin(project, "notes.txt", 100)
    assert not handoff.hand_over_edit(state, ["big.bin"], root=project, client="claude-code", tool="Write",
                                      session="")  # the hook then records it itself
    assert hand_over(project, ["small.py", "link.py", "gone.py"], "codex", "apply_patch", "s11")
    (handed,) = (state / "requests").glob("*.edit")
    edit = handoff.parse_edit(handed.read_bytes())
    assert edit.contents == {"small.py": (False, b"A = 1\n"), "gone.py": None}


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
        assert hand_over(project, ["src/app.py", "src/new.py"], "codex", "apply_patch", "s4")
        claimer(session).poll()
        assert shadow_count(project) == count + 1
        assert "Trajectory-Origin: codex; tool=apply_patch; session=s4" in last_message(project)
        changed = git(project, "--git-dir=.trajectory", "show", "--name-only", "--format=", "HEAD").split()
        assert sorted(changed) == ["src/app.py", "src/new.py"]


#: Modules a hook's edit or ordinary prompt must not import (each costs more than the hook's budget allows, issue 29).
HEAVY = {"argparse", "typing", "dataclasses", "re2", "filelock", "pathspec", "mcp", "code_trajectory.wiring",
         "code_trajectory.git.shadow", "code_trajectory.recording.recorder"}
_PROBE = ("import sys\nfrom code_trajectory.cli import main\nstatus = main(sys.argv[1:])\n"
          f"sys.stderr.write(' '.join(sorted(set({sorted(HEAVY)!r}) & set(sys.modules))))\nsys.exit(status)\n")


def imported_by_hook(project: Path, event: str, payload: dict) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE, "hook", event, "--project", str(project)],
                          env=subprocess_env(), input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""
    return done.stderr


def test_the_hooks_import_nothing_heavy_with_or_without_a_recording_process(project: Path) -> None:
    prompt = {"session_id": "s9", "cwd": str(project), "prompt": "Make the parser accept tabs"}
    with watching(project, debounce=30):
        write(project, "src/app.py", "def main():\n    return 11\n")
        assert imported_by_hook(project, "edit", edit_payload(project, "src/app.py", "s9")) == ""
        assert imported_by_hook(project, "prompt", prompt) == ""
    write(project, "src/app.py", "def main():\n    return 12\n")
    assert imported_by_hook(project, "edit", edit_payload(project, "src/app.py", "s9")) == ""  # a worker records
    assert imported_by_hook(project, "prompt", prompt) == ""
    wait_hooks_done(project)
    assert "session=s9" in last_message(project)


def test_an_edit_saved_through_a_symlink_tags_the_file_it_changed(project: Path) -> None:
    """``CLAUDE.md`` a link to ``AGENTS.md``: the agent's Edit of the link wrote the target, which keeps the edit's
    origin (the watcher would have recorded it 2 s later as edited outside the agent)."""
    write(project, "AGENTS.md", "# Agents\n")
    os.symlink("AGENTS.md", project / "CLAUDE.md")
    with watching(project, debounce=30):  # no watcher snapshot comes within the test
        count = shadow_count(project)
        with open(project / "CLAUDE.md", "a") as f:
            f.write("Run the tests first.\n")
        assert run_hook(project, "edit", edit_payload(project, "CLAUDE.md")).returncode == 0
        wait_for(lambda: shadow_count(project) == count + 1, timeout=30)
        assert "tool=Edit; session=s1" in last_message(project)
        assert "Run the tests first." in git(project, "--git-dir=.trajectory", "show",
                                             "refs/heads/shadow/main:AGENTS.md")


def test_an_edit_saved_through_a_linked_directory_records_the_file_it_changed_and_keeps_the_link(
        project: Path) -> None:
    """``src`` a link to ``lib``: the agent's Edit of ``src/a.py`` wrote ``lib/a.py``. The snapshot replaced the link
    ``src`` with a directory holding a copy of the file (``D src, A src/a.py``), a state the project never had."""
    write(project, "lib/a.py", "a = 1\n")
    os.symlink("lib", project / "src_link")
    with watching(project, debounce=30):  # no watcher snapshot comes within the test
        count = shadow_count(project)
        write(project, "lib/a.py", "a = 2\n")
        assert run_hook(project, "edit", edit_payload(project, "src_link/a.py")).returncode == 0
        wait_for(lambda: shadow_count(project) == count + 1, timeout=30)
        assert "tool=Edit; session=s1" in last_message(project)
        tree = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "refs/heads/shadow/main")
        lines = tree.splitlines()
        assert any(line.endswith("\tlib/a.py") for line in lines)
        assert any(line.startswith("120000 ") and line.endswith("\tsrc_link") for line in lines)  # still the link
        assert "src_link/a.py" not in tree
        assert "a = 2" in git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:lib/a.py")


@pytest.mark.parametrize("after", ["deleted", "rewritten", "kept"])
def test_a_file_a_hand_over_pinned_then_deleted_or_rewritten_is_seen_by_the_next_full_scan(project: Path,
                                                                                          after: str) -> None:
    """A hand-over's content is recorded with no stat cache row vouching for it; the cache still claimed its rows
    described the new tip, so a full scan compared the work tree with rows lacking that file: an agent's new file,
    deleted before its hand-over was recorded, stayed in every later snapshot (a restore of the last one brought it
    back) and the next checkpoint said 'Nothing changed'."""
    def checkpoint():  # a full scan that records the waiting hand-overs first, as code-trajectory checkpoint does
        recorder = Recorder.open(project, TrajectorySettings.load(project))
        checkpoint_requests.attach_handovers(recorder)
        try:
            return recorder.reconcile()
        finally:
            recorder.close()

    write(project, "a.py", "A = 1\n")
    checkpoint()
    write(project, "made.py", "TEMP = 1\n")
    assert hand_over(project, ["made.py"], "claude-code", "Write", "s1")
    if after == "deleted":
        os.unlink(project / "made.py")
    elif after == "rewritten":
        write(project, "made.py", "TEMP = 2\n")
    snap = checkpoint()  # records the hand-over first, then scans the work tree
    assert "Trajectory-Origin: claude-code; tool=Write; session=s1" in git(
        project, "--git-dir=.trajectory", "log", "--format=%B")
    files = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "HEAD").split()
    if after == "deleted":
        assert snap is not None and [(c.path, c.status) for c in snap.changes] == [("made.py", "D")]
        assert "made.py" not in files
    elif after == "rewritten":
        assert snap is not None and [(c.path, c.status) for c in snap.changes] == [("made.py", "M")]
        assert git(project, "--git-dir=.trajectory", "show", "HEAD:made.py") == "TEMP = 2\n"
    else:
        assert snap is None and "made.py" in files
    assert checkpoint() is None
