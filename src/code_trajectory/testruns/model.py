"""The record of one test run (:class:`TestRun`) and the limits that bound it."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from code_trajectory.core.text import escape_invisible
from code_trajectory.core.when import parse_stored_time
from code_trajectory.testruns.parsers import (  # noqa: F401
    MAX_FAILURES,
    MAX_TEST_ID_CHARS,
    clip,
    one_line,
    short_test_name,
    short_test_names,
)
from code_trajectory.testruns.scope import LEGACY_NOTE, Scope

log = logging.getLogger(__name__)

OUTCOMES = ("passed", "failed", "error")
#: The counts of a run. ``xfailed``/``xpassed`` are pytest's expected failures that failed / passed anyway
#: (``@pytest.mark.xfail``): counted apart from ``skipped`` and ``passed``, as in pytest's summary line.
COUNT_NAMES = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")

MAX_COMMAND_CHARS = 500
#: Bytes of output stored with a run.
OUTPUT_TAIL_BYTES = 4096
#: Length of :meth:`TestRun.summary_line`.
SUMMARY_CHARS = 200


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
        passed, failed, errors, skipped, xfailed, xpassed: counts, None when unknown (``xfailed``: tests
            marked xfail that failed as expected; ``xpassed``: that passed anyway, not strict; neither is in
            ``passed`` nor ``skipped``).
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
        scope: which tests the run ran (:class:`~code_trajectory.testruns.scope.Scope`: the full suite, a
            partial selection, or unknown). A run stored without one (recorded before scopes were kept) reads as
            unknown with the note :data:`~code_trajectory.testruns.scope.LEGACY_NOTE`.
        message: why the outcome is ``error`` (``command not found: foo``, ``killed by signal
            SIGKILL (9)``), or another remark; None otherwise.
        record_error: not stored: why recording failed in :func:`run_and_record` (None when recorded).
        squashed_into: not stored: the consolidation that replaced ``commit`` on the branch, when the
            run was read for a branch whose history squashed its snapshot (see ``store.history``).
    """

    __test__ = False  # not a pytest test class

    command: str
    outcome: str
    exit_code: int | None = None
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    xfailed: int | None = None
    xpassed: int | None = None
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
    scope: Scope = field(default_factory=Scope.unknown)
    record_error: str | None = field(default=None, compare=False, repr=False)
    squashed_into: str | None = field(default=None, compare=False, repr=False)

    # -- derived -------------------------------------------------------------------------------

    @property
    def is_green(self) -> bool:
        """True when the run passed."""
        return self.outcome == "passed"

    @property
    def is_red(self) -> bool:
        """True when the run reports failing tests: outcome ``failed``, or ``error`` (killed, timed out) after
        failures or errors were counted. A run stopped before any verdict is neither green nor red."""
        return self.outcome == "failed" or bool(self.failed or self.errors or self.failures)

    def shown_failures(self) -> list[tuple[str, str]]:
        """:attr:`failures` as answers show them: each test id and reason with its invisible characters escaped
        (:func:`~code_trajectory.core.text.escape_invisible`, as file names are shown): a right-to-left override
        (U+202E) in a test file's name or in an assertion's text reordered what a reader saw. The stored ids are
        left as they are (selections match them)."""
        return [(escape_invisible(test), escape_invisible(reason)) for test, reason in self.failures]

    @property
    def started(self) -> datetime | None:
        """``started_at`` as an aware datetime (None when missing or malformed)."""
        return parse_stored_time(self.started_at)

    def counts_text(self) -> str:
        """``41 passed, 2 failed, 1 error, 3 skipped, 1 xfailed`` (zero counts other than passed left out); '' if unknown."""
        parts = []
        if self.passed is not None:
            parts.append(f"{self.passed} passed")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.errors:
            parts.append(f"{self.errors} error" + ("s" if self.errors != 1 else ""))
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        if self.xfailed:
            parts.append(f"{self.xfailed} xfailed")
        if self.xpassed:
            parts.append(f"{self.xpassed} xpassed")
        if not parts and any(getattr(self, n) is not None for n in COUNT_NAMES):
            parts.append("0 passed")
        return ", ".join(parts)

    def summary_line(self, limit: int = SUMMARY_CHARS) -> str:
        """One line for the narratives, at most ``limit`` characters.

        Examples: ``tests: 41 passed, 2 failed: test_login, test_logout``,
        ``tests: failed (exit 1)``, ``tests: error: command not found: nosetests``,
        ``tests: 3 passed, 60 failed: test_a, test_b, ... and 58 more``; a partial run says so:
        ``tests (partial: tests/test_a.py): 3 passed``.
        """
        counts = self.counts_text()
        label = f"tests ({self.scope.label(60)})" if self.scope.kind == "partial" else "tests"
        if self.outcome == "error":
            head = f"{label}: error: " + (self.message or (f"exit {self.exit_code}" if self.exit_code is not None
                                                         else "no verdict"))
            if counts:
                head += f" ({counts})"
        elif counts:
            head = f"{label}: {counts}"
            if self.outcome == "failed" and not (self.failed or self.errors) and not self.failures:
                head += f"; failed (exit {self.exit_code})" if self.exit_code is not None else "; failed"
        else:
            head = f"{label}: {self.outcome}" + (f" (exit {self.exit_code})" if self.exit_code is not None else "")
        head = clip(head, limit)
        if not self.failures:
            return head
        names = short_test_names([t for t, _ in self.shown_failures()])
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
            return clip(head + f": {total} failing", limit)
        line = head + ": " + ", ".join(shown)
        rest = total - len(shown)
        if rest:
            line += f", ... and {rest} more"
        return line

    # -- JSON ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The run as a JSON-ready dict (without the unstored ``record_error`` and ``squashed_into``)."""
        data: dict[str, Any] = {}
        for f in fields(self):
            if f.name in ("record_error", "squashed_into"):
                continue
            value = getattr(self, f.name)
            if f.name == "failures":
                value = [[t, r] for t, r in value]
            elif f.name == "scope":
                value = value.to_dict()
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
        run.scope = Scope.from_dict(data["scope"]) if "scope" in data else Scope.unknown(LEGACY_NOTE)
        return run

    @classmethod
    def from_json(cls, data: str | bytes | Mapping[str, Any]) -> TestRun:
        """Inverse of :meth:`to_json` (also accepts the dict of :meth:`to_dict`).

        Raises:
            ValueError: not JSON, or not a test run.
        """
        parsed = json.loads(data) if isinstance(data, (str, bytes)) else data
        return cls.from_dict(parsed)


def utc_now_iso() -> str:
    """The current time, ISO 8601 in UTC with millisecond precision."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


