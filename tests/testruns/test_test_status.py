"""Test status in the trajectory, through the MCP tools and the CLI: marks, last green, diff since green."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import mcp_client, write


def text(result) -> str:
    return result.content[0].text


@pytest.mark.anyio
async def test_runs_are_marked_listed_and_diffed_since_green(project: Path) -> None:
    async with mcp_client(project) as client:
        result = await client.call_tool("record_test_result", {"command": "pytest -q", "passed": 3})
        assert not result.is_error and "tests: 3 passed" in text(result)
        write(project, "src/app.py", "def main():\n    return 'broken'\n")
        result = await client.call_tool("record_test_result", {
            "command": "pytest -q", "passed": 2, "failed": 1,
            "failing_tests": ["tests/test_app.py::test_main: AssertionError: 'broken' != 1"]})
        assert "tests: 2 passed, 1 failed: test_main" in text(result)
        log = text(await client.call_tool("get_global_trajectory", {"limit": 5}))
        assert "- tests: 3 passed" in log and "- tests: 2 passed, 1 failed: test_main" in log
        history = text(await client.call_tool("get_file_trajectory", {"filepath": "src/app.py"}))
        assert "tests: 2 passed, 1 failed: test_main" in history
        runs = text(await client.call_tool("get_test_history", {"limit": 5}))
        assert runs.index("failed on") < runs.index("passed on")
        assert "AssertionError: 'broken' != 1" in runs
        summary = text(await client.call_tool("get_session_summary", {}))
        assert "## Tests" in summary and "Last green (full suite):" in summary and "diff_since_green" in summary
        since = text(await client.call_tool("diff_since_green", {}))
        assert "Last green run" in since and "M `src/app.py` (+1 -1)" in since
        # the breaking line itself, not only the file list (issue 12.3), and the symbol it is in
        assert "+    return 'broken'" in since and "modified main" in since
        one = text(await client.call_tool("diff_since_green", {"filepath": "src/app.py"}))
        assert "+    return 'broken'" in one
        bad = await client.call_tool("record_test_result", {"command": "pytest", "passed": -1})
        assert bad.is_error
        result = await client.call_tool("consolidate", {"intent": "Broke main on purpose"})
        assert not result.is_error
        log = text(await client.call_tool("get_global_trajectory", {"limit": 5}))
        assert "[CONSOLIDATE]" in log and "- tests: 2 passed, 1 failed" in log  # the runs follow the squash


@pytest.mark.slow
def test_cli_test_wrapper_records_and_exits_with_the_command_status(project: Path) -> None:
    write(project, "tests/test_app.py", "def test_ok():\n    assert True\n\n\ndef test_bad():\n    assert 1 == 2\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "CODE_TRAJECTORY_PYTEST"}
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", "test", "--", sys.executable, "-m", "pytest",
                           "-q", "-p", "no:cacheprovider", "tests"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "recorded on" in proc.stderr and "1 passed, 1 failed: test_bad" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", "test-history"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    assert "test_bad" in proc.stdout and "assert 1 == 2" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", "test", "--", "no-such-runner-xyz"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 127 and "command not found" in proc.stderr


def test_cli_consolidation_carries_the_test_runs_and_status_shows_sharing(project: Path) -> None:
    """The one-shot commands get the server's wiring (issue 25): a ``consolidate`` run from the command line carries
    the last snapshot's test runs to the ``[CONSOLIDATE]`` commit, and ``status`` has share's lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "CODE_TRAJECTORY_PYTEST"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)

    assert cli("intent", "Break main on purpose").returncode == 0
    write(project, "src/app.py", "def main():\n    return 2\n")
    proc = cli("test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")  # the full suite
    assert proc.returncode == 1 and "0 passed, 1 failed: test_main" in proc.stderr, proc.stderr
    proc = cli("consolidate", "Broke main on purpose")
    assert proc.returncode == 0 and "Consolidated" in proc.stdout, proc.stderr
    log = cli("log", "--limit", "1").stdout
    assert "[CONSOLIDATE]" in log
    assert " - Broke main on purpose\n- tests: 0 passed, 1 failed: test_main\n" in log  # on the [CONSOLIDATE] commit
    status = cli("status")
    assert status.returncode == 0 and "Sharing: nothing pushed yet (auto_push off)" in status.stdout, status.stderr


@pytest.mark.anyio
async def test_the_net_change_since_green_has_compares_cap(project: Path) -> None:
    """The project's answer of ``diff_since_green`` is the net change as ``compare`` gives it: a change of ~12,000
    tokens (over the 8,000 of ``token_budget``) is shown whole, every changed line of every file, and ``tools/list``
    declares its size so Claude Code keeps it in the conversation."""
    def rewrite(tag: str) -> None:
        for name in "abcdefgh":
            write(project, f"src/{name}.py", "".join(f"VALUE_{i:03} = '{tag} {name} {i:03} {'x' * 24}'\n"
                                                     for i in range(60)))

    rewrite("old")
    async with mcp_client(project) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert not (await client.call_tool("record_test_result", {"command": "pytest -q", "passed": 3})).is_error
        rewrite("new")
        assert not (await client.call_tool("checkpoint", {"message": "every value renewed"})).is_error
        since = await client.call_tool("diff_since_green", {})
    answer = text(since)
    assert not since.is_error and 8000 < len(answer) // 4 <= 20000
    assert "left out" not in answer and "diff cut" not in answer
    assert all(f"+VALUE_{i:03} = 'new {name} {i:03}" in answer for name in "abcdefgh" for i in range(60))
    assert (listed["diff_since_green"].meta or {}).get("anthropic/maxResultSizeChars", 0) >= 20000 * 4


def test_a_green_run_on_a_snapshot_a_consolidation_squashed_still_proves_green(project: Path) -> None:
    """A full suite passed mid-task, a partial run after it, then the task consolidated: ``since-green`` still
    compares with the green snapshot (squashed, its tree kept), and ``test-history`` lists the partial run once (not
    as the squashed snapshot's and again as the consolidation's copy)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "CODE_TRAJECTORY_PYTEST"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    cli("checkpoint", "-m", "base")  # the consolidation has a parent (it squashed none of the first snapshots)
    cli("intent", "fix")
    write(project, "v.txt", "2\n")
    cli("test", "--full-suite", "--", sys.executable, "-c", "pass")
    write(project, "v.txt", "3\n")
    cli("test", "--", sys.executable, "-c", "pass", "only-one-test")
    cli("consolidate", "fix")
    since = cli("since-green").stdout
    assert "v.txt" in since and "-2" in since and "+3" in since, since
    history = cli("test-history").stdout
    assert history.count("only-one-test") == 1, history
    assert "full suite" in cli("session").stdout


def test_since_green_names_the_failed_run_that_keeps_a_passing_snapshot_from_green(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "CODE_TRAJECTORY_PYTEST"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)

    write(project, "a.txt", "a\n")
    assert cli("test", "--", sys.executable, "-c", "raise SystemExit(1)").returncode == 1  # unknown scope, failed
    assert cli("test", "--full-suite", "--", sys.executable, "-c", "pass").returncode == 0
    since = cli("since-green").stdout
    assert "does not make that snapshot green" in since and "raise SystemExit(1)" in since, since
    assert "Record runs" not in since


def test_since_green_while_nothing_records_says_later_saves_are_not_in_it(project: Path) -> None:
    """``since-green`` with no watcher or server answered "Nothing was recorded since: the latest snapshot is green"
    for a work tree edited after the green run: it now says that nothing records the project, so saves made since
    are not in the history (as the session summary says), and how to record them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "CODE_TRAJECTORY_PYTEST"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)

    write(project, "a.txt", "a\n")
    assert cli("test", "--full-suite", "--", sys.executable, "-c", "pass").returncode == 0
    write(project, "a.txt", "broken after the green run\n")
    since = cli("since-green").stdout
    assert "Nothing was recorded since: the latest snapshot is green for the full suite." in since, since
    assert "nothing is recording this project now" in since and "code-trajectory watch" in since, since


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf"])
def test_cli_test_with_a_timeout_that_is_not_a_time_is_a_usage_error(project: Path, timeout: str) -> None:
    """``test --timeout 0|-1|nan -- true`` ran the command, killed it at once and recorded a test error "timed out
    after -1 s and was killed" on the snapshot while exiting 0; now it is a usage error and nothing is recorded."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "CODE_TRAJECTORY_PYTEST"}
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", "test", "--timeout", timeout, "--", "true"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == f"code-trajectory: error: --timeout must be a positive number of seconds, got " \
                          f"{float(timeout)}\n", proc.stderr
    assert not (project / ".trajectory").exists()


@pytest.mark.anyio
async def test_bidi_controls_in_failing_tests_are_shown_escaped(project: Path) -> None:
    """A right-to-left override (U+202E) in a test file's name or in a failure's reason reached answers raw, and
    reordered what the reader saw (``tests/test_\\u202eyp.gol::test_x`` reads as ``tests/test_log.py::test_x``);
    answers show it escaped, as they show file names."""
    async with mcp_client(project) as client:
        result = await client.call_tool("record_test_result", {
            "command": "pytest", "passed": 1, "failed": 1,
            "failing_tests": ["tests/test_\u202eyp.gol::test_\u202ex: assert \u202e'1' == 2"]})
        assert "1 failed: test_\\u202ex" in text(result) and "\u202e" not in text(result), text(result)
        runs = await client.call_tool("get_test_history", {})
        assert "`tests/test_\\u202eyp.gol::test_\\u202ex`: assert \\u202e'1' == 2" in text(runs), text(runs)
        assert "\u202e" not in str(runs.structured_content), runs.structured_content
        log = text(await client.call_tool("get_global_trajectory", {}))
        assert "1 failed: test_\\u202ex" in log and "\u202e" not in log, log


def test_a_last_run_of_unknown_scope_that_passed_is_said_once_with_its_scopes_why(project: Path) -> None:
    """A new user's session (google/uuid): its own check script passed last; the summary said the run twice, its
    scope twice ("Last run (unknown scope) … on X", then "the newest passing run is unknown scope (why) on X")."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession
    from code_trajectory.testruns.report import tests_section
    from code_trajectory.testruns.selection import UNREAD
    from code_trajectory.testruns.service import record_agent_result

    record_agent_result(project, command="python3 check.py", failed=1)
    write(project, "src/app.py", "def main():\n    return 2\n")
    last = record_agent_result(project, command="python3 check.py", passed=1)
    session = ProjectSession(project, TrajectorySettings.load(project))
    try:
        section = tests_section(session)
    finally:
        session.close()
    assert section is not None and section.count(f"({UNREAD})") == 1 and section.count(f"`{last.commit[:12]}`") == 1
    assert section.splitlines()[-1] == (
        f"- The full suite was never green on `main` in the recorded runs; the last run passed but is unknown scope "
        f"({UNREAD}), which does not prove the full suite."), section
