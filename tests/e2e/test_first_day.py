"""Issue 18: what a new user's first real session broke, replayed as that user: real git, the CLI, the SDK client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import git, server_command, write


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=120)


def test_commands_find_the_project_upward_and_never_start_one_in_a_subdirectory(project: Path) -> None:
    """18.2: ``cd src/pkg && code-trajectory log`` printed "No snapshots yet" and created src/pkg/.trajectory/."""
    write(project, "src/pkg/mod.py", "x = 1\n")
    sub = project / "src" / "pkg"
    # nothing recorded yet: a read-only command says so and creates nothing
    fresh = cli("log", cwd=sub)
    assert fresh.returncode == 2 and "nothing is recorded for" in fresh.stderr and str(project) in fresh.stderr
    assert not (sub / ".trajectory").exists() and not (project / ".trajectory").exists()
    assert cli("checkpoint", "-m", "start", cwd=sub).returncode == 0  # the project, found upward
    assert (project / ".trajectory").is_dir() and not (sub / ".trajectory").exists()
    out = cli("log", cwd=sub)
    assert out.returncode == 0 and "src/pkg/mod.py" in out.stdout
    assert "src/pkg/mod.py" in cli("file", "src/pkg/mod.py", "--project", str(sub), cwd=project.parent).stdout
    # starting a second history inside the recorded project is refused
    refused = cli("watch", str(sub), cwd=project)
    assert refused.returncode == 2 and "inside" in refused.stderr and "already recorded" in refused.stderr
    assert not (sub / ".trajectory").exists()
    assert git(project, "status", "--porcelain") == "?? src/pkg/\n"  # and git sees nothing of ours


def test_read_commands_say_the_same_thing_when_nothing_is_recorded(project: Path) -> None:
    """``status`` said "has no shadow repository yet", ``log`` "nothing is recorded ... it has no .trajectory/" (three
    wordings of one fact, in three places); with a file named ``.trajectory`` in the way, ``status`` said it had no
    shadow repository "yet", where ``checkpoint`` said the file is in the way. Each read command now says the same,
    and names the file in the way."""
    said = {command: cli(command, cwd=project) for command in ("status", "log", "session")}
    assert {r.returncode for r in said.values()} == {2}
    assert len({r.stderr for r in said.values()}) == 1 and "nothing is recorded for" in said["status"].stderr
    (project / ".trajectory").write_text("junk\n")
    for command in ("status", "log"):
        out = cli(command, cwd=project)
        assert out.returncode == 2 and ".trajectory exists and is not a directory" in out.stderr, out.stderr
        assert "move it away" in out.stderr


def test_a_virtualenv_in_the_project_is_not_recorded_and_summaries_show_the_edits_first(project: Path) -> None:
    """18.7: ``python -m venv .venv`` recorded 763 files under the agent's intent and hid the real edits."""
    assert cli("checkpoint", cwd=project).returncode == 0
    venv = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")],
                          capture_output=True, text=True, timeout=120)
    assert venv.returncode == 0, venv.stderr
    write(project, ".venv/lib/site.py", "generated = True\n")
    write(project, "src/app.py", "def main():\n    return 2\n")
    write(project, "tests/test_app.py", "from src.app import main\n\n\ndef test_main():\n    assert main() == 2\n")
    for i in range(30):
        write(project, f"assets/img{i:02d}.svg", f"<svg>{i}</svg>\n")
    out = cli("checkpoint", "-m", "edits", cwd=project).stdout
    assert ".venv" not in out
    tree = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
    assert ".venv" not in tree and "src/app.py" in tree
    summary = cli("session", cwd=project).stdout
    files = summary.split("Files most changed:", 1)[1].split("\n", 1)[0]
    assert files.index("src/app.py") < files.index("assets/")  # edited source before generated-looking files


def test_session_says_plainly_that_nothing_records_now(project: Path) -> None:
    """18.8: with no watcher or server running, ``session`` said "the start-up scan is still running"."""
    assert cli("checkpoint", cwd=project).returncode == 0
    summary = cli("session", cwd=project).stdout
    assert "start-up scan is still running" not in summary
    assert "nothing is recording this project now" in summary and "code-trajectory watch" in summary
    watch = subprocess.Popen([sys.executable, "-m", "code_trajectory", "watch", str(project), "--debounce", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watch.stderr is not None
        while "watching" not in (line := watch.stderr.readline()):
            assert line, "watch exited"
        assert "nothing is recording" not in cli("session", cwd=project).stdout
    finally:
        watch.terminate()
        watch.wait(timeout=20)
        watch.stdout.close()
        watch.stderr.close()
    stopped = cli("session", cwd=project).stdout
    assert "nothing is recording this project now since" in stopped


def test_small_ones(project: Path) -> None:
    """18.10: unquoted intent words; a directory given to ``file``; suggestions by file name."""
    write(project, "src/pkg/timed.py", "def timed():\n    return 1\n")
    write(project, "docs/timed.rst", "Timed\n=====\n")
    assert cli("checkpoint", cwd=project).returncode == 0
    intent = cli("intent", "Fix", "the", "bug", cwd=project)
    assert intent.returncode == 0 and 'Intent set: "Fix the bug"' in intent.stdout
    directory = cli("file", "src", cwd=project).stdout
    assert "is a directory" in directory and "src/pkg/timed.py" in directory and "call `checkpoint`" not in directory
    suggestion = cli("file", "timed.py", cwd=project).stdout
    assert "`src/pkg/timed.py`" in suggestion


@pytest.mark.anyio
async def test_code_trajectory_home_passed_through_the_clients_env_setting(project: Path, tmp_path: Path) -> None:
    """18.10: ``CODE_TRAJECTORY_HOME`` given through a client's ``env`` setting was reported ignored: it is used."""
    home = tmp_path / "client-given-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["CODE_TRAJECTORY_HOME"] = str(home)
    command = server_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve", "--project", str(project)],
                                   env=env)
    async with Client(params) as client:
        result = await client.call_tool("set_goal", {"goal": "Ship the first-day fixes"})
        assert not result.is_error
    recaps = list((home / "recaps").glob("*.json"))
    assert len(recaps) == 1 and json.loads(recaps[0].read_text())["goal"] == "Ship the first-day fixes"


def test_a_file_over_the_size_cap_is_said_to_be_not_stored(project: Path) -> None:
    """18.10: a file over the size cap showed the recorder's internal note (with ``mtime_ns``) as its diff."""
    config = project / ".trajectory" / "config.toml"
    assert cli("checkpoint", cwd=project).returncode == 0
    config.write_text("[trajectory]\nmax_file_bytes = 1000\n")
    write(project, "data/big.csv", "x,y\n" * 600)
    assert cli("checkpoint", cwd=project).returncode == 0
    write(project, "data/big.csv", "x,y\n" * 700)
    assert cli("checkpoint", cwd=project).returncode == 0
    out = cli("file", "data/big.csv", cwd=project).stdout
    assert "not stored: 2.3 KiB (over the size cap)" in out and "not stored: 2.7 KiB (over the size cap)" in out
    assert "mtime_ns" not in out and "content not recorded" not in out


def test_the_path_arguments_help_says_how_they_are_read(project: Path) -> None:
    """``file``, ``symbol``, ``compare --file`` and ``since-green`` read a path typed in a subdirectory from it (as
    git does, as the README says); their ``--help`` said "relative to the project root", so a user in ``src/`` typed
    ``src/a.py`` and met "in no snapshot"."""
    write(project, "src/a.py", "def run():\n    return 1\n")
    assert cli("checkpoint", "-m", "start", cwd=project).returncode == 0
    sub = project / "src"
    assert "`src/a.py`" in cli("file", "a.py", cwd=sub).stdout  # read from the current directory
    for args in (["file"], ["symbol"], ["compare"], ["since-green"]):
        helped = cli(*args, "--help", cwd=sub).stdout
        assert "relative to the project root" not in helped and "relative to the current directory" in helped, helped
