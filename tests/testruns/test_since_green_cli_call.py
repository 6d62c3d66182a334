"""``since-green`` with no green run of the full suite names the newest partial pass and how to ask for its scope:
the CLI's answer spells the CLI command (``--scope``), which runs as printed, not only the MCP argument
(``scope='...'``), which a shell user cannot type. Real git, real pytest through ``code-trajectory test``."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from support import cli_stdout, write

SUITE = "def test_one():\n    assert True\n"


def spelled(text: str) -> list[list[str]]:
    """The arguments of every ``code-trajectory since-green ...`` the answer spells in backquotes."""
    return [shlex.split(found)[1:] for found in re.findall(r"`(code-trajectory since-green[^`]*)`", text)]


def test_a_partial_pass_s_scope_is_spelled_as_a_cli_call_that_runs(project: Path) -> None:
    write(project, "tests/test a.py", SUITE)
    write(project, "src/app.py", "X = 1\n")
    cli_stdout(project, "test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test a.py")
    write(project, "src/app.py", "X = 2\n")
    cli_stdout(project, "checkpoint", "-m", "after the pass")

    answer = cli_stdout(project, "since-green")
    assert "No snapshot on `main` is green for the full suite" in answer
    calls = spelled(answer)
    assert calls == [["since-green", "--scope", "'tests/test a.py'"]], answer  # one path, quoted
    scoped = cli_stdout(project, *calls[0])
    assert scoped.startswith("Last green run for scope `'tests/test a.py'`"), scoped
    assert "src/app.py" in scoped  # the change since that pass

    for_file = cli_stdout(project, "since-green", "src/app.py")
    file_calls = spelled(for_file)
    assert file_calls == [["since-green", "--scope", "'tests/test a.py'", "src/app.py"]], for_file
    assert "X = 2" in cli_stdout(project, *file_calls[0])


def test_snapshots_since_green_beyond_the_listed_ones_are_said_with_the_call_that_lists_them(
        session, monkeypatch) -> None:
    """The list under the net change showed the newest 30 snapshots as "oldest first" and nothing of the others: with
    35 since the green run, the first one listed was the 6th and the answer's heading said 35. (3 here.)"""
    from code_trajectory.history import service as history_service
    from code_trajectory.testruns import report
    from code_trajectory.testruns.service import record_agent_result

    monkeypatch.setattr(report, "STEPS_LISTED", 3, raising=False)  # 30 before
    record_agent_result(session.root, command="pytest", passed=1, full_suite=True, recorder=session.recorder,
                        settings=session.settings)
    made = []
    for i in range(5):
        write(session.root, "src/app.py", f"X = {i}\n")
        made.append(session.recorder.record_paths(["src/app.py"]).commit)
    answer = str(report.diff_since_green(session))
    steps = answer.split("## Snapshots since the green run, oldest first\n", 1)[1].splitlines()
    listed = [line for line in steps if line.startswith("- 20")]
    assert len(listed) == 3 and made[2][:12] in listed[0], steps  # the newest 3, oldest first
    assert steps[0] == (f'- ... 2 older snapshot(s) since the green run, not listed: get_global_trajectory('
                        f'before="{made[2][:12]}", limit=2) (CLI `code-trajectory log --before {made[2][:12]} '
                        "--limit 2`)"), steps
    older = str(history_service.global_trajectory(session, before=made[2][:12], limit=2))
    assert made[0][:12] in older and made[1][:12] in older and made[2][:12] not in older.split("\n", 1)[1], older


def test_snapshots_since_green_say_their_task_once_and_each_ones_files(session) -> None:
    """A supervisor's morning: 17 snapshots of one task each said ``[AUTO-TRJ] 00:10:21 - <the task>`` (the time twice,
    the task 17 times) and not which file each changed. Each line now says its files, and the task where it
    changes; the structured content says the message where the text does."""
    from code_trajectory.testruns import report
    from code_trajectory.testruns.service import record_agent_result

    record_agent_result(session.root, command="pytest", passed=1, full_suite=True, recorder=session.recorder,
                        settings=session.settings)
    session.set_intent("Tidy the helpers")
    made = []
    for i in range(3):
        name = "src/app.py" if i < 2 else "src/util.py"
        write(session.root, name, f"X = {i}\n")
        made.append(session.recorder.record_paths([name]).commit)
    session.set_intent("Rename the flag")
    write(session.root, "src/app.py", "FLAG = 1\n")
    made.append(session.recorder.record_paths(["src/app.py"]).commit)
    answer = report.diff_since_green(session)
    steps = str(answer).split("## Snapshots since the green run, oldest first\n", 1)[1].splitlines()
    assert [line.split("` ", 1)[1] for line in steps] == [
        "Tidy the helpers - M src/app.py (+1 -2)", "M src/app.py (+1 -1)", "A src/util.py (+1)",
        "Rename the flag - M src/app.py (+1 -1)"], steps
    assert "[AUTO-TRJ]" not in str(answer)
    rows = answer.data["snapshots"]  # the message where the text says it
    assert [row.get("msg") for row in rows] == ["Tidy the helpers", None, None, "Rename the flag"], rows
