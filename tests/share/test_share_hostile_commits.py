"""A pulled trajectory whose commits were written by hand (a teammate's tool, or an attacker with push access):
``git fsck`` accepts a commit dated in the year 33658 and control characters in a message, and reading that
history must still answer (it failed with ``ValueError``, and so did ``list_trajectories`` for every source).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from code_trajectory.share.pull import pull
from code_trajectory.share.push import push
from support import git, mcp_client
from support.share_env import ALICE, make_team, record, shadow_git

SOURCE = f"{ALICE}/main"
REMOTE_REF = f"refs/trajectory/{ALICE}/main"


def hand_made_commit(remote: Path, *, stamp: int, message: bytes) -> None:
    """Put a commit written by hand on top of Alice's pushed branch on the remote (its tree unchanged)."""
    tip = git(remote, "rev-parse", REMOTE_REF).strip()
    tree = git(remote, "rev-parse", f"{tip}^{{tree}}").strip()
    body = (f"tree {tree}\nparent {tip}\nauthor x <x@x> {stamp} +0000\ncommitter x <x@x> {stamp} +0000\n\n"
            ).encode() + message
    oid = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=remote, input=body,
                         capture_output=True, check=True).stdout.decode().strip()
    git(remote, "update-ref", REMOTE_REF, oid)


async def answers(root: Path) -> dict[str, str]:
    """Each read tool's answer on Alice's pulled history; every one must be a result, not an error."""
    found = {}
    async with mcp_client(root) as client:
        for name, args in (("list_trajectories", {}), ("get_global_trajectory", {"source": SOURCE}),
                           ("get_file_trajectory", {"filepath": "src/app.py", "source": SOURCE}),
                           ("search_trajectory", {"query": "return 3", "source": SOURCE}),
                           ("get_session_summary", {"source": SOURCE})):
            result = await client.call_tool(name, args)
            body = "\n".join(block.text for block in result.content)
            assert not result.is_error, f"{name}: {body}"
            found[name] = body
    return found


@pytest.mark.anyio
async def test_a_pulled_commit_dated_past_year_9999_is_read(tmp_path) -> None:
    team = make_team(tmp_path)
    record(team.alice, [("src/app.py", "def main():\n    return 3\n")], intent="Alice's work")
    push(team.alice)
    hand_made_commit(team.remote, stamp=999_999_999_999, message=b"from the far future\n")
    record(team.bob, [("src/other.py", "x = 1\n")])
    pull(team.bob)
    found = await answers(team.bob)
    assert "## 9999-01-01" in found["get_global_trajectory"]  # held at the latest time read as it is
    assert "Alice's work" in found["get_file_trajectory"]


@pytest.mark.anyio
async def test_a_pulled_commit_whose_message_holds_the_logs_separators_is_one_snapshot(tmp_path) -> None:
    """RS (0x1e) and US (0x1f) separate the records and fields of the log the answers read: a message holding them
    forged a record whose time was not a number (every read of that history failed)."""
    team = make_team(tmp_path)
    record(team.alice, [("src/app.py", "def main():\n    return 3\n")], intent="Alice's work")
    push(team.alice)
    hand_made_commit(team.remote, stamp=1_764_000_000, message=b"tidy up\x1eforged\x1f\x1fnot-a-time\x1fx\x1fy\n")
    record(team.bob, [("src/other.py", "x = 1\n")])
    pull(team.bob)
    found = await answers(team.bob)
    log = found["get_global_trajectory"]
    assert "the last 3 snapshot(s)" in log and "forged" not in log.split("\n", 1)[0]


def test_a_pulled_commit_larger_than_ever_written_is_not_taken(tmp_path, monkeypatch) -> None:
    """A 200 MB message (``git commit-tree -F``) pushed to a trajectory ref made every later ``list-trajectories``
    take 8.5 s and 200 MB: a pull checks the new commits' sizes (headers only) and puts such a ref back where it was
    (a new one is not created), with a warning; the other sources are taken."""
    from code_trajectory.share import pull as pull_module

    monkeypatch.setattr(pull_module, "MAX_PULLED_COMMIT_BYTES", 8192)
    team = make_team(tmp_path)
    record(team.alice, [("src/app.py", "def main():\n    return 3\n")], intent="Alice's work")
    push(team.alice)
    record(team.bob, [("src/other.py", "x = 1\n")])
    pull(team.bob)
    pulled = shadow_git(team.bob, "rev-parse", f"refs/remotes-trajectory/{SOURCE}").strip()
    tip = git(team.remote, "rev-parse", REMOTE_REF).strip()
    git(team.remote, "update-ref", "refs/trajectory/carol@example.com/main", tip)  # a fine new source
    hand_made_commit(team.remote, stamp=1_764_000_000, message=b"big\n\n" + b"y" * 20_000 + b"\n")
    git(team.remote, "update-ref", "refs/trajectory/eve@example.com/main", REMOTE_REF)  # a new one, as big
    report = pull(team.bob)
    assert shadow_git(team.bob, "rev-parse", f"refs/remotes-trajectory/{SOURCE}").strip() == pulled
    refs = shadow_git(team.bob, "for-each-ref", "--format=%(refname)", "refs/remotes-trajectory/")
    assert "carol@example.com/main" in refs and "eve@example.com" not in refs
    rejected = dict(report.rejected)
    assert len(rejected) == 2 and all("of 20,1" in r and "more than code-trajectory ever writes (8,192" in r
                                      for r in rejected.values()), rejected
    assert report.new == ["refs/remotes-trajectory/carol@example.com/main"] and not report.updated
    assert "WARNING: skipped" in report.text()
