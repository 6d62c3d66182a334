"""The first session's edits racing the initial import: the agent's Edit and Write land while the import reads the
work tree, their hand-overs wait meanwhile. The import records those files as they were before the edits (the tool's
``originalFile``, which the hook pins), and the hand-overs then record each edit with its origin and intent."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.clients.hook_events import told_contents
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import handoff
from code_trajectory.recording.checkpoint_requests import attach_handovers
from code_trajectory.recording.importer import import_in_child
from code_trajectory.recording.recorder import Recorder
from support import shadow, write

BEFORE = "def main():\n    return 1\n"
AFTER = "def main():\n    return 2\n"


def hand_over(project: Path, rel: str, payload: dict) -> None:
    """What the edit hook does for Claude Code's ``payload`` (its ``tool_response`` as in a transcript)."""
    assert handoff.hand_over_edit(project / ".trajectory" / "state", [rel], root=project, client="claude-code",
                                  tool=payload["tool_name"], session="s1", told=told_contents(payload, [rel]))


def play_the_race(project: Path, edits) -> Recorder:
    """The server's start-up, step by step: the hand-overs waiting are recorded, ``edits`` land and hand over, the
    import runs in its child, then the hand-overs waiting are recorded (the request server, once started)."""
    recorder = Recorder.open(project, TrajectorySettings.load(project))  # what the prompt hook made
    recorder.intent.set("return two", session="s1")
    attach_handovers(recorder)
    assert recorder.record_handovers() == 0
    edits()
    assert import_in_child(recorder) is not None
    recorder.record_handovers()
    return recorder


def test_edits_handed_over_during_the_import_are_recorded_on_top_of_it_with_origin_and_intent(
        project: Path) -> None:
    def edits() -> None:
        write(project, "src/app.py", AFTER)
        hand_over(project, "src/app.py", {"tool_name": "Edit", "tool_response": {
            "filePath": str(project / "src/app.py"), "oldString": "return 1", "newString": "return 2",
            "originalFile": BEFORE, "userModified": False, "replaceAll": False}})
        write(project, "src/new.py", "NEW = 1\n")
        hand_over(project, "src/new.py", {"tool_name": "Write", "tool_response": {
            "type": "create", "filePath": str(project / "src/new.py"), "content": "NEW = 1\n",
            "originalFile": None}})

    recorder = play_the_race(project, edits)
    recorder.close()
    log = shadow(project, "log", "--format=%s%n%b%n--", "refs/heads/shadow/main").split("--\n")
    assert len([entry for entry in log if entry.strip()]) == 3, log  # the import, the Edit, the Write
    first = shadow(project, "rev-list", "--max-parents=0", "refs/heads/shadow/main").strip()
    assert shadow(project, "show", f"{first}:src/app.py") == BEFORE
    assert "src/new.py" not in shadow(project, "ls-tree", "-r", "--name-only", first)
    for rel, entry in (("src/new.py", log[0]), ("src/app.py", log[1])):
        assert rel in entry and "Trajectory-Origin: claude-code; tool=" in entry and "return two" in entry, entry
    assert shadow(project, "show", "refs/heads/shadow/main:src/app.py") == AFTER


def test_an_edit_the_tool_describes_otherwise_stays_in_the_import(project: Path) -> None:
    """``originalFile`` with the edit applied is not the file's content (another encoding, a later save): nothing
    is pinned, the import holds the file as read."""
    def edits() -> None:
        write(project, "src/app.py", AFTER)
        hand_over(project, "src/app.py", {"tool_name": "Edit", "tool_response": {
            "oldString": "return 1", "newString": "return 3", "originalFile": BEFORE, "replaceAll": False}})

    play_the_race(project, edits).close()
    assert shadow(project, "rev-list", "--count", "refs/heads/shadow/main").strip() == "1"
    assert shadow(project, "show", "refs/heads/shadow/main:src/app.py") == AFTER


def test_hand_overs_recorded_before_any_import_come_after_one(project: Path) -> None:
    """An edit worker (or a hook recording itself) finds hand-overs and no history: no server imported the
    project yet (Claude Code's hooks ran before its server started). Recording the edit on no history made a first
    snapshot holding that file alone; the project is imported first, the file as before the edit, then the edit."""
    write(project, "src/other.py", "OTHER = 1\n")
    recorder = Recorder.open(project, TrajectorySettings.load(project))  # what the prompt hook made
    recorder.intent.set("return two", session="s1")
    attach_handovers(recorder)
    write(project, "src/app.py", AFTER)
    hand_over(project, "src/app.py", {"tool_name": "Edit", "tool_response": {
        "oldString": "return 1", "newString": "return 2", "originalFile": BEFORE, "replaceAll": False}})
    assert recorder.record_handovers() == 1  # what the edit worker's drain does
    recorder.close()
    first = shadow(project, "rev-list", "--max-parents=0", "refs/heads/shadow/main").strip()
    assert {"src/app.py", "src/other.py"} <= set(shadow(project, "ls-tree", "-r", "--name-only", first).split())
    assert shadow(project, "show", f"{first}:src/app.py") == BEFORE
    tip = shadow(project, "log", "-1", "--format=%B", "refs/heads/shadow/main")
    assert "Trajectory-Origin: claude-code; tool=Edit" in tip and "return two" in tip, tip
    assert shadow(project, "rev-list", "--count", "refs/heads/shadow/main").strip() == "2"
