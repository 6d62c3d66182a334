"""Issue 21 (part 3): a teammate's pulled snapshot holding ``.trajectory/config`` (in several spellings) is
never written by restore (CLI subprocess and MCP SDK client, real git, a real bare remote)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio

from code_trajectory.share.pull import pull
from code_trajectory.share.push import push
from support import git, hand_built_commit, mcp_client, server_command, subprocess_env
from support.share_env import ALICE, make_team
from support.share_env import record as share_record

HOOK = b"#!/bin/sh\ntouch /tmp/pwned-by-a-snapshot\n"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*server_command(), *args], cwd=root, env=subprocess_env(), capture_output=True,
                          text=True, timeout=120)


def digest(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the shadow repository (which a pull and a refused restore may write to)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".trajectory" not in p.relative_to(root).parts}


def test_pulled_hostile_snapshot_is_refused_by_the_cli_and_the_sdk_client(tmp_path: Path) -> None:
    team = make_team(tmp_path)
    share_record(team.alice, [("src/app.py", "def main():\n    return 2\n")])
    push(team.alice)
    ref = f"refs/trajectory/{ALICE}/main"
    tip = git(team.remote, "rev-parse", ref).strip()
    # Alice's history, rewritten by someone with push access. (A tree holding .git in any spelling is stopped by
    # the pull itself: fetch.fsckObjects, hasDotgit.) .trajectory is ours, not git's: only restore can refuse it.
    evil = hand_built_commit(team.remote, {".trajectory/hooks/post-checkout": ("100755", HOOK),
                                           ".trajectory/config": b"[core]\n\tfsmonitor = touch /tmp/pwned\n",
                                           ".Trajectory./x": b"x", "TRAJEC~1/x": b"x", "src/app.py": b"evil = 1\n"},
                             parent=tip, ref=ref)
    share_record(team.bob, [])
    pulled = pull(team.bob)
    assert pulled.new == [f"refs/remotes-trajectory/{ALICE}/main"]
    assert git(team.bob, "--git-dir=.trajectory", "rev-parse", f"refs/remotes-trajectory/{ALICE}/main").strip() \
        == evil
    before = digest(team.bob)
    done = cli(team.bob, "restore", evil)
    assert done.returncode != 0 and "must never write" in done.stderr
    assert digest(team.bob) == before

    async def through_sdk() -> None:
        async with mcp_client(team.bob) as client:
            answer = await client.call_tool("restore", {"snapshot": evil})
            assert answer.is_error and "must never write" in answer.content[0].text
            assert "paths=[...]" in answer.content[0].text  # what to do instead

    anyio.run(through_sdk)
    assert digest(team.bob) == before
    assert (team.bob / "src" / "app.py").read_text() == "def main():\n    return 1\n"
