"""Issue 23.2: git operations made while nothing recorded are recognised at the next start from the project's reflog
and the catch-up snapshot is labelled with them (``[STASH]``, ``[CHECKOUT]``, ``[RESET]``, ``[COMMIT]`` …), never
under the agent's intent; edits no reflog entry explains are "changed while not recording".

Before, ``git stash`` or ``git stash pop`` while ``watch`` was stopped was recorded at the next start as
``[AUTO-TRJ] …``, as if the agent had made it. Real git in temp dirs; a real ``watch`` process stopped with SIGINT
and ``log`` through the CLI; a real server through the MCP SDK client.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from code_trajectory.git import log
from code_trajectory.git.shadow import ShadowRepo
from support import git, mcp_client, server_command, subprocess_env, write

CALC = "def add(a, b):\n    return a + b\n"
INTENT = "Add subtraction to the calculator"


def cli(project: Path, *args: str) -> str:
    proc = subprocess.run([*server_command(), *args, "--project", str(project)], capture_output=True, text=True,
                          timeout=60, env=subprocess_env())
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def watch_once(project: Path, edit: str | None = None) -> str:
    """Start ``code-trajectory watch`` (its start-up scan), optionally save ``calc.py`` with ``edit`` and wait for its
    snapshot, then stop it with SIGINT; returns what it printed (one line a snapshot)."""
    with subprocess.Popen([*server_command(), "watch", str(project), "--debounce", "0.3"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env()) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            while "watching" not in (line := proc.stderr.readline()):
                assert line, "watch exited"
            if edit is not None:
                write(project, "calc.py", edit)
                printed_before = proc.stdout.readline()  # the start-up snapshot's line, if any
                edited = proc.stdout.readline() if "calc.py" not in printed_before else ""
                assert "calc.py" in printed_before + edited
        finally:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err, err
    return (printed_before + edited if edit is not None else "") + out


def records(project: Path, branch: str) -> list[log.CommitRecord]:
    """The snapshots of ``branch``, newest first."""
    with ShadowRepo(project) as repo:
        return log.read_log(repo, [f"refs/heads/shadow/{branch}"])


def body(project: Path, commit: str) -> str:
    return git(project, "--git-dir=.trajectory", "log", "-1", "--format=%b", commit)


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    root = tmp_path / "calc"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "calc.py", CALC)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "calc")
    return root


def test_stash_checkout_pop_reset_and_commit_while_stopped_are_labelled_at_the_next_start(calc: Path) -> None:
    watch_once(calc)  # the import
    cli(calc, "intent", INTENT)
    watch_once(calc, edit=CALC + "\n\ndef sub(a, b):\n    return a - b\n")  # the agent's work, under its intent
    assert records(calc, "main")[0].intent == INTENT

    # stopped: the user stashes the agent's edit and starts a branch, then writes a new file
    git(calc, "stash")
    git(calc, "checkout", "-q", "-b", "feature")
    write(calc, "notes.txt", "todo\n")
    printed = watch_once(calc)
    assert "feature: [AUTO-TRJ]" in printed and "changed while not recording" in printed, printed
    edits, stashed = records(calc, "feature")[:2]
    assert stashed.is_git_operation and stashed.subject.startswith("[STASH][CHECKOUT] "), stashed.subject
    assert "while not recording" in stashed.subject and "main → feature" in stashed.subject
    assert [c.path for c in stashed.changes] == ["calc.py"]  # the stash took the agent's edit back
    assert stashed.intent is None and INTENT not in stashed.subject
    reflog = body(calc, stashed.oid)
    assert "checkout: moving from main to feature" in reflog and "WIP on main" in reflog
    assert "reset: moving to HEAD" not in reflog  # the stash's own reset is the stash
    assert [c.path for c in edits.changes] == ["notes.txt"] and edits.intent is None and not edits.is_git_operation
    assert edits.subject.startswith("[AUTO-TRJ] ") and " - changed while not recording - " in edits.subject

    # stopped: `stash pop` (git writes no reflog entry for it) brings the edit back
    git(calc, "stash", "pop")
    printed = watch_once(calc)
    assert "[STASH]" in printed and "pop or drop" in printed, printed
    popped = records(calc, "feature")[0]
    assert popped.git_operation == "stash" and popped.intent is None and [c.path for c in popped.changes] == ["calc.py"]

    # stopped: a commit of it and a hard reset back, then an edit no git operation explains
    git(calc, "commit", "-q", "-am", "sub")
    git(calc, "reset", "-q", "--hard", "HEAD~1")
    write(calc, "notes.txt", "todo\ndone\n")
    watch_once(calc)
    edits, reset = records(calc, "feature")[:2]
    assert reset.subject.startswith("[COMMIT][RESET] ") and reset.git_operation == "commit,reset", reset.subject
    assert [c.path for c in reset.changes] == ["calc.py"] and reset.intent is None
    assert edits.subject.startswith("[AUTO-TRJ] ") and "changed while not recording" in edits.subject

    # the CLI's timeline says so, and the agent's intent only where it belongs
    text = cli(calc, "log", "--limit", "20")
    assert "[STASH][CHECKOUT]" in text and "pop or drop" in text and "[COMMIT][RESET]" in text, text
    assert text.count(INTENT) == 1, text

    # nothing changed while stopped: no snapshot, nothing labelled
    before = len(records(calc, "feature"))
    assert "changed while not recording" not in watch_once(calc)
    assert len(records(calc, "feature")) == before


def test_a_checkout_of_a_branch_while_stopped_is_no_edit_of_the_agent(calc: Path) -> None:
    watch_once(calc)
    git(calc, "checkout", "-q", "-b", "feature")
    write(calc, "calc.py", CALC + "# feature\n")
    git(calc, "commit", "-q", "-am", "feature work")
    git(calc, "checkout", "-q", "main")
    cli(calc, "intent", INTENT)  # set while stopped: for the session about to start, not for what git did
    watch_once(calc, edit=CALC + "# agent\n")
    agent, imported = records(calc, "main")[:2]
    # back on main the work tree is as recorded: no catch-up snapshot, and the agent's edit carries its intent
    assert imported.is_import and agent.intent == INTENT and not agent.is_git_operation


@pytest.mark.anyio
async def test_the_server_labels_a_stash_made_while_it_was_stopped(calc: Path) -> None:
    async with mcp_client(calc) as client:
        await client.call_tool("set_trajectory_intent", {"intent": INTENT})
        write(calc, "calc.py", CALC + "\n\ndef sub(a, b):\n    return a - b\n")
        await client.call_tool("checkpoint", {"message": "sub"})
    git(calc, "stash")
    async with mcp_client(calc) as client:
        answer = await client.call_tool("get_global_trajectory", {"limit": 5})
        text = answer.content[0].text
        assert not answer.is_error
        assert "[STASH] " in text and "while not recording: WIP on main" in text, text
        summary = (await client.call_tool("get_session_summary", {})).content[0].text
        assert "[STASH] while not recording: WIP on main" in summary.split("Git operations:")[1], summary
    newest = records(calc, "main")[0]
    assert newest.git_operation == "stash" and newest.intent is None
    assert text.count(INTENT) <= 1  # the checkpoint's; never the stash's


def test_a_hostile_reflog_is_text_and_its_malformed_lines_are_skipped(calc: Path) -> None:
    """The reflog is untrusted: a message naming a program is only text, malformed lines are ignored."""
    from code_trajectory.git.project import ProjectRepo
    from code_trajectory.git.reflog import combine, operations_since

    head = calc / ".git" / "logs" / "HEAD"
    oid = git(calc, "rev-parse", "HEAD").strip()
    with head.open("a") as f:
        f.write(f"{oid} {oid} Eve <e@x> 4102444800 +0000\tcheckout: moving from $(touch {calc}/pwned) to main\n")
        f.write("not a reflog line at all\n")
        f.write(f"{oid} zzzz Eve <e@x> 4102444800 +0000\treset: moving to HEAD~9\n")
        f.write(f"{oid} {oid} Eve <e@x> soon +0000\treset: moving to HEAD~8\n")
        f.write(f"{oid} {oid} Eve <e@x> 4102444801 +0000\n")
    found = operations_since(ProjectRepo.discover(calc), 4102444799, None)
    assert [op.kind for op in found] == ["checkout"]
    combined = combine(found, "while not recording")
    assert combined is not None and "$(touch" in combined.label and not (calc / "pwned").exists()


def test_without_a_readable_mark_the_reflog_is_read_from_the_last_stop(calc: Path) -> None:
    """An older history (no ``reflog-mark.json``) or a damaged mark: entries after the last stop still label the
    catch-up; a stash pop, which leaves no entry, cannot be seen and its change is "changed while not recording"."""
    import time

    from support import watching

    with watching(calc):
        pass
    (calc / ".trajectory" / "state" / "reflog-mark.json").write_text('{"head_size": "a lot", "stash": ["$(id)"]}')
    time.sleep(1.1)  # reflog times are whole seconds: without the mark, entries of the stop's own second are left out
    git(calc, "checkout", "-q", "-b", "other")
    write(calc, "calc.py", CALC + "# other\n")
    git(calc, "commit", "-q", "-am", "other work")
    with watching(calc):
        pass
    committed = records(calc, "other")[0]
    assert committed.subject.startswith("[CHECKOUT][COMMIT] ") and "main → other; other work" in committed.subject
    assert committed.intent is None and [c.path for c in committed.changes] == ["calc.py"]
