"""Test runs in the trajectory: real runners on generated projects, parsers, storage, faults."""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git.shadow import ShadowRepo, shadow_ref
from code_trajectory.project import find_project_root
from code_trajectory.recording.consolidate import consolidate
from code_trajectory.recording.recorder import Recorder
from code_trajectory.testruns import green, model, parsers, runner, service, store
from code_trajectory.testruns.model import TestRun
from code_trajectory.testruns.parsers import parse_output
from support import git, subprocess_env, write, write_files

PY = sys.executable
PYTEST = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


@pytest.fixture(autouse=True)
def _no_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODE_TRAJECTORY_PYTEST", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")


def settings_for(root: Path) -> TrajectorySettings:
    return TrajectorySettings.load(root)


def shadow_tip(root: Path) -> str:
    repo = ShadowRepo(root)
    try:
        tip = repo.resolve(shadow_ref("main"))
        assert tip is not None
        return tip
    finally:
        repo.close()


def stored_history(root: Path, limit: int = 10) -> list[TestRun]:
    repo = ShadowRepo(root)
    try:
        return store.history(repo, limit)
    finally:
        repo.close()


def make_pytest_project(tmp_path: Path) -> Path:
    """A project whose suite passes one, fails one, skips one and errors one (fixture)."""
    root = tmp_path / "pyproj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "calc.py", "def add(a, b):\n    return a + b\n")
    write(root, "tests/test_calc.py", (
        "import pytest\nfrom calc import add\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_login():\n    assert add(2, 2) == 5, 'login is broken'\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n\n"
        "@pytest.fixture\ndef db():\n    raise RuntimeError('no database')\n\n"
        "def test_db(db):\n    pass\n"))
    return root


# -- the wrapper with real runners ---------------------------------------------------------------


def test_pytest_green_then_red_via_run_and_record(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # a faster inner pytest
    settings = settings_for(project)
    run, status = service.run_and_record(project, PYTEST, settings, echo=False)
    assert status == 0 and run.record_error is None
    assert (run.outcome, run.runner, run.passed, run.failed, run.errors, run.skipped) == \
        ("passed", "pytest", 1, 0, 0, 0)
    green_commit = run.commit
    assert green_commit == shadow_tip(project) and run.branch == "main"
    assert run.summary_line() == "tests: 1 passed"

    # an unchanged project: the next run is recorded on the same snapshot
    again, _ = service.run_and_record(project, PYTEST, settings, echo=False)
    assert again.commit == green_commit

    write(project, "src/app.py", "def main():\n    return 2\n")
    write(project, "tests/test_other.py", "def test_other():\n    assert True\n")
    red, status = service.run_and_record(project, PYTEST, settings, echo=False)
    assert status == 1
    assert (red.outcome, red.passed, red.failed, red.errors) == ("failed", 1, 1, 0)
    assert red.commit != green_commit and red.commit == shadow_tip(project)
    assert red.failures == [("tests/test_app.py::test_main", "assert 2 == 1")]
    assert red.summary_line() == "tests: 1 passed, 1 failed: test_main"
    assert "1 failed, 1 passed" in red.output_tail

    repo = ShadowRepo(project)
    try:
        runs = store.history(repo, 10)
        assert [r.outcome for r in runs] == ["failed", "passed", "passed"]
        proof = green.last_green(repo, red.commit)  # the full suite (no path given, run at the root)
        assert proof is not None and proof.commit == green_commit and proof.scope.is_full
        assert store.last_run(repo).commit == red.commit
        by_commit = store.runs_for(repo, [green_commit, red.commit, "0" * 40])
        assert [len(by_commit[green_commit]), len(by_commit[red.commit])] == [2, 1]
        assert by_commit[red.commit][0] == red
        assert store.marks_for(repo, [green_commit, red.commit]) == {
            green_commit: "tests: 1 passed", red.commit: "tests: 1 passed, 1 failed: test_main"}
        # the checkpoint before the run says so
        subject = repo.git.text(["log", "-1", "--format=%B", red.commit])
        assert "before test run" in subject
    finally:
        repo.close()


def test_unittest_runner(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ut", {"test_mod.py": (
        "import unittest\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_ok(self):\n        pass\n"
        "    def test_fail(self):\n        self.assertEqual(1, 2)\n"
        "    def test_error(self):\n        raise KeyError('nope')\n"
        "    @unittest.skip('x')\n    def test_skip(self):\n        pass\n")})
    run, status = service.run_and_record(root, [PY, "-m", "unittest"], echo=False)
    assert status == 1 and run.record_error is None
    assert (run.runner, run.outcome, run.passed, run.failed, run.errors, run.skipped) == \
        ("unittest", "failed", 1, 1, 1, 1)
    assert dict(run.failures) == {"test_mod.T.test_fail": "AssertionError: 1 != 2",
                                  "test_mod.T.test_error": "KeyError: 'nope'"}
    assert run.branch == "-no-git"  # not a git repository: still recorded
    assert stored_history(root)[0] == run

    write(root, "test_mod.py", "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n")
    fixed, status = service.run_and_record(root, [PY, "-m", "unittest"], echo=False)
    assert (status, fixed.outcome, fixed.passed, fixed.failed) == (0, "passed", 1, 0)


def _real_home() -> Path:
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _real_home()
    for var, sub in (("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")):
        if var not in os.environ and (home / sub).is_dir():
            monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    monkeypatch.setenv("RUST_BACKTRACE", "0")
    monkeypatch.setenv("CARGO_TERM_COLOR", "never")
    root = write_files(tmp_path / "crate", {
        "Cargo.toml": '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
        "src/lib.rs": (
            "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n"
            "#[cfg(test)]\nmod tests {\n    use super::*;\n"
            "    #[test]\n    fn adds() { assert_eq!(add(1, 2), 3); }\n"
            "    #[test]\n    fn login() { assert_eq!(add(2, 2), 5); }\n"
            "    #[test]\n    #[ignore]\n    fn later() {}\n}\n")})
    run, status = service.run_and_record(root, ["cargo", "test", "--offline", "-q"], echo=False, timeout=120)
    if run.runner != "cargo":  # no toolchain usable offline here: nothing to check
        pytest.skip(f"cargo could not build offline: {run.output_tail[-300:]}")
    assert status == 101 and run.outcome == "failed"
    assert (run.passed, run.failed, run.skipped) == (1, 1, 1)
    assert run.failures[0][0] == "tests::login" and "left == right" in run.failures[0][1]
    assert run.summary_line() == "tests: 1 passed, 1 failed, 1 skipped: login"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_test_runner(tmp_path: Path) -> None:
    root = write_files(tmp_path / "js", {"sum.test.js": (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "test('adds', () => { assert.strictEqual(1 + 1, 2); });\n"
        "test('logs in', () => { throw new Error('login is broken'); });\n")})
    run, status = service.run_and_record(root, ["node", "--test"], echo=False, timeout=60)
    assert status == 1
    assert (run.runner, run.outcome, run.passed, run.failed) == ("node", "failed", 1, 1)
    assert run.failures == [("logs in", "login is broken")]


# -- the pytest plugin -------------------------------------------------------------------------------


def _plugin_env(*, autoload: bool = False, **extra: str) -> dict[str, str]:
    """The inner pytest's environment; plugin auto-loading (a second of start-up) only when asked."""
    env = {k: v for k, v in os.environ.items() if k not in ("CODE_TRAJECTORY_PYTEST", "PYTEST_ADDOPTS")}
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def _run_pytest(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PYTEST, *args], cwd=root, env=env or _plugin_env(), capture_output=True, text=True,
                          timeout=120)


def test_plugin_records_exact_counts(tmp_path: Path) -> None:
    root = make_pytest_project(tmp_path)
    proc = _run_pytest(root, "-p", "code_trajectory.testruns.pytest_plugin", "--trajectory")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "code-trajectory: recorded on snapshot" in proc.stdout
    [run] = stored_history(root)
    assert (run.runner, run.outcome, run.exit_code) == ("pytest-plugin", "failed", 1)
    assert (run.passed, run.failed, run.errors, run.skipped) == (1, 1, 1, 1)
    assert run.failures == [("tests/test_calc.py::test_login", "AssertionError: login is broken"),
                            ("tests/test_calc.py::test_db", "RuntimeError: no database")]
    assert run.commit == shadow_tip(root) and run.branch == "main"
    # the command as typed (python -m pytest ..., not "pytest" + pytest's view of the arguments); no selection
    assert run.command == shlex.join([*PYTEST, "-p", "code_trajectory.testruns.pytest_plugin", "--trajectory"])
    assert run.scope.is_full
    assert run.summary_line() == "tests: 1 passed, 1 failed, 1 error, 1 skipped: test_login, test_db"

    # the environment variable enables it too; a collection error is a red run
    write(root, "tests/test_broken.py", "import not_a_module\n")
    proc = _run_pytest(root, "-p", "code_trajectory.testruns.pytest_plugin",
                       env=_plugin_env(CODE_TRAJECTORY_PYTEST="1"))
    assert proc.returncode == 2
    latest = stored_history(root)[0]
    assert latest.outcome == "failed" and latest.errors == 1
    assert latest.failures == [("tests/test_broken.py", "ModuleNotFoundError: No module named 'not_a_module'")]


def test_plugin_is_inert_unless_enabled(tmp_path: Path) -> None:
    root = make_pytest_project(tmp_path)
    proc = _run_pytest(root, "-p", "code_trajectory.testruns.pytest_plugin")
    assert proc.returncode == 1
    assert not (root / ".trajectory").exists() and "code-trajectory" not in proc.stdout + proc.stderr
    proc = _run_pytest(root, "-p", "code_trajectory.testruns.pytest_plugin", "--no-trajectory",
                       env=_plugin_env(CODE_TRAJECTORY_PYTEST="1"))
    assert not (root / ".trajectory").exists()
    # disabled, the plugin module imports nothing of ours beyond itself
    code = ("import sys, code_trajectory.testruns.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('code_trajectory')))")
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['code_trajectory', 'code_trajectory.testruns', 'code_trajectory.testruns.pytest_plugin']"


def test_plugin_failure_to_record_does_not_change_the_session(tmp_path: Path) -> None:
    root = write_files(tmp_path / "green", {"test_ok.py": "def test_ok():\n    pass\n"})
    proc = _run_pytest(root, "-p", "code_trajectory.testruns.pytest_plugin", "--trajectory",
                       "--trajectory-project", str(tmp_path / "missing"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "code-trajectory: the test run will not be recorded" in proc.stderr
    assert "1 passed" in proc.stdout


@pytest.mark.slow
def test_plugin_entry_point_and_explicit_p_coexist(tmp_path: Path) -> None:
    """The entry point line given for pyproject.toml: auto-loaded, and harmless next to ``-p``."""
    site = tmp_path / "site"
    dist = site / "fake_ct_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-ct-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pytest11]\ncode_trajectory.testruns.pytest_plugin = code_trajectory.testruns.pytest_plugin\n")
    root = make_pytest_project(tmp_path)
    env = _plugin_env(autoload=True, PYTHONPATH=str(site))
    proc = _run_pytest(root, "--trajectory", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    proc = _run_pytest(root, "-p", "code_trajectory.testruns.pytest_plugin", "--trajectory", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [r.runner for r in stored_history(root)] == ["pytest-plugin", "pytest-plugin"]


# -- faults ---------------------------------------------------------------------------------------------


def test_command_not_found_is_recorded(project: Path) -> None:
    run, status = service.run_and_record(project, ["definitely-not-a-test-runner-xyz", "-q"], echo=False)
    assert status == 127
    assert (run.outcome, run.exit_code) == ("error", 127)
    assert run.message == "command not found: definitely-not-a-test-runner-xyz"
    assert run.summary_line() == "tests: error: command not found: definitely-not-a-test-runner-xyz"
    assert stored_history(project)[0] == run


def test_a_command_not_found_is_said_without_the_hint_to_declare_its_scope(project: Path) -> None:
    """The CLI's line for a run that never started gives no advice about the command's scope (declaring it the full
    suite does not help a command that does not exist)."""
    done = subprocess.run([PY, "-m", "code_trajectory", "test", "--", "definitely-not-a-test-runner-xyz"], cwd=project,
                          env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 127
    assert "command not found: definitely-not-a-test-runner-xyz" in done.stderr
    assert "full-suite" not in done.stderr and "scope" not in done.stderr, done.stderr


def test_killed_runner(project: Path) -> None:
    run, status = service.run_and_record(project, ["sh", "-c", "echo starting; kill -9 $$"], echo=False)
    assert status == 137
    assert (run.outcome, run.exit_code) == ("error", -9)
    assert run.message == "killed by signal SIGKILL (9)"
    assert "starting" in run.output_tail
    # a shell reporting its child's death (exit 128 + 15)
    run = runner.run_command(["sh", "-c", "sh -c 'kill -15 $$'"], project, echo=False)
    assert (run.outcome, run.exit_code) == ("error", 143) and "SIGTERM" in run.message


def test_timeout_kills_the_runner(tmp_path: Path) -> None:
    run = runner.run_command([PY, "-c", "import time; print('hi', flush=True); time.sleep(30)"], tmp_path,
                               echo=False, timeout=0.5)
    assert run.outcome == "error" and run.message.startswith("timed out after 0.5 s")
    assert run.duration_seconds < 10 and "hi" in run.output_tail


def test_timeout_kills_the_commands_children_too(tmp_path: Path) -> None:
    """A shell (or cargo) whose child hangs: killing the command alone left the child holding the output open, so
    the run waited for it (``sleep 30`` timed out at 1 s took 30 s)."""
    run = runner.run_command(["sh", "-c", "echo started; sleep 30; echo late"], tmp_path, echo=False, timeout=0.5)
    assert run.outcome == "error" and run.message.startswith("timed out after 0.5 s")
    assert run.duration_seconds < 10 and "started" in run.output_tail and "late" not in run.output_tail


def test_non_utf8_output(project: Path) -> None:
    code = ("import sys; w = sys.stdout.buffer.write; w(b'caf\\xe9 \\xff\\xfe\\n'); "
            "w(b'FAILED tests/t.py::test_\\xe9 - AssertionError: \\x80\\n'); "
            "w(b'== 1 failed, 2 passed in 0.1s ==\\n'); sys.exit(1)")
    run, status = service.run_and_record(project, [PY, "-c", code], echo=False)
    assert status == 1 and run.runner == "pytest" and (run.passed, run.failed) == (2, 1)
    assert "caf\ufffd" in run.output_tail
    assert run.failures == [("tests/t.py::test_\ufffd", "AssertionError: \ufffd")]
    assert stored_history(project)[0] == run
    assert TestRun.from_json(run.to_json()) == run


def test_huge_output_keeps_a_bounded_tail(tmp_path: Path) -> None:
    size_mb = 100
    code = ("import sys\nw = sys.stdout.buffer.write\n"
            "w(b'FAILED tests/t.py::test_early - AssertionError: early\\n')\n"
            "chunk = (b'x' * 1023 + b'\\n') * 1024\n"
            f"for _ in range({size_mb}):\n    w(chunk)\n"
            "w(b'== 1 failed, 41 passed in 9.0s ==\\n')\nsys.exit(1)\n")
    tracemalloc.start()
    try:
        run = runner.run_command([PY, "-c", code], tmp_path, echo=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert run.output_bytes > size_mb * 1024 * 1024
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes"
    assert len(run.output_tail.encode()) <= model.OUTPUT_TAIL_BYTES
    assert run.output_tail.endswith("== 1 failed, 41 passed in 9.0s ==\n")
    assert (run.outcome, run.passed, run.failed) == ("failed", 41, 1)
    # the failure line scrolled out of the tail long ago and was kept anyway
    assert run.failures == [("tests/t.py::test_early", "AssertionError: early")]


def test_echo_streams_output(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run = runner.run_command([PY, "-c", "print('hello from the runner')"], tmp_path, echo=True)
    assert run.outcome == "passed" and run.exit_code == 0
    assert "hello from the runner" in capfd.readouterr().out


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError):
        runner.run_command([], tmp_path)
    with pytest.raises(InvalidArgumentError):
        service.run_and_record(tmp_path, "pytest -q")  # type: ignore[arg-type]
    run = runner.run_command(["true"], tmp_path / "missing", echo=False)
    assert run.outcome == "error" and "does not exist" in run.message


# -- storage --------------------------------------------------------------------------------------------


def _recorder(root: Path) -> Recorder:
    return Recorder.open(root, TrajectorySettings.load(root))


def test_concurrent_records_on_one_commit_are_all_kept(project: Path) -> None:
    recorder = _recorder(project)
    try:
        commit, branch = service.snapshot_for_run(recorder)
        repo = recorder.repo

        def record(i: int) -> None:
            with ShadowRepo(project) as own:  # one repository object per writer, as separate processes have
                store.record_run(own, TestRun(command=f"run {i}", outcome="passed", passed=i, commit=commit,
                                              branch=branch, started_at=f"2024-01-01T00:00:{i:02d}+00:00"))

        threads = [threading.Thread(target=record, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        runs = store.runs_for(repo, [commit])[commit]
        assert sorted(r.command for r in runs) == [f"run {i}" for i in range(6)]
        assert [r.command for r in store.history(repo, 3)] == ["run 5", "run 4", "run 3"]
        # abbreviated ids work too
        assert len(store.runs_for(repo, [commit[:12]])[commit[:12]]) == 6
        # a consolidation (same tree as its last snapshot) can carry that snapshot's runs
        write(project, "src/new.py", "x = 1\n")
        tip, _ = service.snapshot_for_run(recorder)
        store.record_run(repo, TestRun(command="pytest", outcome="failed", failed=1, commit=tip))
        result = consolidate(recorder, "Add new module")
        assert result.commit and result.squashed_commits[0] == tip
        assert store.copy_runs(repo, tip, result.commit) == 1
        assert [(r.commit, r.failed) for r in store.runs_for(repo, [result.commit])[result.commit]] == \
            [(result.commit, 1)]
    finally:
        recorder.close()


def test_corrupt_note_is_ignored_and_replaced(project: Path) -> None:
    recorder = _recorder(project)
    try:
        commit, _ = service.snapshot_for_run(recorder)
        repo = recorder.repo
        repo.git.run(["notes", f"--ref={store.NOTES_REF}", "add", "-f", "-m", "not json {", commit])
        assert store.runs_for(repo, [commit]) == {}
        assert store.history(repo) == []
        store.record_run(repo, TestRun(command="pytest", outcome="passed", passed=3, commit=commit))
        assert [r.passed for r in store.runs_for(repo, [commit])[commit]] == [3]
        with pytest.raises(InvalidArgumentError):
            store.record_run(repo, TestRun(command="pytest", outcome="passed"))
        with pytest.raises(InvalidArgumentError):
            store.record_run(repo, TestRun(command="pytest", outcome="passed", commit="f" * 40))
        with pytest.raises(InvalidArgumentError):
            store.history(repo, 0)
    finally:
        recorder.close()


def test_note_is_a_json_list_and_the_project_tree_is_untouched(project: Path) -> None:
    run, _ = service.run_and_record(project, ["true"], echo=False)
    repo = ShadowRepo(project)
    try:
        raw = repo.git.out(["notes", f"--ref={store.NOTES_REF}", "show", run.commit])
    finally:
        repo.close()
    data = json.loads(raw)
    assert isinstance(data, list) and data[0]["command"] == "true" and data[0]["outcome"] == "passed"
    assert "record_error" not in data[0]
    # neither the recorder nor the runs add anything the project's git sees
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""


# -- an agent's report ----------------------------------------------------------------------------------


def test_record_agent_result(project: Path) -> None:
    run = service.record_agent_result(
        project, command="npm test", passed=41, failed=2,
        failing_tests=["auth.test.js > login", {"test": "auth.test.js > logout", "reason": "timeout\nafter 5s"}],
        duration_seconds=3.5)
    assert (run.runner, run.outcome, run.commit) == ("agent", "failed", shadow_tip(project))
    assert run.failures == [("auth.test.js > login", ""), ("auth.test.js > logout", "timeout after 5s")]
    assert run.summary_line() == "tests: 41 passed, 2 failed: login, logout"
    green = service.record_agent_result(project, command="npm test", passed=43, output="ok\n" * 10000)
    assert green.outcome == "passed" and len(green.output_tail) <= model.OUTPUT_TAIL_BYTES
    assert [r.outcome for r in stored_history(project)] == ["passed", "failed"]


@pytest.mark.parametrize("kwargs", [
    {"command": ""},
    {"command": "pytest", "passed": -1},
    {"command": "pytest", "failed": True},
    {"command": "pytest", "passed": 10 ** 12},
    {"command": "pytest", "passed": 1.5},
    {"command": "pytest", "outcome": "green"},
    {"command": "pytest", "outcome": "passed", "failed": 1},
    {"command": "pytest", "outcome": "passed", "failing_tests": ["t"]},
    {"command": "pytest"},
    {"command": "pytest", "failing_tests": "test_a"},
    {"command": "pytest", "failing_tests": [""]},
    {"command": "pytest", "failing_tests": [{"reason": "x"}]},
    {"command": "pytest", "failing_tests": ["t"] * 20000},
    {"command": "pytest", "failing_tests": ["x" * 5000]},
    {"command": "pytest", "passed": 1, "duration_seconds": -1},
    {"command": "pytest", "passed": 1, "duration_seconds": float("nan")},
    {"command": "pytest", "passed": 1, "exit_code": 1000},
    {"command": "pytest", "passed": 1, "output": "x" * (service.MAX_AGENT_OUTPUT_CHARS + 1)},
])
def test_agent_result_validation(kwargs: dict) -> None:
    with pytest.raises(InvalidArgumentError):
        service.validate_agent_result(**kwargs)


def test_agent_many_failures_are_capped() -> None:
    run = service.validate_agent_result(command="pytest", failed=120,
                                         failing_tests=[f"tests/t.py::test_{i}" for i in range(120)])
    assert len(run.failures) == parsers.MAX_FAILURES and run.more_failures == 70
    line = run.summary_line()
    assert len(line) <= model.SUMMARY_CHARS and line.endswith("more")
    assert line.startswith("tests: 120 failed: test_0, test_1")
    shown = line.split(": ", 2)[2].split(", ... and ")[0].split(", ")
    assert line.endswith(f"... and {120 - len(shown)} more")


# -- summary lines and JSON -------------------------------------------------------------------------------


def test_summary_lines() -> None:
    assert TestRun(command="x", outcome="passed", passed=41).summary_line() == "tests: 41 passed"
    assert TestRun(command="x", outcome="failed", passed=41, failed=2,
                   failures=[("tests/a.py::test_login", ""), ("tests/a.py::TestX::test_logout[1]", "")]
                   ).summary_line() == "tests: 41 passed, 2 failed: test_login, test_logout[1]"
    assert TestRun(command="x", outcome="failed", exit_code=2).summary_line() == "tests: failed (exit 2)"
    assert TestRun(command="x", outcome="passed", exit_code=0).summary_line() == "tests: passed (exit 0)"
    assert TestRun(command="x", outcome="error", exit_code=-9, message="killed by signal SIGKILL (9)",
                   passed=3).summary_line() == "tests: error: killed by signal SIGKILL (9) (3 passed)"
    assert TestRun(command="x", outcome="failed", passed=0, failed=0, errors=0, exit_code=3
                   ).summary_line() == "tests: 0 passed; failed (exit 3)"
    long_names = [(f"t::{'n' * 80}{i}", "") for i in range(5)]
    line = TestRun(command="x", outcome="failed", failed=5, failures=long_names).summary_line()
    assert len(line) <= 200 and line.endswith("and 3 more")


def test_json_round_trip_and_tolerance() -> None:
    run = TestRun(command="pytest -q", outcome="failed", exit_code=1, passed=1, failed=1, errors=None,
                  skipped=0, duration_seconds=0.25, failures=[("a::b", "boom")], more_failures=2,
                  runner="pytest", started_at="2024-05-01T12:00:00.000+00:00", output_tail="tail\n",
                  output_bytes=5, commit="a" * 40, branch="main", message=None)
    assert TestRun.from_json(run.to_json()) == run
    assert TestRun.from_json(json.loads(run.to_json())) == run
    odd = TestRun.from_json({"command": "x", "outcome": "passed", "passed": "3", "failed": True,
                             "failures": [["a", "b"], 3, "c"], "future_field": 1, "duration_seconds": "NaN"})
    assert (odd.passed, odd.failed, odd.failures, odd.duration_seconds) == (None, None, [("a", "b"), ("c", "")], None)
    with pytest.raises(ValueError):
        TestRun.from_json({"command": "x", "outcome": "maybe"})
    with pytest.raises(ValueError):
        TestRun.from_json("[1, 2")


def test_short_test_names() -> None:
    cases = {
        "tests/test_a.py::test_login": "test_login",
        "tests/test_a.py::TestX::test_y[a::b]": "test_y[a::b]",
        "tests::it_fails": "it_fails",
        "pkg.mod.TestX.test_y": "test_y",
        "sum › adds 1 + 2": "adds 1 + 2",
        "src/a.test.ts > suite > adds": "adds",
        "TestAdd/negative": "TestAdd/negative",
        "tests/test_bad.py": "tests/test_bad.py",
    }
    assert {k: parsers.short_test_name(k) for k in cases} == cases


# -- parsers on captured output ---------------------------------------------------------------------------

PYTEST_DEFAULT = """\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0
rootdir: /tmp/pt
collected 7 items

tests/test_x.py .FsEx.F                                                  [100%]

==================================== ERRORS ====================================
__________________________ ERROR at setup of test_err __________________________

    @pytest.fixture
    def broken(): raise RuntimeError("fixture broke")
E   RuntimeError: fixture broke

tests/test_x.py:7: RuntimeError
=================================== FAILURES ===================================
__________________________________ test_login __________________________________

    def test_login(): assert 1 == 2, "bad login"
E   AssertionError: bad login
E   assert 1 == 2

tests/test_x.py:3: AssertionError
=========================== short test summary info ============================
FAILED tests/test_x.py::test_login - AssertionError: bad login
FAILED tests/test_x.py::test_param[a b] - AssertionError: assert 'a b' == 'c'
ERROR tests/test_x.py::test_err - RuntimeError: fixture broke
==== 2 failed, 2 passed, 1 skipped, 1 xfailed, 1 error, 3 warnings in 1.20s ====
"""

PYTEST_VERBOSE_NO_SUMMARY = """\
tests/test_x.py::test_ok PASSED                                          [ 50%]
tests/test_x.py::test_login FAILED                                       [100%]

=================================== FAILURES ===================================
__________________________________ test_login __________________________________

E   AssertionError: bad login

tests/test_x.py:3: AssertionError
========================= 1 failed, 1 passed in 0.05s ==========================
"""

UNITTEST_OUTPUT = """\
EF.s
======================================================================
ERROR: test_error (test_mod.T.test_error)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_mod.py", line 5, in test_error
    raise KeyError("nope")
KeyError: 'nope'

======================================================================
FAIL: test_fail (test_mod.T)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_mod.py", line 4, in test_fail
    self.assertEqual([1], [2])
AssertionError: Lists differ: [1] != [2]

First differing element 0:
1
2

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1)
"""

JEST_OUTPUT = """\
 FAIL  src/sum.test.js
  sum
    \u2713 adds 1 + 2 to equal 3 (2 ms)
    \u2715 adds 2 + 2 to equal 5 (3 ms)

  \u25cf sum \u203a adds 2 + 2 to equal 5

    expect(received).toBe(expected) // Object.is equality

    Expected: 5
    Received: 4

      at Object.toBe (src/sum.test.js:7:23)

 FAIL  src/broken.test.js
  \u25cf Test suite failed to run

    Cannot find module './missing' from 'src/broken.test.js'

 PASS  src/other.test.js

Test Suites: 2 failed, 1 passed, 3 total
Tests:       1 failed, 1 skipped, 3 passed, 5 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.
"""

VITEST_OUTPUT = """\
 \u276f src/sum.test.ts  (3 tests | 1 failed) 5ms
   \u276f src/sum.test.ts > sum > adds badly
     \u2192 expected 4 to be 5 // Object.is equality

\u23af\u23af\u23af\u23af\u23af\u23af\u23af Failed Tests 1 \u23af\u23af\u23af\u23af\u23af\u23af\u23af

 FAIL  src/sum.test.ts > sum > adds badly
AssertionError: expected 4 to be 5 // Object.is equality

- Expected
+ Received

 \u276f src/sum.test.ts:9:22

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed | 1 skipped (3)
   Start at  14:09:01
   Duration  312ms (transform 20ms, setup 0ms, collect 15ms, tests 5ms)
"""

GO_OUTPUT = """\
--- FAIL: TestAdd (0.00s)
    add_test.go:9: Add(2, 2) = 4; want 5
--- FAIL: TestTable (0.00s)
    --- FAIL: TestTable/negative (0.00s)
        add_test.go:21: got -1, want 1
FAIL
FAIL\texample.com/calc\t0.002s
ok  \texample.com/calc/util\t(cached)
?   \texample.com/calc/cmd\t[no test files]
# example.com/broken
broken/x.go:3:2: undefined: y
FAIL\texample.com/broken [build failed]
FAIL
"""

GO_VERBOSE = """\
=== RUN   TestAdd
    add_test.go:9: Add(2, 2) = 4; want 5
--- FAIL: TestAdd (0.00s)
=== RUN   TestSub
--- PASS: TestSub (0.00s)
=== RUN   TestSkip
    add_test.go:30: not now
--- SKIP: TestSkip (0.00s)
FAIL
exit status 1
FAIL\texample.com/calc\t0.002s
"""

CARGO_OUTPUT = """\
   Compiling tiny v0.1.0 (/tmp/tiny)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.40s
     Running unittests src/lib.rs (target/debug/deps/tiny-b8411d1b6389d6df)

running 3 tests
test tests::adds ... ok
test tests::ignored ... ignored
test tests::fails ... FAILED

failures:

---- tests::fails stdout ----

thread 'tests::fails' (32261) panicked at src/lib.rs:9:18:
assertion `left == right` failed
  left: 4
 right: 5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::fails

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/api.rs (target/debug/deps/api-0123)

running 2 tests
test old_style ... FAILED
test works ... ok

failures:

---- old_style stdout ----
thread 'old_style' panicked at 'called `Option::unwrap()` on a `None` value', tests/api.rs:4:5

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
"""

CARGO_COMPILE_ERROR = """\
   Compiling tiny v0.1.0 (/tmp/tiny)
error[E0425]: cannot find value `y` in this scope
 --> src/lib.rs:1:30
  |
1 | pub fn add() -> i32 { y }
  |                       ^ not found in this scope

For more information about this error, try `rustc --explain E0425`.
error: could not compile `tiny` (lib test) due to 1 previous error
"""

NODE_TAP = """\
TAP version 13
# Subtest: adds
ok 1 - adds
  ---
  duration_ms: 0.99
  ...
# Subtest: suite
    # Subtest: inner fails
    not ok 1 - inner fails
      ---
      duration_ms: 0.12
      failureType: 'testCodeFailure'
      error: 'boom inner'
      code: 'ERR_TEST_FAILURE'
      ...
    1..1
not ok 2 - suite
  ---
  type: 'suite'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  ...
1..2
# tests 2
# suites 1
# pass 1
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 162.3
"""


@pytest.mark.parametrize("text, runner, counts, failures", [
    (PYTEST_DEFAULT, "pytest", (2, 2, 1, 1), [  # the xfailed test is counted apart, not as skipped
        ("tests/test_x.py::test_login", "AssertionError: bad login"),
        ("tests/test_x.py::test_param[a b]", "AssertionError: assert 'a b' == 'c'"),
        ("tests/test_x.py::test_err", "RuntimeError: fixture broke")]),
    ("\x1b[31m\x1b[1m2 failed\x1b[0m, \x1b[32m41 passed\x1b[0m\x1b[31m in 0.12s\x1b[0m\n", "pytest",
     (41, 2, 0, 0), []),
    ("=================== no tests ran in 0.01s ===================\n", "pytest", (0, 0, 0, 0), []),
    (PYTEST_VERBOSE_NO_SUMMARY, "pytest", (1, 1, 0, 0),
     [("tests/test_x.py::test_login", "AssertionError: bad login")]),
    (UNITTEST_OUTPUT, "unittest", (1, 1, 1, 1), [
        ("test_mod.T.test_error", "KeyError: 'nope'"),
        ("test_mod.T.test_fail", "AssertionError: Lists differ: [1] != [2]")]),
    ("....\n----------------------------------------------------------------------\nRan 4 tests in 0.002s\n\n"
     "OK (skipped=1, expected failures=1)\n", "unittest", (2, 0, 0, 2), []),
    (JEST_OUTPUT, "jest", (3, 1, 0, 1), [
        ("sum \u203a adds 2 + 2 to equal 5", "expect(received).toBe(expected) // Object.is equality"),
        ("src/broken.test.js", "Cannot find module './missing' from 'src/broken.test.js'")]),
    (VITEST_OUTPUT, "vitest", (1, 1, 0, 1), [
        ("src/sum.test.ts > sum > adds badly", "AssertionError: expected 4 to be 5 // Object.is equality")]),
    (GO_OUTPUT, "go", (None, 2, 1, None), [
        ("TestAdd", "add_test.go:9: Add(2, 2) = 4; want 5"),
        ("TestTable/negative", "add_test.go:21: got -1, want 1"),
        ("example.com/broken", "build failed")]),
    (GO_VERBOSE, "go", (1, 1, 0, 1), [("TestAdd", "add_test.go:9: Add(2, 2) = 4; want 5")]),
    (CARGO_OUTPUT, "cargo", (2, 2, 0, 1), [
        ("tests::fails", "assertion `left == right` failed"),
        ("old_style", "called `Option::unwrap()` on a `None` value")]),
    (CARGO_COMPILE_ERROR, "cargo", (None, None, 1, None),
     [("build", "error[E0425]: cannot find value `y` in this scope")]),
    (NODE_TAP, "node", (1, 1, 0, 0), [("inner fails", "boom inner")]),
])
def test_parse_output(text: str, runner: str, counts: tuple, failures: list) -> None:
    parsed = parse_output(text)
    assert parsed.runner == runner
    assert parsed.counts is not None
    assert tuple(parsed.counts[k] for k in ("passed", "failed", "errors", "skipped")) == counts
    assert parsed.failures == failures
    if text is PYTEST_DEFAULT:
        assert (parsed.counts["xfailed"], parsed.counts["xpassed"]) == (1, 0)


def test_parse_unknown_output_and_outcome_from_exit_code(tmp_path: Path) -> None:
    assert parse_output("all good\nbuilding...\n") == ("generic", None, [])
    assert parse_output("") == ("generic", None, [])
    ok = runner.run_command(["sh", "-c", "echo fine"], tmp_path, echo=False)
    bad = runner.run_command(["sh", "-c", "echo broken; exit 3"], tmp_path, echo=False)
    assert (ok.outcome, ok.passed, ok.runner) == ("passed", None, "generic")
    assert (bad.outcome, bad.exit_code, bad.failed) == ("failed", 3, None)
    assert bad.summary_line() == "tests: failed (exit 3)"
    # the runner named on the command line is kept when its output says nothing
    quiet = runner.run_command([PY, "-m", "pytest", "--version"], tmp_path, echo=False)
    assert quiet.runner == "pytest"


def test_pytest_reasons_cut_at_the_terminal_width_are_read_whole(tmp_path: Path) -> None:
    """pytest cuts its short summary lines at the terminal's width (80 columns through a pipe, as the test command
    reads it): ``TypeError: Could not determine the ...`` told an agent nothing (found replaying pallets/click);
    the failure section's ``E`` line holds the whole message."""
    message = "Could not determine the type of the value because the flag option was declared without one"
    write(tmp_path, "test_cut.py", f"def test_long():\n    raise TypeError({message!r})\n\n"
          f"def test_message():\n    assert False, {'the login page answered 500 for ' + message!r}\n\n"
          "def test_short():\n    assert 1 == 2\n")
    # pytest prints whole lines when it sees it runs on CI (``CI`` or ``BUILD_NUMBER`` set: its ``running_on_ci``),
    # as the project's own CI does: taken out here so that pytest cuts as on a developer's machine.
    env = {name: value for name, value in os.environ.items() if name not in ("CI", "BUILD_NUMBER")}
    run = runner.run_command([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_cut.py"], tmp_path,
                             echo=False, env={**env, "COLUMNS": "80"})
    cut = [line for line in run.output_tail.splitlines() if line.startswith("FAILED test_cut.py::test_long - ")]
    assert len(cut) == 1 and cut[0].endswith("...") and message not in cut[0]  # pytest's own cut
    assert dict(run.failures) == {
        "test_cut.py::test_long": f"TypeError: {message}",
        "test_cut.py::test_message": f"AssertionError: the login page answered 500 for {message}",
        "test_cut.py::test_short": "assert 1 == 2"}


def test_last_summary_wins_over_captured_inner_output() -> None:
    text = ("---- captured stdout ----\n=== 5 failed, 1 passed in 0.1s ===\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_outer.py::test_it - assert False\n"
            "========================= 1 failed, 10 passed in 2.00s =========================\n")
    parsed = parse_output(text)
    assert parsed.counts == {"passed": 10, "failed": 1, "errors": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
    assert parsed.failures == [("tests/test_outer.py::test_it", "assert False")]


def test_find_project_root(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "a" / "b").mkdir(parents=True)
    assert find_project_root(root / "a" / "b") == (root / "a" / "b").resolve()
    (root / ".git").mkdir()
    assert find_project_root(root / "a" / "b") == root.resolve()
    (root / "a" / ".trajectory").mkdir()
    (root / "a" / ".trajectory" / "HEAD").write_text("ref: refs/heads/x\n")
    assert find_project_root(root / "a" / "b") == (root / "a").resolve()


def test_short_test_names_tell_tests_of_one_name_apart() -> None:
    ids = ["tests/test_a.py::TestX::test_max_age", "tests/test_b.py::TestY::test_max_age", "tests/t.py::test_ok",
           "tests/u.py::test_p[a::b]", "tests/v.py::test_p[a::b]", "a/t.py::T::test_m", "b/t.py::T::test_m"]
    assert parsers.short_test_names(ids) == [
        "TestX::test_max_age", "TestY::test_max_age", "test_ok", "u.py::test_p[a::b]", "v.py::test_p[a::b]",
        "a/t.py::T::test_m", "b/t.py::T::test_m"]
    run = TestRun(command="pytest", outcome="failed", failed=2, failures=[(ids[0], "boom"), (ids[1], "boom")])
    assert run.summary_line().endswith("2 failed: TestX::test_max_age, TestY::test_max_age")
