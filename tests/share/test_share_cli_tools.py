"""The CLI commands (push, pull, list-trajectories) and the list_trajectories MCP tool, end to end."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from code_trajectory import cli
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.share.push import maybe_auto_push
from code_trajectory.share.tools import register
from support import git, write_user_config
from support.share_env import ALICE, record, remote_refs


def test_cli_push_dry_run_push_again_pull_list(team, capsys: pytest.CaptureFixture[str]) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")], intent="Tune v", consolidate_as="Tune v")
    before = remote_refs(team.remote)
    assert cli.main(["push", "--project", str(team.alice), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Dry run" in out and f"refs/trajectory/{ALICE}/main" in out and "object(s)" in out
    assert remote_refs(team.remote) == before

    assert cli.main(["push", "--project", str(team.alice / "src"), "--consolidated"]) == 0  # found upward
    assert "Pushed to `origin`" in capsys.readouterr().out
    assert cli.main(["push", "--project", str(team.alice)]) == 0  # the same snapshots, now with the current intent
    out = capsys.readouterr().out
    assert "`main` → " in out and ": up to date" in out and "intent) → " in out
    assert cli.main(["push", "--project", str(team.alice)]) == 0
    assert capsys.readouterr().out.startswith("Nothing to push")

    record(team.bob, [])
    assert cli.main(["pull", "--project", str(team.bob), "--remote", "origin"]) == 0
    assert f"new: `{ALICE}/main`" in capsys.readouterr().out
    assert cli.main(["list-trajectories", "--project", str(team.bob)]) == 0
    out = capsys.readouterr().out
    assert f"- `{ALICE}/main` (pulled from origin): last snapshot " in out and "intent: Tune v" in out
    assert "- `main` (ours)" in out


def test_cli_errors_are_one_line_with_status_2(team, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["push", "--project", str(team.alice)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("code-trajectory: error: nothing is recorded") and err.count("\n") == 1
    assert not (team.alice / ".trajectory").exists()  # push never starts a history
    record(team.alice, [])
    hook = team.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    assert cli.main(["push", "--project", str(team.alice)]) == 2
    assert "Nothing was lost" in capsys.readouterr().err
    assert cli.main(["pull", "--project", str(team.alice), "--remote", "nope"]) == 2
    assert "no git remote named 'nope'" in capsys.readouterr().err


def test_auto_push_is_off_by_default_and_pushes_when_on(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")], consolidate_as="Tune v")
    assert maybe_auto_push(team.alice) is None
    assert "refs/trajectory" not in remote_refs(team.remote)
    # a project's own file (it may have come with a tarball whose .git/config names the attacker's remote) cannot
    # turn it on: only the user's own config file can
    (team.alice / ".trajectory" / "config.toml").write_text("[share]\nauto_push = true\nconsolidated = true\n")
    assert maybe_auto_push(team.alice) is None
    assert "refs/trajectory" not in remote_refs(team.remote)
    write_user_config("[share]\nauto_push = true\n")
    report = maybe_auto_push(team.alice)
    assert report is not None and report.consolidated and report.refs[0].status == "new"
    assert f"refs/trajectory/{ALICE}/main" in remote_refs(team.remote)
    git(team.alice, "remote", "remove", "origin")
    assert maybe_auto_push(team.alice) is None  # a failure is logged, never raised into the recorder


@pytest.mark.anyio
async def test_list_trajectories_tool(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")], intent="Tune v")
    from code_trajectory.share.pull import pull
    from code_trajectory.share.push import push

    push(team.alice)
    record(team.bob, [])
    pull(team.bob)
    app = TrajectoryService(lambda root: TrajectorySettings.load(root))
    mcp = MCPServer("share-test")
    register(mcp, app)
    try:
        app.configure(str(team.bob))
        async with Client(mcp) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"list_trajectories"}
            tool = tools["list_trajectories"]
            assert tool.annotations.read_only_hint is True
            assert len(json.dumps(tool.model_dump(mode="json", exclude_none=True))) < 1000  # well under 250 tokens
            result = await client.call_tool("list_trajectories", {})
        assert not result.is_error
        text = result.content[0].text
        assert f"`{ALICE}/main` (pulled from origin)" in text and "intent: Tune v" in text and "`main` (ours)" in text
    finally:
        app.close()
