"""Reading test runners' output: summary lines, counts and failing tests.

Parsers for pytest, unittest, jest, vitest, go test, cargo test and node's test runner
(``node --test``), used by :mod:`code_trajectory.testruns` when a command is run through
the generic wrapper. Pure functions over text: no I/O, no git.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 200
MAX_TEST_ID_CHARS = 300
#: Failing tests kept per run; the rest are only counted (``more_failures``).
MAX_FAILURES = 50
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _one_line(text: str, limit: int = MAX_REASON_CHARS) -> str:
    return _clip(re.sub(r"\s+", " ", text).strip(), limit)


def short_test_name(test_id: str) -> str:
    """A short display name of a test id.

    ``tests/test_a.py::TestX::test_login[a::b]`` → ``test_login[a::b]``; ``tests::it_fails``
    (cargo) → ``it_fails``; ``pkg.mod.TestX.test_y`` (unittest) → ``test_y``;
    ``suite › adds`` (jest) and ``file > suite > adds`` (vitest) → ``adds``; anything else as is.
    """
    text = test_id.strip()
    bracket = ""
    base = text
    if text.endswith("]") and "[" in text:
        idx = text.index("[")
        base, bracket = text[:idx], text[idx:]
    if "::" in base:
        return base.rsplit("::", 1)[-1] + bracket or text
    for sep in (" › ", " > "):
        if sep in base:
            return base.rsplit(sep, 1)[-1].strip() + bracket or text
    if "." in base and re.fullmatch(r"[A-Za-z_][\w.]*", base) and not base.endswith(".py"):
        return base.rsplit(".", 1)[-1] + bracket
    return text


# -- parsing runners' output -------------------------------------------------------------------------


class Parsed(NamedTuple):
    """What :func:`parse_output` found: unpacks as ``(runner, counts, failures)``.

    Attributes:
        runner: the runner recognised, or ``generic`` when none.
        counts: ``{"passed", "failed", "errors", "skipped": int | None}``, or None when no
            summary was recognised.
        failures: ``(test id, one-line reason)`` in output order (not capped).
    """

    runner: str
    counts: dict[str, int | None] | None
    failures: list[tuple[str, str]]


def clean_output(text: str) -> str:
    """Remove ANSI escapes, normalise line ends, keep the last state of ``\\r``-redrawn lines."""
    text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line else line for line in text.split("\n"))
    return text


def _counts(passed: int | None = None, failed: int | None = None, errors: int | None = None,
            skipped: int | None = None) -> dict[str, int | None]:
    return {"passed": passed, "failed": failed, "errors": errors, "skipped": skipped}


def _dedupe(failures: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for test, reason in failures:
        test = _clip(test.strip(), MAX_TEST_ID_CHARS)
        if not test:
            continue
        reason = _one_line(reason)
        if test not in seen or (not seen[test] and reason):
            seen[test] = reason
    return list(seen.items())


def _next_text_line(lines: list[str], start: int, stop: int | None = None) -> str:
    stop = len(lines) if stop is None else min(stop, len(lines))
    for j in range(start, stop):
        if lines[j].strip():
            return lines[j].strip()
    return ""


# pytest ------------------------------------------------------------------------------------------

_PYTEST_WORDS = r"(?:failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?|rerun|subtests? \w+)"
_PYTEST_SUMMARY = re.compile(
    r"^[=\s]*((?:\d+ " + _PYTEST_WORDS + r"(?:, )?)+|no tests ran)\s+in\s+[\d.]+s(?:\s*\([^)]*\))?[=\s]*$")
_PYTEST_ITEM = re.compile(r"(\d+) (failed|passed|skipped|xfailed|xpassed|errors?)\b")
_PYTEST_SHORT = re.compile(r"^(FAILED|ERROR) (.+?)(?: - (.*))?$")
_PYTEST_VERBOSE = re.compile(r"^(\S+::\S.*?) (FAILED|ERROR)(?:\s+\[\s*\d+%\])?\s*$")


def _parse_pytest(lines: list[str]) -> Parsed | None:
    summary_at = None
    for i in range(len(lines) - 1, -1, -1):
        if _PYTEST_SUMMARY.match(lines[i]):
            summary_at = i
            break
    if summary_at is None:
        return None
    values = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for number, word in _PYTEST_ITEM.findall(lines[summary_at]):
        n = int(number)
        key = {"xpassed": "passed", "xfailed": "skipped", "error": "errors"}.get(word, word)
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
    if any(not reason for _, reason in failures):
        sections = _pytest_sections(lines[:summary_at])
        failures = [(test, reason or _pytest_reason_from(sections, test)) for test, reason in failures]
    return Parsed("pytest", _counts(**values), _dedupe(failures))


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


# unittest ----------------------------------------------------------------------------------------

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$")
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED|NO TESTS RAN)(?: \((.*)\))?\s*$")
_UNITTEST_HEAD = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+)(?: \(([^)]*)\))?")
_SEPARATOR_EQ = re.compile(r"^={20,}\s*$")
_SEPARATOR_DASH = re.compile(r"^-{20,}\s*$")


def _parse_unittest(lines: list[str]) -> Parsed | None:
    ran_at = None
    for i in range(len(lines) - 1, -1, -1):
        if _UNITTEST_RAN.match(lines[i]):
            ran_at = i
            break
    if ran_at is None:
        return None
    total = int(_UNITTEST_RAN.match(lines[ran_at]).group(1))  # type: ignore[union-attr]
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
                    if not indented and not stripped.startswith(("Traceback", "During handling", "The above")):
                        if previous_indented or not reason:  # the exception line right after the frames
                            reason = stripped
                    previous_indented = indented
                j += 1
            if m.group(1) == "UNEXPECTED SUCCESS":
                reason = reason or "unexpected success"
            failures.append((test_id, reason))
            i = j
            continue
        i += 1
    return Parsed("unittest", _counts(passed, failed, errors, skipped), _dedupe(failures))


# jest / vitest -------------------------------------------------------------------------------------

_JEST_TESTS = re.compile(r"^\s*Tests:\s+(.*?)(\d+) total")
_VITEST_TESTS = re.compile(r"^\s*Tests\s{2,}((?:\d+ \w+(?:\s*\|\s*)?)+)\s*\((\d+)\)")
_COUNT_WORD = re.compile(r"(\d+) (failed|passed|skipped|todo|pending)\b")
_JEST_BULLET = re.compile(r"^\s*● (.+?)\s*$")
_JEST_FAIL_FILE = re.compile(r"^\s*FAIL\s+(\S.*?)\s*$")
_VITEST_FAIL = re.compile(r"^\s*FAIL\s+(\S.*? > .+?)\s*$")
_VITEST_FAIL_FILE = re.compile(r"^\s*FAIL\s+(\S+)\s+\[ (.+?) \]\s*$")


def _word_counts(text: str) -> dict[str, int | None]:
    values = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for number, word in _COUNT_WORD.findall(text):
        key = "skipped" if word in ("skipped", "todo", "pending") else word
        values[key] += int(number)
    return _counts(**values)


def _parse_jest(lines: list[str]) -> Parsed | None:
    at = None
    for i in range(len(lines) - 1, -1, -1):
        if _JEST_TESTS.match(lines[i]):
            at = i
            break
    if at is None:
        return None
    counts = _word_counts(_JEST_TESTS.match(lines[at]).group(1))  # type: ignore[union-attr]
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
        reason = _next_text_line(lines, i + 1, i + 8)
        if name == "Test suite failed to run":
            failures.append((current_file or name, reason))
        else:
            failures.append((name, reason))
    return Parsed("jest", counts, _dedupe(failures))


def _parse_vitest(lines: list[str]) -> Parsed | None:
    at = None
    for i in range(len(lines) - 1, -1, -1):
        if _VITEST_TESTS.match(lines[i]):
            at = i
            break
    if at is None:
        return None
    counts = _word_counts(_VITEST_TESTS.match(lines[at]).group(1))  # type: ignore[union-attr]
    failures = []
    for i, line in enumerate(lines[:at]):
        m = _VITEST_FAIL_FILE.match(line)
        if m:
            failures.append((m.group(1), _next_text_line(lines, i + 1, i + 8)))
            continue
        m = _VITEST_FAIL.match(line)
        if m:
            failures.append((m.group(1), _next_text_line(lines, i + 1, i + 8)))
    return Parsed("vitest", counts, _dedupe(failures))


# go test -------------------------------------------------------------------------------------------

_GO_RESULT = re.compile(r"^(\s*)--- (FAIL|PASS|SKIP): (\S+)(?: \([\d.]+s\))?")
_GO_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[([^\]]*)\])")
_GO_RUN = re.compile(r"^=== RUN\s+(\S+)")


def _parse_go(lines: list[str]) -> Parsed | None:
    found = False
    passed = failed = skipped = errors = 0
    verbose = False
    failures: list[tuple[str, str]] = []
    last_run: dict[str, int] = {}
    for i, line in enumerate(lines):
        r = _GO_RUN.match(line)
        if r:
            verbose = True
            last_run[r.group(1)] = i
            continue
        m = _GO_RESULT.match(line)
        if m:
            found = True
            indent, kind, name = m.groups()
            if kind == "PASS":
                verbose = True
                passed += not indent
            elif kind == "SKIP":
                skipped += not indent
            else:
                failed += not indent
                reason = ""
                j = i + 1  # non-verbose: the test's log follows, indented deeper
                if j < len(lines) and lines[j].startswith(indent + "    ") and not _GO_RESULT.match(lines[j]):
                    reason = lines[j].strip()
                if not reason and name in last_run:  # verbose: the log came before, after "=== RUN"
                    for k in range(last_run[name] + 1, i):
                        text = lines[k].strip()
                        if text and not text.startswith(("=== ", "--- ")):
                            reason = text
                            break
                failures.append((name, reason))
            continue
        p = _GO_PACKAGE.match(line)
        if p:
            found = True
            if p.group(1) == "FAIL" and p.group(3) and "failed" in p.group(3):
                errors += 1
                failures.append((p.group(2), p.group(3)))
    if not found:
        return None
    # list a parent only when none of its subtests is listed (the subtests say more)
    names = [n for n, _ in failures]
    failures = [(n, r) for n, r in failures if not any(o.startswith(n + "/") for o in names)]
    return Parsed("go", _counts(passed if verbose else None, failed, errors, skipped if verbose else None),
                  _dedupe(failures))


# cargo test ----------------------------------------------------------------------------------------

_CARGO_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;")
_CARGO_FAILED_TEST = re.compile(r"^(?:test (\S+) \.\.\. FAILED|(\S+) --- FAILED)\s*$")  # pretty / terse (-q)
_CARGO_LISTED = re.compile(r"^    (\S+)\s*$")
_CARGO_STDOUT = re.compile(r"^---- (\S+) stdout ----\s*$")
_CARGO_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at (.*)$")
_CARGO_COMPILE_ERROR = re.compile(r"^error(?:\[E\d+\])?: (.*)$")


def _parse_cargo(lines: list[str]) -> Parsed | None:
    passed = failed = skipped = 0
    found = False
    for line in lines:
        m = _CARGO_RESULT.match(line)
        if m:
            found = True
            passed += int(m.group(1))
            failed += int(m.group(2))
            skipped += int(m.group(3))
    if not found:
        if any(line.startswith("error: could not compile") for line in lines):
            first = next((m.group(0) for line in lines if (m := _CARGO_COMPILE_ERROR.match(line))
                          and not line.startswith("error: could not compile")), "could not compile")
            return Parsed("cargo", _counts(None, None, 1, None), [("build", first)])
        return None
    reasons: dict[str, str] = {}
    for i, line in enumerate(lines):
        m = _CARGO_STDOUT.match(line)
        if not m:
            continue
        reason = ""
        for j in range(i + 1, min(i + 12, len(lines))):
            if _CARGO_STDOUT.match(lines[j]) or lines[j].startswith("failures:"):
                break
            p = _CARGO_PANIC.match(lines[j])
            if p:
                rest = p.group(1).strip()
                if rest.startswith("'") and "'," in rest:  # old format: panicked at 'message', file:line
                    reason = rest[1:rest.rindex("',")]
                else:
                    reason = _next_text_line(lines, j + 1, j + 3) or rest
                break
        reasons[m.group(1)] = reason
    names: list[str] = []
    for i, line in enumerate(lines):
        m = _CARGO_FAILED_TEST.match(line)
        if m:
            names.append(m.group(1) or m.group(2))
        elif line.rstrip() == "failures:":  # the second "failures:" section lists the names
            for follow in lines[i + 1:]:
                if not follow.strip():
                    continue
                listed = _CARGO_LISTED.match(follow)
                if not listed:
                    break
                names.append(listed.group(1))
    names += list(reasons)
    failures = [(name, reasons.get(name, "")) for name in dict.fromkeys(names)]
    return Parsed("cargo", _counts(passed, failed, 0, skipped), _dedupe(failures))


# node --test ---------------------------------------------------------------------------------------

_NODE_STAT = re.compile(r"^(?:#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)\s*$")
_TAP_NOT_OK = re.compile(r"^(\s*)not ok \d+ - (.*?)(?:\s+#\s*(?:TODO|SKIP).*)?$")
_SPEC_FAIL = re.compile(r"^✖ (.+?)(?: \([\d.]+m?s\))?\s*$")


def _parse_node(lines: list[str]) -> Parsed | None:
    stats: dict[str, int] = {}
    for line in lines:
        m = _NODE_STAT.match(line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    if "tests" not in stats or "pass" not in stats:
        return None
    counts = _counts(stats.get("pass", 0), stats.get("fail", 0), stats.get("cancelled", 0),
                     stats.get("skipped", 0) + stats.get("todo", 0))
    failures: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        m = _TAP_NOT_OK.match(line)
        if not m:
            continue
        indent = m.group(1) + "  "
        reason, is_suite = "", False
        for j in range(i + 1, min(i + 60, len(lines))):
            text = lines[j]
            if not text.startswith(indent) or text.strip() == "...":
                break
            body = text[len(indent):]
            if body.startswith("type: 'suite'") or "subtestsFailed" in body:
                is_suite = True
            if body.startswith("error:") and not reason:
                value = body[len("error:"):].strip()
                if value in ("|-", "|", ">-", ">"):
                    value = _next_text_line(lines, j + 1, j + 5)
                reason = value.strip("'\"")
        if not is_suite:
            failures.append((m.group(2), reason))
    if not failures:
        in_section = False
        for i, line in enumerate(lines):
            if line.startswith("✖ failing tests"):
                in_section = True
                continue
            m = _SPEC_FAIL.match(line) if in_section else None
            if m:
                failures.append((m.group(1), _next_text_line(lines, i + 1, i + 4)))
    return Parsed("node", counts, _dedupe(failures))


_PARSERS = (_parse_cargo, _parse_pytest, _parse_unittest, _parse_jest, _parse_vitest, _parse_node, _parse_go)


def parse_output(text: str) -> Parsed:
    """Recognise the summary of a test runner in ``text`` (any output, ANSI colours allowed).

    Recognised: pytest (``== 2 failed, 41 passed in 0.12s ==`` and the ``FAILED``/``ERROR``
    lines of the short summary), unittest (``Ran 5 tests`` + ``OK``/``FAILED (...)``), jest
    (``Tests: 1 failed, 3 passed, 4 total`` and ``●`` headings), vitest (``Tests  1 failed |
    3 passed (4)`` and ``FAIL file > test`` lines), go test (``--- FAIL: TestX``, package
    ``ok``/``FAIL`` lines; passed counted only with ``-v``), cargo test (every ``test result:``
    line summed, ``test x ... FAILED`` lines, panic messages) and ``node --test`` (TAP or spec
    reporter).

    Returns:
        ``Parsed(runner, counts, failures)``; ``("generic", None, [])`` when nothing is recognised.
    """
    lines = clean_output(text).split("\n")
    for parser in _PARSERS:
        try:
            parsed = parser(lines)
        except (ValueError, IndexError, AttributeError) as exc:  # a parser must never break a run
            log.debug("parser %s failed: %s", parser.__name__, exc)
            parsed = None
        if parsed is not None:
            return parsed
    return Parsed("generic", None, [])


def guess_runner(argv: Sequence[str]) -> str:
    """The runner a command line names (``python -m pytest`` → ``pytest``), or ``generic``."""
    words = [os.path.basename(a) for a in argv[:6]]
    joined = " ".join(words)
    if any(w in ("pytest", "py.test") for w in words):
        return "pytest"
    if "unittest" in words:
        return "unittest"
    if "vitest" in words:
        return "vitest"
    if "jest" in words:
        return "jest"
    if re.search(r"\bcargo (?:\+\S+ )?(?:test|nextest)\b", joined):
        return "cargo"
    if re.search(r"\bgo test\b", joined):
        return "go"
    if words and words[0] == "node" and "--test" in words:
        return "node"
    return "generic"
