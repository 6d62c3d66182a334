"""Issue 29: a file's trajectory reads its newest versions only (``versions.LOOKBACK``, made small here), and says so:
a total it did not count is "more than N", the versions are numbered back from the newest, reverts are detected
among the versions read, renames are still followed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from code_trajectory.history import service as history_service
from code_trajectory.history import versions
from code_trajectory.recording.session import ProjectSession
from support import mcp_client, write


def edit(session: ProjectSession, rel: str, text: str) -> None:
    write(session.root, rel, text)
    assert session.recorder.record_paths([rel]) is not None


def headings(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^## (\d+)\. ", text, re.M)]


@pytest.fixture
def small_lookback(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(versions, "LOOKBACK", 3)
    return 3


def test_a_file_with_more_versions_than_read_says_more_than_and_numbers_back(session: ProjectSession,
                                                                             small_lookback: int) -> None:
    for i in range(6):
        edit(session, "a.txt", f"state {i}\n")
    edit(session, "a.txt", "state 4\n")  # back to the state two versions before: within the versions read
    text = history_service.file_trajectory(session, "a.txt", depth=2)
    assert "the last 2 of more than 3 recorded change(s) to this file (not counted further)" in text
    assert "numbered back from the newest (1)" in text and "reverts are detected among the newest 4 only" in text
    assert " of 7 " not in text
    assert headings(text) == [2, 1]  # oldest to newest, the newest is 1
    assert text.count("**[Revert Detected]**") == 1 and text.rindex("Revert Detected") > text.index("## 1.")
    assert "+state 4" in text and "-state 5" in text


def test_a_file_within_the_look_back_keeps_its_exact_total_and_numbers(session: ProjectSession,
                                                                         small_lookback: int) -> None:
    for i in range(3):
        edit(session, "a.txt", f"state {i}\n")
    text = history_service.file_trajectory(session, "a.txt", depth=2)
    assert "the last 2 of 3 recorded change(s) to this file, oldest to newest." in text
    assert "not counted" not in text and headings(text) == [2, 3]


def test_a_revert_older_than_the_look_back_is_not_claimed(session: ProjectSession, small_lookback: int) -> None:
    edit(session, "a.txt", "state A\n")
    for i in range(4):
        edit(session, "a.txt", f"state {i}\n")
    edit(session, "a.txt", "state A\n")  # the state of 5 versions before: beyond the 4 read
    text = history_service.file_trajectory(session, "a.txt", depth=1)
    assert "Revert Detected" not in text
    assert "reverts are detected among the newest 4 only" in text  # and the answer says why it may miss one


def test_renames_are_followed_within_the_look_back(session: ProjectSession, small_lookback: int) -> None:
    edit(session, "old_name.py", "x = 1\ny = 2\nz = 3\n")
    edit(session, "old_name.py", "x = 1\ny = 2\nz = 4\n")
    (session.root / "old_name.py").rename(session.root / "new_name.py")
    assert session.recorder.record_paths(["old_name.py", "new_name.py"]) is not None
    edit(session, "new_name.py", "x = 1\ny = 2\nz = 5\n")
    text = history_service.file_trajectory(session, "new_name.py", depth=3)
    assert "renamed from `old_name.py`" in text and "Followed across renames" not in text
    assert "more than 3 recorded change(s)" in text  # 4 versions in all: 3 newest, one more behind the rename
    assert headings(text) == [3, 2, 1]


@pytest.mark.anyio
async def test_the_structured_content_says_the_total_was_not_counted(project: Path,
                                                                     small_lookback: int) -> None:
    async with mcp_client(project) as client:
        for i in range(5):
            write(project, "src/b.py", f"def b():\n    return {i}\n")
            await client.call_tool("checkpoint", {"message": f"b {i}"})
        result = await client.call_tool("get_file_trajectory", {"filepath": "src/b.py", "depth": 2})
    data = result.structured_content
    assert data is not None and not result.is_error
    assert "total" not in data and data["more_than"] == 3 and data["numbered"] == "back from the newest"
    assert [v["n"] for v in data["versions"]] == [2, 1]


def test_a_file_history_cut_at_its_depth_gives_the_deeper_call(session: ProjectSession) -> None:
    """``file`` said "the last 5 of 12" and not how to see the other 7, as ``symbol`` and ``log`` say theirs."""
    for i in range(4):
        edit(session, "a.txt", f"state {i}\n")
    cut = history_service.file_trajectory(session, "a.txt", depth=2)
    assert "the last 2 of 4 recorded change(s) to this file, oldest to newest. Older ones: depth=4 (CLI `--depth 4`)." \
        in cut, cut
    whole = history_service.file_trajectory(session, "a.txt", depth=4)
    assert headings(whole) == [1, 2, 3, 4] and "Older ones" not in whole
