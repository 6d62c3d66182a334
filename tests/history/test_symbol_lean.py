"""Issue 28.2 as a user meets it: a symbol's history says each change once and leanly. A change inside a nested
function or method is a change of the symbol (``git log -L`` shows it); the newest change keeps its context lines,
older ones shown with their lines (``--diffs``) show only their changed lines; hunk headers do not repeat the symbol's name; a move with the body the
version before it added is said in one line; every heading says why on its own line. Real git, the CLI as a
subprocess."""

from __future__ import annotations

import re
from pathlib import Path

from support import cli_stdout, git, write

SORT_V1 = '''def order(items):
    """Sort ITEMS."""
    def key(item):
        return item.rank

    ranked = [item for item in items if item.rank is not None]
    return sorted(ranked, key=key)
'''
SORT_V2 = SORT_V1.replace("return item.rank", "return -item.rank")
SORT_V3 = SORT_V2.replace("if item.rank is not None", "if item.rank")
SORT_V4 = SORT_V3.replace("return -item.rank", "return -item.rank, item.name").replace("sorted(ranked", "sorted(items")

STEPS_V1 = "def first():\n" + "".join(f"    step_{i} = {i}\n" for i in range(12)) + "    return step_0\n"
STEPS_V2 = STEPS_V1.replace("step_1 = 1", "step_1 = 100")
STEPS_V3 = STEPS_V2.replace("step_10 = 10", "step_10 = 1000")

#: Steps reordered so that Python's difflib and git align them differently (difflib moves step_h, git step_g).
PIPELINE_V1 = "def pipeline():\n" + "".join(f"    step_{c} = run('{c}')\n" for c in "abcdefgh") + "    return step_h\n"
PIPELINE_V2 = "def pipeline():\n" + "".join(f"    step_{c} = run('{c}')\n" for c in "abcefhjgd") + "    return step_h\n"

HELPER = "def slugify(text):\n    cleaned = text.strip().lower()\n    return cleaned.replace(' ', '-')\n"


def sections(text: str) -> list[str]:
    """The per-version sections of a trajectory (``## `` headings), oldest first."""
    return re.split(r"\n(?=## )", text)[1:]


def recorded(project: Path, rel: str, versions: list[str], intents: list[str]) -> None:
    """``versions[0]`` as recording began, then each next version with its intent, one snapshot each."""
    write(project, rel, versions[0])
    cli_stdout(project, "checkpoint")
    for text, intent in zip(versions[1:], intents):
        write(project, rel, text)
        cli_stdout(project, "intent", intent)
        cli_stdout(project, "checkpoint")


def test_a_change_inside_a_nested_function_is_a_change_of_the_symbol(project: Path) -> None:
    recorded(project, "src/sort.py", [SORT_V1, SORT_V2, SORT_V3, SORT_V4],
             ["Sort by descending rank", "Skip rank zero", "Break ties by name"])
    out = cli_stdout(project, "symbol", "src/sort.py", "order", "--diffs", "3")
    parts = sections(out)
    assert len(parts) == 4, out  # the baseline, the closure's change, the function's own change, both
    assert "modified in order.key · Intent: Sort by descending rank" in parts[1]
    assert "-        return item.rank\n+        return -item.rank" in parts[1]
    assert "modified · Intent: Skip rank zero" in parts[2]
    # its own code and the closure's changed together: the heading names the closure too
    assert "modified, also in order.key · Intent: Break ties by name" in parts[3]
    # the closure's own history has its change too, and only it
    inner = sections(cli_stdout(project, "symbol", "src/sort.py", "order.key"))
    assert len(inner) == 3 and "Sort by descending rank" in inner[1] and "Break ties by name" in inner[2]
    assert "Skip rank zero" not in "".join(inner)


def test_older_changes_show_only_their_lines_and_the_newest_keeps_its_context(project: Path) -> None:
    recorded(project, "src/steps.py", [STEPS_V1, STEPS_V2, STEPS_V3], ["Raise step one", "Raise step ten"])
    out = cli_stdout(project, "symbol", "src/steps.py", "first", "--diffs", "2")
    baseline, older, newest = sections(out)
    assert "\n" not in baseline.strip()  # the baseline is its heading only
    for part, intent in ((older, "Raise step one"), (newest, "Raise step ten")):
        heading = part.split("\n", 1)[0]
        assert heading.endswith(f"· modified · Intent: {intent}")  # why, on the heading's own line
        assert "- Intent" not in part
    older_lines = older.strip().split("\n")[1:]
    assert older_lines == ["```diff", "@@ -3 +3 @@", "-    step_1 = 1", "+    step_1 = 100", "```"]
    assert "@@ -10,5 +10,5 @@\n     step_8 = 8\n     step_9 = 9\n-    step_10 = 10\n+    step_10 = 1000\n" in newest
    assert "first" not in "".join(line for line in out.split("\n") if line.startswith("@@"))
    dated = [line.split(" · ")[0] for line in out.split("\n") if line.startswith("## ")]
    days = [stamp.split()[1] for stamp in dated if len(stamp.split()) == 3]  # "## 2026-11-25 20:06:57"
    assert days and len(days) == len(set(days))  # a day is said once, at its first heading


def test_a_move_of_the_body_just_added_is_said_in_one_line(project: Path) -> None:
    write(project, "src/app.py", "def main():\n    return 0\n")
    cli_stdout(project, "checkpoint")
    write(project, "src/app.py", "def main():\n    return 0\n\n\n" + HELPER)
    cli_stdout(project, "checkpoint", "-m", "Add slugify")
    write(project, "src/app.py", "def main():\n    return 0\n")
    write(project, "src/text.py", HELPER)
    cli_stdout(project, "checkpoint", "-m", "Move slugify to text")
    out = cli_stdout(project, "symbol", "src/text.py", "slugify")
    added, moved = sections(out)
    assert "added · checkpoint: Add slugify" in added and "(in `src/app.py`)" in added
    assert "+    cleaned = text.strip().lower()" in added
    assert "moved from src/app.py (body unchanged) · checkpoint: Move slugify to text" in moved
    assert out.count("cleaned = text.strip().lower()") == 1  # the body is shown once


def test_a_repeated_definition_is_followed_by_its_lines_not_by_its_number(project: Path) -> None:
    """``helper@2`` is the second ``helper`` in source order: one added above it renumbers it (``helper@3``), which
    neither changes nor adds it; as ``git log -L`` does, its history follows its lines through git's diff."""
    one, two = "def helper():\n    return 1\n", "def helper():\n    return 2\n"
    zero = "def helper():\n    return 0\n"
    recorded(project, "src/helpers.py", [f"{one}\n\n{two}", f"{zero}\n\n{one}\n\n{two}",
                                         f"{zero}\n\n{one}\n\n{two.replace('return 2', 'return 22')}"],
             ["Add a zeroth helper", "Raise the second helper"])
    out = cli_stdout(project, "symbol", "src/helpers.py", "helper@3")
    baseline, changed = sections(out)
    assert "as first recorded (when recording began: 2 lines, starts at line 5;" in baseline
    assert "modified · Intent: Raise the second helper" in changed and "Add a zeroth helper" not in out
    assert "-    return 2\n+    return 22" in changed
    added = sections(cli_stdout(project, "symbol", "src/helpers.py", "helper"))  # the first helper now: the zeroth
    assert len(added) == 1 and "added · Intent: Add a zeroth helper" in added[0] and "+    return 0" in added[0]


def test_a_symbols_diff_removes_and_adds_the_lines_git_log_L_does(project: Path, tmp_path: Path) -> None:
    """Issue 28, every fact git's answer holds: lines moved inside a function are aligned as git aligns the file,
    so the removed and added lines are the ones ``git log -L`` shows (diffing the function's lines alone with
    difflib moved other lines)."""
    recorded(project, "src/flow.py", ["import os\n\n\n" + PIPELINE_V1, "import os\n\n\n" + PIPELINE_V2],
             ["Run step g last"])
    newest = sections(cli_stdout(project, "symbol", "src/flow.py", "pipeline"))[-1]
    ours = sorted(line for line in newest.split("\n") if line[:1] in ("+", "-"))
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    for version in (PIPELINE_V1, PIPELINE_V2):
        write(plain, "src/flow.py", "import os\n\n\n" + version)
        git(plain, "add", "-A")
        git(plain, "commit", "-qm", "v")
    theirs = sorted(line for line in git(plain, "log", "-1", "-L:pipeline:src/flow.py", "--format=").split("\n")
                    if line[:1] in ("+", "-") and not line.startswith(("---", "+++")))
    assert ours == theirs and "-    step_g = run('g')" in ours, newest


def test_a_symbol_moved_in_its_file_shows_what_changed_in_it_not_its_body_twice(project: Path) -> None:
    """git's alignment removes a function moved below another and adds it whole; the symbol's own lines, diffed
    alone, say the one line that changed in it (the move is the heading's lines)."""
    body = "def tune(x):\n" + "".join(f"    x = x * {i} + {i}\n" for i in range(2, 8)) + "    return x\n"
    other = "def other(y):\n" + "".join(f"    y = y - {i}\n" for i in range(12)) + "    return y\n"
    recorded(project, "src/move.py", [f"{body}\n\n{other}", f"{other}\n\n{body.replace('x * 5 + 5', 'x * 5 - 5')}"],
             ["Move tune below other"])
    newest = sections(cli_stdout(project, "symbol", "src/move.py", "tune"))[-1]
    changed = [line for line in newest.split("\n") if line[:1] in ("+", "-")]
    assert changed == ["-    x = x * 5 + 5", "+    x = x * 5 - 5"], newest



def test_a_file_as_recording_began_is_one_line_in_its_trajectory(project: Path) -> None:
    """A file in the history's first snapshot (here a first ``checkpoint``, not an import) is a baseline: its size
    in one line, not every line as added; a later change shows its lines."""
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
    recorded(project, "src/many.py", [body, body.replace("return x + 7\n", "return x - 7\n")], ["Subtract seven"])
    out = cli_stdout(project, "file", "src/many.py")
    first, newest = sections(out)
    assert "The file as recording began: 120 lines" in first and "+def f3(x):" not in out
    assert "-    return x + 7\n+    return x - 7" in newest
