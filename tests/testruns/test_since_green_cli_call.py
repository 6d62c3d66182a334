"""``since-green`` with no green run of the full suite names the newest partial pass and how to ask for its scope:
the CLI's answer spells the CLI command (``--scope``), which runs as printed, not only the MCP argument
(``scope='...'``), which a shell user cannot type. Real git, real pytest through ``code-trajectory test``."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from support import cli_stdout, write

SUITE = "def test_one():\n    assert True\n"


def spelled(text: str) -> list[list[str]]:
    """The arguments of every ``code-trajectory since-green ...`` the answer spells in backquotes."""
    return [shlex.split(found)[1:] for found in re.findall(r"`(code-trajectory since-green[^`]*)`", text)]


def test_a_partial_pass_s_scope_is_spelled_as_a_cli_call_that_runs(project: Path) -> None:
    write(project, "tests/test a.py", SUITE)
    write(project, "src/app.py", "X = 1\n")
    cli_stdout(project, "test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test a.py")
    write(project, "src/app.py", "X = 2\n")
    cli_stdout(project, "checkpoint", "-m", "after the pass")

    answer = cli_stdout(project, "since-green")
    assert "No snapshot on `main` is green for the full suite" in answer
    calls = spelled(answer)
    assert calls == [["since-green", "--scope", "'tests/test a.py'"]], answer  # one path, quoted
    scoped = cli_stdout(project, *calls[0])
    assert scoped.startswith("Last green run for scope `'tests/test a.py'`"), scoped
    assert "src/app.py" in scoped  # the change since that pass

    for_file = cli_stdout(project, "since-green", "src/app.py")
    file_calls = spelled(for_file)
    assert file_calls == [["since-green", "--scope", "'tests/test a.py'", "src/app.py"]], for_file
    assert "X = 2" in cli_stdout(project, *file_calls[0])
