"""Reading test runners' output: summary lines, counts and failing tests.

One module per runner's output format behind one function shape,
``parse(lines: list[str]) -> Parsed | None`` (None: not this runner's output), and
the registry :data:`PARSERS`, tried in order by :func:`parse_output`. Pure functions
over text: no I/O, no git.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

from code_trajectory.testruns.parsers import (
    cargo_report,
    go_report,
    jest_report,
    node_report,
    pytest_report,
    unittest_report,
)
from code_trajectory.testruns.parsers.base import (  # noqa: F401
    MAX_FAILURES,
    MAX_REASON_CHARS,
    MAX_TEST_ID_CHARS,
    Parsed,
    clean_output,
    clip,
    dedupe,
    one_line,
    short_test_name,
    short_test_names,
)

log = logging.getLogger(__name__)

#: The parsers in the order they are tried (cargo first: its lines also look like others').
PARSERS = (cargo_report.parse_cargo, pytest_report.parse_pytest, unittest_report.parse_unittest,
           jest_report.parse_jest, jest_report.parse_vitest, node_report.parse_node, go_report.parse_go)


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
    for parser in PARSERS:
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
