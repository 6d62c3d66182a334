"""Snapshots that cannot be written (a read-only or full ``.trajectory``) leave what they would have recorded waiting:
an edit hook's hand-over keeps its content and origin, a failed checkpoint keeps the watcher's pending saves, and
both are recorded once writing works again, in order, never dropped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.errors import StorageError
from code_trajectory.recording import checkpoint_requests
from support import git, mcp_client, server_command, shadow_count, subprocess_env, wait_for, watching, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bind mounts")


def edit_hook(project: Path, rel: str) -> None:
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(project / rel)}}
    done = subprocess.run([*server_command(), "hook", "edit", "--project", str(project)], env=subprocess_env(),
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def test_a_hand_over_whose_snapshot_fails_waits_and_lands_with_its_origin(project: Path, read_only) -> None:
    with watching(project, debounce=30) as session:  # no watcher snapshot comes within the test
        assert session._requests is not None
        session._requests.stop()  # the hand-overs are claimed below, when the test polls
        requests = project / ".trajectory" / "state" / "requests"
        claimer = checkpoint_requests.RequestServer(session.recorder.repo.state_dir, session._answer_request,
                                                    drain_edits=session.recorder.record_handovers)
        count = shadow_count(project)
        writable = read_only(project / ".trajectory" / "objects")
        write(project, "src/app.py", "def main():\n    return 'first'\n")
        edit_hook(project, "src/app.py")
        assert claimer.poll() == 0  # the snapshot cannot be written: the hand-over waits, not dropped
        assert len(list(requests.glob("*.edit"))) == 1 and not list(requests.glob("*.claimed"))
        write(project, "src/app.py", "def main():\n    return 'second'\n")  # the agent's next edit meanwhile
        edit_hook(project, "src/app.py")
        assert claimer.poll() == 0  # within the retry pause: not tried again yet
        writable()
        assert checkpoint_requests.RequestServer(session.recorder.repo.state_dir, session._answer_request,
                                                 drain_edits=session.recorder.record_handovers).poll() == 2
        assert shadow_count(project) == count + 2 and not list(requests.iterdir())
        for back, text in ((1, "first"), (0, "second")):
            ref = f"refs/heads/shadow/main~{back}"
            assert text in git(project, "--git-dir=.trajectory", "show", f"{ref}:src/app.py")
            assert "Trajectory-Origin: claude-code; tool=Edit; session=s1" in git(
                project, "--git-dir=.trajectory", "log", "-1", "--format=%B", ref)


def test_a_failed_checkpoint_keeps_the_pending_saves_for_the_watchers_retry(project: Path, read_only) -> None:
    with watching(project, debounce=0.3) as session:
        session.set_intent("Work while .trajectory is read-only")
        count = shadow_count(project)
        writable = read_only(project / ".trajectory" / "objects")
        write(project, "src/app.py", "def main():\n    return 'saved while read-only'\n")
        assert session.watcher is not None
        wait_for(lambda: session.watcher.last_error, timeout=30)  # the watcher's own snapshot failed
        with pytest.raises(StorageError):
            session.checkpoint("on a read-only .trajectory")  # a full scan: it failed too
        assert session.recorder.has_pending()  # what the watcher saw still waits
        writable()
        wait_for(lambda: "saved while read-only" in git(project, "--git-dir=.trajectory", "show",
                                                        "refs/heads/shadow/main:src/app.py", check=False), timeout=60)
        assert shadow_count(project) == count + 1
        assert "Work while .trajectory is read-only" in git(project, "--git-dir=.trajectory", "log", "-1",
                                                            "--format=%B", "refs/heads/shadow/main")


@pytest.mark.anyio
async def test_an_intent_that_cannot_be_written_is_a_clear_tool_error(project: Path, read_only) -> None:
    async with mcp_client(project) as client:
        read_only(project / ".trajectory" / "state")
        answer = await client.call_tool("set_trajectory_intent", {"intent": "Fix the parser"})
        text = answer.content[0].text
        assert answer.is_error and "cannot write the intent" in text and "Read-only file system" in text
        assert "unexpectedly" not in text
