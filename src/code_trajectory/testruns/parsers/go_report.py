"""``go test`` output: ``--- FAIL: TestX`` results and package ``ok``/``FAIL`` lines."""

from __future__ import annotations

import re

from code_trajectory.testruns.parsers.base import Parsed, dedupe, make_counts

_GO_RESULT = re.compile(r"^(\s*)--- (FAIL|PASS|SKIP): (\S+)(?: \([\d.]+s\))?")
_GO_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[([^\]]*)\])")
_GO_RUN = re.compile(r"^=== RUN\s+(\S+)")


def parse_go(lines: list[str]) -> Parsed | None:
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
    return Parsed("go", make_counts(passed if verbose else None, failed, errors, skipped if verbose else None),
                  dedupe(failures))
