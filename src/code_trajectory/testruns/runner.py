"""Running a test command: output collected within bounds, parsed, and a verdict."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.testruns.model import COUNT_NAMES, MAX_COMMAND_CHARS, OUTPUT_TAIL_BYTES, TestRun, utc_now_iso
from code_trajectory.testruns.parsers import MAX_FAILURES, clean_output, clip, guess_runner, parse_output

log = logging.getLogger(__name__)

#: Bytes of the end of the output kept in memory for the parsers.
PARSE_TAIL_BYTES = 256 * 1024
#: Bytes of "interesting" lines (failure and summary lines) kept from before the parse tail.
EARLY_LINES_BYTES = 1024 * 1024

#: Exit statuses above 128 that a shell reports for a child killed by these signals.
_KILL_SIGNALS = {s.value for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGSEGV,
                                   signal.SIGABRT, signal.SIGBUS, signal.SIGHUP, signal.SIGQUIT)}
_PYTEST_EXIT = {2: "pytest was interrupted", 3: "pytest hit an internal error", 4: "pytest usage error",
                5: "no tests were collected"}

_ANSI_B = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")


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
    command = clip(shlex.join(argv), MAX_COMMAND_CHARS)
    started_at = utc_now_iso()
    t0 = time.monotonic()
    collector = OutputCollector(max(PARSE_TAIL_BYTES, max_output_bytes))
    guessed = guess_runner(argv)

    def fault(exit_code: int, message: str) -> TestRun:
        return TestRun(command=command, outcome="error", exit_code=exit_code, runner=guessed,
                       duration_seconds=round(time.monotonic() - t0, 3), started_at=started_at, message=message)

    if not Path(cwd).is_dir():
        return fault(127, f"working directory {cwd} does not exist")
    # with a timeout, the command leads a process group of its own, so that the whole group is killed: a shell's or
    # cargo's children (a hung test binary) would outlive a kill of the command alone, and keep the output open
    grouped = timeout is not None and os.name == "posix"
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=dict(env) if env is not None else None, bufsize=0,
                                process_group=0 if grouped else None)
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
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL) if grouped else proc.kill()

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
        if grouped:  # its own process group: the terminal's SIGINT reached us only
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGINT)
        try:  # the child got the SIGINT too (same process group, or sent above): give it a moment to stop
            returncode = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL) if grouped else proc.kill()
            returncode = proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        with contextlib.suppress(OSError):
            proc.stdout.close()
    duration = round(time.monotonic() - t0, 3)

    runner, counts, failures = parse_output(collector.parse_text())
    if runner == "generic":
        runner = guessed
    run = TestRun(command=command, outcome="failed", exit_code=returncode, runner=runner,
                  duration_seconds=duration, started_at=started_at, output_tail=collector.tail(max_output_bytes),
                  output_bytes=collector.total)
    if counts:
        for name in COUNT_NAMES:
            setattr(run, name, counts.get(name))
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


