"""The CLI as a user runs it: a subprocess of the installed console script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support import git, write


def cli(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_checkpoint_log_file_session_intent_consolidate_status(project: Path) -> None:
    assert "Checkpoint recorded" in cli("checkpoint", cwd=project).stdout
    assert "Intent set" in cli("intent", "Rename main", "--project", str(project), cwd=project.parent).stdout
    write(project, "src/app.py", "def start():\n    return 1\n")
    out = cli("checkpoint", "-m", "renamed", cwd=project).stdout
    assert "Rename main" in out and "M `src/app.py`" in out
    assert 'checkpoint: renamed · Intent: Rename main' in cli("log", "--limit", "5", cwd=project).stdout
    file_out = cli("file", "src/app.py", "--depth", "2", cwd=project).stdout
    assert "# Trajectory of `src/app.py`" in file_out and "+def start():" in file_out
    assert "# Session summary" in cli("session", cwd=project).stdout
    # the first scan and a named checkpoint are never squashed (issue 18.3): nothing to consolidate after one
    out = cli("consolidate", "Renamed main to start", cwd=project).stdout
    assert "Nothing to consolidate" in out and "checkpoint" in out
    status = cli("status", cwd=project).stdout
    assert "Shadow branch `main`: 2 commit(s)" in status


def test_errors_are_one_line_on_stderr_with_status_2(project: Path, tmp_path: Path) -> None:
    cli("checkpoint", cwd=project)
    proc = cli("file", "../../etc/passwd", cwd=project, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("code-trajectory: error:") and "outside the project" in proc.stderr
    proc = cli("log", "--limit", "0", cwd=project, check=False)
    assert proc.returncode == 2 and "between 1 and" in proc.stderr
    proc = cli("log", "--project", str(tmp_path / "missing"), cwd=project, check=False)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = cli("status", "--project", str(tmp_path), cwd=project, check=False)
    assert proc.returncode == 2 and "nothing is recorded for" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_recap_and_journal_errors_take_the_one_error_path(project: Path, tmp_path: Path) -> None:
    # every command's error, a usage error too, is the same one line: recap and journal printed their usage first,
    # under their own prefix
    for args, needle in [(("log", "--bogus"), "unrecognized arguments: --bogus (see `code-trajectory log --help`)"),
                         (("recap", "--bogus"), "unknown option '--bogus'"),
                         (("recap", "add", "decision"), "add needs a TYPE and a CONTENT"),
                         (("journal",), "required: COMMAND (see `code-trajectory journal --help`)"),
                         (("journal", "--bogus", "toc"), "unrecognized arguments: --bogus"),
                         (("journal", "list"), "(see `code-trajectory journal list --help`)"),
                         (("recap", "--project", str(tmp_path / "missing")), "does not exist"),
                         (("journal", "--journal-dir", str(tmp_path / "j"), "write", "../x", "-m", "y"), "'..'")]:
        proc = cli(*args, cwd=project, check=False)
        assert (proc.returncode, proc.stdout) == (2, ""), args
        assert proc.stderr.startswith("code-trajectory: error: ") and proc.stderr.count("\n") == 1, proc.stderr
        assert needle in proc.stderr, proc.stderr
    assert "(see `code-trajectory recap --help`)" in cli("recap", "--bogus", cwd=project, check=False).stderr


def test_cli_messages_name_the_cli_command_to_run(project: Path, tmp_path: Path) -> None:
    # a person at the CLI cannot call an MCP tool: each hint that names one names the command too
    write(project, "notes.txt", "plain text\n")
    cli("checkpoint", cwd=project)
    assert "`code-trajectory intent TEXT`" in cli("session", cwd=project).stdout
    proc = cli("symbol", "notes.txt", "x", cwd=project, check=False)
    assert proc.returncode == 2 and "`code-trajectory file`" in proc.stderr
    assert "`code-trajectory log`" in cli("file", "src", cwd=project).stdout
    proc = cli("log", "--project", str(project / "notes.txt"), cwd=project, check=False)
    assert proc.returncode == 2 and "configure_project needs" not in proc.stderr and "--project" in proc.stderr
    assert "`code-trajectory recap goal TEXT`" in cli("recap", cwd=project).stdout
    journal = str(tmp_path / "journal")
    cli("journal", "--journal-dir", journal, "write", "s", "-m", "one", cwd=project)
    proc = cli("journal", "--journal-dir", journal, "list", "nothing", cwd=project, check=False)
    assert proc.returncode == 2 and "`code-trajectory journal toc`" in proc.stderr
    assert "`code-trajectory journal write nothing" in cli("journal", "--journal-dir", journal, "read", "nothing",
                                                          cwd=project).stdout


def test_watch_prints_one_line_per_snapshot(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    with subprocess.Popen([sys.executable, "-m", "code_trajectory", "watch", str(project), "--debounce", "0.3"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        try:
            first = proc.stdout.readline()
            assert "main: [AUTO-TRJ]" in first
            time.sleep(0.5)
            write(project, "src/app.py", "def main():\n    return 'watched'\n")
            line = proc.stdout.readline()
            assert "M src/app.py (+1 -1)" in line
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)
    assert proc.returncode == 0
    assert git(project, "--git-dir=.trajectory", "rev-list", "--count", "refs/heads/shadow/main").strip() == "2"


def test_every_command_row_names_functions_that_exist() -> None:
    """Each row of the lazy table names its two functions explicitly; both must exist and build a parser."""
    import argparse

    from code_trajectory import cli

    for name, row in cli.COMMANDS.items():
        assert callable(cli.load(row.run)), name
        if row.arguments is None:
            assert row.run.endswith(":main"), name
            continue
        parser = argparse.ArgumentParser(prog=name)
        cli.load(row.arguments)(parser)
        assert parser.format_usage().startswith("usage: "), name
    assert isinstance(cli.build_parser(), argparse.ArgumentParser)  # every row's parser, as --help builds it
