"""Issue 21: a pulled trajectory is untrusted. Alice's pushed snapshots carry a ``.gitattributes`` naming a diff
and a filter driver and a (fake) signature; Bob's shadow config names a program for each of them. Neither the
pull (CLI) nor reading Alice's history (MCP tools with ``source``) runs any of them.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from code_trajectory.share.push import push
from support import mcp_client
from support.hostile import fired, poison_shadow, sign_tips
from support.share_env import ALICE, make_team, record


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.anyio
async def test_a_pulled_hostile_trajectory_runs_nothing(tmp_path) -> None:
    team = make_team(tmp_path)
    record(team.alice, [(".gitattributes", "* diff=x filter=x\n*.py diff=python\n"),
                        ("src/app.py", "def main():\n    return 2\n"),
                        ("src/app.py", "def main():\n    return 3\n")], intent="Looks innocent")
    sign_tips(team.alice / ".trajectory")
    push(team.alice)
    record(team.bob, [("src/other.py", "x = 1\n")], intent="Bob's own work")
    markers = poison_shadow(team.bob, tmp_path / "attack")
    pulled = cli("pull", "--project", str(team.bob), "--remote", "origin")
    assert pulled.returncode == 0 and "Traceback" not in pulled.stderr, pulled.stderr
    assert "config held settings code-trajectory does not write" in pulled.stderr
    source = f"{ALICE}/main"
    log = cli("log", "--project", str(team.bob))
    assert log.returncode == 0 and "Bob's own work" in log.stdout, log.stderr
    async with mcp_client(team.bob) as client:
        second = poison_shadow(team.bob, tmp_path / "while-serving")  # in place after the open: overrides only
        for name, args in (("get_file_trajectory", {"filepath": "src/app.py", "source": source}),
                           ("search_trajectory", {"query": "return 3", "source": source}),
                           ("get_global_trajectory", {"source": source}),
                           ("get_session_summary", {"source": source}), ("list_trajectories", {})):
            result = await client.call_tool(name, args)
            body = "\n".join(block.text for block in result.content)
            assert not result.is_error, f"{name}: {body}"
            if name == "get_file_trajectory":
                assert "return 3" in body and "Looks innocent" in body
    assert fired(markers) == [] and fired(second) == []
