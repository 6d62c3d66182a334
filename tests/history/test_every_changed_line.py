"""Issue 28: a file's trajectory and ``compare`` hold every changed line git's answer holds, in fewer tokens.

The same five changes are recorded by code-trajectory (the CLI's ``intent`` and ``checkpoint``) and committed in a
plain git repository with the same subjects. The answers must hold every changed line of ``git log -p`` /
``git diff`` (a comment- or import-only change's lines too; a whitespace-only change is its one line), cut what
repeats instead: older diffs without context lines, a function named once for its consecutive hunks.
"""

from __future__ import annotations

import re
from pathlib import Path

from code_trajectory.history.narrative import estimate_tokens, lean_hunk_headers
from support import cli_stdout, git, git_repo, write

BASE = '''"""Order processing."""

import time


def process(order, attempts=3):
    """Process one order."""
    # validate the order before anything else
    if not order.items:
        raise ValueError("an order needs items")
    total = sum(item.price for item in order.items)
    discount = 0
    if order.customer.loyal:
        discount = total * 0.05
    shipping = 4.90
    if total > 100:
        shipping = 0
    taxes = total * 0.2
    for attempt in range(attempts):
        try:
            return order.charge(total - discount + shipping + taxes)
        except OSError:
            time.sleep(2 ** attempt)
    raise RuntimeError("payment failed")


def refund(order):
    return order.charge(-order.paid)
'''

#: (subject, edits): each step rewrites ``src/orders.py``.
STEPS = [
    ("Say why orders are validated first", [("# validate the order before anything else",
                                             "# validate the order first: charging an empty one is irreversible")]),
    ("Import json for the receipts", [("import time\n", "import json\nimport time\n")]),
    ("Space the functions out", [("\n\ndef refund(order):", "\n\n\ndef refund(order):")]),
    ("Loyal customers get 10 percent", [("discount = total * 0.05", "discount = total * 0.10"),
                                        ("time.sleep(2 ** attempt)", "time.sleep(min(2 ** attempt, 30))")]),
    ("Refunds say what they refund", [("return order.charge(-order.paid)",
                                       "return order.charge(-order.paid, reason=\"refund\")")]),
]


def recorded_and_committed(project: Path, mirror: Path) -> None:
    write(project, "src/orders.py", BASE)
    cli_stdout(project, "checkpoint", "-m", "start")
    text = BASE
    for subject, edits in STEPS:
        for old, new in edits:
            assert old in text
            text = text.replace(old, new, 1)
        for root in (project, mirror):
            write(root, "src/orders.py", text)
        cli_stdout(project, "intent", subject)
        cli_stdout(project, "checkpoint")
        git(mirror, "commit", "-q", "-am", subject)


def changed(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_a_file_history_holds_every_changed_line_of_git_log_p(project: Path, tmp_path: Path) -> None:
    mirror = git_repo(tmp_path / "mirror", {"src/orders.py": BASE}, branch="main", commit="start")
    recorded_and_committed(project, mirror)
    answer = cli_stdout(project, "file", "src/orders.py", "--depth", "5")
    log = git(mirror, "log", "-p", "-5", "--", "src/orders.py")
    sections = {s.split("\n")[0].split("Intent: ")[-1]: s for s in re.split(r"\n(?=## )", answer)[1:]}
    assert list(sections) == [subject for subject, _ in STEPS]  # every heading says why
    spaced = git(mirror, "show", "HEAD~2", "--format=")  # the whitespace-only change: said in one line
    assert "Whitespace-only change" in sections["Space the functions out"]
    assert "```diff" not in sections["Space the functions out"]
    for line in changed(log):
        if line not in changed(spaced):
            assert line in answer, (line, answer)
    # the comment- and import-only changes: their one line, then their lines
    assert "Comment-only change" in sections["Say why orders are validated first"]
    assert "+    # validate the order first: charging an empty one is irreversible" in answer
    assert "+import json" in sections["Import json for the receipts"]
    # an older change: its changed lines only, the function named once for its two hunks
    loyal = sections["Loyal customers get 10 percent"]
    diff = loyal[loyal.index("```diff\n") + 8:loyal.rindex("\n```")].split("\n")
    assert [line[:1] for line in diff] == ["@", "-", "+", "@", "-", "+"], diff
    assert diff[0].endswith("@@ def process(order, attempts=3):") and diff[3].endswith("@@"), diff
    # the newest change: with its context lines
    newest = sections["Refunds say what they refund"]
    assert "\n def refund(order):\n" in newest, newest
    assert estimate_tokens(answer) < estimate_tokens(log), (answer, log)
    assert "left out" not in answer


def test_compare_shows_changed_lines_only_and_names_a_function_once(project: Path, tmp_path: Path) -> None:
    mirror = git_repo(tmp_path / "mirror", {"src/orders.py": BASE}, branch="main", commit="start")
    recorded_and_committed(project, mirror)
    answer = cli_stdout(project, "compare", "start")
    diff = git(mirror, "diff", "HEAD~5", "HEAD")
    assert changed(diff) and all(line in answer for line in changed(diff)), (answer, diff)
    shown = answer[answer.index("```diff\n") + 8:answer.rindex("\n```")].split("\n")
    assert all(line[:1] in "@+-" for line in shown), shown  # no context line
    assert sum(line.endswith("@@ def process(order, attempts=3):") for line in shown) == 1, shown
    assert estimate_tokens(answer) < estimate_tokens(diff), (answer, diff)


def test_lean_hunk_headers_name_a_function_once_for_consecutive_hunks() -> None:
    diff = ("@@ -3 +3 @@ def a():\n-x\n+y\n@@ -5 +5 @@ def a():\n-z\n+w\n@@ -9 +9 @@ def b():\n-p\n+q\n"
            "@@ -12 +12 @@\n-r\n+s\n@@ -14 +14 @@ def b():\n-t\n+u")
    assert lean_hunk_headers(diff) == ("@@ -3 +3 @@ def a():\n-x\n+y\n@@ -5 +5 @@\n-z\n+w\n@@ -9 +9 @@ def b():\n"
                                       "-p\n+q\n@@ -12 +12 @@\n-r\n+s\n@@ -14 +14 @@ def b():\n-t\n+u")
    assert lean_hunk_headers("-@@ not a header @@ x\n+y") == "-@@ not a header @@ x\n+y"
