"""The first session's edits racing the initial import: the agent's Edit and Write land while the import reads the
work tree, their hand-overs wait meanwhile. The import records those files as they were before the edits (the tool's
``originalFile``, which the hook pins), and the hand-overs then record each edit with its origin and intent."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from code_trajectory.clients.hook_events import EDIT_TOOLS, told_contents
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import handoff
from code_trajectory.recording.checkpoint_requests import attach_handovers
from code_trajectory.recording.importer import import_in_child
from code_trajectory.recording.recorder import Recorder
from support import shadow, write


def import_in_child_of(project: Path):
    """The initial import of ``project`` in its child process, as a server's start-up runs it."""
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        return import_in_child(recorder)
    finally:
        recorder.close()


BEFORE = "def main():\n    return 1\n"
AFTER = "def main():\n    return 2\n"


def hand_over(project: Path, rel: str, payload: dict) -> None:
    """What the edit hook does for a client's ``payload`` (Claude Code's ``tool_response`` as in a transcript)."""
    assert handoff.hand_over_edit(project / ".trajectory" / "state", [rel], root=project,
                                  client=EDIT_TOOLS[payload["tool_name"]][0], tool=payload["tool_name"], session="s1",
                                  told=told_contents(payload, [rel]))


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


def gemini(project: Path, tool: str, rel: str, before: str | None, after: str, **display) -> dict:
    """Gemini CLI's AfterTool payload for its ``write_file`` or ``replace`` of ``rel``: the tool's result, whose
    ``returnDisplay`` is a FileDiff (``originalContent``, ``newContent``, ``isNewFile``; gemini-cli's tools.ts)."""
    path = str(project / rel)
    return {"tool_name": tool, "tool_input": {"file_path": path}, "tool_response": {
        "llmContent": f"Successfully overwrote file: {path}.", "returnDisplay": {
            "fileDiff": "...", "fileName": Path(rel).name, "filePath": path, "originalContent": before,
            "newContent": after, "isNewFile": before is None, **display}}}


def test_gemini_clis_edits_during_the_import_keep_their_origin_as_claude_codes_do(project: Path) -> None:
    """Gemini CLI's ``write_file`` and ``replace`` say the file's content before them (``returnDisplay``'s
    ``originalContent``): their edits racing the import were left in it, origin and intent lost; they are now
    recorded on top of it as Claude Code's are."""
    def edits() -> None:
        write(project, "src/app.py", AFTER)
        hand_over(project, "src/app.py", gemini(project, "replace", "src/app.py", BEFORE, AFTER))
        write(project, "src/new.py", "NEW = 1\n")
        hand_over(project, "src/new.py", gemini(project, "write_file", "src/new.py", "", "NEW = 1\n",
                                                isNewFile=True))

    play_the_race(project, edits).close()
    log = shadow(project, "log", "--format=%s%n%b%n--", "refs/heads/shadow/main").split("--\n")
    assert len([entry for entry in log if entry.strip()]) == 3, log  # the import, the replace, the write_file
    first = shadow(project, "rev-list", "--max-parents=0", "refs/heads/shadow/main").strip()
    assert shadow(project, "show", f"{first}:src/app.py") == BEFORE
    assert "src/new.py" not in shadow(project, "ls-tree", "-r", "--name-only", first)
    for rel, tool, entry in (("src/new.py", "write_file", log[0]), ("src/app.py", "replace", log[1])):
        assert rel in entry and f"Trajectory-Origin: gemini; tool={tool}" in entry and "return two" in entry, entry


@pytest.mark.parametrize("response", [
    {"llmContent": "Error", "returnDisplay": "Error: no match", "error": {"message": "no match"}},
    {"llmContent": "ok", "returnDisplay": {"fileDiff": "...", "fileName": "app.py"}},  # an older gemini-cli's
    {"llmContent": "ok", "returnDisplay": {"originalContent": "", "newContent": "x"}},  # new, or empty before?
    {"llmContent": "ok", "returnDisplay": {"originalContent": 3, "newContent": "x", "isNewFile": False}},
    {"returnDisplay": {"originalContent": "a", "newContent": "b"}, "error": {"message": "write failed"}},
])
def test_a_gemini_result_that_does_not_say_the_content_before_pins_nothing(response: dict) -> None:
    assert told_contents({"tool_name": "replace", "tool_response": response}, ["app.py"]) is None


def test_codex_apply_patch_says_no_content_before() -> None:
    """Codex's PostToolUse for apply_patch gives the patch (``tool_input.command``) and the tool's output text:
    no file's content before it, so nothing is pinned (the import holds the file as read)."""
    payload = {"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch\n*** Update File: app.py\n"
                                                                     "@@\n-return 1\n+return 2\n*** End Patch\n"},
               "tool_response": "Success. Updated the following files:\nM app.py\n"}
    assert told_contents(payload, ["app.py"]) is None


@pytest.mark.parametrize("before", [
    {"elsewhere.py": None},  # a path the hand-over does not name
    {"src/app.py": {"exec": False, "data": "not base64!"}},
    {"src/app.py": {"exec": "no", "data": ""}},
    {"src/app.py": {"exec": False, "data": "", "extra": 1}},
    ["src/app.py"],
    {"src/app.py": {"exec": False, "data": base64.b64encode(b"x" * (handoff.MAX_PINNED_BYTES - 2)).decode()}},
])
def test_a_hand_over_whose_before_is_hostile_is_refused_and_the_import_holds_the_file_as_read(
        project: Path, before: object) -> None:
    """``before`` is read from a file in ``.trajectory/state`` (untrusted): its paths, its format and its size with
    ``contents`` (1 MiB in all) are checked as ``contents`` are; a refused hand-over pins nothing in the import."""
    payload = {"paths": ["src/app.py"], "client": "claude-code", "tool": "Edit", "session": "s1",
               "contents": {"src/app.py": {"exec": False, "data": base64.b64encode(AFTER.encode() * 2).decode()}},
               "before": before}
    with pytest.raises(ValueError):
        handoff.parse_edit(json.dumps(payload).encode())
    write(project, "src/app.py", AFTER)
    requests = project / ".trajectory" / "state" / handoff.REQUEST_DIR
    Recorder.open(project, TrajectorySettings.load(project)).close()
    requests.mkdir(parents=True, exist_ok=True)
    (requests / f"{'0' * 32}.{handoff.EDIT_KIND}").write_text(json.dumps(payload))
    assert import_in_child_of(project) is not None
    assert shadow(project, "show", "refs/heads/shadow/main:src/app.py") == AFTER
