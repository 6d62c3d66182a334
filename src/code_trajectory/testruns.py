"""Test runs recorded against the snapshot they ran on.

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
  (:func:`code_trajectory.testparse.parse_output`), record, and hand back the exit
  status to exit with;
* :mod:`code_trajectory.pytest_plugin` — exact counts from pytest itself;
* :func:`record_agent_result` — an agent that ran the tests itself reports them.

Ways out: :func:`runs_for` (the runs of many commits, for the narratives),
:func:`history` (newest first) and :func:`last_green`.

Faults are recorded, not raised: a command that does not exist (exit status
127, outcome ``error``), a runner killed by a signal (outcome ``error``, the
signal named), output that is not UTF-8 (decoded with replacement), a log of
any size (only a bounded tail and the lines the parsers need are kept).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from code_trajectory.errors import (InvalidArgumentError, LockContentionError, StorageError,
                                    TrajectoryError)
from code_trajectory.shadow_repo import SHADOW_DIR_NAME, ShadowRepo, shadow_ref
from code_trajectory.testparse import (MAX_FAILURES, MAX_TEST_ID_CHARS, Parsed, _clip,  # noqa: F401
                                      _dedupe, _one_line, clean_output, guess_runner, parse_output,
                                      short_test_name)

log = logging.getLogger(__name__)

#: The notes ref holding the runs, in the shadow repository.
NOTES_REF = "refs/notes/trajectory-tests"
#: Lock file (in ``.trajectory/``) held while a note is read, extended and written.
LOCK_NAME = "tests.lock"
LOCK_TIMEOUT = 10.0

OUTCOMES = ("passed", "failed", "error")
RUNNERS = ("pytest", "unittest", "jest", "vitest", "go", "cargo", "node", "generic", "pytest-plugin", "agent")
COUNT_NAMES = ("passed", "failed", "errors", "skipped")

MAX_COMMAND_CHARS = 500
#: Bytes of output stored with a run.
OUTPUT_TAIL_BYTES = 4096
#: Bytes of the end of the output kept in memory for the parsers.
PARSE_TAIL_BYTES = 256 * 1024
#: Bytes of "interesting" lines (failure and summary lines) kept from before the parse tail.
EARLY_LINES_BYTES = 1024 * 1024
#: Runs kept per commit (the oldest are dropped).
MAX_RUNS_PER_COMMIT = 50
#: Length of :meth:`TestRun.summary_line`.
SUMMARY_CHARS = 200
#: Limits for :func:`record_agent_result`.
MAX_COUNT = 10_000_000
MAX_AGENT_FAILURES = 10_000
MAX_AGENT_OUTPUT_CHARS = 10 * 1024 * 1024
MAX_DURATION_SECONDS = 7 * 24 * 3600.0

#: Exit statuses above 128 that a shell reports for a child killed by these signals.
_KILL_SIGNALS = {s.value for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGSEGV,
                                   signal.SIGABRT, signal.SIGBUS, signal.SIGHUP, signal.SIGQUIT)}
_PYTEST_EXIT = {2: "pytest was interrupted", 3: "pytest hit an internal error", 4: "pytest usage error",
                5: "no tests were collected"}

_ANSI_B = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")


# -- the record ------------------------------------------------------------------------------------


@dataclass
class TestRun:
    """One test run on one snapshot.

    Attributes:
        command: the command as a shell-quoted line (``pytest -q tests``).
        outcome: ``passed``, ``failed``, or ``error`` (the command did not run to a verdict:
            not found, killed, timed out, interrupted, a runner's usage or internal error).
        exit_code: the exit status; negative for a signal (``-9``); 127 for a command not found;
            None when unknown.
        passed, failed, errors, skipped: counts, None when unknown.
        duration_seconds: wall time, seconds (None when unknown).
        failures: ``(test id, one-line reason)`` of failing tests, at most :data:`MAX_FAILURES`.
        more_failures: failing tests beyond those listed in ``failures``.
        runner: ``pytest``, ``unittest``, ``jest``, ``vitest``, ``go``, ``cargo``, ``node``,
            ``generic``, ``pytest-plugin`` or ``agent``.
        started_at: start time, ISO 8601 in UTC.
        output_tail: the last :data:`OUTPUT_TAIL_BYTES` of the output (ANSI colours removed,
            decoded as UTF-8 with replacement).
        output_bytes: total size of the output, bytes.
        commit: the shadow commit the run ran on (None only before it is recorded).
        branch: the project branch of that commit.
        message: why the outcome is ``error`` (``command not found: foo``, ``killed by signal
            SIGKILL (9)``), or another remark; None otherwise.
        record_error: not stored: why recording failed in :func:`run_and_record` (None when recorded).
    """

    __test__ = False  # not a pytest test class

    command: str
    outcome: str
    exit_code: int | None = None
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    duration_seconds: float | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)
    more_failures: int = 0
    runner: str = "generic"
    started_at: str = ""
    output_tail: str = ""
    output_bytes: int = 0
    commit: str | None = None
    branch: str | None = None
    message: str | None = None
    record_error: str | None = field(default=None, compare=False, repr=False)

    # -- derived -------------------------------------------------------------------------------

    @property
    def is_green(self) -> bool:
        """True when the run passed."""
        return self.outcome == "passed"

    @property
    def started(self) -> datetime | None:
        """``started_at`` as an aware datetime (None when missing or malformed)."""
        return parse_time(self.started_at)

    @property
    def failing_count(self) -> int:
        """Number of failing tests: listed plus unlisted, or the counts when larger."""
        named = len(self.failures) + self.more_failures
        counted = (self.failed or 0) + (self.errors or 0)
        return max(named, counted)

    def counts_text(self) -> str:
        """``41 passed, 2 failed, 1 error, 3 skipped`` (zero counts other than passed left out); '' if unknown."""
        parts = []
        if self.passed is not None:
            parts.append(f"{self.passed} passed")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.errors:
            parts.append(f"{self.errors} error" + ("s" if self.errors != 1 else ""))
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        if not parts and any(getattr(self, n) is not None for n in COUNT_NAMES):
            parts.append("0 passed")
        return ", ".join(parts)

    def summary_line(self, limit: int = SUMMARY_CHARS) -> str:
        """One line for the narratives, at most ``limit`` characters.

        Examples: ``tests: 41 passed, 2 failed: test_login, test_logout``,
        ``tests: failed (exit 1)``, ``tests: error: command not found: nosetests``,
        ``tests: 3 passed, 60 failed: test_a, test_b, ... and 58 more``.
        """
        counts = self.counts_text()
        if self.outcome == "error":
            head = "tests: error: " + (self.message or (f"exit {self.exit_code}" if self.exit_code is not None
                                                         else "no verdict"))
            if counts:
                head += f" ({counts})"
        elif counts:
            head = f"tests: {counts}"
            if self.outcome == "failed" and not (self.failed or self.errors) and not self.failures:
                head += f"; failed (exit {self.exit_code})" if self.exit_code is not None else "; failed"
        else:
            head = f"tests: {self.outcome}" + (f" (exit {self.exit_code})" if self.exit_code is not None else "")
        head = _clip(head, limit)
        if not self.failures:
            return head
        names = [short_test_name(t) for t, _ in self.failures]
        total = max(len(self.failures) + self.more_failures, len(names))
        shown: list[str] = []
        for i, name in enumerate(names):
            rest = total - i - 1
            tail = f", ... and {rest} more" if rest else ""
            candidate = head + ": " + ", ".join(shown + [name])
            if len(candidate) + len(tail) > limit:
                break
            shown.append(name)
        if not shown:
            return _clip(head + f": {total} failing", limit)
        line = head + ": " + ", ".join(shown)
        rest = total - len(shown)
        if rest:
            line += f", ... and {rest} more"
        return line

    # -- JSON ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The run as a JSON-ready dict (without ``record_error``)."""
        data: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "record_error":
                continue
            value = getattr(self, f.name)
            if f.name == "failures":
                value = [[t, r] for t, r in value]
            data[f.name] = value
        return data

    def to_json(self) -> str:
        """The run as a JSON object (one line)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestRun:
        """Build a run from :meth:`to_dict` output; unknown keys are ignored, bad values dropped.

        Raises:
            ValueError: ``data`` is not a mapping with a string ``command`` and a known ``outcome``.
        """
        if not isinstance(data, Mapping):
            raise ValueError("a test run must be a JSON object")
        command, outcome = data.get("command"), data.get("outcome")
        if not isinstance(command, str) or outcome not in OUTCOMES:
            raise ValueError("a test run needs a command and an outcome")
        run = cls(command=command, outcome=outcome)
        for name in ("exit_code", *COUNT_NAMES):
            value = data.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(run, name, value)
        duration = data.get("duration_seconds")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and math.isfinite(duration):
            run.duration_seconds = float(duration)
        failures = data.get("failures")
        if isinstance(failures, list):
            for item in failures:
                if isinstance(item, (list, tuple)) and len(item) == 2 and all(isinstance(x, str) for x in item):
                    run.failures.append((item[0], item[1]))
                elif isinstance(item, str):
                    run.failures.append((item, ""))
        more = data.get("more_failures")
        if isinstance(more, int) and not isinstance(more, bool) and more > 0:
            run.more_failures = more
        for name in ("runner", "started_at", "output_tail"):
            value = data.get(name)
            if isinstance(value, str):
                setattr(run, name, value)
        output_bytes = data.get("output_bytes")
        if isinstance(output_bytes, int) and not isinstance(output_bytes, bool):
            run.output_bytes = output_bytes
        for name in ("commit", "branch", "message"):
            value = data.get(name)
            if isinstance(value, str):
                setattr(run, name, value)
        return run

    @classmethod
    def from_json(cls, data: str | bytes | Mapping[str, Any]) -> TestRun:
        """Inverse of :meth:`to_json` (also accepts the dict of :meth:`to_dict`).

        Raises:
            ValueError: not JSON, or not a test run.
        """
        if isinstance(data, (str, bytes)):
            data = json.loads(data)
        return cls.from_dict(data)  # type: ignore[arg-type]


def parse_time(text: str | None) -> datetime | None:
    """Parse an ISO 8601 time; naive times are taken as UTC; None when malformed."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def utc_now_iso() -> str:
    """The current time, ISO 8601 in UTC with millisecond precision."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


# -- running a command ---------------------------------------------------------------------------------

_EARLY_LINE = re.compile(
    rb"^(?:"
    rb"(?:FAILED|ERROR) [^\n]*"                                   # pytest short summary
    rb"|[^\n]*short test summary info[^\n]*"
    rb"|(?:FAIL|ERROR|UNEXPECTED SUCCESS): [^\n]*"                # unittest headings
    rb"|[ \t]*--- FAIL: [^\n]*\n(?:[ \t]+[^\n]*)?"                # go failures (+ the log line after)
    rb"|--- (?:PASS|SKIP): [^\n]*"                                # go top-level results
    rb"|(?:ok|FAIL)[ \t]+\S+[ \t]+[^\n]*"                         # go packages
    rb"|test result: [^\n]*"                                      # cargo
    rb"|test \S+ \.\.\. FAILED[^\n]*|\S+ --- FAILED"
    rb"|---- \S+ stdout ----\n(?:[^\n]*\n){0,3}"
    rb"|[ \t]*\xe2\x97\x8f [^\n]*\n(?:[^\n]*\n){0,2}"             # jest bullet + reason
    rb"|[ \t]*FAIL [^\n]*"                                        # jest/vitest
    rb"|[ \t]*not ok \d+ [^\n]*"                                  # TAP
    rb")$",
    re.MULTILINE,
)


class OutputCollector:
    """Keeps a bounded view of an output stream of any size.

    Holds the last ``keep_bytes`` (plus up to one chunk) and, from what scrolled out of
    it, the lines the parsers need (failure and summary lines), up to
    :data:`EARLY_LINES_BYTES`. Memory stays bounded whatever the stream's size.
    """

    def __init__(self, keep_bytes: int = PARSE_TAIL_BYTES) -> None:
        self.keep = max(keep_bytes, 4096)
        self.buf = bytearray()
        self.total = 0
        self.early: list[bytes] = []
        self.early_bytes = 0
        self.early_dropped = 0

    def feed(self, chunk: bytes) -> None:
        """Add output."""
        self.total += len(chunk)
        self.buf += chunk
        if len(self.buf) > 2 * self.keep:
            cut = len(self.buf) - self.keep
            nl = self.buf.rfind(b"\n", 0, cut)
            end = nl + 1 if nl >= 0 else cut
            evicted = bytes(self.buf[:end])
            del self.buf[:end]
            self._scan(evicted)

    def _scan(self, block: bytes) -> None:
        if b"\x1b" in block:
            block = _ANSI_B.sub(b"", block)
        if b"\r" in block:
            block = block.replace(b"\r\n", b"\n")
        for m in _EARLY_LINE.finditer(block):
            line = m.group(0)[:2048]
            if self.early_bytes + len(line) > EARLY_LINES_BYTES:
                self.early_dropped += 1
                continue
            self.early.append(line)
            self.early_bytes += len(line) + 1

    def parse_text(self) -> str:
        """The early lines followed by the kept tail, decoded (UTF-8 with replacement)."""
        head = b"\n".join(self.early) + b"\n" if self.early else b""
        return _decode(head) + _decode(_skip_partial_char(bytes(self.buf)))

    def tail(self, max_bytes: int = OUTPUT_TAIL_BYTES) -> str:
        """The last ``max_bytes`` of the output, cleaned and decoded, cut at a line start when one is near."""
        data = bytes(self.buf[-max_bytes:]) if max_bytes > 0 else b""
        truncated = len(data) < self.total
        if truncated:
            nl = data.find(b"\n", 0, 512)
            if nl >= 0:
                data = data[nl + 1:]
            data = _skip_partial_char(data)
        text = clean_output(_decode(data))
        return text


def _skip_partial_char(data: bytes) -> bytes:
    """Drop UTF-8 continuation bytes at the start of a cut (at most 3)."""
    i = 0
    while i < 3 and i < len(data) and 0x80 <= data[i] <= 0xBF:
        i += 1
    return data[i:]


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _echo_target():
    stream = getattr(sys.stdout, "buffer", None)
    return stream


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_command(argv: Sequence[str], cwd: Path, *, echo: bool = True, max_output_bytes: int = OUTPUT_TAIL_BYTES,
                timeout: float | None = None, env: Mapping[str, str] | None = None) -> TestRun:
    """Run a test command (no shell) and return its :class:`TestRun` (``commit`` still None).

    The output (stdout and stderr merged) is passed through to our stdout as it comes
    when ``echo``; only a bounded tail and the lines the parsers need are kept in memory.

    Args:
        argv: the command and its arguments.
        cwd: the working directory.
        echo: stream the output through to our stdout.
        max_output_bytes: bytes of output stored in ``output_tail``.
        timeout: kill the command after this many seconds (outcome ``error``); None: no limit.
        env: the environment (default: ours).

    Faults become outcome ``error``: a command that does not exist (exit status 127), one
    that cannot be executed (126), a runner killed by a signal (negative exit status, the
    signal named in ``message``), a timeout, an interrupt (Ctrl-C; exit status 130 unless
    the command reported its own).

    Raises:
        InvalidArgumentError: ``argv`` is empty or not a list of strings.
    """
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise InvalidArgumentError("the test command must be a non-empty list of arguments, e.g. ['pytest', '-q']")
    command = _clip(shlex.join(argv), MAX_COMMAND_CHARS)
    started_at = utc_now_iso()
    t0 = time.monotonic()
    collector = OutputCollector(max(PARSE_TAIL_BYTES, max_output_bytes))
    guessed = guess_runner(argv)

    def fault(exit_code: int, message: str) -> TestRun:
        return TestRun(command=command, outcome="error", exit_code=exit_code, runner=guessed,
                       duration_seconds=round(time.monotonic() - t0, 3), started_at=started_at, message=message)

    if not Path(cwd).is_dir():
        return fault(127, f"working directory {cwd} does not exist")
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=dict(env) if env is not None else None, bufsize=0)
    except FileNotFoundError:
        return fault(127, f"command not found: {argv[0]}")
    except PermissionError as exc:
        return fault(126, f"cannot execute {argv[0]}: {exc.strerror or exc}")
    except OSError as exc:
        return fault(126, f"cannot start {argv[0]}: {exc.strerror or exc}")

    timed_out = threading.Event()
    timer = None
    if timeout is not None:
        def on_timeout() -> None:
            timed_out.set()
            try:
                proc.kill()
            except OSError:
                pass

        timer = threading.Timer(timeout, on_timeout)
        timer.daemon = True
        timer.start()
    sink = _echo_target() if echo else None
    text_echo = echo and sink is None
    interrupted = False
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    try:
        while True:
            chunk = os.read(fd, 256 * 1024)
            if not chunk:
                break
            collector.feed(chunk)
            if sink is not None:
                try:
                    sink.write(chunk)
                    sink.flush()
                except (OSError, ValueError):
                    sink = None  # our stdout is gone (closed pipe): keep running, stop echoing
            elif text_echo:
                try:
                    sys.stdout.write(_decode(chunk))
                    sys.stdout.flush()
                except (OSError, ValueError):
                    text_echo = False
        returncode = proc.wait()
    except KeyboardInterrupt:
        interrupted = True
        try:  # the child got the SIGINT too (same process group): give it a moment to stop
            returncode = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            returncode = proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        try:
            proc.stdout.close()
        except OSError:
            pass
    duration = round(time.monotonic() - t0, 3)

    runner, counts, failures = parse_output(collector.parse_text())
    if runner == "generic":
        runner = guessed
    run = TestRun(command=command, outcome="failed", exit_code=returncode, runner=runner,
                  duration_seconds=duration, started_at=started_at, output_tail=collector.tail(max_output_bytes),
                  output_bytes=collector.total)
    if counts:
        for name in COUNT_NAMES:
            setattr(run, name, counts[name])
    run.failures = failures[:MAX_FAILURES]
    run.more_failures = max(len(failures) - MAX_FAILURES, 0)
    run.outcome, run.message = _verdict(run, timed_out=timed_out.is_set(), interrupted=interrupted,
                                        timeout=timeout)
    if collector.early_dropped:
        extra = f"the output was {collector.total} bytes; some failure lines were not kept"
        run.message = f"{run.message}; {extra}" if run.message else extra
    return run


def _verdict(run: TestRun, *, timed_out: bool, interrupted: bool, timeout: float | None) -> tuple[str, str | None]:
    code = run.exit_code
    if timed_out:
        return "error", f"timed out after {timeout:g} s and was killed"
    if interrupted:
        return "error", "interrupted (Ctrl-C)"
    if code is None:
        return "error", "no exit status"
    if code < 0:
        return "error", f"killed by signal {_signal_name(-code)} ({-code})"
    if run.runner == "pytest" and code in _PYTEST_EXIT:
        return pytest_verdict(code, run.errors)
    if code > 128 and code - 128 in _KILL_SIGNALS and not run.failed:
        return "error", f"exit {code}: probably killed by signal {_signal_name(code - 128)}"
    if code == 0:
        if run.failed or run.errors:
            return "failed", "exit status 0 but the output reports failures"
        return "passed", None
    return "failed", None


def pytest_verdict(code: int, errors: int | None) -> tuple[str, str | None]:
    """Outcome and message for a pytest exit status (0 passed, 1 failed, 2-5 see ``_PYTEST_EXIT``).

    A session stopped by errors during collection (status 2 with errors) is ``failed``:
    the code under test is broken, which is what a red run means.
    """
    if code == 0:
        return "passed", None
    if code == 2 and errors:
        return "failed", "errors during collection stopped the session"
    if code in _PYTEST_EXIT:
        return "error", _PYTEST_EXIT[code]
    return "failed", None


def exit_status(run: TestRun) -> int:
    """The status a wrapper should exit with: the command's own; 128 + N for a signal N; 127 for a
    command not found; 130 for an interrupt the command did not report itself."""
    code = run.exit_code
    if code is None:
        return 0 if run.is_green else 1
    if code < 0:
        return min(128 + (-code), 255)
    if code == 0 and run.message and run.message.startswith("interrupted"):
        return 130
    return code if code <= 255 else 1


# -- storage ---------------------------------------------------------------------------------------------


def _lock(repo: ShadowRepo):
    import filelock

    return filelock.FileLock(str(repo.git_dir / LOCK_NAME), timeout=LOCK_TIMEOUT)


def _parse_note(data: bytes) -> list[TestRun]:
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        log.warning("ignoring a test-run note that is not JSON")
        return []
    items = value if isinstance(value, list) else [value]
    runs = []
    for item in items:
        try:
            runs.append(TestRun.from_dict(item))
        except ValueError:
            continue
    return runs


def _notes_listing(repo: ShadowRepo) -> dict[str, str]:
    """``{annotated commit: note blob}`` for every note under :data:`NOTES_REF`."""
    proc = repo.git.run(["notes", f"--ref={NOTES_REF}", "list"], check=False)
    if proc.returncode != 0:  # no notes yet
        return {}
    out = proc.stdout
    listing = {}
    for line in out.decode("ascii", "replace").splitlines():
        blob, _, commit = line.strip().partition(" ")
        if blob and commit:
            listing[commit] = blob
    return listing


def _read_note(repo: ShadowRepo, blob: str) -> list[TestRun]:
    obj = repo.read_object(blob)
    if obj is None or obj[0] != "blob":
        return []
    return _parse_note(obj[1])


def record_run(repo: ShadowRepo, run: TestRun) -> None:
    """Append ``run`` to the note of ``run.commit`` (keeping the runs already there).

    At most :data:`MAX_RUNS_PER_COMMIT` runs are kept per commit (the oldest go).

    Raises:
        InvalidArgumentError: ``run.commit`` is missing or not a commit of the shadow repository.
        LockContentionError: ``.trajectory/tests.lock`` stayed held for :data:`LOCK_TIMEOUT` seconds.
        StorageError, GitError: the note cannot be written.
    """
    import filelock

    if not run.commit:
        raise InvalidArgumentError("a test run can only be recorded on a shadow commit (run.commit is empty)")
    commit = repo.resolve(run.commit)
    if commit is None:
        raise InvalidArgumentError(f"{run.commit} is not a commit of the shadow repository")
    run.commit = commit
    try:
        with _lock(repo):
            proc = repo.git.run(["notes", f"--ref={NOTES_REF}", "list", commit], check=False)
            existing = proc.stdout.decode("ascii", "replace").strip() if proc.returncode == 0 else ""
            runs = _read_note(repo, existing) if existing else []
            runs.append(run)
            runs = runs[-MAX_RUNS_PER_COMMIT:]
            data = json.dumps([r.to_dict() for r in runs], ensure_ascii=True, separators=(",", ":")) + "\n"
            blob = repo.hash_bytes(data.encode("ascii"))
            repo.git.run(["notes", f"--ref={NOTES_REF}", "add", "-f", "-C", blob, commit])
    except filelock.Timeout as exc:
        raise LockContentionError(f"another process held {repo.git_dir / LOCK_NAME} for {LOCK_TIMEOUT:.0f} s; "
                                  "the test run was not recorded") from exc
    except OSError as exc:
        raise StorageError(f"cannot record the test run: {exc}") from exc
    log.info("test run recorded commit=%s outcome=%s runner=%s", commit[:12], run.outcome, run.runner)


def copy_runs(repo: ShadowRepo, source: str, target: str) -> int:
    """Record the runs of ``source`` on ``target`` too (for a commit with the same tree, e.g. a
    consolidation of snapshots ending at ``source``); return how many were copied.

    The copies name ``target`` as their commit; runs already on ``target`` are kept.
    """
    runs = runs_for(repo, [source]).get(source, [])
    for run in runs:
        run.commit = target
        record_run(repo, run)
    return len(runs)


def runs_for(repo: ShadowRepo, commits: Iterable[str]) -> dict[str, list[TestRun]]:
    """The runs recorded on each of ``commits`` (full ids), oldest first; commits without runs are left out.

    One ``git notes list`` for all commits, then the notes through the shadow repository's
    ``cat-file --batch`` process.
    """
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    listing = _notes_listing(repo)
    if not listing:
        return {}
    result: dict[str, list[TestRun]] = {}
    for commit in wanted:
        blob = listing.get(commit)
        if blob is None and 4 <= len(commit) < 40:
            matches = [c for c in listing if c.startswith(commit)]
            if len(matches) == 1:
                blob = listing[matches[0]]
        if blob is None:
            continue
        runs = _read_note(repo, blob)
        if runs:
            result[commit] = runs
    return result


def marks_for(repo: ShadowRepo, commits: Iterable[str]) -> dict[str, str]:
    """``{commit: summary line}`` of the newest run on each of ``commits`` that has one.

    When a commit has several runs the line is the newest's, followed by ``(N runs)``
    when their verdicts differ (a flaky or environment-dependent suite).
    """
    marks = {}
    for commit, runs in runs_for(repo, commits).items():
        epoch = datetime.min.replace(tzinfo=timezone.utc)
        newest = max(runs, key=lambda r: r.started or epoch)
        line = newest.summary_line()
        if len({r.outcome for r in runs}) > 1:
            line += f" ({len(runs)} runs, not all {newest.outcome})"
        marks[commit] = line
    return marks


def _all_runs(repo: ShadowRepo) -> list[TestRun]:
    runs: list[TestRun] = []
    for commit, blob in _notes_listing(repo).items():
        for run in _read_note(repo, blob):
            run.commit = run.commit or commit
            runs.append(run)
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    runs.sort(key=lambda r: r.started or epoch, reverse=True)
    return runs


def history(repo: ShadowRepo, limit: int = 10, *, branch: str | None = None) -> list[TestRun]:
    """The last ``limit`` recorded runs, newest first (only those on ``branch`` when given).

    Raises:
        InvalidArgumentError: ``limit`` is not a positive integer.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgumentError(f"limit must be a positive integer, got {limit!r}")
    runs = _all_runs(repo)
    if branch is not None:
        runs = [r for r in runs if r.branch == branch]
    return runs[:limit]


def last_run(repo: ShadowRepo, *, branch: str | None = None) -> TestRun | None:
    """The newest recorded run (on ``branch`` when given), or None."""
    runs = history(repo, 1, branch=branch)
    return runs[0] if runs else None


def last_green(repo: ShadowRepo, *, branch: str | None = None) -> TestRun | None:
    """The newest run that passed (on ``branch`` when given), or None when none did."""
    for run in _all_runs(repo):
        if run.is_green and (branch is None or run.branch == branch):
            return run
    return None


# -- snapshot, run, record -------------------------------------------------------------------------------


def find_project_root(start: Path) -> Path:
    """The project a test run in ``start`` belongs to.

    The nearest directory at or above ``start`` holding a shadow repository
    (``.trajectory/HEAD``); else the nearest holding ``.git``; else ``start`` itself.
    """
    start = Path(start).resolve()
    for candidate in (start, *start.parents):
        if (candidate / SHADOW_DIR_NAME / "HEAD").is_file():
            return candidate
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def snapshot_for_run(recorder, note: str | None = None) -> tuple[str, str]:
    """Snapshot the project now (a checkpoint) and return ``(commit, branch)`` the run will be recorded on.

    When nothing changed, the commit is the current tip of the branch's shadow ref (or the
    latest snapshot of any branch when this branch has none yet).

    Args:
        recorder: the project's :class:`~code_trajectory.recorder.Recorder`.
        note: the checkpoint's note.

    Raises:
        StorageError: there is no snapshot at all to record on.
        TrajectoryError: the snapshot failed.
    """
    snapshot = recorder.checkpoint(note)
    if snapshot is not None:
        return snapshot.commit, snapshot.branch
    branch = recorder.project.current_branch()
    commit = recorder.repo.resolve(shadow_ref(branch)) or recorder.latest_commit()
    if commit is None:
        raise StorageError("the project has no snapshot to record the test run on")
    return commit, branch


def _open_recorder(root: Path, settings):
    from code_trajectory.config import TrajectorySettings
    from code_trajectory.gitcmd import check_git_version
    from code_trajectory.recorder import Recorder

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
                   max_output_bytes: int = OUTPUT_TAIL_BYTES) -> tuple[TestRun, int]:
    """Snapshot the project, run ``argv``, record the run on the snapshot.

    The command runs even when the snapshot fails (the failure is in ``run.record_error``
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
        commit, branch = snapshot_for_run(recorder, _clip("before test run: " + shlex.join(argv), 200))
    except TrajectoryError as exc:
        problem = f"no snapshot was taken, so the run is not recorded: {exc}"
        log.warning("%s", problem)
    try:
        run = run_command(argv, cwd if cwd is not None else root, echo=echo, timeout=timeout,
                          max_output_bytes=max_output_bytes)
        run.commit, run.branch = commit, branch
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
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be a whole number between 0 and {MAX_COUNT}, got {value!r}")
    if not 0 <= value <= MAX_COUNT:
        raise InvalidArgumentError(f"{name} must be between 0 and {MAX_COUNT}, got {value}")
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
        result.append((_clip(_one_line(test, 10 * MAX_TEST_ID_CHARS), MAX_TEST_ID_CHARS), _one_line(reason)))
    return _dedupe(result)


def validate_agent_result(*, command: Any, passed: Any = None, failed: Any = None, errors: Any = None,
                          skipped: Any = None, failing_tests: Any = None, duration_seconds: Any = None,
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
              (("passed", passed), ("failed", failed), ("errors", errors), ("skipped", skipped))}
    failures = _check_failures(failing_tests)
    if duration_seconds is not None:
        if isinstance(duration_seconds, bool) or not isinstance(duration_seconds, (int, float)) or \
                not math.isfinite(duration_seconds) or not 0 <= duration_seconds <= MAX_DURATION_SECONDS:
            raise InvalidArgumentError(f"duration_seconds must be a number of seconds between 0 and "
                                       f"{MAX_DURATION_SECONDS:.0f}, got {duration_seconds!r}")
        duration_seconds = round(float(duration_seconds), 3)
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)
                                  or not -255 <= exit_code <= 255):
        raise InvalidArgumentError(f"exit_code must be a whole number between -255 and 255, got {exit_code!r}")
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
    run = TestRun(command=_one_line(command, MAX_COMMAND_CHARS), outcome=outcome, exit_code=exit_code,
                  duration_seconds=duration_seconds, runner="agent", started_at=utc_now_iso(), **counts)
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
                        errors: int | None = None, skipped: int | None = None,
                        failing_tests: Sequence[Any] | None = None, duration_seconds: float | None = None,
                        outcome: str | None = None, exit_code: int | None = None, output: str | None = None,
                        settings=None, recorder=None) -> TestRun:
    """Record a test run an agent performed itself (the MCP tool ``record_test_result``).

    The project is snapshotted first (the run is taken to be of the current state).

    Args:
        root: the project root.
        command: the command that was run.
        passed, failed, errors, skipped: counts (omit the unknown ones).
        failing_tests: test ids, or ``{"test": id, "reason": text}`` objects, or ``[id, reason]`` pairs.
        duration_seconds: how long the run took.
        outcome: ``passed``/``failed``/``error``; derived from the counts when omitted.
        exit_code: the runner's exit status, if known.
        output: the run's output (only the tail is kept).
        settings: the project's settings (default: loaded).
        recorder: an open recorder of ``root`` (the server's); default: one is opened and closed.

    Returns:
        The recorded run (``commit`` and ``branch`` set).

    Raises:
        InvalidArgumentError: see :func:`validate_agent_result`.
        TrajectoryError: the snapshot or the note could not be written.
    """
    run = validate_agent_result(command=command, passed=passed, failed=failed, errors=errors, skipped=skipped,
                                failing_tests=failing_tests, duration_seconds=duration_seconds, outcome=outcome,
                                exit_code=exit_code, output=output)
    own = None
    try:
        if recorder is None:
            own = recorder = _open_recorder(Path(root), settings)
        run.commit, run.branch = snapshot_for_run(recorder, _clip("test result reported: " + run.command, 200))
        record_run(recorder.repo, run)
    finally:
        if own is not None:
            own.close()
    return run


__all__ = ["TestRun", "Parsed", "OutputCollector", "NOTES_REF", "OUTCOMES", "RUNNERS", "parse_output",
           "clean_output", "guess_runner", "short_test_name", "run_command", "exit_status", "record_run", "copy_runs",
           "runs_for", "marks_for", "history", "last_run", "last_green", "find_project_root", "snapshot_for_run",
           "snapshot_project", "record_on", "run_and_record", "validate_agent_result", "record_agent_result",
           "parse_time", "utc_now_iso"]
