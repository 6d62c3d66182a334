"""pytest's terminal output: the summary line and the short test summary (``FAILED``/``ERROR``)."""

from __future__ import annotations

import re

from code_trajectory.testruns.parsers.base import Parsed, after_summary, dedupe, make_counts, short_test_name

_PYTEST_WORDS = r"(?:failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?|rerun|subtests? \w+)"
_PYTEST_SUMMARY = re.compile(
    r"^[=\s]*((?:\d+ " + _PYTEST_WORDS + r"(?:, )?)+|no tests ran)\s+in\s+[\d.]+s(?:\s*\([^)]*\))?[=\s]*$")
_PYTEST_ITEM = re.compile(r"(\d+) (failed|passed|skipped|xfailed|xpassed|errors?)\b")
_PYTEST_SHORT = re.compile(r"^(FAILED|ERROR) (.+?)(?: - (.*))?$")
_PYTEST_VERBOSE = re.compile(r"^(\S+::\S.*?) (FAILED|ERROR)(?:\s+\[\s*\d+%\])?\s*$")


_PYTEST_DESELECTED = re.compile(r"(\d+) deselected\b")


def deselected_count(text: str) -> int:
    """The tests pytest's last summary line in ``text`` counts as deselected (``1 passed, 3 deselected in 0.1s``);
    0 without such a line."""
    for line in reversed(text.splitlines()):
        if _PYTEST_SUMMARY.match(line):
            found = _PYTEST_DESELECTED.search(line)
            return int(found.group(1)) if found else 0
    return 0


@after_summary(_PYTEST_SUMMARY)
def parse_pytest(lines: list[str], summary_at: int, summary: re.Match[str]) -> Parsed | None:
    values = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
    for number, word in _PYTEST_ITEM.findall(lines[summary_at]):
        n = int(number)
        key = "errors" if word == "error" else word
        values[key] += n
    header = None
    for i in range(summary_at - 1, -1, -1):
        if "short test summary info" in lines[i]:
            header = i
            break
        if _PYTEST_SUMMARY.match(lines[i]):  # an earlier session: stop there
            break
    failures: list[tuple[str, str]] = []
    if header is not None:
        for line in lines[header + 1:summary_at]:
            m = _PYTEST_SHORT.match(line)
            if m:
                failures.append((m.group(2), m.group(3) or ""))
    else:
        start = 0
        for i in range(summary_at - 1, -1, -1):
            if _PYTEST_SUMMARY.match(lines[i]):
                start = i + 1
                break
        for line in lines[start:summary_at]:
            m = _PYTEST_SHORT.match(line) or None
            if m:
                failures.append((m.group(2), m.group(3) or ""))
                continue
            v = _PYTEST_VERBOSE.match(line)
            if v:
                failures.append((v.group(1), ""))
    if any(not reason or reason.endswith(_CUT) for _, reason in failures):
        sections = _pytest_sections(lines[:summary_at])
        failures = [(test, _whole_reason(reason, _pytest_reason_from(sections, test))) for test, reason in failures]
    return Parsed("pytest", make_counts(**values), dedupe(failures))


#: What pytest ends a short test summary line with when it cuts the line at the terminal's width (80 columns when
#: its output is a pipe, as under ``code-trajectory test``).
_CUT = "..."


def _whole_reason(reason: str, from_section: str) -> str:
    """The reason of a short summary line (``reason``), or the first ``E`` line of the test's failure section
    (``from_section``) when the summary line has none or pytest cut it (``TypeError: Could not determine the ...``)
    and the section's line goes on where it was cut; ``reason`` otherwise."""
    if not reason:
        return from_section
    kept = reason[:-len(_CUT)].rstrip()
    if reason.endswith(_CUT) and kept and from_section.startswith(kept) and len(from_section) > len(kept):
        return from_section
    return reason


_PYTEST_SECTION = re.compile(r"^_{3,} (.+?) _{3,}\s*$")


def _pytest_sections(lines: list[str]) -> dict[str, str]:
    """``{section title: first "E" line}`` of the FAILURES and ERRORS sections."""
    sections: dict[str, str] = {}
    title = None
    for line in lines:
        m = _PYTEST_SECTION.match(line)
        if m:
            title = m.group(1)
            sections.setdefault(title, "")
            continue
        if title is not None and not sections[title] and line.startswith("E "):
            sections[title] = line[1:].strip()
    return sections


def _pytest_reason_from(sections: dict[str, str], test: str) -> str:
    name = test.split("::", 1)[1].replace("::", ".") if "::" in test else test
    for title in (name, f"ERROR at setup of {name}", f"ERROR at teardown of {name}", f"ERROR collecting {test}",
                  short_test_name(test)):
        if sections.get(title):
            return sections[title]
    return ""
