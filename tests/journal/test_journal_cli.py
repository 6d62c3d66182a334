"""``code-trajectory journal search|read|toc|list|write|sync`` (sync is in test_journal_sync.py)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.journal.commands import main
from support import SRC


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jd = str(tmp_path / "j")
    code, out, _ = run(capsys, "--journal-dir", jd, "write", "proj/api", "--entry",
                       "work_context: debugging\n\nFixed the login bug.", "--overview", "# API", "--summary", "login")
    assert code == 0 and "created section proj/api" in out
    code, out, _ = run(capsys, "write", "proj/api", "--journal-dir", jd, "-m", "second entry", "--json")
    data = json.loads(out)
    assert code == 0 and data["entry_count"] == 2

    code, out, _ = run(capsys, "--journal-dir", jd, "read", "proj/api")
    assert code == 0 and "# API" in out and "entry count" not in out
    code, out, _ = run(capsys, "--journal-dir", jd, "--json", "read", data["id"])
    assert json.loads(out)["content"] == "second entry"

    code, out, _ = run(capsys, "--journal-dir", jd, "toc", "--depth", "2")
    assert code == 0 and "proj/api: 2 entries" in out
    code, out, _ = run(capsys, "--journal-dir", jd, "--json", "toc", "proj")
    assert json.loads(out)["id"] == "proj"

    code, out, _ = run(capsys, "--journal-dir", jd, "list", "proj/api", "--length", "1")
    assert code == 0 and "Entries 1-1 of 2" in out and "second entry" in out
    code, out, _ = run(capsys, "--journal-dir", jd, "list", "proj/api", "--start", "1", "--json")
    assert json.loads(out)["entries"][0]["summary"] == "login"

    code, out, _ = run(capsys, "--journal-dir", jd, "search", "debugging", "login bug", "--json")
    result = json.loads(out)
    assert code == 0 and result["results"][0]["path"] == "proj/api"
    assert result["ranking"] in ("semantic", "lexical")


def test_cli_entry_from_stdin_and_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    jd = str(tmp_path / "j")
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin\n"))
    assert run(capsys, "--journal-dir", jd, "write", "s")[0] == 0
    entry = tmp_path / "entry.md"
    entry.write_text("# from a file\n\nbody")
    overview = tmp_path / "overview.md"
    overview.write_text("# Overview from a file")
    assert run(capsys, "--journal-dir", jd, "write", "s", "--entry-file", str(entry),
               "--overview-file", str(overview))[0] == 0
    code, out, _ = run(capsys, "--journal-dir", jd, "--json", "list", "s")
    assert [e["summary"] for e in json.loads(out)["entries"]] == ["from a file", "from stdin"]
    assert "# Overview from a file" in run(capsys, "--journal-dir", jd, "read", "s")[1]


def test_cli_env_var_selects_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_TRAJECTORY_JOURNAL_DIR", str(tmp_path / "env-journal"))
    assert run(capsys, "write", "s", "-m", "hello")[0] == 0
    assert (tmp_path / "env-journal" / "s.md").exists()
    # default location when nothing is set
    monkeypatch.delenv("CODE_TRAJECTORY_JOURNAL_DIR")
    assert run(capsys, "write", "t", "-m", "hello")[0] == 0
    assert (Path(os.environ["CODE_TRAJECTORY_HOME"]) / "journal" / "t.md").exists()


@pytest.mark.parametrize("argv,needle", [
    (["read", "../etc/passwd"], "'..'"),
    (["read", "/etc/passwd"], "absolute"),
    (["read", "s#zz"], "hex"),
    (["read", "s#abcdef12"], "no journal entry"),
    (["write", "s", "-m", "   "], "empty"),
    (["list", "nothing"], "no section"),
    (["toc", "nothing"], "no section"),
    (["search", "a", "b", "--threshold", "2"], "between 0 and 1"),
    (["sync"], "no remote"),
])
def test_cli_errors_exit_2_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                     needle: str) -> None:
    jd = str(tmp_path / "j")
    assert main(["--journal-dir", jd, "write", "s", "-m", "exists"]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "--journal-dir", jd, *argv)
    assert code == 2 and out == "" and needle in err and "Traceback" not in err


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["--help"]) == 0
    assert "search" in capsys.readouterr().out


def test_imports_print_nothing_and_load_no_model() -> None:
    code = ("import sys\n"
            "import code_trajectory.journal.tools, code_trajectory.journal.commands\n"
            "import code_trajectory.journal.search, code_trajectory.journal.sync\n"
            "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("argv", [["toc"], ["list", "s"], ["read", "s"], ["search", "anything"],
                                  ["--json", "toc"], ["sync"]])
def test_reading_a_journal_that_is_not_there_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             argv: list[str]) -> None:
    # a typo in --journal-dir, or the default journal before anything was written: say so, leave the disk alone
    missing = tmp_path / "no" / "journal"
    code, out, err = run(capsys, "--journal-dir", str(missing), *argv)
    assert (code, out) == (2, "")
    assert f"no journal at {missing}" in err and "journal write" in err and err.count("\n") == 1
    assert not (tmp_path / "no").exists()
    plain = tmp_path / "plain"  # an existing directory that holds no journal is not made one
    plain.mkdir()
    code, _, err = run(capsys, "--journal-dir", str(plain), *argv)
    assert code == 2 and f"no journal at {plain}" in err
    assert list(plain.iterdir()) == []
    assert run(capsys, "toc")[0] == 2  # the default journal, likewise
    assert not Path(os.environ["CODE_TRAJECTORY_HOME"]).exists()
