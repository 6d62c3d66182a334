"""The CLI commands an answer spells for a file named like an option (``-x.py``) run as printed: the path follows
``--`` (``file``, ``symbol``, after the options) or is the option's own value (``compare --file=-x.py``). They used to
put it where the command line reads an option (``symbol -x.py run --diffs 2``, ``compare A B --file -x.py``: a usage
error). Real git and the real CLI in temp dirs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from support import cli_stdout, write


def spelled(text: str, command: str) -> list[str]:
    """The arguments of every ``code-trajectory COMMAND ...`` the answer spells in backquotes."""
    return [shlex.split(found)[1:] for found in re.findall(rf"`(code-trajectory {command} [^`]+)`", text)]


def test_a_symbol_history_s_deeper_call_for_a_dash_file_runs(project: Path) -> None:
    for i in range(3):
        write(project, "-x.py", f"def run():\n    return {i}\n")
        cli_stdout(project, "checkpoint", "-m", f"v{i}")
    text = cli_stdout(project, "symbol", "--", "-x.py", "run")
    calls = spelled(text, "symbol")
    assert calls, text
    assert "return 0" in cli_stdout(project, *calls[0])


def test_a_renamed_dash_file_s_later_history_call_runs(project: Path) -> None:
    write(project, "-old.py", "".join(f"LINE_{i} = {i}\n" for i in range(40)))
    cli_stdout(project, "checkpoint", "-m", "old")
    (project / "-old.py").rename(project / "-new.py")
    cli_stdout(project, "checkpoint", "-m", "renamed")
    text = cli_stdout(project, "file", "--", "-old.py")
    calls = spelled(text, "file")
    assert calls, text
    assert "Trajectory of `-new.py`" in cli_stdout(project, *calls[0])


def test_a_compare_s_left_out_diff_calls_for_dash_files_run(project: Path) -> None:
    for name in "abcdef":
        write(project, f"-{name}.py", "".join(f"VALUE_{i:03} = 'old {name} {'x' * 30}'\n" for i in range(60)))
    cli_stdout(project, "checkpoint", "-m", "before")
    for name in "abcdef":
        write(project, f"-{name}.py", "".join(f"VALUE_{i:03} = 'new {name} {'x' * 30}'\n" for i in range(60)))
    (project / ".trajectory" / "config.toml").write_text("[trajectory]\ncompare_token_budget = 3000\n")
    calls = spelled(cli_stdout(project, "compare", "before"), "compare")
    assert calls
    for call in calls:
        assert "'new " in cli_stdout(project, *call)
