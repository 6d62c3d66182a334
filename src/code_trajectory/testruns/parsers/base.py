"""What every output parser shares: the :class:`Parsed` result, text clean-up and limits.

Pure functions over text: no I/O, no git.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

MAX_REASON_CHARS = 200
MAX_TEST_ID_CHARS = 300
#: Failing tests kept per run; the rest are only counted (``more_failures``).
MAX_FAILURES = 50
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def one_line(text: str, limit: int = MAX_REASON_CHARS) -> str:
    return clip(re.sub(r"\s+", " ", text).strip(), limit)


def short_test_names(test_ids: list[str]) -> list[str]:
    """Display names of ``test_ids`` (in order) as :func:`short_test_name` gives them, made unique: names two ids
    share get the parts before them until they differ (``TestX::test_max_age`` and ``TestY::test_max_age``,
    ``test_a.py::test_max_age`` and ``test_b.py::test_max_age``: a file's directory left out), or the whole id
    when the id has no ``::`` parts; the same test id twice stays one name twice."""
    names = [short_test_name(t) for t in test_ids]
    for _round in range(8):  # a part more each round; ids rarely nest deeper
        groups: dict[str, set[str]] = {}
        for name, test_id in zip(names, test_ids):
            groups.setdefault(name, set()).add(test_id)
        clashing = {name for name, ids in groups.items() if len(ids) > 1}
        if not clashing:
            break
        for i, (name, test_id) in enumerate(zip(names, test_ids)):
            if name in clashing:
                names[i] = _longer_name(test_id, name)
    return names


def _longer_name(test_id: str, name: str) -> str:
    """``name`` (a suffix of ``test_id``'s ``::`` parts) with one part more before it (a file without its
    directory); the whole id when there is no part more."""
    bracket = test_id[test_id.index("["):] if test_id.endswith("]") and "[" in test_id else ""
    parts = test_id[:len(test_id) - len(bracket)].split("::")
    taken = name[:len(name) - len(bracket)].count("::") + 1 if name.endswith(bracket) else len(parts)
    if len(parts) < 2 or taken >= len(parts):
        return test_id
    before = parts[-taken - 1]
    longer = [before.rsplit("/", 1)[-1], *parts[-taken:]] if taken + 1 == len(parts) else parts[-taken - 1:]
    return "::".join(longer) + bracket


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
        counts: ``{"passed", "failed", "errors", "skipped", "xfailed", "xpassed": int | None}``, or None when no
            summary was recognised.
        failures: ``(test id, one-line reason)`` in output order (not capped).
    """

    runner: str
    counts: dict[str, int | None] | None
    failures: list[tuple[str, str]]


#: A parser: the output's lines -> what it found, or None when the output is not its runner's.
Parser = Callable[[list[str]], "Parsed | None"]
#: What :func:`after_summary` decorates: ``(lines, index of the summary line, its match)`` -> as a parser.
SummaryReader = Callable[[list[str], int, "re.Match[str]"], "Parsed | None"]


def clean_output(text: str) -> str:
    """Remove ANSI escapes, normalise line ends, keep the last state of ``\\r``-redrawn lines."""
    text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line else line for line in text.split("\n"))
    return text


def make_counts(passed: int | None = None, failed: int | None = None, errors: int | None = None,
                skipped: int | None = None, xfailed: int | None = None,
                xpassed: int | None = None) -> dict[str, int | None]:
    """The counts of a run by name (see :class:`~code_trajectory.testruns.model.TestRun`); None: unknown."""
    return {"passed": passed, "failed": failed, "errors": errors, "skipped": skipped, "xfailed": xfailed,
            "xpassed": xpassed}


def dedupe(failures: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for test, reason in failures:
        test = clip(test.strip(), MAX_TEST_ID_CHARS)
        if not test:
            continue
        reason = one_line(reason)
        if test not in seen or (not seen[test] and reason):
            seen[test] = reason
    return list(seen.items())


def last_match(lines: list[str], pattern: re.Pattern[str]) -> tuple[int, re.Match[str]] | None:
    """The last line ``pattern`` matches (``re.match``, at the line's start), searched from the end.

    Returns:
        ``(index of the line, its match)``, or None when no line matches.
    """
    for i in range(len(lines) - 1, -1, -1):
        m = pattern.match(lines[i])
        if m:
            return i, m
    return None


def after_summary(pattern: re.Pattern[str]) -> Callable[[SummaryReader], Parser]:
    """Decorator: the runner's output is recognised by its summary line, the last line ``pattern`` matches.

    The decorated ``read(lines, at, summary)`` gets the output's lines, the summary line's index and its match;
    the parser it becomes, ``parse(lines)``, returns None (not this runner's output) when no line matches, else
    what ``read`` returns.
    """
    def wrap(read: SummaryReader) -> Parser:
        @functools.wraps(read)
        def parse(lines: list[str]) -> Parsed | None:
            found = last_match(lines, pattern)
            return None if found is None else read(lines, *found)

        return parse

    return wrap


def next_text_line(lines: list[str], start: int, stop: int | None = None) -> str:
    stop = len(lines) if stop is None else min(stop, len(lines))
    for j in range(start, stop):
        if lines[j].strip():
            return lines[j].strip()
    return ""


_COUNT_WORD = re.compile(r"(\d+) (failed|passed|skipped|todo|pending)\b")


def word_counts(text: str) -> dict[str, int | None]:
    values = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for number, word in _COUNT_WORD.findall(text):
        key = "skipped" if word in ("skipped", "todo", "pending") else word
        values[key] += int(number)
    return make_counts(**values)
