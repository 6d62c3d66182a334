"""Edits handed over faster than they are recorded keep their own snapshots (issue 29: the edit still lands with its
intent and tool).

The real Claude Code session (``tests/e2e/test_claude_code.py``) lost an edit this way: its scripted tools run 0.3 s
apart, the edit worker the first hook starts took longer than that to start, and it found the Write, Edit and
NotebookEdit hand-overs together. It recorded each from the work tree as it was then, in directory order, so the
first of Write and Edit took hello.py's final content and the other found nothing changed. Here the recording
process is held back deterministically (``write.lock`` or ``recorder.lock`` held by the test) while the hooks run
through the CLI, as the client runs them, against real git and a real recorder.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import filelock
import pytest

from code_trajectory.recording.handoff import waiting as pending
from code_trajectory.recording.liveness import recording_now
from support import git, mcp_client, server_command, subprocess_env, wait_for, wait_hooks_done, watching, write

SESSION = "s-order"
INTENT = "Greet the user"


def hook(project: Path, event: str, **payload: object) -> None:
    """Run ``code-trajectory hook <event>`` as Claude Code does; it must return cleanly."""
    payload = {"session_id": SESSION, "cwd": str(project), **payload}
    done = subprocess.run([*server_command(), "hook", event, "--project", str(project)], env=subprocess_env(),
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "" and done.stdout == "", done.stderr


def edit(project: Path, tool: str, rel: str, text: str) -> None:
    """The agent's ``tool`` writes ``text`` to ``rel``, then its PostToolUse hook runs."""
    write(project, rel, text)
    hook(project, "edit", hook_event_name="PostToolUse", tool_name=tool, tool_input={"file_path": str(project / rel)})


def three_edits(project: Path) -> None:
    """A prompt, then Write and Edit of hello.py and a Write of notes.md, each hook right after its tool."""
    hook(project, "prompt", hook_event_name="UserPromptSubmit", prompt=f"{INTENT}\n\nhello.py prints it")
    edit(project, "Write", "hello.py", "print('hi')\n")
    edit(project, "Edit", "hello.py", "print('hello')\n")
    edit(project, "Write", "notes.md", "# notes\n")


def history(project: Path) -> list[tuple[str, str, str, str]]:
    """``(kind, origin, intent, hello.py's content)`` of each snapshot on the shadow branch, oldest first."""
    fields = ("%H%x1f%(trailers:key=Trajectory-Kind,valueonly,separator=)%x1f"
              "%(trailers:key=Trajectory-Origin,valueonly,separator=)%x1f"
              "%(trailers:key=Trajectory-Intent,valueonly,separator=)%x1e")
    log = git(project, "--git-dir=.trajectory", "log", "--reverse", f"--format={fields}", "refs/heads/shadow/main")
    found = []
    for entry in filter(None, (e.strip("\n") for e in log.split("\x1e"))):
        commit, kind, origin, intent = entry.split("\x1f")
        hello = git(project, "--git-dir=.trajectory", "show", f"{commit}:hello.py", check=False)
        found.append((kind, origin, intent, hello))
    return found


def assert_each_edit_has_its_snapshot(project: Path) -> list[tuple[str, str, str, str]]:
    """The three edits of :func:`three_edits`, each in its own snapshot with its tool, the intent and the content
    its tool wrote, in the order they were made; returns the history."""
    found = history(project)
    ours = [(origin.split("; ")[1], intent, hello) for kind, origin, intent, hello in found
            if origin.endswith(f"session={SESSION}")]
    assert ours == [("tool=Write", INTENT, "print('hi')\n"), ("tool=Edit", INTENT, "print('hello')\n"),
                    ("tool=Write", INTENT, "print('hello')\n")], found
    return found


@pytest.fixture
def recorded(project: Path) -> Path:
    """``project`` with a history and nothing recording it now."""
    with watching(project, debounce=30):
        pass
    assert not recording_now(project / ".trajectory")
    return project


def test_without_a_server_edits_queued_behind_a_slow_worker_keep_their_own_content(recorded: Path) -> None:
    git_dir = recorded / ".trajectory"
    with filelock.FileLock(str(git_dir / "write.lock"), timeout=10, thread_local=False):
        # the worker the first edit hook starts waits here, as one slow to start does: every hand-over queues
        three_edits(recorded)
        assert pending(git_dir / "state") or recording_now(git_dir)
    wait_hooks_done(recorded)
    assert_each_edit_has_its_snapshot(recorded)


def test_a_snapshot_of_the_work_tree_records_the_waiting_hand_overs_first(recorded: Path) -> None:
    """The recording process has not claimed the hand-overs yet when it snapshots the work tree (a checkpoint, the
    watcher): they come first, each with its content, and the snapshot holds only what no hook saw."""
    with watching(recorded, debounce=30) as session:
        assert session._requests is not None
        session._requests.stop()  # claims nothing on its own: only the snapshot below records them
        three_edits(recorded)
        write(recorded, "hello.py", "print('hello')\nx\n")  # a shell command's edit: no hook
        snapshot = session.record_checkpoint("turn ended")
        assert snapshot is not None and [c.path for c in snapshot.changes] == ["hello.py"]
        assert not pending(recorded / ".trajectory" / "state")
    found = assert_each_edit_has_its_snapshot(recorded)
    assert found[-1][0] == "checkpoint" and found[-1][3] == "print('hello')\nx\n"


def test_a_server_starting_while_hand_overs_wait_records_them_before_its_start_up_scan(recorded: Path) -> None:
    git_dir = recorded / ".trajectory"
    with filelock.FileLock(str(git_dir / "recorder.lock"), timeout=0, thread_local=False):
        # a recording process that exits before claiming them: the hooks start no worker
        three_edits(recorded)
        write(recorded, "hello.py", "print('hello')\nx\n")
        assert pending(git_dir / "state")
    with watching(recorded, debounce=30) as session:
        assert session.wait_started(60)
        assert session.role == "recorder" and not pending(git_dir / "state")
    found = assert_each_edit_has_its_snapshot(recorded)
    assert found[-1][0] == "reconcile" and found[-1][3] == "print('hello')\nx\n"


@pytest.mark.anyio
async def test_a_tool_answer_holds_every_edit_whose_hook_returned(recorded: Path) -> None:
    """The history tools answer after the waiting hand-overs are recorded, also in a server that only follows."""
    git_dir = recorded / ".trajectory"
    with filelock.FileLock(str(git_dir / "recorder.lock"), timeout=0, thread_local=False):
        three_edits(recorded)  # another process records (the test holds its lock) and has not claimed them yet
        async with mcp_client(recorded) as client:
            result = await client.call_tool("get_file_trajectory", {"filepath": "hello.py", "depth": 5})
            assert not result.is_error, result
            assert result.structured_content is not None
            versions = result.structured_content["versions"]
            assert [v["origin"] for v in versions] == ["Claude Code (Write)", "Claude Code (Edit)"], versions
    wait_for(lambda: not pending(git_dir / "state"))
    assert_each_edit_has_its_snapshot(recorded)
