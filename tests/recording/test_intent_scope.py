"""Issue 22, part 4: an intent belongs to its turn. A prompt's intent labels that session's edits; it does not carry
into the next server start, the start-up scan's snapshot, or another agent session's edits.

Real git, the hooks through the CLI (``code-trajectory hook ...`` with Claude Code's JSON on stdin), recorders as
in-process watching sessions, a real ``watch`` process killed with SIGKILL, and a real ``serve`` through the SDK.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from support import git, server_command, shadow_count, subprocess_env, wait_for, wait_hooks_done, watching, write


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*server_command(), *args], input=stdin, capture_output=True, text=True, timeout=60,
                          env=subprocess_env())
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc


def hook(project: Path, event: str, session: str, **payload) -> None:
    proc = cli("hook", event, "--project", str(project),
               stdin=json.dumps({"session_id": session, "cwd": str(project), **payload}))
    assert "skipped" not in proc.stderr, proc.stderr
    if event == "edit":
        wait_hooks_done(project)  # with nothing recording, the edit worker the hook started takes the snapshot


def prompt(project: Path, session: str, text: str) -> None:
    hook(project, "prompt", session, hook_event_name="UserPromptSubmit", prompt=text)


def tip(project: Path) -> tuple[str, str]:
    """The newest snapshot's subject and intent (its ``Trajectory-Intent`` trailer, "" when none)."""
    out = git(project, "--git-dir=.trajectory", "log", "-1", "--format=%s%x00%(trailers:key=Trajectory-Intent,"
              "valueonly,separator=)", "refs/heads/shadow/main")
    subject, intent = out.strip("\n").split("\0")
    return subject, intent.strip()


def edit(project: Path, text: str) -> tuple[str, str]:
    """Save ``src/app.py`` and wait for the watcher's snapshot of it; the snapshot's subject and intent."""
    count = shadow_count(project)
    write(project, "src/app.py", text)
    wait_for(lambda: shadow_count(project) > count, timeout=30)
    return tip(project)


def test_an_intent_ends_with_its_recording_session(project: Path) -> None:
    prompt(project, "session-a", "Fix the login retry")  # before anything recorded: for the session that starts
    with watching(project) as session:
        subject, intent = tip(project)
        assert "A src/app.py" in subject and intent == ""  # the import records what was there: no task
        assert session.recorder.intent.get() == "Fix the login retry"
        assert edit(project, "def main():\n    return 2\n")[1] == "Fix the login retry"
    write(project, "src/app.py", "def main():\n    return 'changed while nothing recorded'\n")
    with watching(project) as session:
        subject, intent = tip(project)
        assert "M src/app.py" in subject and intent == ""  # the start-up scan's snapshot
        assert session.recorder.intent.get() is None  # the previous session's prompt ended with it
        assert edit(project, "def main():\n    return 3\n")[1] == ""
        prompt(project, "session-b", "Add the logout button")
        assert edit(project, "def main():\n    return 4\n")[1] == "Add the logout button"


def test_a_prompt_just_before_its_server_starts_belongs_to_that_session(project: Path) -> None:
    """``claude -p``: the prompt can reach the hook before the session's server has started recording."""
    with watching(project):
        pass
    prompt(project, "session-c", "Rename main to start")  # after the previous recorder stopped
    with watching(project) as session:
        assert session.recorder.intent.get() == "Rename main to start"
        assert edit(project, "def start():\n    return 1\n")[1] == "Rename main to start"


def test_after_a_crash_an_old_intent_is_ended_too(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from code_trajectory.recording import intent as intent_module

    with subprocess.Popen([*server_command(), "watch", str(project)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=subprocess_env()) as proc:
        assert proc.stderr is not None
        while "watching" not in (line := proc.stderr.readline()):
            assert line, "watch exited"
        prompt(project, "session-d", "Work of a session that crashes")
        proc.send_signal(signal.SIGKILL)  # no stopped_at
        proc.wait()
        proc.stderr.close()
    monkeypatch.setattr(intent_module, "START_GRACE_SECONDS", 0.5)
    time.sleep(1.0)
    with watching(project) as session:
        assert session.recorder.intent.get() is None
        assert edit(project, "def main():\n    return 5\n")[1] == ""


def edit_as(project: Path, session: str, author: str) -> None:
    """``src/app.py`` written by ``author`` and handed over by the edit hook of agent session ``session``."""
    write(project, "src/app.py", f"def main():\n    return 'by {author}'\n")
    hook(project, "edit", session, tool_name="Edit", tool_input={"file_path": str(project / "src" / "app.py")})


@pytest.mark.slow
def test_the_hooks_of_another_session_do_not_carry_a_prompt(project: Path) -> None:
    cli("checkpoint", "--project", str(project))
    prompt(project, "session-a", "Task of session A")
    edit_as(project, "session-b", "session B")
    assert tip(project)[1] == ""
    edit_as(project, "session-a", "session A")
    assert tip(project)[1] == "Task of session A"
    hook(project, "stop", "session-b", hook_event_name="Stop")
    hook(project, "stop", "session-a", hook_event_name="Stop")
    names = git(project, "--git-dir=.trajectory", "for-each-ref", "--sort=creatordate", "--format=%(contents:subject)",
                "refs/tags/")
    assert names.count("turn ended") == 2 and names.count("Task of session A") == 1, names


def test_two_sessions_at_work_keep_their_own_intents(project: Path) -> None:
    """Two Claude Code sessions in one project (two terminals): B's prompt took the intent of A, whose next edits
    and turn's end had none ("no intent set", a nameless "turn ended")."""
    cli("checkpoint", "--project", str(project))
    prompt(project, "session-a", "Task of session A")
    prompt(project, "session-b", "Task of session B")
    edit_as(project, "session-a", "session A")
    assert tip(project)[1] == "Task of session A"
    edit_as(project, "session-b", "session B")
    assert tip(project)[1] == "Task of session B"
    hook(project, "stop", "session-a", hook_event_name="Stop")
    names = git(project, "--git-dir=.trajectory", "for-each-ref", "--format=%(contents:subject)", "refs/tags/")
    assert "Task of session A" in names, names
    cli("intent", "--project", str(project), "Set", "by", "the", "user")  # an intent of no session ends theirs
    edit_as(project, "session-a", "session A again")
    assert tip(project)[1] == "Set by the user"


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_import_of_a_server_start_carries_no_intent(project: Path) -> None:
    from mcp import Client, StdioServerParameters

    cli("intent", "--project", str(project), "Set", "before", "the", "server")
    command = server_command()
    params = StdioServerParameters(command=command[0], env=subprocess_env(),
                                   args=[*command[1:], "serve", "--project", str(project), "--debounce", "0.3"])
    async with Client(params) as client:
        await client.call_tool("get_session_summary", {})
        wait_for(lambda: shadow_count(project) >= 1, timeout=30)
        subject, intent = tip(project)
        assert "A src/app.py" in subject and intent == ""
        await client.call_tool("set_trajectory_intent", {"intent": "Set by the agent"})
        assert edit(project, "def main():\n    return 6\n")[1] == "Set by the agent"


def test_a_server_that_takes_over_recording_keeps_the_intent_set_while_it_ran(project: Path) -> None:
    """Two servers on one project: the one answering queries takes over when the recording one exits; a prompt
    made while it ran may be its own session's, so its take-over does not end it."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    with watching(project):
        follower = ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=0.4), watch=True)
        try:
            follower.start()
            assert follower.role == "follower"
            prompt(project, "session-b", "Work of the second server's session")
        except BaseException:
            follower.close()
            raise
    try:
        wait_for(lambda: follower.role == "recorder" and follower.wait_started(0), timeout=30)
        assert follower.recorder.intent.get() == "Work of the second server's session"
        assert edit(project, "def main():\n    return 7\n")[1] == "Work of the second server's session"
    finally:
        follower.close()



def test_a_server_that_takes_over_keeps_the_prompt_given_just_before_it_started(project: Path) -> None:
    """Two ``claude -p`` sessions in one project: the second's prompt reaches its hook just before its server
    starts (and follows the first's); when the first session ends, its server's stop took the second's intent
    with it, and the second session's next edits had none (measured with Claude Code 2.1.332)."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    with watching(project):
        prompt(project, "session-b", "Work of the second server's session")
        follower = ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=0.4), watch=True)
        try:
            follower.start()
            assert follower.role == "follower"
        except BaseException:
            follower.close()
            raise
    try:
        wait_for(lambda: follower.role == "recorder" and follower.wait_started(0), timeout=30)
        assert follower.recorder.intent.get(session="session-b") == "Work of the second server's session"
        count = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 'by the second session'\n")
        cli("hook", "edit", "--project", str(project), stdin=json.dumps({  # handed over to the follower, recording
            "session_id": "session-b", "cwd": str(project), "tool_name": "Edit",
            "tool_input": {"file_path": str(project / "src" / "app.py")}}))
        wait_for(lambda: shadow_count(project) > count, timeout=30)
        assert tip(project)[1] == "Work of the second server's session"
    finally:
        follower.close()

@pytest.mark.slow
def test_between_sessions_the_cli_does_not_carry_the_last_sessions_intent(project: Path) -> None:
    """Nothing records: a ``checkpoint`` does not carry what the stopped session was doing; an intent given
    after the stop is carried (it is for the work about to be done)."""
    with watching(project):
        prompt(project, "session-a", "Work of the stopped session")
    write(project, "src/app.py", "def main():\n    return 'between sessions'\n")
    cli("checkpoint", "--project", str(project))
    assert tip(project)[1] == ""
    assert "Work of the stopped session" not in cli("session", "--project", str(project)).stdout
    cli("intent", "--project", str(project), "Tidy", "up")
    write(project, "src/app.py", "def main():\n    return 'tidied'\n")
    cli("checkpoint", "--project", str(project))
    assert tip(project)[1] == "Tidy up"


def test_saves_waiting_for_the_debounce_keep_the_intent_they_were_made_under(project: Path) -> None:
    with watching(project, debounce=30) as session:  # nothing would snapshot on its own within the test
        session.set_intent("task one")
        wait_for(lambda: session.watcher is not None and session.watcher.running, timeout=30)
        before = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 'task one'\n")
        wait_for(lambda: session.recorder.has_pending(rescan=False), timeout=10)  # the watcher saw the save
        session.set_intent("task two")
        assert shadow_count(project) == before + 1  # snapshotted at once, under the intent it was made under
        message = git(project, "--git-dir", str(project / ".trajectory"), "log", "-1", "--format=%B",
                      "refs/heads/shadow/main")
        assert "task one" in message and "task two" not in message, message


@pytest.mark.parametrize("how", ["cli", "prompt hook"])
def test_saves_waiting_for_the_debounce_keep_their_intent_when_another_process_sets_a_new_one(
        project: Path, how: str) -> None:
    """``code-trajectory intent`` or a prompt's hook runs in a process of its own, which cannot snapshot the saves
    the recording process holds back: the snapshot taken after the debounce still carries the intent they were
    made under, and the next save the new one."""
    with watching(project, debounce=3) as session:
        session.set_intent("task one")
        wait_for(lambda: session.watcher is not None and session.watcher.running, timeout=30)
        before = shadow_count(project)
        write(project, "src/app.py", "def main():\n    return 'task one'\n")
        wait_for(lambda: session.recorder.has_pending(rescan=False), timeout=10)  # the watcher saw the save
        if how == "cli":
            cli("intent", "--project", str(project), "task", "two")
        else:
            prompt(project, "session-a", "task two")
        assert shadow_count(project) == before  # still held back: another process set the intent
        wait_for(lambda: shadow_count(project) > before, timeout=30)
        assert tip(project)[1] == "task one"
        assert edit(project, "def main():\n    return 'task two'\n")[1] == "task two"


def test_an_intent_set_after_the_saves_with_none_before_labels_none_of_them(tmp_path: Path) -> None:
    from code_trajectory.recording.intent import IntentStore

    store = IntentStore(tmp_path)
    made = time.time()
    time.sleep(0.05)
    store.set("first task")
    assert store.get(as_of=made) is None  # made before any intent
    assert store.get(as_of=time.time()) == "first task"
    between = time.time()
    time.sleep(0.05)
    store.set("second task")
    assert store.get(as_of=between) == "first task"
    assert store.get() == "second task"
    assert store.get(as_of=made) is None  # older than both: only one intent back is kept


def test_an_agents_edit_recorded_beside_older_saves_carries_the_intent_of_now(project: Path) -> None:
    """The user's save waits for the debounce under the old intent; the agent's edit, handed over after the new
    prompt, is its session's work of now: each snapshot carries its own."""
    with watching(project, debounce=3) as session:
        wait_for(lambda: session.watcher is not None and session.watcher.running, timeout=30)
        prompt(project, "session-a", "task one")
        before = shadow_count(project)
        write(project, "src/notes.py", "NOTE = 'saved by the user'\n")
        wait_for(lambda: session.recorder.has_pending(rescan=False), timeout=10)
        prompt(project, "session-a", "task two")
        write(project, "src/app.py", "def main():\n    return 'by the agent'\n")
        cli("hook", "edit", "--project", str(project), stdin=json.dumps({  # handed over to the recording session
            "session_id": "session-a", "cwd": str(project), "tool_name": "Edit",
            "tool_input": {"file_path": str(project / "src" / "app.py")}}))
        wait_for(lambda: shadow_count(project) >= before + 2 and not session.recorder.has_pending(), timeout=30)
        out = git(project, "--git-dir=.trajectory", "log", f"-{shadow_count(project) - before}", "--name-only",
                  "--format=%x00%(trailers:key=Trajectory-Intent,valueonly,separator=)", "refs/heads/shadow/main")
        intents = {}
        for block in out.split("\0")[1:]:
            intent, *names = [line.strip() for line in block.strip("\n").split("\n") if line.strip()]
            for name in names:
                intents.setdefault(name, intent)
        assert intents.get("src/notes.py") == "task one" and intents.get("src/app.py") == "task two", out


def test_the_changes_of_a_snapshot_are_dated_by_the_newest_of_their_noted_paths() -> None:
    from code_trajectory.git.messages import FileChange
    from code_trajectory.recording.pending import noted_at

    def change(path: str, old_path: str | None = None) -> FileChange:
        return FileChange("R" if old_path else "M", path, old_path, 1, 1, "0" * 40, "1" * 40)

    noted = {"src/a.py": 10.0, "docs": 30.0, "old/name.py": 20.0, "elsewhere.py": 40.0}
    assert noted_at(noted, [change("src/a.py")]) == 10.0
    assert noted_at(noted, [change("src/a.py"), change("docs/guide/intro.md")]) == 30.0  # a directory noted
    assert noted_at(noted, [change("new/name.py", "old/name.py")]) == 20.0  # either side of a rename
    assert noted_at(noted, [change("never/noted.py")]) == 40.0  # a rescan's: the newest noted
    assert noted_at({}, [change("src/a.py")]) is None and noted_at(None, []) is None


@pytest.mark.parametrize("previous", [["not", "a", "dict"], {"intent": 7, "set_at": "garbage"},
                                      {"intent": "old", "set_at": "9999-12-31T23:59:59+00:00"},
                                      {"intent": "x" * 100_000, "set_at": "0001-01-01T00:00:00+00:00"}])
def test_a_hostile_previous_intent_is_no_intent_or_text_like_any_other(tmp_path: Path, previous: object) -> None:
    """``intent.json`` is read from a history that may have been copied in: a ``previous`` of the wrong shape or
    with an impossible time is no intent; a huge one comes back as free text, bounded."""
    import json

    from code_trajectory.core.freetext import MAX_INTENT_CHARS
    from code_trajectory.recording.intent import IntentStore

    store = IntentStore(tmp_path)
    (tmp_path / "intent.json").write_text(json.dumps({"intent": "now", "set_at": "2026-11-27T10:00:00+00:00",
                                                       "previous": previous}))
    got = store.get(as_of=1_600_000_000.0)  # 2020: before the current intent was set, so the previous one is asked
    assert got is None or (isinstance(got, str) and len(got) <= MAX_INTENT_CHARS), got
    assert store.get() == "now"
    store.set("next")  # a hostile previous is not carried on as is
    kept = json.loads((tmp_path / "intent.json").read_text())["previous"]
    assert kept == {"intent": "now", "set_at": "2026-11-27T10:00:00+00:00", "session": None}


def test_an_edit_made_while_a_follower_takes_over_carries_the_intent(project: Path) -> None:
    """A save between the recorder's stop and the follower's take-over (a second of a live session) was the take-over
    scan's "changed while not recording", with no intent, though the session and its intent went on (the lifecycle
    review, two real ``claude -p`` sessions)."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    with watching(project) as first:
        cli("intent", "--project", str(project), "Keep the session going")
        follower = ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=0.4), watch=True)
        try:
            follower.start()
            assert follower.role == "follower"
            assert first.watcher is not None
            first.watcher.stop(flush=False)  # the recorder no longer sees saves: this one lands in the gap
            write(project, "src/app.py", "def main():\n    return 'in the gap'\n")
        except BaseException:
            follower.close()
            raise
    try:
        wait_for(lambda: follower.role == "recorder" and follower.wait_started(0), timeout=30)
        wait_for(lambda: "in the gap" in git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py"),
                 timeout=30)
        subject, intent = tip(project)
        assert intent == "Keep the session going" and "not recording" not in subject, subject
    finally:
        follower.close()


def test_an_empty_intent_is_refused_before_anything_is_created(project: Path) -> None:
    """`intent ""` in a project nothing recorded exited 2 but had created `.trajectory/` first (the CLI helper)."""
    done = subprocess.run([*server_command(), "intent", " "], cwd=project, env=subprocess_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "non-empty sentence" in done.stderr and done.stdout == "", done.stderr
    assert not (project / ".trajectory").exists()
