"""jest and vitest output: ``Tests: 1 failed, 3 passed, 4 total`` (jest), ``Tests  1 failed | 3 passed (4)``
(vitest), the ``●`` headings and ``FAIL file > test`` lines."""

from __future__ import annotations

import re

from code_trajectory.testruns.parsers.base import Parsed, after_summary, dedupe, next_text_line, word_counts

_JEST_TESTS = re.compile(r"^\s*Tests:\s+(.*?)(\d+) total")
_VITEST_TESTS = re.compile(r"^\s*Tests\s{2,}((?:\d+ \w+(?:\s*\|\s*)?)+)\s*\((\d+)\)")
_JEST_BULLET = re.compile(r"^\s*● (.+?)\s*$")
_JEST_FAIL_FILE = re.compile(r"^\s*FAIL\s+(\S.*?)\s*$")
_VITEST_FAIL = re.compile(r"^\s*FAIL\s+(\S.*? > .+?)\s*$")
_VITEST_FAIL_FILE = re.compile(r"^\s*FAIL\s+(\S+)\s+\[ (.+?) \]\s*$")


@after_summary(_JEST_TESTS)
def parse_jest(lines: list[str], at: int, summary: re.Match[str]) -> Parsed | None:
    counts = word_counts(summary.group(1))
    failures = []
    current_file = ""
    for i, line in enumerate(lines[:at]):
        f = _JEST_FAIL_FILE.match(line)
        if f:
            current_file = f.group(1)
            continue
        m = _JEST_BULLET.match(line)
        if not m:
            continue
        name = m.group(1)
        if name.startswith("Console"):
            continue
        reason = next_text_line(lines, i + 1, i + 8)
        if name == "Test suite failed to run":
            failures.append((current_file or name, reason))
        else:
            failures.append((name, reason))
    return Parsed("jest", counts, dedupe(failures))


@after_summary(_VITEST_TESTS)
def parse_vitest(lines: list[str], at: int, summary: re.Match[str]) -> Parsed | None:
    counts = word_counts(summary.group(1))
    failures = []
    for i, line in enumerate(lines[:at]):
        m = _VITEST_FAIL_FILE.match(line)
        if m:
            failures.append((m.group(1), next_text_line(lines, i + 1, i + 8)))
            continue
        m = _VITEST_FAIL.match(line)
        if m:
            failures.append((m.group(1), next_text_line(lines, i + 1, i + 8)))
    return Parsed("vitest", counts, dedupe(failures))
