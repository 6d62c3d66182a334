"""Issue 22.2: the end of a turn holds the turn. With a process recording the project, the Stop hook's and the CLI's
checkpoint include a save made 0.3 s before them (the recorder's watcher still holds it back: its debounce is
long), because the recording process takes the checkpoint (real processes, real git); request files are untrusted."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from code_trajectory.git.points import points
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording import checkpoint_requests
from code_trajectory.recording.liveness import recording_now
from support import git, server_command, shadow_count, subprocess_env, wait_for, watching, write


def start_watch(project: Path, debounce: float = 30.0) -> subprocess.Popen:
    """``code-trajectory watch`` of ``project`` in its own process, once it records (holds recorder.lock)."""
    proc = subprocess.Popen([*server_command(), "watch", str(project), "--debounce", str(debounce)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
    wait_for(lambda: (project / ".trajectory").is_dir() and recording_now(project / ".trajectory")
             and shadow_count(project) > 0, timeout=60)
    return proc


def stop_watch(proc: subprocess.Popen) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    return err


def content_at(project: Path, commit: str, rel: str) -> str:
    return git(project, "--git-dir=.trajectory", "show", f"{commit}:{rel}", check=False)


def test_stop_hook_and_cli_checkpoint_hold_a_save_made_just_before_while_a_server_records(project: Path) -> None:
    proc = start_watch(project)
    try:
        count = shadow_count(project)
        write(project, "notes.txt", "written by a shell command\n")  # no PostToolUse hook: the Bash tool
        time.sleep(0.3)
        hook = subprocess.run([*server_command(), "hook", "stop", "--project", str(project)], env=subprocess_env(),
                              input=json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "Stop"}),
                              capture_output=True, text=True, timeout=60)
        assert hook.returncode == 0 and hook.stderr == ""
        with ShadowRepo(project) as repo:
            named = points(repo)[0]
        assert named.message.startswith("turn ended")
        assert content_at(project, named.commit, "notes.txt") == "written by a shell command\n"
        assert shadow_count(project) == count + 1

        write(project, "src/app.py", "def main():\n    return 3\n")
        time.sleep(0.3)
        cli = subprocess.run([*server_command(), "checkpoint", "-m", "after main returns 3", "--project",
                              str(project)], env=subprocess_env(), capture_output=True, text=True, timeout=60)
        assert cli.returncode == 0, cli.stderr
        assert "Checkpoint recorded" in cli.stdout and "src/app.py" in cli.stdout
        with ShadowRepo(project) as repo:
            named = points(repo)[0]
        assert named.message == "after main returns 3"
        assert content_at(project, named.commit, "src/app.py") == "def main():\n    return 3\n"
        assert not list((project / ".trajectory" / "state" / "requests").iterdir())  # nothing left behind
    finally:
        err = stop_watch(proc)
    assert "Traceback" not in err


def test_the_recording_process_answers_requests_and_survives_junk_ones(project: Path) -> None:
    with watching(project, debounce=30) as session:
        directory = session.recorder.repo.state_dir / "requests"
        wait_for(directory.is_dir)
        bad = {"0" * 32: b"not json", "1" * 32: json.dumps({"message": 5, "name_only": False}).encode(),
               "2" * 32: json.dumps({"message": "x", "name_only": False, "run": "rm -rf /"}).encode(),
               "3" * 32: b"{" * (checkpoint_requests.MAX_REQUEST_BYTES + 1)}
        for rid, data in bad.items():
            (directory / f"{rid}.request").write_bytes(data)
        os.symlink("/dev/zero", directory / f"{'4' * 32}.request")
        os.mkfifo(directory / f"{'5' * 32}.request")
        (directory / "not-ours.request").write_text("{}")
        for rid in [*bad, "4" * 32, "5" * 32]:
            answer = wait_for(lambda rid=rid: checkpoint_requests.read_bounded(directory / f"{rid}.answer", 4096))
            assert json.loads(answer)["ok"] is False and "invalid checkpoint request" in json.loads(answer)["text"]

        write(project, "src/app.py", "def main():\n    return 4\n")
        answer = checkpoint_requests.ask(session.recorder.repo.state_dir, "by request", name_only=False)
        assert answer is not None and answer.ok and answer.commit
        assert content_at(project, answer.commit, "src/app.py") == "def main():\n    return 4\n"
        assert "by request" in git(project, "--git-dir=.trajectory", "log", "-1", "--format=%s", answer.commit)
        assert (directory / "not-ours.request").exists()  # not ours to touch
        assert session.watcher is not None and session.watcher.running


def test_a_request_nobody_claims_is_withdrawn_and_the_asker_records_itself(project: Path, session) -> None:
    state = session.recorder.repo.state_dir
    assert checkpoint_requests.ask(state, "x", name_only=True, pickup_timeout=0.2) is None
    assert not list((state / "requests").glob("*.request"))
    # a Stop hook with no recording process scans by itself: a shell command's change is in its checkpoint
    write(project, "made-by-shell.txt", "shell\n")
    done = session.take_checkpoint("turn ended 12:00:00", name_only=True)
    assert done.ok and content_at(project, done.commit, "made-by-shell.txt") == "shell\n"
    assert "turn ended" not in git(project, "--git-dir=.trajectory", "log", "-1", "--format=%s", done.commit)


def test_a_follower_servers_checkpoint_is_taken_by_the_recording_process(project: Path) -> None:
    with watching(project, debounce=30) as leader, watching(project, debounce=30) as follower:
        assert leader.role == "recorder" and follower.role == "follower"
        write(project, "src/app.py", "def main():\n    return 5\n")
        write(project, "generated/deep/new.txt", "in a directory made by a shell command\n")
        time.sleep(0.3)
        text = follower.checkpoint("from the follower")
        assert "Checkpoint recorded" in text
        with ShadowRepo(project) as repo:
            named = points(repo)[0]
        assert named.message == "from the follower"
        assert content_at(project, named.commit, "src/app.py") == "def main():\n    return 5\n"
        assert content_at(project, named.commit, "generated/deep/new.txt") == \
            "in a directory made by a shell command\n"
