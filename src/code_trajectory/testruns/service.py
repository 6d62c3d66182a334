"""Test runs recorded against the snapshot they ran on: the ways in.

A :class:`TestRun` says which command ran, whether it passed, the counts
(passed, failed, errors, skipped) when they are known, how long it took, which
tests failed with a one-line reason each, and the tail of the output. It is
stored with the shadow commit it ran on, never in the project: as a git note
under :data:`NOTES_REF` in the shadow repository, one note per commit holding a
JSON list of runs (several runs on one snapshot are all kept). Notes are
appended under ``.trajectory/tests.lock``.

Ways in:

* :func:`run_and_record` — ``code-trajectory test -- <command...>``: snapshot the
  project, run any command (no shell), parse the summary lines of common runners
  (:func:`code_trajectory.testruns.parsers.parse_output`), record, and hand back the exit
  status to exit with;
* :mod:`code_trajectory.testruns.pytest_plugin` — exact counts from pytest itself;
* :func:`record_agent_result` — an agent that ran the tests itself reports them.

Each run records its scope (:mod:`code_trajectory.testruns.selection`): what the command
selected, read from pytest's arguments (or the plugin's view of the session), else an
unknown scope. Ways out: :mod:`code_trajectory.testruns.store` (:func:`runs_for`,
:func:`history`) and :func:`code_trajectory.testruns.green.last_green`.

Faults are recorded, not raised: a command that does not exist (exit status
127, outcome ``error``), a runner killed by a signal (outcome ``error``, the
signal named), output that is not UTF-8 (decoded with replacement), a log of
any size (only a bounded tail and the lines the parsers need are kept).
"""

from __future__ import annotations

import logging
import math
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from code_trajectory.core.errors import InvalidArgumentError, StorageError, TrajectoryError
from code_trajectory.git.messages import KIND_SNAPSHOT
from code_trajectory.git.shadow import ShadowRepo, shadow_ref
from code_trajectory.testruns import COUNT_RANGE, DURATION_RANGE, EXIT_CODE_RANGE
from code_trajectory.testruns import PLUGIN_ENV_VAR as PLUGIN_ENV
from code_trajectory.testruns.model import MAX_COMMAND_CHARS, OUTCOMES, OUTPUT_TAIL_BYTES, TestRun, utc_now_iso
from code_trajectory.testruns.parsers import MAX_FAILURES, MAX_TEST_ID_CHARS, clip, dedupe, one_line
from code_trajectory.testruns.parsers.pytest_report import deselected_count
from code_trajectory.testruns.runner import OutputCollector, exit_status, run_command
from code_trajectory.testruns.selection import command_line_scope, command_scope, declared_scope, with_deselected
from code_trajectory.testruns.store import record_run

log = logging.getLogger(__name__)

#: Limits for :func:`record_agent_result`.
MAX_AGENT_FAILURES = 10_000
MAX_AGENT_OUTPUT_CHARS = 10 * 1024 * 1024


# -- snapshot, run, record -------------------------------------------------------------------------------


def snapshot_for_run(recorder, note: str | None = None) -> tuple[str, str]:
    """Snapshot the project now (a checkpoint) and return ``(commit, branch)`` the run will be recorded on.

    When nothing changed, the commit is the current tip of the branch's shadow ref (or the
    latest snapshot of any branch when this branch has none yet).

    Args:
        recorder: the project's :class:`~code_trajectory.recording.recorder.Recorder`.
        note: the checkpoint's note.

    Raises:
        StorageError: there is no snapshot at all to record on.
        TrajectoryError: the snapshot failed.
    """
    snapshot = recorder.checkpoint(note, kind=KIND_SNAPSHOT)  # automatic: consolidation may squash it
    if snapshot is not None:
        return snapshot.commit, snapshot.branch
    branch = recorder.project.current_branch()
    commit = recorder.repo.resolve(shadow_ref(branch)) or recorder.latest_commit()
    if commit is None:
        raise StorageError("the project has no snapshot to record the test run on")
    return commit, branch


def _open_recorder(root: Path, settings):
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.git.gitcmd import check_git_version
    from code_trajectory.recording.recorder import Recorder

    check_git_version()
    return Recorder.open(Path(root), settings if settings is not None else TrajectorySettings.load(Path(root)))


def snapshot_project(root: Path, settings=None, note: str | None = None) -> tuple[str, str]:
    """Open the project's recorder, :func:`snapshot_for_run`, close it; return ``(commit, branch)``."""
    recorder = _open_recorder(root, settings)
    try:
        return snapshot_for_run(recorder, note)
    finally:
        recorder.close()


def record_on(root: Path, run: TestRun) -> None:
    """Record ``run`` (its ``commit`` set) in the shadow repository of ``root``."""
    repo = ShadowRepo(Path(root))
    try:
        record_run(repo, run)
    finally:
        repo.close()


def run_and_record(root: Path, argv: Sequence[str], settings=None, *, cwd: Path | None = None,
                   echo: bool = True, timeout: float | None = None, recorder=None,
                   max_output_bytes: int = OUTPUT_TAIL_BYTES, full_suite: bool = False) -> tuple[TestRun, int]:
    """Snapshot the project, run ``argv``, record the run on the snapshot.

    The command runs without ``CODE_TRAJECTORY_PYTEST`` in its environment (the run is recorded here; the pytest
    plugin would record it a second time). The command runs even when the snapshot fails (the failure is in ``run.record_error``
    and the run is not recorded); a run is never lost to a crash of ours: recording
    errors are reported the same way.

    Args:
        root: the project root.
        argv: the test command.
        settings: the project's settings (default: loaded from the config files).
        cwd: where the command runs (default: ``root``).
        echo: pass the output through to our stdout.
        timeout: kill the command after this many seconds.
        recorder: an open recorder of ``root`` to use (the server's); default: one is opened and closed.
        max_output_bytes: bytes of output stored.
        full_suite: the caller declares that ``argv`` runs the whole suite (a script of the project's own): its
            scope is then the full suite unless a selection is read from it
            (:func:`~code_trajectory.testruns.selection.declared_scope`).

    Returns:
        ``(run, status)``: ``status`` is what to exit with (see :func:`exit_status`).

    Raises:
        InvalidArgumentError: ``argv`` is empty.
    """
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise InvalidArgumentError("give the test command after `--`, e.g. `code-trajectory test -- pytest -q`")
    root = Path(root)
    own = None
    commit = branch = None
    problem = None
    try:
        if recorder is None:
            own = recorder = _open_recorder(root, settings)
        commit, branch = snapshot_for_run(recorder, clip("before test run: " + shlex.join(argv), 200))
    except TrajectoryError as exc:
        problem = f"no snapshot was taken, so the run is not recorded: {exc}"
        log.warning("%s", problem)
    try:
        env = {k: v for k, v in os.environ.items() if k != PLUGIN_ENV}  # recorded here, not again by the plugin
        run = run_command(argv, cwd if cwd is not None else root, echo=echo, timeout=timeout,
                          max_output_bytes=max_output_bytes, env=env)
        run.commit, run.branch = commit, branch
        scope = command_scope(argv, cwd if cwd is not None else root, root, addopts=env.get("PYTEST_ADDOPTS", ""))
        if run.runner == "pytest":  # tests a conftest or plugin deselected, as the plugin records them
            scope = with_deselected(scope, deselected_count(run.output_tail), root)
        run.scope = declared_scope(scope, full_suite,
                                   env.get("PYTEST_ADDOPTS", "") if run.runner == "pytest" else "")
        if commit is not None:
            try:
                record_run(recorder.repo, run)
            except TrajectoryError as exc:
                problem = f"the run was not recorded: {exc}"
                log.warning("%s", problem)
        run.record_error = problem
    finally:
        if own is not None:
            own.close()
    return run, exit_status(run)


# -- an agent's report -----------------------------------------------------------------------------------


def _check_count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    low, high = COUNT_RANGE
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be a whole number between {low} and {high}, got {value!r}")
    if not low <= value <= high:
        raise InvalidArgumentError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _check_failures(items: Any) -> list[tuple[str, str]]:
    if items is None:
        return []
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise InvalidArgumentError("failing_tests must be a list of test ids, or of {\"test\": id, \"reason\": "
                                   "text} objects")
    if len(items) > MAX_AGENT_FAILURES:
        raise InvalidArgumentError(f"failing_tests lists {len(items)} tests; at most {MAX_AGENT_FAILURES} are "
                                   "accepted (give the first ones and the counts)")
    result = []
    for item in items:
        test: Any
        reason: Any = ""
        if isinstance(item, str):
            test = item
        elif isinstance(item, Mapping):
            test = item.get("test", item.get("id", item.get("name")))
            reason = item.get("reason", item.get("message", "")) or ""
        elif isinstance(item, (list, tuple)) and len(item) in (1, 2):
            test = item[0]
            reason = item[1] if len(item) == 2 else ""
        else:
            raise InvalidArgumentError(f"cannot read failing test {item!r}: give a test id or "
                                       "{\"test\": id, \"reason\": text}")
        if not isinstance(test, str) or not test.strip() or "\0" in test:
            raise InvalidArgumentError(f"a failing test needs a non-empty test id, got {test!r}")
        if len(test) > 4 * MAX_TEST_ID_CHARS:
            raise InvalidArgumentError(f"test id {test[:60]!r}... is {len(test)} characters; at most "
                                       f"{4 * MAX_TEST_ID_CHARS} are accepted")
        if not isinstance(reason, str):
            raise InvalidArgumentError(f"the reason of {test!r} must be text")
        result.append((clip(one_line(test, 10 * MAX_TEST_ID_CHARS), MAX_TEST_ID_CHARS), one_line(reason)))
    return dedupe(result)


def validate_agent_result(*, command: Any, passed: Any = None, failed: Any = None, errors: Any = None,
                          skipped: Any = None, xfailed: Any = None, xpassed: Any = None, failing_tests: Any = None,
                          duration_seconds: Any = None,
                          outcome: Any = None, exit_code: Any = None, output: Any = None) -> TestRun:
    """Check an agent's report and build the run (``commit`` still None).

    Raises:
        InvalidArgumentError: a value is missing, of the wrong type, negative, absurdly large, or the
            outcome contradicts the counts.
    """
    if not isinstance(command, str) or not command.strip():
        raise InvalidArgumentError("command must be the test command that was run, e.g. 'pytest -q tests'")
    if len(command) > 10 * MAX_COMMAND_CHARS or "\0" in command:
        raise InvalidArgumentError(f"command must be one line of at most {10 * MAX_COMMAND_CHARS} characters")
    counts = {name: _check_count(name, value) for name, value in
              (("passed", passed), ("failed", failed), ("errors", errors), ("skipped", skipped),
               ("xfailed", xfailed), ("xpassed", xpassed))}
    failures = _check_failures(failing_tests)
    if duration_seconds is not None:
        low, high = DURATION_RANGE
        if isinstance(duration_seconds, bool) or not isinstance(duration_seconds, (int, float)) or \
                not math.isfinite(duration_seconds) or not low <= duration_seconds <= high:
            raise InvalidArgumentError(f"duration_seconds must be a number of seconds between {low} and "
                                       f"{high}, got {duration_seconds!r}")
        duration_seconds = round(float(duration_seconds), 3)
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)
                                  or not EXIT_CODE_RANGE[0] <= exit_code <= EXIT_CODE_RANGE[1]):
        raise InvalidArgumentError(f"exit_code must be a whole number between {EXIT_CODE_RANGE[0]} and "
                                   f"{EXIT_CODE_RANGE[1]}, got {exit_code!r}")
    if output is not None:
        if not isinstance(output, str):
            raise InvalidArgumentError("output must be text")
        if len(output) > MAX_AGENT_OUTPUT_CHARS:
            raise InvalidArgumentError(f"output is {len(output)} characters; give at most the last "
                                       f"{MAX_AGENT_OUTPUT_CHARS} (only the last {OUTPUT_TAIL_BYTES} bytes are kept)")
    failing = bool((counts["failed"] or 0) + (counts["errors"] or 0) or failures)
    if outcome is None:
        if failing or (exit_code not in (None, 0)):
            outcome = "failed"
        elif any(v is not None for v in counts.values()) or exit_code == 0:
            outcome = "passed"
        else:
            raise InvalidArgumentError("give the outcome ('passed', 'failed' or 'error') or the counts "
                                       "(passed, failed, ...) of the run")
    if outcome not in OUTCOMES:
        raise InvalidArgumentError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    if outcome == "passed" and failing:
        raise InvalidArgumentError("outcome 'passed' contradicts the failed/errors counts or failing_tests; "
                                   "use 'failed'")
    run = TestRun(command=one_line(command, MAX_COMMAND_CHARS), outcome=outcome, exit_code=exit_code,
                  duration_seconds=duration_seconds, runner="agent", started_at=utc_now_iso(),
                  passed=counts["passed"], failed=counts["failed"], errors=counts["errors"], skipped=counts["skipped"],
                  xfailed=counts["xfailed"], xpassed=counts["xpassed"])
    run.failures = failures[:MAX_FAILURES]
    run.more_failures = max(len(failures) - MAX_FAILURES, 0)
    if output:
        data = output.encode("utf-8", "replace")
        run.output_bytes = len(data)
        collector = OutputCollector(OUTPUT_TAIL_BYTES)
        collector.feed(data[-2 * OUTPUT_TAIL_BYTES:])
        collector.total = len(data)
        run.output_tail = collector.tail(OUTPUT_TAIL_BYTES)
    if outcome == "error":
        run.message = "reported as an error by the agent"
    return run


def record_agent_result(root: Path, *, command: str, passed: int | None = None, failed: int | None = None,
                        errors: int | None = None, skipped: int | None = None, xfailed: int | None = None,
                        xpassed: int | None = None,
                        failing_tests: Sequence[Any] | None = None, duration_seconds: float | None = None,
                        outcome: str | None = None, exit_code: int | None = None, output: str | None = None,
                        full_suite: bool = False, settings=None, recorder=None) -> TestRun:
    """Record a test run an agent performed itself (the MCP tool ``record_test_result``).

    The project is snapshotted first (the run is taken to be of the current state). The run's scope is read
    from ``command`` as if run at the project root (:func:`~code_trajectory.testruns.selection.command_line_scope`).

    Args:
        root: the project root.
        command: the command that was run.
        passed, failed, errors, skipped, xfailed, xpassed: counts (omit the unknown ones).
        failing_tests: test ids, or ``{"test": id, "reason": text}`` objects, or ``[id, reason]`` pairs.
        duration_seconds: how long the run took.
        outcome: ``passed``/``failed``/``error``; derived from the counts when omitted.
        exit_code: the runner's exit status, if known.
        output: the run's output (only the tail is kept).
        full_suite: the agent declares that ``command`` runs the whole suite (see :func:`run_and_record`).
        settings: the project's settings (default: loaded).
        recorder: an open recorder of ``root`` (the server's); default: one is opened and closed.

    Returns:
        The recorded run (``commit`` and ``branch`` set).

    Raises:
        InvalidArgumentError: see :func:`validate_agent_result`.
        TrajectoryError: the snapshot or the note could not be written.
    """
    run = validate_agent_result(command=command, passed=passed, failed=failed, errors=errors, skipped=skipped,
                                xfailed=xfailed, xpassed=xpassed, failing_tests=failing_tests,
                                duration_seconds=duration_seconds, outcome=outcome,
                                exit_code=exit_code, output=output)
    run.scope = declared_scope(command_line_scope(run.command, Path(root)), full_suite)
    own = None
    try:
        if recorder is None:
            own = recorder = _open_recorder(Path(root), settings)
        run.commit, run.branch = snapshot_for_run(recorder, clip("test result reported: " + run.command, 200))
        record_run(recorder.repo, run)
    finally:
        if own is not None:
            own.close()
    return run
