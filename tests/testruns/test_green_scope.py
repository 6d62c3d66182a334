"""Issue 23.1, green per scope, as a user meets it: a real pytest suite run through the real plugin and the
``code-trajectory test`` runner, read back through the MCP SDK client and the CLI."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.testruns import store
from code_trajectory.testruns.scope import Scope
from code_trajectory.testruns.selection import UNREAD, command_scope, declared_scope, parse_query
from code_trajectory.ui.data import History
from support import mcp_client, write

PLUGIN = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
          "code_trajectory.testruns.pytest_plugin", "--trajectory"]
SUITE_A = ("import pytest\n\n\ndef test_one():\n    assert True\n\n\ndef test_two():\n    assert True\n\n\n"
           "@pytest.mark.xfail(reason='known bug')\ndef test_known_bug():\n    assert False\n\n\n"
           "@pytest.mark.xfail(reason='fixed since?')\ndef test_fixed_since():\n    assert True\n")
SUITE_B_RED = "def test_three():\n    assert 1 == 2\n\n\ndef test_four():\n    assert 'a' == 'b'\n"
#: Passes only where the environment is set up (SUITE_FIXED=1): the same snapshot red, then green.
SUITE_B_ENV = "import os\n\n\ndef test_three():\n    assert os.environ.get('SUITE_FIXED') == '1'\n"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") and k not in ("CODE_TRAJECTORY_PYTEST", "PYTEST_ADDOPTS", "SUITE_FIXED")}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def run(project: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=project, env=_env(**env), capture_output=True, text=True, timeout=180)


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(project, sys.executable, "-m", "code_trajectory", *args)


def runs(project: Path) -> list:
    repo = ShadowRepo(project)
    try:
        return store.history(repo, 50)
    finally:
        repo.close()


def text(result) -> str:
    return result.content[0].text


@pytest.fixture
def suite(project: Path) -> Path:
    write(project, "tests/test_a.py", SUITE_A)
    write(project, "tests/test_b.py", SUITE_B_RED)
    return project


@pytest.mark.anyio
async def test_full_suite_red_then_subset_green_on_the_same_snapshot_is_not_green(suite: Path) -> None:
    """The issue's case: the full suite fails (2 failed) on snapshot S, a later subset run on S passes."""
    full = run(suite, *PLUGIN)
    assert full.returncode == 1 and "2 failed" in full.stdout, full.stdout + full.stderr
    subset = run(suite, *PLUGIN, "tests/test_a.py")
    assert subset.returncode == 0, subset.stdout + subset.stderr
    newest, oldest = runs(suite)
    assert newest.commit == oldest.commit  # the same snapshot S
    assert oldest.scope.is_full and (oldest.failed, oldest.passed) == (2, 3)
    assert newest.scope == Scope.partial(["tests/test_a.py"])
    # xfail/xpass counted as such, not as skipped or passed
    assert (newest.passed, newest.skipped, newest.xfailed, newest.xpassed) == (2, 0, 1, 1)
    assert newest.summary_line() == "tests (partial: tests/test_a.py): 2 passed, 1 xfailed, 1 xpassed"
    # the command as typed
    assert newest.command == shlex.join([*PLUGIN, "tests/test_a.py"])
    # the UI's timeline mark: the newest run passed, but over part of the suite on a red snapshot
    history = History(ShadowRepo(suite), TrajectorySettings.load(suite).session_gap_seconds)
    try:
        mark = history.marks([newest.commit])[newest.commit]
    finally:
        history.repo.close()
    assert mark.partial and "tests (partial: tests/test_a.py): 2 passed" in mark.text and "not all passed" in mark.text

    async with mcp_client(suite) as client:
        since = await client.call_tool("diff_since_green", {})
        assert not since.is_error
        assert "No snapshot on `main` is green for the full suite" in text(since)
        assert "latest snapshot is green" not in text(since)
        assert "scope='tests/test_a.py'" in text(since)  # what to ask instead
        assert since.structured_content is None  # nothing to list: the text is the whole answer

        summary = text(await client.call_tool("get_session_summary", {}))
        assert "The last run was green" not in summary
        assert "- Last run: " in summary and "— tests (partial: tests/test_a.py): 2 passed" in summary
        assert "The full suite was never green on `main`" in summary
        # the scope said once: on the run's line, not again before it nor after it (it said "partial" three times)
        tests = summary.split("## Tests", 1)[1]
        assert tests.count("partial") == 2 and tests.count("tests/test_a.py") == 2, tests  # the line, the command

        history = await client.call_tool("get_test_history", {})
        listing = text(history)
        assert "— passed (partial) on" in listing and "- Scope: partial: tests/test_a.py" in listing
        assert "— failed on" in listing and "- Scope: full suite" in listing
        assert "2 passed, 1 xfailed, 1 xpassed" in listing
        cols = history.structured_content["cols"]
        listed = [dict(zip(cols, row, strict=False)) for row in history.structured_content["runs"]]
        assert [r["scope"] for r in listed] == ["partial: tests/test_a.py", "full suite"]
        assert all("1 xfailed" in r["tests"] and "1 xpassed" in r["tests"] and "skipped" not in r["tests"]
                   for r in listed), listed
        assert [test for test, _ in listed[1]["failures"]] == ["tests/test_b.py::test_three", "tests/test_b.py::test_four"]

        # asked for the subset's scope, the same snapshot is green (test_b's failures are outside it)
        scoped = await client.call_tool("diff_since_green", {"scope": "tests/test_a.py"})
        assert "Last green run for scope `tests/test_a.py`" in text(scoped)
        assert "the latest snapshot is green for scope `tests/test_a.py`" in text(scoped)
        assert scoped.structured_content["green_run"]["xfailed"] == 1
        assert len(scoped.structured_content["green_run"]["commit"]) == 12  # as the text shows ids
        for answer in (since, history, scoped):  # structured content no larger than the text (issue 23.6)
            assert len(json.dumps(answer.structured_content)) <= len(text(answer)), answer.structured_content
        other = await client.call_tool("diff_since_green", {"scope": "tests/test_b.py::test_three"})
        assert "No snapshot on `main` is green for scope `tests/test_b.py::test_three`" in text(other)

        # a path that is in no snapshot and not in the project is an error, never "has not changed"
        nope = await client.call_tool("diff_since_green", {"filepath": "nope.py"})
        assert nope.is_error and "'nope.py' is in no snapshot and not in the project" in text(nope)
        bad_scope = await client.call_tool("diff_since_green", {"scope": "tests/'a"})
        assert bad_scope.is_error and "cannot read scope" in text(bad_scope)

    since_cli = cli(suite, "since-green")
    assert since_cli.returncode == 0 and "green for the full suite" in since_cli.stdout, since_cli.stderr
    assert "latest snapshot is green" not in since_cli.stdout
    scoped_cli = cli(suite, "since-green", "--scope", "tests/test_a.py")
    assert "Last green run for scope `tests/test_a.py`" in scoped_cli.stdout, scoped_cli.stderr
    nope_cli = cli(suite, "since-green", "nope.py")
    assert nope_cli.returncode == 2 and nope_cli.stdout == ""
    assert nope_cli.stderr.count("\n") == 1 and nope_cli.stderr.startswith("code-trajectory: error: 'nope.py' is in no")
    history_cli = cli(suite, "test-history").stdout
    assert "passed (partial)" in history_cli and "1 xfailed, 1 xpassed" in history_cli


@pytest.mark.anyio
async def test_agent_reports_get_their_scope_from_the_command(project: Path) -> None:
    async with mcp_client(project) as client:
        full = await client.call_tool("record_test_result", {"command": "python -m pytest -q", "passed": 3,
                                                             "xfailed": 1, "xpassed": 2})
        assert "(shadow branch `main`, full suite): tests: 3 passed, 1 xfailed, 2 xpassed" in text(full)
        part = await client.call_tool("record_test_result", {
            "command": "pytest tests/test_app.py -k main", "failed": 1,
            "failing_tests": ["tests/test_app.py::test_main: assert 2 == 1"]})
        assert "): tests (partial: tests/test_app.py -k main): 1 failed: test_main" in text(part)
        other = await client.call_tool("record_test_result", {"command": "npm run e2e", "passed": 4})
        assert f"unknown scope ({UNREAD})" in text(other)
        # the later partial failure on the same snapshot overlaps the full suite: not green for it any more
        since = text(await client.call_tool("diff_since_green", {}))
        assert "No snapshot on `main` is green for the full suite" in since and "proves no scope" in since
        history = await client.call_tool("get_test_history", {})
        data = history.structured_content
        counts = [row[data["cols"].index("tests")] for row in data["runs"]]
        assert ["2 xpassed" in c for c in counts] == [False, False, True], counts
        # a script of the project's own, declared the whole suite: its pass is a rerun of the failed selection
        read = await client.call_tool("record_test_result", {"command": "pytest tests/test_app.py", "passed": 1,
                                                             "full_suite": True})
        assert "tests (partial: tests/test_app.py): 1 passed" in text(read)  # what ran, whatever is declared
        declared = await client.call_tool("record_test_result", {"command": "./ci/test.sh", "passed": 9,
                                                                 "full_suite": True})
        assert "(shadow branch `main`, full suite): tests: 9 passed" in text(declared)
        since = text(await client.call_tool("diff_since_green", {}))
        assert since.startswith("Last green run for the full suite: ") and "(`./ci/test.sh`)" in since


def test_since_green_goes_back_past_a_snapshot_whose_full_suite_failed(suite: Path) -> None:
    write(suite, "tests/test_b.py", SUITE_B_ENV)
    assert run(suite, *PLUGIN, SUITE_FIXED="1").returncode == 0
    [green] = runs(suite)
    write(suite, "src/app.py", "def main():\n    return 1  # refactored\n")
    assert run(suite, *PLUGIN).returncode == 1  # SUITE_FIXED unset: test_three fails on the new snapshot
    assert run(suite, *PLUGIN, "tests/test_a.py").returncode == 0
    assert run(suite, *PLUGIN, "-k", "one or two").returncode == 0
    latest = runs(suite)[0]
    assert latest.commit != green.commit and latest.scope == Scope.partial([], ["-k 'one or two'"])

    since = cli(suite, "since-green")
    assert since.returncode == 0, since.stderr
    assert "Last green run for the full suite: " in since.stdout and f"`{green.commit[:12]}`" in since.stdout
    assert "+    return 1  # refactored" in since.stdout
    # -k is not evaluated: the red full suite on the new snapshot overlaps it, so its last green is the earlier one
    by_k = cli(suite, "since-green", "--scope", "-k 'one or two'")
    assert "Last green run for scope `-k 'one or two'`" in by_k.stdout, by_k.stdout + by_k.stderr
    assert f"on `{green.commit[:12]}`" in by_k.stdout
    # the file asked about did not change: it says so
    same = cli(suite, "since-green", "tests/test_a.py")
    assert "`tests/test_a.py` has not changed since then." in same.stdout
    summary = cli(suite, "session").stdout
    assert "- Last green (full suite): " in summary and f"`{green.commit[:12]}`" in summary
    # the full suite passing again on the same snapshot (a fixed environment, a flaky test) clears its failure
    assert run(suite, *PLUGIN, SUITE_FIXED="1").returncode == 0
    assert runs(suite)[0].commit == latest.commit
    assert "The last run was green (full suite)." in cli(suite, "session").stdout
    assert "the latest snapshot is green for the full suite" in cli(suite, "since-green").stdout


@pytest.mark.slow
def test_runner_records_the_command_as_typed_with_its_scope(suite: Path) -> None:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "code_trajectory.testruns.pytest_plugin", "tests/test_a.py::test_one"]
    # the plugin enabled by the environment does not record the run a second time
    proc = run(suite, sys.executable, "-m", "code_trajectory", "test", "--", *argv, CODE_TRAJECTORY_PYTEST="1")
    assert proc.returncode == 0, proc.stderr
    assert "tests (partial: tests/test_a.py::test_one): 1 passed" in proc.stderr
    [recorded] = runs(suite)
    assert recorded.command == shlex.join(argv) and recorded.runner == "pytest"
    # the console script is recorded by the name the user typed, not as "pytest" + pytest's arguments
    script = Path(sys.executable).parent / "pytest"
    proc = run(suite, str(script), "-q", "-p", "no:cacheprovider", "-p", "code_trajectory.testruns.pytest_plugin",
               "--trajectory", "tests/test_a.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert runs(suite)[0].command == ("pytest -q -p no:cacheprovider -p code_trajectory.testruns.pytest_plugin "
                                      "--trajectory tests/test_a.py")


def test_a_project_script_declared_the_full_suite_proves_green(suite: Path) -> None:
    """``make test`` or ``./run_tests.sh`` could run anything: an unknown scope that says how to declare it; with
    ``--full-suite`` its pass is the full suite's, and ``since-green`` answers from it."""
    write(suite, "run_tests.sh", "exit 0\n")
    proc = cli(suite, "test", "--", "sh", "run_tests.sh")
    assert proc.returncode == 0 and f"(unknown scope ({UNREAD}))" in proc.stderr, proc.stderr
    since = cli(suite, "since-green").stdout
    assert "No snapshot on `main` is green for the full suite" in since
    assert "Record runs with" not in since  # it was just recorded: the answer says what it proves instead
    proc = cli(suite, "test", "--full-suite", "--", "sh", "run_tests.sh")
    assert proc.returncode == 0 and "(full suite): tests: passed (exit 0)" in proc.stderr, proc.stderr
    assert cli(suite, "since-green").stdout.startswith("Last green run for the full suite: ")
    assert declared_scope(command_scope(["pytest", "--pyargs", "pkg"], suite, suite), True).kind == "unknown"
    assert declared_scope(command_scope(["pytest", "tests/test_a.py"], suite, suite), True).kind == "partial"


def test_runner_reads_the_selection_pytest_addopts_adds(suite: Path) -> None:
    """``PYTEST_ADDOPTS`` selects as typed words do (pytest reads it before the command line): a subset chosen there
    is partial, so its pass does not turn the snapshot the full suite just failed on green (it did: 'full suite')."""
    argv = ["test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    assert cli(suite, *argv).returncode == 1
    subset = run(suite, sys.executable, "-m", "code_trajectory", *argv, PYTEST_ADDOPTS="tests/test_a.py -k one")
    assert subset.returncode == 0 and "1 passed" in subset.stdout, subset.stdout + subset.stderr
    newest, failed = runs(suite)
    assert newest.commit == failed.commit and failed.scope.is_full
    assert newest.scope == Scope.partial(["tests/test_a.py"], ["-k one"])
    assert "No snapshot on `main` is green for the full suite" in cli(suite, "since-green").stdout
    assert command_scope(["pytest"], suite, suite, addopts="-k 'a b") == Scope.unknown(
        "PYTEST_ADDOPTS cannot be split into words")


def test_a_declared_script_running_pytest_with_a_selecting_pytest_addopts_is_partial(suite: Path) -> None:
    """``--full-suite -- sh run_tests.sh`` declares the script runs the whole suite, but a ``PYTEST_ADDOPTS`` left
    in the shell selects for whatever pytest it runs: partial (it was the full suite, green); without one, full."""
    write(suite, "run_tests.sh", f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider\n")
    argv = ["test", "--full-suite", "--", "sh", "run_tests.sh"]
    subset = run(suite, sys.executable, "-m", "code_trajectory", *argv, PYTEST_ADDOPTS="-k one tests/test_a.py")
    assert subset.returncode == 0 and "1 passed" in subset.stdout, subset.stdout + subset.stderr
    assert runs(suite)[0].scope == Scope.partial((), ["-k one", "PYTEST_ADDOPTS tests/test_a.py"])
    assert "No snapshot on `main` is green for the full suite" in cli(suite, "since-green").stdout
    assert declared_scope(Scope.unknown(UNREAD), True, "-k 'a b") == Scope.unknown(
        "PYTEST_ADDOPTS cannot be split into words")
    assert declared_scope(Scope.unknown(UNREAD), True, "-q -p no:cacheprovider").is_full


def test_runner_takes_tests_a_conftest_deselected_for_a_partial_run_as_the_plugin_does(suite: Path) -> None:
    """``code-trajectory test -- pytest`` recorded a run whose conftest deselected the failing tests as the full
    suite, green (the plugin records it ``partial: 2 deselected``); tests the ini's addopts deselect are the
    suite's definition: that run is the full suite."""
    argv = ["test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    write(suite, "conftest.py", "def pytest_collection_modifyitems(config, items):\n"
                                "    gone = [i for i in items if 'test_b' in i.nodeid]\n"
                                "    items[:] = [i for i in items if i not in gone]\n"
                                "    config.hook.pytest_deselected(items=gone)\n")
    proc = cli(suite, *argv)
    assert proc.returncode == 0 and "(partial: 2 deselected)" in proc.stderr, proc.stdout + proc.stderr
    assert "No snapshot on `main` is green for the full suite" in cli(suite, "since-green").stdout
    write(suite, "conftest.py", "")
    write(suite, "tests/test_b.py", "import pytest\n\n\n@pytest.mark.slow\ndef test_three():\n    assert 1 == 2\n")
    write(suite, "pytest.ini", "[pytest]\nmarkers = slow\naddopts = -m 'not slow'\n")
    proc = cli(suite, *argv)
    assert proc.returncode == 0 and "1 deselected" in proc.stdout, proc.stdout + proc.stderr
    assert "(full suite)" in proc.stderr, proc.stderr
    assert cli(suite, "since-green").stdout.startswith("Last green run for the full suite: ")


def test_plugin_counts_strict_xpass_as_failed_and_skips_collect_only(tmp_path: Path, suite: Path) -> None:
    write(suite, "tests/test_b.py", "import pytest\n\n\n@pytest.mark.xfail(strict=True)\ndef test_s():\n    pass\n\n\n"
                                    "@pytest.mark.xfail(run=False)\ndef test_n():\n    pass\n")
    proc = run(suite, *PLUGIN, "tests/test_b.py")
    assert proc.returncode == 1
    [recorded] = runs(suite)
    assert (recorded.failed, recorded.xfailed, recorded.xpassed, recorded.passed) == (1, 1, 0, 0)
    assert recorded.failures[0][0] == "tests/test_b.py::test_s"
    assert run(suite, *PLUGIN, "--co").returncode == 0
    assert len(runs(suite)) == 1  # a collect-only session ran no test: not recorded


def test_legacy_runs_without_a_scope_still_load_and_prove_nothing(suite: Path) -> None:
    assert cli(suite, "checkpoint").returncode == 0
    repo = ShadowRepo(suite)
    try:
        tip = repo.git.text(["rev-parse", "refs/heads/shadow/main"]).strip()
        legacy = [{"command": "pytest -q", "outcome": "passed", "passed": 7, "runner": "pytest",
                   "started_at": "2026-01-01T00:00:00.000+00:00", "commit": tip, "branch": "main"}]
        blob = repo.hash_bytes(json.dumps(legacy).encode())
        repo.git.run(["notes", f"--ref={store.NOTES_REF}", "add", "-f", "-C", blob, tip])
    finally:
        repo.close()
    [loaded] = runs(suite)
    assert loaded.passed == 7 and loaded.scope == Scope.unknown("recorded before scopes were kept")
    listing = cli(suite, "test-history").stdout
    assert "- Scope: unknown scope (recorded before scopes were kept)" in listing
    since = cli(suite, "since-green").stdout
    assert "No snapshot on `main` is green for the full suite" in since and "proves no scope" in since
    assert "declared so: CLI `code-trajectory test --full-suite -- <command>`" in since  # an old run: no hint in its label


@pytest.mark.parametrize("argv, cwd, expected", [
    (["pytest"], ".", Scope.full()),
    (["python3", "-m", "pytest", "-q", "-n", "4", "-p", "no:cacheprovider", "--tb=short"], ".", Scope.full()),
    (["pytest", "test_a.py"], "tests", Scope.partial(["tests/test_a.py"])),  # paths are relative to where it ran
    (["pytest"], "tests", Scope.partial(["tests"])),
    (["pytest", "tests/test_a.py::test_one", "-x"], ".", Scope.partial(["tests/test_a.py::test_one"])),
    (["pytest", "-k", "login and not slow", "tests"], ".", Scope.partial(["tests"], ["-k 'login and not slow'"])),
    (["pytest", "-mslow", "--lf"], ".", Scope.partial([], ["-m slow", "--lf"])),
    (["pytest", "--deselect", "tests/test_a.py::test_one"], ".", Scope.partial([], ["--deselect tests/test_a.py::test_one"])),
    (["pytest", "--pyargs", "pkg"], ".", Scope.unknown("--pyargs names packages, not paths")),
    (["pytest", "../elsewhere"], ".", Scope.unknown("none of ../elsewhere exists")),
    (["npm", "test"], ".", Scope.full()),
    (["go", "test", "-v", "./..."], ".", Scope.full()),
    (["cargo", "test", "--offline", "-q"], ".", Scope.full()),  # dependency resolution flags select no test
    (["cargo", "test", "--locked"], ".", Scope.full()),
    (["cargo", "test", "--frozen", "--", "--nocapture"], ".", Scope.unknown(UNREAD)),  # after --: the harness's own
    (["go", "test", "-run", "TestX", "./..."], ".", Scope.unknown(UNREAD)),
    (["make", "test"], ".", Scope.unknown(UNREAD)),  # a target can run anything: declared with --full-suite
    (["./mvnw", "test"], ".", Scope.full()),
    (["dotnet", "test", "--filter", "Name=X"], ".", Scope.unknown(UNREAD)),
    (["bundle", "exec", "rspec"], "src", Scope.partial(["src"])),
])
def test_command_scope(suite: Path, argv: list[str], cwd: str, expected: Scope) -> None:
    assert command_scope(argv, suite / cwd, suite) == expected


@pytest.mark.parametrize("name, content", [
    ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n"),
    ("pytest.ini", "[pytest]\ntestpaths = tests\n"),
    ("setup.cfg", "[tool:pytest]\ntestpaths =\n    tests\n"),
])
def test_testpaths_given_explicitly_are_the_full_suite(suite: Path, name: str, content: str) -> None:
    write(suite, name, content)
    assert command_scope(["pytest", "tests/"], suite, suite) == Scope.full()
    assert command_scope(["pytest", "tests/test_a.py"], suite, suite) == Scope.partial(["tests/test_a.py"])
    write(suite, name, "[broken")  # an unreadable configuration: the path is taken as given
    assert command_scope(["pytest", "tests"], suite, suite) == Scope.partial(["tests"])


def test_plugin_takes_testpaths_given_explicitly_for_the_full_suite(suite: Path) -> None:
    write(suite, "pytest.ini", "[pytest]\ntestpaths = tests\n")
    assert run(suite, *PLUGIN, "tests").returncode == 1
    assert run(suite, *PLUGIN, "--deselect", "tests/test_b.py::test_three", "tests").returncode == 1
    deselected, full = runs(suite)
    assert full.scope.is_full
    assert deselected.scope == Scope.partial([], ["--deselect tests/test_b.py::test_three"])
    assert "1 failed" in deselected.summary_line()


def test_plugin_scope_of_ini_addopts_and_of_a_plugin_deselecting(suite: Path) -> None:
    """Options in the ini's addopts define the suite; tests a plugin deselects make the run partial."""
    write(suite, "pytest.ini", "[pytest]\naddopts = -m 'not slow'\nmarkers =\n    slow: slow tests\n")
    write(suite, "tests/test_b.py", "import pytest\n\n\n@pytest.mark.slow\ndef test_slow():\n    pass\n")
    assert run(suite, *PLUGIN).returncode == 0
    assert runs(suite)[0].scope.is_full
    write(suite, "conftest.py", "def pytest_collection_modifyitems(config, items):\n"
                                "    dropped = [i for i in items if i.name == 'test_one']\n"
                                "    items[:] = [i for i in items if i.name != 'test_one']\n"
                                "    config.hook.pytest_deselected(items=dropped)\n")
    write(suite, "pytest.ini", "[pytest]\nmarkers =\n    slow: slow tests\n")
    assert run(suite, *PLUGIN).returncode == 0
    assert runs(suite)[0].scope == Scope.partial([], ["1 deselected"])


def test_overlap_and_cover_rules() -> None:
    full, a, a_one, b = (parse_query(None), parse_query("tests/a.py"), parse_query("tests/a.py::test_one"),
                         parse_query("tests/b.py"))
    k, unknown = parse_query("-k login"), Scope.unknown()
    assert full.covers(a) and full.covers(k) and not full.covers(unknown)
    assert a.covers(a_one) and not a_one.covers(a) and not a.covers(b) and not a.covers(full)
    assert not k.covers(a) and not unknown.covers(a) and parse_query("tests -k login").covers(parse_query(
        "tests/a.py -k login"))
    assert a.overlaps(a_one) and not a.overlaps(b) and k.overlaps(b) and unknown.overlaps(b) and full.overlaps(b)
    assert parse_query("tests/a.py::test_x[1]").overlaps(parse_query("tests/a.py::test_x"))
    assert not parse_query("tests/a.py::test_x").overlaps(parse_query("tests/a.py::test_xy"))
    assert parse_query(".") == full and parse_query("full suite") == full
    assert Scope.from_dict({"kind": "partial", "paths": ["a.py", 3], "filters": "x"}) == Scope.partial(["a.py"])
    assert Scope.from_dict("junk").kind == "unknown"
    with pytest.raises(ValueError):
        parse_query("tests/'a")


def test_secrets_in_a_runs_output_and_command_are_redacted_when_recorded(suite: Path) -> None:
    """A test that prints a token, a command given one: the run is stored with both redacted (it was only on push),
    so neither the shadow repository nor ``test-history`` holds them."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    proc = cli(suite, "test", "--", "sh", "-c", f"echo leaked {token}; exit 1", "--token=" + token)
    assert proc.returncode == 1 and token in proc.stdout  # the output passes through as it was
    objects = subprocess.run(["git", "--git-dir", str(suite / ".trajectory"), "cat-file", "--batch-all-objects",
                              "--batch"], capture_output=True).stdout
    assert token.encode() not in objects
    history = cli(suite, "test-history").stdout
    assert token not in history and "[redacted]" in history


def test_a_token_in_a_parametrized_tests_id_is_redacted_from_its_failures_and_scope(suite: Path) -> None:
    """A parametrized test's id holds its parameter (``test_auth[ghp_…]``), and a rerun of that one test names it:
    the failing test's id and the run's scope were stored and pushed as they were while the command and the output
    beside them were redacted. A test file named after a token (``test_token.py``) keeps its name, so the scope
    still says which tests ran."""
    token = "ghp_" + "Z9y8X7w6" * 4 + "V5u4"
    write(suite, "tests/test_token.py", f"import pytest\n\n\n@pytest.mark.parametrize('tok', ['{token}'])\n"
                                         "def test_auth(tok):\n    assert tok == 'other'\n")
    node = f"tests/test_token.py::test_auth[{token}]"
    proc = cli(suite, "test", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout + proc.stderr
    (newest, *_older) = runs(suite)
    assert newest.failures and newest.failures[0][0] == "tests/test_token.py::test_auth[[redacted]]"
    assert newest.scope == Scope.partial(["tests/test_token.py::test_auth[[redacted]]"])
    assert newest.scope.overlaps(Scope.partial(["tests/test_token.py"]))
    objects = subprocess.run(["git", "--git-dir", str(suite / ".trajectory"), "cat-file", "--batch-all-objects",
                              "--batch"], capture_output=True).stdout
    assert objects.count(token.encode()) == 1  # the test file itself (a file's content is recorded as it is)
    history = cli(suite, "test-history").stdout
    assert token not in history and "tests/test_token.py::test_auth[[redacted]]" in history
