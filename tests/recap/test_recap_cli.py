"""``code-trajectory recap``: output, errors, project discovery, and staying light to import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.recap import store as recap
from code_trajectory.recap.commands import UsageError, main, parse_args
from support import subprocess_env

#: What the read-only CLI must never import: the MCP SDK and its stack, the watcher, the server,
#: the journal and any model runtime. (filelock is allowed for writes only.)
HEAVY_MODULES = ("mcp", "pydantic", "anyio", "watchfiles", "rich", "filelock", "numpy", "onnxruntime",
                 "tokenizers", "code_trajectory.server", "code_trajectory.recording.watcher", "code_trajectory.recording.session",
                 "code_trajectory.journal")


def _env(ct_home: Path) -> dict[str, str]:
    # JSON output must not depend on the terminal's encoding
    return subprocess_env(CODE_TRAJECTORY_HOME=str(ct_home), HOME=str(ct_home.parent / "userhome"),
                          PYTHONIOENCODING="ascii")


def test_show_markdown_and_json(spaced_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recap.set_goal(spaced_dir, "Fix the login loop")
    recap.add_entry(spaced_dir, "decision", "Use soft reset — keeps changes")
    assert main(["--project", str(spaced_dir)]) == 0
    out = capsys.readouterr().out
    assert "**Goal:** Fix the login loop" in out and "## Decisions (1)" in out

    assert main(["--json", f"--project={spaced_dir}"]) == 0
    assert json.loads(capsys.readouterr().out) == recap.get_recap(spaced_dir)


def test_add_and_goal_use_the_same_functions(spaced_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["goal", "Ship", "the", "recap", "--project", str(spaced_dir)]) == 0
    assert "Goal set" in capsys.readouterr().out
    assert main(["add", "decision", "One", "file", "per", "project", "--project", str(spaced_dir)]) == 0
    assert "Recorded decision" in capsys.readouterr().out
    assert main(["--project", str(spaced_dir), "add", "--json", "DECISION", "one file per project"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["skipped"] is True
    got = recap.get_recap(spaced_dir)
    assert got["goal"] == "Ship the recap"
    assert [(e["type"], e["content"]) for e in got["entries"]] == [("decision", "One file per project")]
    assert got["entries"][0]["id"] == answer["id"]

    assert main(["goal", "--json", "Next thing", "--project", str(spaced_dir)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["success"] is True and Path(answer["archivedTo"]).is_file()


def test_double_dash_allows_text_starting_with_dash(spaced_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project", str(spaced_dir), "add", "risk", "--", "-f", "--json", "may", "lose", "work"]) == 0
    assert recap.get_recap(spaced_dir)["entries"][0]["content"] == "-f --json may lose work"
    assert not capsys.readouterr().out.startswith("{")  # --json after -- is text, not the option


@pytest.mark.parametrize(("argv", "message"), [
    (["add", "opinion", "x"], "unknown entry type 'opinion'"),
    (["add", "decision"], "add needs a TYPE and a CONTENT"),
    (["goal"], "goal needs a TEXT"),
    (["remove", "x"], "unknown command 'remove'"),
    (["--verbose"], "unknown option '--verbose'"),
    (["add", "decision", "-x"], "put -- before text"),
    (["--project"], "--project needs a PATH"),
])
def test_errors_go_to_stderr_with_status_2(spaced_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                           message: str) -> None:
    assert main([*argv, "--project", str(spaced_dir)] if argv != ["--project"] else argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert not recap.recap_path(spaced_dir).exists()


def test_missing_project_directory_on_write(ct_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["add", "decision", "x", "--project", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: code-trajectory recap")
    for kind in recap.ENTRY_TYPES:
        assert kind in out


def test_parse_args() -> None:
    args = parse_args(["add", "--json", "fix", "a", "b", "--project", "/p"])
    assert (args.command, args.entry_type, args.text, args.project, args.as_json) == ("add", "fix", "a b", "/p", True)
    args = parse_args([])
    assert (args.command, args.project, args.as_json) == (None, None, False)
    with pytest.raises(UsageError):
        parse_args(["--project="])


def test_default_project_is_found_from_the_current_directory(tmp_path: Path, ct_home: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.chdir(repo / "src" / "deep")
    assert main(["goal", "from a subdirectory"]) == 0
    capsys.readouterr()
    assert recap.get_recap(repo)["goal"] == "from a subdirectory"
    assert main(["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["projectPath"] == str(repo)


def test_corrupt_file_warning(spaced_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    file.write_text("{oops")
    assert main(["--project", str(spaced_dir)]) == 0
    assert "corrupt" in capsys.readouterr().out
    assert main(["add", "fix", "again", "--project", str(spaced_dir)]) == 0
    captured = capsys.readouterr()
    assert "moved to" in captured.err and "Recorded fix" in captured.out


# --------------------------------------------------------------------------- subprocesses

_PROBE = """
import io, json, sys
from code_trajectory.recap.commands import main
real_stdout, sys.stdout = sys.stdout, io.StringIO()
status = main(sys.argv[1:])
output, sys.stdout = sys.stdout.getvalue(), real_stdout
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"status": status, "heavy": heavy, "output": output}}))
"""


@pytest.mark.parametrize("argv", [["--json"], [], ["add", "insight", "light"], ["goal", "light goal"]])
def test_cli_imports_nothing_heavy(spaced_dir: Path, ct_home: Path, argv: list[str]) -> None:
    code = _PROBE.format(heavy=HEAVY_MODULES)
    done = subprocess.run([sys.executable, "-c", code, *argv, "--project", str(spaced_dir)], env=_env(ct_home),
                          capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    assert report["status"] == 0, done.stderr
    allowed = {"filelock"} if argv and argv[0] in ("add", "goal") else set()  # writers need the lock
    assert set(report["heavy"]) <= allowed, report["heavy"]
    assert "mcp" not in report["heavy"]


def test_json_output_is_utf8_whatever_the_terminal(spaced_dir: Path, ct_home: Path) -> None:
    recap.set_goal(spaced_dir, "Réparer la boucle — 日本語")
    code = "import sys; from code_trajectory.recap.commands import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "--json", "--project", str(spaced_dir)], env=_env(ct_home),
                          capture_output=True, check=True)
    assert json.loads(done.stdout.decode("utf-8"))["goal"] == "Réparer la boucle — 日本語"


def test_console_entry_point_when_available(spaced_dir: Path, ct_home: Path) -> None:
    env = _env(ct_home)
    if subprocess.run([sys.executable, "-c", "import code_trajectory.cli"], env=env,
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("code_trajectory.cli is not importable yet")
    recap.add_entry(spaced_dir, "assumption", "the cli forwards to recap_cli.main")
    code = ("import runpy, sys, json\n"
            "sys.argv = ['code-trajectory', 'recap', '--json', '--project', sys.argv[1]]\n"
            "try:\n    runpy.run_module('code_trajectory', run_name='__main__')\n"
            "except SystemExit as e:\n    status = e.code\n"
            f"print('HEAVY', json.dumps(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, str(spaced_dir)], env=env, capture_output=True, text=True,
                          encoding="utf-8", check=False)
    assert done.returncode == 0, done.stderr
    body, _, heavy_line = done.stdout.rpartition("HEAVY ")
    assert json.loads(body)["entries"][0]["content"] == "the cli forwards to recap_cli.main"
    assert "mcp" not in json.loads(heavy_line)


def test_project_option_naming_a_directory_inside_the_project_is_the_projects_recap(
        ct_home: Path, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--project src`` of a git project read and wrote a recap of ``src`` alone (a file of its own, which the
    server's ``get_recap`` of the project never shows), where every other command's ``--project`` is "the project
    directory or any directory inside it"."""
    assert main(["add", "decision", "Keep one recap", "--project", str(project / "src")]) == 0
    assert recap.recap_path(project).is_file() and not recap.recap_path(project / "src").exists()
    capsys.readouterr()
    assert main(["--project", str(project / "src")]) == 0
    out = capsys.readouterr().out
    assert f"# Recap of {project}\n" in out and "Keep one recap" in out, out


@pytest.mark.parametrize("argv", [[], ["--json"]])
def test_missing_project_directory_on_read(ct_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           argv: list[str]) -> None:
    # as every other command: one error line, exit 2, no empty recap of a directory that is not there
    assert main([*argv, "--project", str(tmp_path / "nope")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "does not exist" in captured.err and captured.err.count("\n") == 1
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert main([*argv, "--project", str(a_file)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "not a directory" in captured.err
    assert not ct_home.exists()
