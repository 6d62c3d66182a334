"""``cargo test`` output: every ``test result:`` line summed, failed tests and panic messages."""

from __future__ import annotations

import re

from code_trajectory.testruns.parsers.base import Parsed, dedupe, make_counts, next_text_line

_CARGO_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;")
_CARGO_FAILED_TEST = re.compile(r"^(?:test (\S+) \.\.\. FAILED|(\S+) --- FAILED)\s*$")  # pretty / terse (-q)
_CARGO_LISTED = re.compile(r"^    (\S+)\s*$")
_CARGO_STDOUT = re.compile(r"^---- (\S+) stdout ----\s*$")
_CARGO_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at (.*)$")
_CARGO_COMPILE_ERROR = re.compile(r"^error(?:\[E\d+\])?: (.*)$")


def parse_cargo(lines: list[str]) -> Parsed | None:
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
            return Parsed("cargo", make_counts(None, None, 1, None), [("build", first)])
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
                    reason = next_text_line(lines, j + 1, j + 3) or rest
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
    return Parsed("cargo", make_counts(passed, failed, 0, skipped), dedupe(failures))
