"""Issue 28 (the lead's decision): a symbol's history shows every change's heading with why and when; the newest
change keeps its lines (whole), each older one is one line (``+1 -1, line 5``: how many lines, where in the file),
and the answer ends with the call that shows their lines: ``diffs`` on the MCP tool, ``--diffs`` on the CLI. Real
git, the CLI as a subprocess and the MCP SDK client."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.history.render_symbol import DEFAULT_DIFFS, changed_summary
from support import checkpoint_with_why, cli_stdout, mcp_client, subprocess_env, write

#: ``first()`` at lines 1-14 of its file: ``step_K = K`` is line K + 2.
STEPS = "def first():\n" + "".join(f"    step_{i} = {i}\n" for i in range(12)) + "    return step_0\n"
#: (the line changed, how it is recorded, why): each version changes one step, the third adds a line after step_9.
CHANGES = [("step_1 = 1", "step_1 = 100", "intent", "Raise step one"),
           ("step_4 = 4", "step_4 = 400", "name", "Raise step four"),
           ("step_9 = 9\n", "step_9 = 9\n    step_9b = 90\n", "intent", "Add a step after nine"),
           ("step_10 = 10", "step_10 = 1000", "name", "Raise step ten")]
#: What each change's one line says: lines added and removed, and where (the lines of the file then).
WHERE = ["+1 -1, line 3", "+1 -1, line 6", "+1, line 12", "+1 -1, line 13"]


def sections(text: str) -> list[str]:
    """The per-version sections (``## `` headings), oldest first."""
    return re.split(r"\n(?=## )", text)[1:]


def recorded(project: Path) -> None:
    write(project, "src/steps.py", STEPS)
    cli_stdout(project, "checkpoint")
    text = STEPS
    for old, new, how, why in CHANGES:
        text = text.replace(old, new)
        write(project, "src/steps.py", text)
        checkpoint_with_why(project, why, how)


def test_older_changes_are_one_line_with_their_why_and_the_call_shows_their_lines(project: Path) -> None:
    assert len(CHANGES) > DEFAULT_DIFFS
    recorded(project)
    out = cli_stdout(project, "symbol", "src/steps.py", "first")
    baseline, *changes = sections(out)
    assert len(changes) == 4 and "as first recorded" in baseline
    label = {"intent": "Intent: ", "name": "checkpoint: "}
    for part, (_, _, how, why), place in zip(changes[:-DEFAULT_DIFFS], CHANGES, WHERE):
        heading, _, rest = part.partition("\n")
        assert label[how] + why in heading and heading.endswith(f"· {place}"), heading  # why and when stay
        assert "```" not in rest  # no lines: the heading says how many and where
    newest = changes[-1]
    assert "checkpoint: Raise step ten" in newest.split("\n", 1)[0]
    assert "     step_9b = 90\n-    step_10 = 10\n+    step_10 = 1000\n     step_11 = 11" in newest  # whole
    closing = out.strip().split("\n")[-1]
    assert closing.startswith(f"_{len(CHANGES) - DEFAULT_DIFFS} older change(s) shown as one line each")
    command = re.search(r"\(CLI: `code-trajectory (symbol [^`]+)`\)", closing)
    assert command is not None and "--diffs 4" in command.group(1)
    every = cli_stdout(project, *shlex.split(command.group(1)))
    _, *shown = sections(every)
    for part, (_, new, _, why) in zip(shown, CHANGES):
        assert why in part and "```diff" in part
        assert f"+    {new.splitlines()[-1].strip()}" in part, part
    assert "older change(s) shown as one line" not in every
    only_headings = cli_stdout(project, "symbol", "src/steps.py", "first", "--diffs", "0")
    assert "```" not in only_headings and only_headings.count("\n## ") == 5


@pytest.mark.anyio
async def test_the_mcp_tool_compacts_alike_and_its_fields_say_it(project: Path) -> None:
    recorded(project)
    async with mcp_client(project) as client:
        default = await client.call_tool("get_symbol_trajectory", {"filepath": "src/steps.py", "symbol": "first"})
        every = await client.call_tool("get_symbol_trajectory", {"filepath": "src/steps.py", "symbol": "first",
                                                                 "diffs": 10})
        bad = await client.call_tool("get_symbol_trajectory", {"filepath": "src/steps.py", "symbol": "first",
                                                               "diffs": -1})
    cli_text = cli_stdout(project, "symbol", "src/steps.py", "first")
    text = default.content[0].text
    assert not default.is_error and text.split("\n## ", 1)[1] == cli_text.split("\n## ", 1)[1].rstrip("\n")  # one rendering
    assert 'get_symbol_trajectory(filepath="src/steps.py", symbol="first", diffs=4)' in text
    data = default.structured_content
    older = len(CHANGES) - DEFAULT_DIFFS
    assert data["compacted"]["n"] == older and "diffs=4" in data["compacted"]["call"]
    versions = [dict(zip(data["cols"], row)) for row in data["versions"]]  # rows under cols: None where absent
    assert [v.get("lines") for v in versions] == [None, *WHERE[:older], *[None] * DEFAULT_DIFFS]
    assert all(v.get("diff") for v in versions[-DEFAULT_DIFFS:]) and not any(v.get("diff") for v in versions[:-DEFAULT_DIFFS])
    assert not every.is_error and every.content[0].text.count("```diff") == 4
    assert "compacted" not in every.structured_content
    assert bad.is_error and "diffs" in bad.content[0].text


def test_a_summary_places_a_removal_in_the_older_file() -> None:
    assert changed_summary("@@ -12,4 +11,0 @@\n-a\n-b\n-c\n-d") == "-4, lines 12-15 before"
    assert changed_summary("@@ -3 +3,2 @@\n-x\n+y\n+z") == "+2 -1, lines 3-4"


def test_the_cli_says_the_default_and_refuses_a_negative_number(project: Path) -> None:
    recorded(project)
    assert f"(default {DEFAULT_DIFFS})" in " ".join(cli_stdout(project, "symbol", "--help").split())
    done = subprocess.run([sys.executable, "-m", "code_trajectory", "symbol", "src/steps.py", "first", "--diffs",
                           "-1"], cwd=project, env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "diffs must be between 0 and 200" in done.stderr and not done.stdout
