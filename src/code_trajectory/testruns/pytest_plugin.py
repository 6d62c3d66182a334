"""pytest plugin: record each test session in the project's trajectory.

Inert unless enabled with ``--trajectory`` or the environment variable
``CODE_TRAJECTORY_PYTEST=1`` (``--no-trajectory`` wins over both): when disabled it
only adds its options and imports nothing beyond :mod:`os`.

When enabled, the session start snapshots the project (the state the tests run on),
and the session end records the run on that snapshot with pytest's own counts
(passed, failed, errors, skipped, xfailed, xpassed, as in pytest's summary line), the
node id of every failing test with a one-line reason, the command as it was typed
(``python -m pytest -q tests`` from ``sys.orig_argv``, ``pytest -q`` for the console
script) and the run's scope: what pytest selected (``config.args`` against the
project root and ``testpaths``, the ``-k``/``-m``/``--deselect``/``--lf``/... typed on the
command line or in ``PYTEST_ADDOPTS``, and tests deselected by a plugin). Options in the
ini file's ``addopts`` define the suite, so they do not make a run partial.
``--collect-only`` sessions run no test and are not recorded.
The project is ``--trajectory-project PATH``, else the nearest directory at or above
pytest's ``rootdir`` holding ``.trajectory/``, else the nearest holding ``.git``, else
``rootdir``. Recording never changes the session's outcome: a failure is reported on
stderr and the session goes on. Under pytest-xdist only the controller records.

Registered as the ``pytest11`` entry point ``code_trajectory.testruns.pytest_plugin`` (named after the
module, so ``-p code_trajectory.testruns.pytest_plugin`` next to the installed entry point loads it once).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from code_trajectory.testruns import PLUGIN_ENV_VAR as ENV_VAR  # the package's __init__ imports nothing

if TYPE_CHECKING:  # the plugin loads in every pytest run: imports stay lazy
    from pathlib import Path

_TRUE = ("1", "true", "yes", "on")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("code-trajectory", "record test runs in the code-trajectory shadow repository")
    group.addoption("--trajectory", action="store_true", default=False,
                    help=f"record this run against a snapshot of the project (also: {ENV_VAR}=1)")
    group.addoption("--no-trajectory", action="store_true", default=False,
                    help=f"do not record this run, even when {ENV_VAR} is set")
    group.addoption("--trajectory-project", default=None, metavar="PATH",
                    help="project root to record in (default: found from rootdir)")


def enabled(config) -> bool:
    """True when recording is asked for (``--trajectory`` or the environment) and not refused."""
    if config.getoption("no_trajectory", False):
        return False
    if config.getoption("trajectory", False):
        return True
    return os.environ.get(ENV_VAR, "").strip().lower() in _TRUE


def pytest_configure(config) -> None:
    if not enabled(config) or hasattr(config, "workerinput"):  # xdist workers: the controller records
        return
    if config.getoption("collectonly", False):  # no test runs
        return
    config.pluginmanager.register(_SessionRecorder(config), "code-trajectory-recorder")


def _warn(message: str) -> None:
    import sys

    try:
        sys.stderr.write(f"code-trajectory: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _reason(report) -> str:
    """One line saying why ``report`` failed: the crash message, else the last ``E`` line."""
    longrepr = report.longrepr
    message = ""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        message = crash.message
    elif isinstance(longrepr, tuple) and len(longrepr) == 3:
        message = str(longrepr[2])
    elif longrepr is not None:
        lines = [line for line in str(longrepr).splitlines() if line.strip()]
        errors = [line[1:].strip() for line in lines if line.startswith("E ")]
        message = errors[-1] if errors else (lines[-1] if lines else "")
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return first


class _SessionRecorder:
    """Collects the session's results and records them (registered only when enabled)."""

    def __init__(self, config) -> None:
        self.config = config
        self.counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
        self.deselected = 0
        self.failures: list[tuple[str, str]] = []
        self.root: Path | None = None
        self.commit: str | None = None
        self.branch: str | None = None
        self.started_at = ""
        self.t0 = 0.0
        self.note: str | None = None

    # -- start: snapshot the state the tests run on ------------------------------------------

    def pytest_sessionstart(self, session) -> None:
        import time
        from pathlib import Path

        self.t0 = time.monotonic()
        try:
            from code_trajectory.project import find_project_root
            from code_trajectory.testruns import model, service

            self.started_at = model.utc_now_iso()
            option = self.config.getoption("trajectory_project", None)
            if option:
                root = Path(option).expanduser().resolve()
                if not root.is_dir():
                    raise NotADirectoryError(f"--trajectory-project {option}: not a directory")
            else:
                root = find_project_root(Path(str(self.config.rootpath)))
            self.root = root
            self.commit, self.branch = service.snapshot_project(root, note="before test run: pytest")
        except Exception as exc:  # noqa: BLE001 - recording must never break the session
            self.commit = None
            _warn(f"the test run will not be recorded: cannot snapshot the project: {exc}")

    # -- results -------------------------------------------------------------------------------

    def _fail(self, nodeid: str, report) -> None:
        try:
            reason = _reason(report)
        except Exception:  # noqa: BLE001
            reason = ""
        self.failures.append((nodeid, reason))

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.counts["errors"] += 1
            self._fail(report.nodeid or "collection", report)

    def pytest_runtest_logreport(self, report) -> None:
        when = report.when
        xfail = hasattr(report, "wasxfail")  # pytest's mark of an expected failure (skipping.py)
        if when == "call":
            if report.passed:
                self.counts["xpassed" if xfail else "passed"] += 1
            elif report.failed:  # a strict xfail that passed is a failure
                self.counts["failed"] += 1
                self._fail(report.nodeid, report)
            elif report.skipped:
                self.counts["xfailed" if xfail else "skipped"] += 1
        elif when == "setup":
            if report.failed:
                self.counts["errors"] += 1
                self._fail(report.nodeid, report)
            elif report.skipped:
                self.counts["xfailed" if xfail else "skipped"] += 1
        elif when == "teardown" and report.failed:
            self.counts["errors"] += 1
            self._fail(report.nodeid, report)

    def pytest_deselected(self, items) -> None:
        self.deselected += len(items)

    # -- end: record -----------------------------------------------------------------------------

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        if self.commit is None:
            return
        try:
            self._record(int(exitstatus))
        except Exception as exc:  # noqa: BLE001 - recording must never break the session
            self.note = None
            _warn(f"the test run was not recorded: {exc}")

    def _record(self, status: int) -> None:
        import time

        from code_trajectory.testruns import model, parsers, runner, service

        root, commit = self.root, self.commit
        if root is None or commit is None:  # the snapshot before the run failed: nothing to record on
            return
        command = typed_command([str(a) for a in self.config.invocation_params.args])
        failures = parsers.dedupe(self.failures)
        run = model.TestRun(
            command=parsers.clip(command, model.MAX_COMMAND_CHARS),
            outcome="failed", exit_code=status, runner="pytest-plugin",
            duration_seconds=round(time.monotonic() - self.t0, 3), started_at=self.started_at,
            failures=failures[:parsers.MAX_FAILURES],
            more_failures=max(len(failures) - parsers.MAX_FAILURES, 0),
            commit=commit, branch=self.branch, passed=self.counts["passed"], failed=self.counts["failed"],
            errors=self.counts["errors"], skipped=self.counts["skipped"], xfailed=self.counts["xfailed"],
            xpassed=self.counts["xpassed"], scope=self._safe_scope(root))
        run.outcome, run.message = runner.pytest_verdict(status, run.errors)
        service.record_on(root, run)
        self.note = f"recorded on snapshot {commit[:12]}: {run.summary_line()}"

    def _safe_scope(self, root: Path):
        """:meth:`_scope`, or an unknown scope saying why it could not be read (the run is recorded anyway)."""
        try:
            return self._scope(root)
        except Exception as exc:  # noqa: BLE001 - a surprising config (another pytest, a plugin) loses the scope only
            from code_trajectory.testruns.scope import Scope

            return Scope.unknown(f"the selection could not be read: {type(exc).__name__}")

    def _scope(self, root: Path):
        """What this session selected, as a :class:`~code_trajectory.testruns.scope.Scope` of the project ``root``."""
        import shlex
        from pathlib import Path

        from code_trajectory.testruns.scope import Scope
        from code_trajectory.testruns.selection import pytest_selection, relative_to_project

        config = self.config
        try:
            typed = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]
        except ValueError:
            return Scope.unknown("PYTEST_ADDOPTS cannot be split into words")
        _given, filters, problem = pytest_selection(typed)
        if problem or config.getoption("pyargs", False):
            return Scope.unknown(problem or "--pyargs names packages, not paths")
        invocation, rootpath = Path(config.invocation_params.dir), Path(str(config.rootpath))
        source = getattr(getattr(config, "args_source", None), "name", "ARGS")
        if source == "TESTPATHS":
            args, base = ["."], rootpath
        elif source == "INVOCATION_DIR":
            args, base = ["."], invocation
        else:
            args, base = [str(a) for a in config.args], invocation
        paths = []
        for arg in args:
            rel = relative_to_project(arg, base, root)
            if rel is None:
                return Scope.unknown(f"{arg} is outside the project")
            paths.append(rel)
        testpaths = {relative_to_project(str(p), rootpath, root) for p in config.getini("testpaths") or ()}
        if source == "ARGS" and testpaths and set(paths) == testpaths:
            paths = ["."]  # `pytest tests` where testpaths = ["tests"]: the whole suite
        option = config.option
        explained = any(getattr(option, name, None) for name in ("keyword", "markexpr", "deselect", "lf",
                                                                 "stepwise", "stepwise_skip"))
        if self.deselected and not explained:
            filters.append(f"{self.deselected} deselected")
        return Scope.partial(paths, filters)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.note:
            terminalreporter.write_line(f"code-trajectory: {self.note}")


def typed_command(invocation_args: list[str]) -> str:
    """The pytest command as the user typed it: ``python -m pytest ...`` from :data:`sys.orig_argv`, the console
    script by its name (``pytest -q``), else (``pytest.main`` called by a program) ``pytest`` and the arguments
    it was given."""
    import shlex
    import sys

    orig = [str(a) for a in getattr(sys, "orig_argv", None) or ()]
    for i, word in enumerate(orig[:-1]):
        if word == "-m" and orig[i + 1] in ("pytest", "py.test"):
            return shlex.join(orig)
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if name in ("pytest", "py.test", "pytest.exe") and [str(a) for a in sys.argv[1:]] == invocation_args:
        return shlex.join([name.removesuffix(".exe"), *invocation_args])
    return shlex.join(["pytest", *invocation_args])
