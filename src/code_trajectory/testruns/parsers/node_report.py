"""``node --test`` output, TAP or spec reporter."""

from __future__ import annotations

import re

from code_trajectory.testruns.parsers.base import Parsed, dedupe, make_counts, next_text_line

_NODE_STAT = re.compile(r"^(?:#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)\s*$")
_TAP_NOT_OK = re.compile(r"^(\s*)not ok \d+ - (.*?)(?:\s+#\s*(?:TODO|SKIP).*)?$")
_SPEC_FAIL = re.compile(r"^✖ (.+?)(?: \([\d.]+m?s\))?\s*$")


def parse_node(lines: list[str]) -> Parsed | None:
    stats: dict[str, int] = {}
    for line in lines:
        m = _NODE_STAT.match(line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    if "tests" not in stats or "pass" not in stats:
        return None
    counts = make_counts(stats.get("pass", 0), stats.get("fail", 0), stats.get("cancelled", 0),
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
                    value = next_text_line(lines, j + 1, j + 5)
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
                failures.append((m.group(1), next_text_line(lines, i + 1, i + 4)))
    return Parsed("node", counts, dedupe(failures))
