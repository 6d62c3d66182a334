"""Issue 17.3: another author's pulled trajectory is read through the history tools' ``source`` argument."""

from __future__ import annotations

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.share.pull import pull
from code_trajectory.share.push import push
from support import mcp_client, write_user_config
from support.share_env import ALICE, make_team, record


@pytest.mark.anyio
async def test_bob_reads_alices_file_trajectory_session_and_intents(tmp_path) -> None:
    team = make_team(tmp_path)
    record(team.alice, [("src/app.py", "def main():\n    return 2\n"),
                        ("src/app.py", "def main():\n    return 3\n\n\ndef helper():\n    return None\n")],
           intent="Teach main to count")
    push(team.alice)
    record(team.bob, [("src/other.py", "x = 1\n")], intent="Bob's own work")
    pull(team.bob)
    source = f"{ALICE}/main"
    async with mcp_client(team.bob) as client:
        listed = await client.call_tool("list_trajectories", {})
        assert source in listed.content[0].text
        history = await client.call_tool("get_file_trajectory", {"filepath": "src/app.py", "source": source})
        text = history.content[0].text
        assert not history.is_error and "Intent: Teach main to count" in text and "added helper" in text
        log = (await client.call_tool("get_global_trajectory", {"source": source})).content[0].text
        assert "Teach main to count" in log and "Bob's own work" not in log
        summary = (await client.call_tool("get_session_summary", {"source": source})).content[0].text
        assert "shared trajectory" in summary and "Teach main to count" in summary
        found = await client.call_tool("search_trajectory", {"query": "return 3", "source": source})
        assert found.structured_content["hits"]
        ours = (await client.call_tool("get_global_trajectory", {})).content[0].text
        assert "Bob's own work" in ours and "Teach main to count" not in ours
        unknown = await client.call_tool("get_global_trajectory", {"source": "carol@example.com/main"})
        assert unknown.is_error and source in unknown.content[0].text  # the available sources are listed


def test_auto_push_after_a_consolidation_only_when_asked(tmp_path) -> None:
    """Issue 17.4: nothing is pushed without the command, or ``[share] auto_push = true`` (off by default)."""
    from code_trajectory import wiring
    from code_trajectory.recording.session import ProjectSession
    from support import wait_for, write
    from support.share_env import remote_refs

    wiring.install()  # what the server and the CLI do at start: the auto push is share's handler of a consolidation
    team = make_team(tmp_path)
    session = ProjectSession(team.alice, TrajectorySettings.load(team.alice))
    try:
        session.recorder.reconcile()
        session.set_intent("Count to three")
        for n in (2, 3):
            write(team.alice, "src/app.py", f"def main():\n    return {n}\n")
            session.recorder.record_paths(["src/app.py"])
        assert "Consolidated" in session.consolidate("Counted to three")
        assert remote_refs(team.remote, "refs/trajectory/") == ""  # off by default: nothing left the machine
        write_user_config("[share]\nauto_push = true\n")
        write(team.alice, "src/app.py", "def main():\n    return 4\n")
        session.recorder.record_paths(["src/app.py"])
        assert "Consolidated" in session.consolidate("Counted to four")
        wait_for(lambda: "refs/trajectory/alice@example.com/main" in remote_refs(team.remote, "refs/trajectory/"),
                 timeout=30)
    finally:
        session.close()
