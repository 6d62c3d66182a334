"""Issue 23, item 5 and issue 28: a file's trajectory holds every changed line of every shown version (the newest
with context, the older ones with their changed lines only); the token budget is only a safety cap, past which the
older diffs are chosen newest first by importance and the rest named with their changed lines and the call that
shows each. Git operations that cancel out are one line, every heading says why, long symbol lists end with
"+ N more".

A real project (git, a reset and the reset back, a stash and its pop) is recorded by the recorder the watcher drives
(``note_git_activity`` is what the watcher calls when git writes the reflog), then asked through the CLI (a
subprocess, as a user runs it) and the MCP SDK client (as an agent does).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.session import ProjectSession
from support import cli_stdout, git, mcp_client, write

FUNCS = 60
#: The newest change rewrites these functions: about +170/-50 lines, over 10,000 characters of diff (the old
#: fixed cap was 2,500 tokens, 10,000 characters).
REWRITTEN = range(30, 54)


def small(i: int, tuned: bool = False) -> str:
    body = f"    return value * 2 + {i}  # tuned\n" if tuned else f"    return value + {i}\n"
    return f"def func_{i:03}(value):\n    \"\"\"Return value plus {i}.\"\"\"\n{body}\n\n"


def rewritten(i: int) -> str:
    return (f"def func_{i:03}(value):\n"
            f"    \"\"\"Scale value by {i} and clamp it to the configured window of accepted results.\"\"\"\n"
            f"    scaled = value * {i} + OFFSETS_BY_FUNCTION_NAME.get(\"func_{i:03}\", 0)\n"
            f"    if scaled > UPPER_LIMIT_FOR_ALL_FUNCTIONS_IN_THIS_MODULE:\n"
            f"        scaled = UPPER_LIMIT_FOR_ALL_FUNCTIONS_IN_THIS_MODULE - {i}\n"
            f"    elif scaled < LOWER_LIMIT_FOR_ALL_FUNCTIONS_IN_THIS_MODULE:\n"
            f"        scaled = LOWER_LIMIT_FOR_ALL_FUNCTIONS_IN_THIS_MODULE + {i}\n"
            f"    return scaled\n\n\n")


def module(tuned: set[int], rewrite: bool = False) -> str:
    return "".join(rewritten(i) if rewrite and i in REWRITTEN else small(i, i in tuned) for i in range(FUNCS))


def record(session: ProjectSession, *, git_operation: bool = False) -> None:
    if git_operation:
        session.recorder.note_git_activity()  # what the watcher does when git writes the project's reflog
    assert session.recorder.record_paths(["lib.py"]) is not None


def build_history(project: Path) -> dict[str, int]:
    """``lib.py``: recorded as it was, 24 one-line tunings (each with its intent), a ``git reset --hard HEAD~1``
    and the reset back after the 12th, then a big newest rewrite. Returns the file's version numbers of note."""
    write(project, "lib.py", module(set()))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "lib")
    session = ProjectSession(project, TrajectorySettings.load(project))
    session.start()  # the start-up scan: the start of recording
    try:
        tuned: set[int] = set()
        for k in range(24):
            session.set_intent(f"Tune func_{k:03}")
            tuned.add(k)
            write(project, "lib.py", module(tuned))
            record(session)
            if k == 11:
                git(project, "commit", "-q", "-am", "tuned")
                git(project, "reset", "-q", "--hard", "HEAD~1")
                record(session, git_operation=True)
                git(project, "reset", "-q", "--hard", "ORIG_HEAD")
                record(session, git_operation=True)
        session.set_intent("Clamp the second half")
        write(project, "lib.py", module(tuned, rewrite=True))
        record(session)
    finally:
        session.close()
    return {"reset": 14, "newest": 28}


def sections(text: str) -> dict[str, str]:
    """``{"3": section, "14–15": section}``: the versions of a file trajectory by their number(s)."""
    parts = re.split(r"\n(?=## \d)", text)
    return {re.match(r"## ([\d–]+)\.", p).group(1): p for p in parts[1:] if re.match(r"## ([\d–]+)\.", p)}


def changed_lines(old: str, new: str) -> list[str]:
    import difflib

    return [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_every_changed_line_of_every_version_the_older_ones_without_context(project: Path) -> None:
    marks = build_history(project)
    text = cli_stdout(project, "file", "lib.py", "--depth", "30")
    assert len(text) // 4 <= 8000
    found = sections(text)
    newest = found[str(marks["newest"])]
    tuned = set(range(24))
    lines = changed_lines(module(tuned), module(tuned, rewrite=True))
    assert len([x for x in lines if x[0] == "+"]) >= 160 and len("\n".join(lines)) > 10_000
    assert "diff cut" not in newest and "left out" not in text
    assert all(line in newest for line in lines)  # every added and removed line: the change is whole
    assert "\n \n" in newest or "\n     " in newest  # with its context lines
    assert "Intent: Clamp the second half" in newest.split("\n")[0]
    for k in range(24):  # every older one-line tuning: its two changed lines, and no context line around them
        section = found[str(k + 2 if k < 12 else k + 4)]
        assert f"Intent: Tune func_{k:03}" in section.split("\n")[0]
        diff = section[section.index("```diff\n") + 8:section.rindex("\n```")]
        assert f"-    return value + {k}\n+    return value * 2 + {k}  # tuned" in diff
        assert [line[:1] for line in diff.split("\n")] == ["@", "-", "+"], diff


def test_past_the_budget_older_diffs_are_named_with_their_lines_and_one_command_away(project: Path) -> None:
    marks = build_history(project)
    (project / ".trajectory" / "config.toml").write_text("[trajectory]\ntoken_budget = 4400\n")
    text = cli_stdout(project, "file", "lib.py", "--depth", "30")
    assert len(text) // 4 <= 4400
    found = sections(text)
    newest = found[str(marks["newest"])]
    tuned = set(range(24))
    assert all(line in newest for line in changed_lines(module(tuned), module(tuned, rewrite=True)))  # whole
    note = text[text.index("_Diffs of version(s)"):]
    left_out = re.search(r"Diffs of version\(s\) ([\d, -]+) left out: their (\d+) changed line\(s\) do not fit", note)
    assert left_out is not None and "code-trajectory compare" in note and "get_symbol_trajectory" in note
    numbers = expand(left_out.group(1))
    assert int(left_out.group(2)) == 2 * len(numbers)  # each left-out tuning: one line out, one in
    shown_diffs = [n for n, part in found.items() if "```diff" in part and n != str(marks["newest"])]
    assert shown_diffs and min(int(n) for n in shown_diffs) > max(numbers)  # the same size: the newer ones first
    command = re.search(r"Version (\d+)'s: `compare\(from_snapshot=\"(\w+)\", to_snapshot=\"(\w+)\", "
                        r"filepath=\"lib.py\"\)`, CLI `code-trajectory (compare \2 \3 --file lib.py)`", note)
    assert command is not None
    number = int(command.group(1))
    assert number in numbers and "```diff" not in found[command.group(1)]
    shown = cli_stdout(project, *shlex.split(command.group(4)))
    k = number - 2 if number < marks["reset"] else number - 4  # version 2 is func_000's tuning; 2 resets later
    assert f"+    return value * 2 + {k}  # tuned" in shown and f"-    return value + {k}" in shown


def test_cancelling_git_operations_headings_and_long_symbol_lists(project: Path) -> None:
    marks = build_history(project)
    text = cli_stdout(project, "file", "lib.py", "--depth", "30")
    found = sections(text)
    reset = found[f"{marks['reset']}–{marks['reset'] + 1}"]
    assert reset.strip().count("\n") == 0  # one line, no diff
    assert "[RESET] moving to HEAD~1, then [RESET] moving to ORIG_HEAD: back to where it was, no net change" in reset
    assert text.count("[RESET]") == 2 and "Revert Detected" not in text
    for section in found.values():  # every heading says why
        first = section.split("\n")[0]
        assert re.search(r"Intent: Tune func_\d{3}|Intent: Clamp|start of recording|\[RESET\]", first), first
    start = found["1"]
    assert "start of recording" in start and "func_059" not in start and "60 symbol(s)" in start
    symbols = next(line for line in found[str(marks["newest"])].split("\n") if line.startswith("- Symbols:"))
    assert symbols.endswith(f"+ {len(REWRITTEN) - 10} more") and len(re.findall(r"func_\d{3}", symbols)) == 10  # a group: 10

    log = cli_stdout(project, "log", "--limit", "40")
    assert log.count("back to where it was, no net change") == 1 and log.count("[RESET]") == 2
    assert "start of recording: 4 file(s)" in log
    assert "Intent: Clamp the second half" in log
    summary = cli_stdout(project, "session")
    assert "[RESET] moving to HEAD~1, then [RESET] moving to ORIG_HEAD: back to where it was" in summary
    assert "13 earlier, then" in summary and "\"Clamp the second half\"" in summary  # the newest intents, not the first


def test_a_long_symbol_list_ends_with_n_more(session: ProjectSession) -> None:
    session.set_intent("Add many helpers")
    write(session.root, "helpers.py", "".join(f"def helper_{i:03}():\n    return {i}\n\n\n" for i in range(145)))
    assert session.recorder.record_paths(["helpers.py"]) is not None
    text = cli_stdout(session.root, "file", "helpers.py")
    symbols = next(line for line in text.split("\n") if line.startswith("- Symbols:"))
    assert symbols.endswith("+ 135 more") and symbols.count("helper_") == 10  # 10 names a group
    log = cli_stdout(session.root, "log", "--limit", "1")
    assert "+ 135 more" in log


def test_checkpoint_names_and_stash_pop_in_every_heading(session: ProjectSession) -> None:
    root = session.root
    write(root, "src/app.py", "def main():\n    return 2\n")
    session.checkpoint("replay 1a2b3c4d")  # no intent: the checkpoint's name is the why
    write(root, "src/app.py", "def main():\n    return 3\n")
    assert session.recorder.record_paths(["src/app.py"]) is not None
    git(root, "stash", "-q")
    session.recorder.note_git_activity(stash=True)
    assert session.recorder.record_paths(["src/app.py"]) is not None
    git(root, "stash", "pop", "-q")
    session.recorder.note_git_activity(stash=True)
    assert session.recorder.record_paths(["src/app.py"]) is not None
    text = cli_stdout(root, "file", "src/app.py", "--depth", "10")
    headings = [line for line in text.split("\n") if line.startswith("## ")]
    assert any("checkpoint: replay 1a2b3c4d" in h for h in headings)
    assert any("no intent set" in h for h in headings)  # said, not left blank
    stash = [h for h in headings if "[STASH]" in h]
    assert len(stash) == 1 and "no net change" in stash[0]
    log = cli_stdout(root, "log")
    assert "checkpoint: replay 1a2b3c4d" in log and log.count("no net change") == 1
    found = [line for line in cli_stdout(root, "search", "return 2").split("\n") if line.startswith("## ")]
    assert any("checkpoint: replay 1a2b3c4d" in h for h in found) and any("no intent set" in h for h in found)
    compared = cli_stdout(root, "compare", "replay 1a2b3c4d")
    assert "- From: " in compared and "checkpoint: replay 1a2b3c4d" in compared
    assert "- To: the work tree as it is now" in compared
    summary = cli_stdout(root, "session")
    # said once, with its snapshot, among the named points (not again among the branch's checkpoints)
    assert "Named points: \"replay 1a2b3c4d\"" in summary and "replay 1a2b3c4d" not in summary.split("Named points")[0]
    assert "no net change" in summary


@pytest.mark.anyio
async def test_past_the_budget_the_biggest_recent_change_gets_its_diff_before_older_small_ones(project: Path) -> None:
    """A 30-version answer over a small budget: the big change three versions back gets its diff before older small
    ones."""
    write(project, "lib.py", module(set()))
    async with mcp_client(project, token_budget=2500) as client:
        async def step(intent: str, text: str) -> None:
            assert not (await client.call_tool("set_trajectory_intent", {"intent": intent})).is_error
            write(project, "lib.py", text)
            assert not (await client.call_tool("checkpoint", {})).is_error

        tuned: set[int] = set()
        for k in range(26):
            tuned.add(k)
            await step(f"Tune func_{k:03}", module(tuned))
        variants = "".join(rewritten(40).replace("func_040", f"func_040_strict_{v}") for v in range(16))
        big = module(tuned).replace(small(40), rewritten(40) + variants)  # about +130 lines, 8,000 characters
        await step("Add a strict variant of func_040", big)
        for k in (26, 27):
            tuned.add(k)
            await step(f"Tune func_{k:03}", big.replace(small(k), small(k, True)))
            big = big.replace(small(k), small(k, True))
        result = await client.call_tool("get_file_trajectory", {"filepath": "lib.py", "depth": 30})
    assert not result.is_error
    text = result.content[0].text
    found = sections(text)
    numbers = sorted(int(n) for n in found if "–" not in n)
    strict = next(n for n in numbers if "strict variant" in found[str(n)].split("\n")[0])
    assert strict == numbers[-3]
    # the biggest recent change: its diff cut to half the room left, and where the rest is
    assert all(f"+def func_040_strict_{v}(value):" in found[str(strict)] for v in range(3))
    assert "diff cut" in found[str(strict)] and "git --git-dir=.trajectory show" in found[str(strict)]
    assert "```diff" in found[str(numbers[-1])]  # the newest: whole
    # the big one is cut to half the room: the other half buys small ones, the newer first; the oldest are named
    left_out = re.search(r"Diffs of version\(s\) ([\d, -]+) left out", text)
    assert left_out is not None
    named = expand(left_out.group(1))
    smaller = [n for n in numbers[1:-1] if n != strict]
    shown_small = [n for n in smaller if "```diff" in found[str(n)]]
    assert shown_small and named and min(shown_small) > max(named), (shown_small, named)
    assert all("```diff" not in found[str(n)] for n in named) and set(smaller) == set(shown_small) | named


def expand(ranges: str) -> set[int]:
    """``{2, 3, 4, 7}`` for ``2-4, 7``."""
    found: set[int] = set()
    for part in ranges.split(", "):
        first, _, last = part.partition("-")
        found.update(range(int(first), int(last or first) + 1))
    return found


@pytest.mark.anyio
async def test_compare_fills_the_budget_and_names_the_call_for_each_left_out_file(project: Path) -> None:
    """``compare``'s cap is its own, 20,000 tokens by default (under Claude Code's 25,000 for an MCP tool's answer):
    a net change of ~12,000 tokens is shown whole; one of ~24,000 fills the cap and names the files left out, each
    with its call. ``tools/list`` declares the answer's size, so Claude Code keeps it in the conversation."""
    def rewrite(tag: str, names: str) -> None:
        for name in names:
            write(project, f"src/{name}.py", "".join(f"VALUE_{i:03} = '{tag} {name} {i:03} {'x' * 24}'\n"
                                                     for i in range(60)))

    async with mcp_client(project) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        rewrite("old", "abcdefghijklmnop")
        assert not (await client.call_tool("checkpoint", {"message": "before the rename"})).is_error
        rewrite("new", "abcdefgh")
        half = await client.call_tool("compare", {"from_snapshot": "before the rename"})
        rewrite("new", "ijklmnop")
        result = await client.call_tool("compare", {"from_snapshot": "before the rename"})
        assert not result.is_error and not half.is_error
        whole = half.content[0].text
        assert 8000 < len(whole) // 4 <= 20000 and "left out" not in whole and whole.count("### `src/") == 8
        text = result.content[0].text
        assert "- From: " in text and "checkpoint: before the rename" in text and "- To: the work tree" in text
        assert 16000 < len(text) // 4 <= 20000  # the diffs fill the cap, no fixed share
        assert "diff cut" not in text  # whole diffs while they fit; the others are named
        calls = re.findall(r"`compare\((from_snapshot=\"[0-9a-f]{12}\", to_snapshot=\"now\", "
                           r"filepath=\"(src/[a-p]\.py)\")\)`", text)
        assert calls and all(f"### `{path}`" not in text for _, path in calls)
        path = calls[0][1]
        alone = await client.call_tool("compare", {"from_snapshot": "before the rename", "filepath": path})
    shown = alone.content[0].text
    assert f"### `{path}`" in shown and "+VALUE_059 = 'new" in shown and "diff cut" not in shown
    assert (listed["compare"].meta or {}).get("anthropic/maxResultSizeChars", 0) >= 20000 * 4
    assert "anthropic/maxResultSizeChars" not in (listed["get_file_trajectory"].meta or {})


def test_a_smaller_compare_budget_in_the_config_holds_on_the_cli(project: Path) -> None:
    for name in "abcdef":
        write(project, f"src/{name}.py", "".join(f"VALUE_{i:03} = 'old {name} {'x' * 30}'\n" for i in range(60)))
    cli_stdout(project, "checkpoint", "-m", "before")
    for name in "abcdef":
        write(project, f"src/{name}.py", "".join(f"VALUE_{i:03} = 'new {name} {'x' * 30}'\n" for i in range(60)))
    (project / ".trajectory" / "config.toml").write_text("[trajectory]\ncompare_token_budget = 3000\n")
    text = cli_stdout(project, "compare", "before")
    assert len(text) // 4 <= 3000 and "_Diffs left out: " in text and "code-trajectory compare " in text



def test_a_compare_of_more_files_than_its_budget_lists_keeps_its_closing_note_whole(project: Path) -> None:
    """A net change of 400 files at a 2,000-token cap: the list stops with a count of the others, and the note of
    the left-out diffs ends with its calls whole (it used to be cut mid-call, advising a depth compare does not
    take)."""
    for i in range(400):
        write(project, f"src/pkg_{i:03}/module_with_a_long_name_{i:03}.py", f"VALUE = {i}\n")
    cli_stdout(project, "checkpoint", "-m", "before")
    for i in range(400):
        write(project, f"src/pkg_{i:03}/module_with_a_long_name_{i:03}.py", f"VALUE = {i + 1}\n")
    (project / ".trajectory" / "config.toml").write_text("[trajectory]\ncompare_token_budget = 2000\n")
    text = cli_stdout(project, "compare", "before")
    assert len(text) // 4 <= 2000 and "answer cut" not in text, text
    assert re.search(r"- … and \d+ more changed file\(s\), not listed", text), text
    calls = re.findall(r"\(CLI: `code-trajectory compare [0-9a-f]{12} now --file (\S+)`\)", text)
    assert len(calls) == 3 and all(path.endswith(".py") for path in calls), text


def test_compare_of_a_path_no_state_holds_says_so(project: Path) -> None:
    write(project, "src/app.py", "x = 1\n")
    write(project, ".env", "TOKEN=1\n")
    cli_stdout(project, "checkpoint", "-m", "start")
    missing = cli_stdout(project, "compare", "start", "--file", "src/nope.py")
    assert "in neither state" in missing and "identical" not in missing, missing
    secret = cli_stdout(project, "compare", "start", "--file", ".env")
    assert "it is not recorded (secret" in secret and "identical" not in secret, secret
    same = cli_stdout(project, "compare", "start", "--file", "src/app.py")
    assert "No difference: the two states are identical" in same, same

def test_net_zero_spans_find_operations_that_end_where_they_began() -> None:
    from code_trajectory.history.headings import Step, net_zero_spans

    def steps(*chain: tuple[str, str, bool]) -> list[Step]:
        return [Step(a, b, op) for a, b, op in chain]

    # an edit, a reset and the reset back, an edit
    assert net_zero_spans(steps(("A", "B", False), ("B", "C", True), ("C", "B", True), ("B", "D", False))) == [(1, 2)]
    # stash, checkout, checkout back, pop: one run of four
    assert net_zero_spans(steps(("W", "H", True), ("H", "F", True), ("F", "H", True), ("H", "W", True))) == [(0, 3)]
    # a stash never popped, then a checkout and the checkout back: only those two
    assert net_zero_spans(steps(("W", "H", True), ("H", "F", True), ("F", "H", True))) == [(1, 2)]
    # the agent's edit in between: not git's to cancel
    assert net_zero_spans(steps(("A", "B", True), ("B", "C", False), ("C", "A", True))) == []
    # a file that did not exist, created by a checkout and removed by the checkout back
    assert net_zero_spans(steps((None, "B", True), ("B", None, True))) == [(0, 1)]


def test_compare_of_a_glob_looking_path_is_that_path_only(project: Path) -> None:
    """A client's path is a path, not a pattern: ``src/*.py`` names no recorded file, though ``src/app.py`` is one."""
    write(project, "src/app.py", "x = 1\n")
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "src/app.py", "x = 2\n")
    answer = cli_stdout(project, "compare", "start", "--file", "src/*.py")
    assert "in neither state" in answer and "src/app.py" not in answer, answer
