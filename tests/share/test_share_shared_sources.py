"""Issue 23 item 7: a shared trajectory answers as much as our own. Alice records (an intent, named checkpoints, a
test run) and pushes; Bob pulls before he has recorded anything, then reads her intents, names and runs through the
CLI (``--source``) and the MCP SDK client (``source``); an unknown source is an error listing the known ones; no
command warns of a stale lock after push or pull. Real git, a real bare remote, real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio

from support import git, hand_built_commit, mcp_client, server_command, subprocess_env, write
from support.share_env import ALICE, Team, make_team

SOURCE = f"{ALICE}/main"


def cli(root: Path, *args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
    """``code-trajectory ARGS`` in ``root`` as a user runs it; checks the exit status and that no stale lock was
    reported."""
    done = subprocess.run([*server_command(), *args], cwd=root, env=subprocess_env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == status, (args, done.stdout, done.stderr)
    assert "stale lock" not in done.stderr, done.stderr
    return done


def alice_records_and_pushes(team: Team) -> None:
    a = team.alice
    write(a, "test_app.py", "from src.app import main\n\n\ndef test_main():\n    assert main() == 2\n")
    cli(a, "intent", "Make", "main", "return", "2")
    cli(a, "checkpoint", "-m", "before the change")
    write(a, "src/app.py", "def main():\n    return 2\n")
    cli(a, "checkpoint", "-m", "main returns 2")
    cli(a, "test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    pushed = cli(a, "push").stdout
    assert f"data of `main` (2 named point(s), 1 test run(s), intent) → refs/trajectory-data/{SOURCE}" in pushed
    lock = a / ".trajectory" / "state" / "share.lock"
    assert lock.exists()
    old = time.time() - 3600
    os.utime(lock, (old, old))  # an hour old: a git lock file this old would be removed as stale
    cli(a, "log")
    assert lock.exists()  # ours (flock), never taken for git's


def test_bob_pulls_before_recording_and_reads_alice_through_the_cli(tmp_path: Path) -> None:
    team = make_team(tmp_path)
    alice_records_and_pushes(team)
    b = team.bob
    assert not (b / ".trajectory").exists()
    pulled = cli(b, "pull").stdout
    assert f"new: `{SOURCE}`" in pulled and ".trajectory/ was created" in pulled
    assert git(b, "status", "--porcelain") == ""  # the new .trajectory is hidden from the project's git

    listed = cli(b, "list-trajectories").stdout
    assert f"`{SOURCE}` (pulled from origin)" in listed and "intent: Make main return 2" in listed
    log = cli(b, "log", "--source", SOURCE).stdout
    assert 'named point "before the change"' in log and 'named point "main returns 2"' in log
    assert "tests: 1 passed" in log and "Make main return 2" in log
    cli(b, "checkpoint", "-m", "main returns 2")  # Bob's own point of that name is not hers
    older = cli(b, "log", "--source", SOURCE, "--before", "main returns 2").stdout
    assert 'named point "before the change"' in older and 'named point "main returns 2"' not in older, older
    file = cli(b, "file", "src/app.py", "--source", SOURCE).stdout
    assert "+    return 2" in file and "tests: 1 passed" in file
    session = cli(b, "session", "--source", SOURCE).stdout
    assert 'current intent: "Make main return 2" (set ' in session and f"{ALICE}'s, shared with the last push" in session
    assert "(none set" not in session
    assert "## Tests" in session and "The last run was green (full suite)." in session
    assert '"before the change" on `' in session and '"main returns 2" on `' in session
    history = cli(b, "test-history", "--source", SOURCE).stdout
    assert "— passed on `" in history and "tests: 1 passed" in history and "pytest" in history
    green = cli(b, "since-green", "--source", SOURCE).stdout
    assert green.startswith("Last green run for the full suite: ") and "the latest snapshot is green for the full suite" in green
    symbol = cli(b, "symbol", "src/app.py", "main", "--source", SOURCE).stdout
    assert "+    return 2" in symbol and SOURCE in symbol
    compared = cli(b, "compare", "before the change", "main returns 2", "--source", SOURCE).stdout
    assert f'named point "before the change" of `{SOURCE}`' in compared and "+    return 2" in compared
    found = cli(b, "search", "return 2", "--source", SOURCE).stdout
    assert "+return 2" in found

    for command in (["log"], ["file", "src/app.py"], ["symbol", "src/app.py", "main"], ["search", "x"],
                    ["session"], ["compare", "~0"], ["test-history"], ["since-green"]):
        wrong = cli(b, *command, "--source", "carol@example.com/main", status=2)
        assert "no trajectory named carol@example.com/main" in wrong.stderr and SOURCE in wrong.stderr
        assert wrong.stdout == ""
    both = cli(b, "log", "--source", SOURCE, "--branch", "main", status=2)
    assert "not both" in both.stderr
    assert ".trajectory/ was created" not in cli(b, "pull").stdout  # again: a later command still warns of nothing
    lock = b / ".trajectory" / "state" / "share.lock"
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    cli(b, "status")


def test_the_sdk_client_reads_alice_with_source_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    team = make_team(tmp_path)
    alice_records_and_pushes(team)
    cli(team.bob, "pull")

    async def through_sdk() -> None:
        async with mcp_client(team.bob) as client:
            async def text(tool: str, **arguments) -> str:
                answer = await client.call_tool(tool, arguments)
                assert not answer.is_error, answer.content[0].text
                return answer.content[0].text

            assert "No test runs recorded yet" in await text("get_test_history")  # hers stay hers
            assert "current intent: (none set" in await text("get_session_summary")
            ours = await text("get_symbol_trajectory", filepath="src/app.py", symbol="main")
            assert "return 2" not in ours  # Bob's own main still returns 1
            theirs = await text("get_symbol_trajectory", filepath="src/app.py", symbol="main", source=SOURCE)
            assert "+    return 2" in theirs
            log = await text("get_global_trajectory", source=SOURCE)
            assert 'named point "main returns 2"' in log and "tests: 1 passed" in log
            assert "tests: 1 passed" in await text("get_file_trajectory", filepath="src/app.py", source=SOURCE)
            summary = await text("get_session_summary", source=SOURCE)
            assert 'current intent: "Make main return 2"' in summary and "## Named points" in summary
            assert "tests: 1 passed" in await text("get_test_history", source=SOURCE)
            assert "Last green run" in await text("diff_since_green", source=SOURCE)
            assert "+return 2" in await text("search_trajectory", query="return 2", source=SOURCE)
            assert "+    return 2" in await text("compare", from_snapshot="before the change",
                                                  to_snapshot="main returns 2", source=SOURCE)
            calls = {"get_file_trajectory": {"filepath": "src/app.py"}, "get_global_trajectory": {},
                     "get_symbol_trajectory": {"filepath": "src/app.py", "symbol": "main"},
                     "search_trajectory": {"query": "x"}, "compare": {"from_snapshot": "~0"},
                     "get_session_summary": {}, "get_test_history": {}, "diff_since_green": {}}
            for tool, arguments in calls.items():
                answer = await client.call_tool(tool, {**arguments, "source": "carol@example.com/main"})
                message = answer.content[0].text
                assert answer.is_error, (tool, message)
                assert "no trajectory named carol@example.com/main" in message and SOURCE in message, tool

    anyio.run(through_sdk)


def test_hostile_shared_data_is_checked_never_trusted(tmp_path: Path) -> None:
    """Data rewritten on the remote by someone with push access: names with terminal escapes, runs and points on
    commits outside the pulled history, a data file that is not JSON, and a data tree with an entry of its own."""
    team = make_team(tmp_path)
    alice_records_and_pushes(team)
    tip = git(team.remote, "rev-parse", f"refs/trajectory/{SOURCE}").strip()
    foreign = "1" * 40
    points = [{"commit": tip, "message": "evil\x1b[31m\u202e name" + "x" * 5000, "branch": "main", "time": "nope"},
              {"commit": foreign, "message": "outside", "branch": "main", "time": "2026-01-01T00:00:00+00:00"},
              "not an object", {"commit": tip}, {"commit": [tip], "message": "a list for an id"}]
    runs = [{"commit": tip, "command": "pytest\x1b]0;title\x07", "outcome": "passed", "passed": 7,
             "output_tail": "y" * 100_000, "failures": [["t", "r"]] * 10_000},
            {"commit": foreign, "command": "pytest", "outcome": "failed"}, {"commit": {}, "outcome": "failed"}]
    data_ref = f"refs/trajectory-data/{SOURCE}"
    hand_built_commit(team.remote, {"points.json": json.dumps(points).encode(), "tests.json": json.dumps(runs).encode(),
                                    "intent.json": b"\xff not json"}, ref=data_ref)
    cli(team.bob, "pull")
    log = cli(team.bob, "log", "--source", SOURCE).stdout
    assert "named point \"evil" in log and "\x1b" not in log and "\u202e" not in log and "outside" not in log
    assert "tests: 7 passed" in log
    history = cli(team.bob, "test-history", "--source", SOURCE).stdout
    assert "\x1b" not in history and "\x07" not in history and "failed" not in history
    session = cli(team.bob, "session", "--source", SOURCE).stdout
    assert f'current intent: "Make main return 2" (the latest on {ALICE}\'s snapshots' in session  # from the commits

    hand_built_commit(team.remote, {"points.json": json.dumps(points).encode(), "hooks/post-checkout": b"#!/bin/sh\n"},
                      ref=data_ref)
    cli(team.bob, "pull")
    log = cli(team.bob, "log", "--source", SOURCE).stdout
    assert "named point" not in log and "tests: 1 passed" not in log  # a tree of unknown shape is left out whole


def test_a_token_a_test_printed_stays_on_the_machine(tmp_path: Path) -> None:
    """A run's output is stored with secrets redacted (the local record too: an agent reads it back), and so is
    what ``push`` sends of it."""
    team = make_team(tmp_path)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    cli(team.alice, "checkpoint", "-m", "start")
    cli(team.alice, "test", "--", sys.executable, "-c", f"print('using {token}'); print('1 passed in 0.01s')")
    tip = git(team.alice, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main").strip()
    local = git(team.alice, "--git-dir=.trajectory", "notes", "--ref=refs/notes/trajectory-tests", "show", tip)
    assert token not in local and "using [redacted]" in local  # redacted when recorded
    cli(team.alice, "push")
    shared = git(team.remote, "show", f"refs/trajectory-data/{SOURCE}:tests.json")
    assert '"passed":1' in shared and token not in shared and "[redacted]" in shared
