"""unittest's output: ``Ran N tests`` with ``OK``/``FAILED (...)`` and the ``FAIL:``/``ERROR:`` headings."""

from __future__ import annotations

import re

from code_trajectory.testruns.parsers.base import Parsed, after_summary, dedupe, make_counts

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$")
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED|NO TESTS RAN)(?: \((.*)\))?\s*$")
_UNITTEST_HEAD = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+)(?: \(([^)]*)\))?")
_SEPARATOR_EQ = re.compile(r"^={20,}\s*$")
_SEPARATOR_DASH = re.compile(r"^-{20,}\s*$")


@after_summary(_UNITTEST_RAN)
def parse_unittest(lines: list[str], ran_at: int, summary: re.Match[str]) -> Parsed | None:
    total = int(summary.group(1))
    detail: dict[str, int] = {}
    verdict = None
    for line in lines[ran_at + 1:ran_at + 6]:
        m = _UNITTEST_RESULT.match(line.strip())
        if m:
            verdict = m.group(1)
            for part in (m.group(2) or "").split(","):
                key, _, value = part.strip().partition("=")
                if value.strip().isdigit():
                    detail[key.strip()] = int(value)
            break
    if verdict is None:
        return None
    failed = detail.get("failures", 0) + detail.get("unexpected successes", 0)
    errors = detail.get("errors", 0)
    skipped = detail.get("skipped", 0) + detail.get("expected failures", 0)
    passed = max(total - failed - errors - skipped, 0)
    failures: list[tuple[str, str]] = []
    # the blocks between the last "Ran" line and the previous one
    start = 0
    for i in range(ran_at - 1, -1, -1):
        if _UNITTEST_RAN.match(lines[i]):
            start = i + 1
            break
    i = start
    while i < ran_at:
        m = _UNITTEST_HEAD.match(lines[i])
        if m and i > 0 and _SEPARATOR_EQ.match(lines[i - 1]):
            name, paren = m.group(2), m.group(3)
            if paren and (paren == name or paren.endswith("." + name)):
                test_id = paren
            elif paren:
                test_id = f"{paren}.{name}"
            else:
                test_id = name
            j = i + 1
            reason = ""
            previous_indented = False
            while j < ran_at and not _SEPARATOR_EQ.match(lines[j]):
                line = lines[j]
                if _SEPARATOR_DASH.match(line):
                    if j > i + 1:
                        break
                elif line.strip():
                    indented = line.startswith((" ", "\t"))
                    stripped = line.strip()
                    if (not indented and not stripped.startswith(("Traceback", "During handling", "The above"))
                            and (previous_indented or not reason)):  # the exception line right after the frames
                        reason = stripped
                    previous_indented = indented
                j += 1
            if m.group(1) == "UNEXPECTED SUCCESS":
                reason = reason or "unexpected success"
            failures.append((test_id, reason))
            i = j
            continue
        i += 1
    return Parsed("unittest", make_counts(passed, failed, errors, skipped), dedupe(failures))
