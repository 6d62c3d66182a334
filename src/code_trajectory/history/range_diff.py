"""The diff of one line range of a file between two blobs, aligned as git aligns the whole files.

A symbol's own diff (:func:`~code_trajectory.history.symbol_history.own_diff`) shows the changes inside the
symbol's lines only. Diffing those lines alone (Python's ``difflib``) may align them differently from git: a line
moved within a function is then shown as other lines moving, and the answer no longer holds the lines ``git log
-L`` shows as removed and added (issue 28: every fact git's answer holds). So the alignment is git's own, of the
whole files (``git diff -U0`` of the two blobs: git's default algorithm, under the shadow's forced config and with
no external diff or text conversion, :mod:`code_trajectory.git.gitcmd`), cut to the range on each side, as ``git log
-L`` cuts it; context lines are then taken from the range.

:func:`range_diff` returns the hunks in the unified format ``difflib.unified_diff`` writes (without its two file
header lines), with line numbers of the file (1-based).
"""

from __future__ import annotations

import difflib

from code_trajectory.core.errors import TrajectoryError
from code_trajectory.git.diffs import HUNK_HEADER
from code_trajectory.git.shadow import ShadowRepo

__all__ = ["range_diff"]

#: One aligned line: ``" "`` (in both), ``"-"`` (old only) or ``"+"`` (new only), its old and new line numbers
#: (1-based; 0 on the side it is not on).
_Op = tuple[str, int, int]


def _blocks(repo: ShadowRepo, old_oid: str, new_oid: str) -> list[tuple[int, int, int, int]] | None:
    """git's changed blocks between two blobs, ``(old_start, old_count, new_start, new_count)`` as ``git diff -U0``
    writes them (a count of 0 places the block after its start line); None when git cannot diff them."""
    try:
        # --text: git prints no hunk for blobs it calls binary (the symbol parser skips those by the same rule)
        out = repo.git.text(["diff", "-U0", "--no-color", "--text", "--end-of-options", old_oid, new_oid])
    except TrajectoryError:
        return None
    return [(int(m[1]), 1 if m[2] is None else int(m[2]), int(m[3]), 1 if m[4] is None else int(m[4]))
            for m in HUNK_HEADER.finditer(out)]


def _aligned(blocks: list[tuple[int, int, int, int]], old_total: int, new_total: int) -> list[_Op]:
    """Every line of both files in order, aligned by ``blocks``."""
    ops: list[_Op] = []
    old = new = 1
    for old_start, old_count, new_start, new_count in blocks:
        first_old = old_start if old_count else old_start + 1  # where the block's old side begins
        first_new = new_start if new_count else new_start + 1
        while old < first_old and new < first_new:
            ops.append((" ", old, new))
            old, new = old + 1, new + 1
        ops += [("-", line, 0) for line in range(first_old, first_old + old_count)]
        ops += [("+", 0, line) for line in range(first_new, first_new + new_count)]
        old, new = first_old + old_count, first_new + new_count
    while old <= old_total and new <= new_total:
        ops.append((" ", old, new))
        old, new = old + 1, new + 1
    ops += [("-", line, 0) for line in range(old, old_total + 1)]
    ops += [("+", 0, line) for line in range(new, new_total + 1)]
    return ops


def _in_range(ops: list[_Op], old_range: range, new_range: range) -> list[_Op]:
    """The ops of the two ranges: a line on both sides stays a context line when it is in both ranges, and is a
    removed (added) line when it is in the old (new) range only."""
    kept: list[_Op] = []
    for kind, old, new in ops:
        in_old, in_new = kind != "+" and old in old_range, kind != "-" and new in new_range
        if in_old and in_new:
            kept.append((" ", old, new))
        elif in_old:
            kept.append(("-", old, 0))
        elif in_new:
            kept.append(("+", 0, new))
    return kept


def _hunks(ops: list[_Op], old_lines: list[str], new_lines: list[str], context: int, old_before: int,
           new_before: int) -> list[str]:
    """Unified hunks of ``ops`` with ``context`` lines around each change (``*_lines``: the files' lines, line 1
    first; ``*_before``: the line before each range, named by a hunk with no line on that side)."""
    changed = [i for i, (kind, _, _) in enumerate(ops) if kind != " "]
    groups: list[tuple[int, int]] = []  # first and last changed op of each hunk
    for i in changed:
        if groups and i - groups[-1][1] <= 2 * context + 1:  # at most 2 * context lines between: one hunk
            groups[-1] = (groups[-1][0], i)
        else:
            groups.append((i, i))
    out: list[str] = []
    seen = 0
    for first, last in groups:
        start = max(first - context, 0)
        for kind, old, new in ops[seen:start]:  # the lines before the hunk: where an empty side sits
            old_before = old if kind != "+" else old_before
            new_before = new if kind != "-" else new_before
        part = ops[start:last + context + 1]
        seen = start
        olds = [old for kind, old, _ in part if kind != "+"]
        news = [new for kind, _, new in part if kind != "-"]
        out.append(f"@@ -{_span(olds, old_before)} +{_span(news, new_before)} @@")
        out += [kind + (new_lines[new - 1] if kind == "+" else old_lines[old - 1]) for kind, old, new in part]
    return out


def _span(lines: list[int], before: int) -> str:
    """A hunk side's lines as ``difflib`` (and git) write them: ``start,count``, ``start`` for one line, and for
    none the line before the hunk with a count of 0."""
    if not lines:
        return f"{before},0"
    return str(lines[0]) if len(lines) == 1 else f"{lines[0]},{len(lines)}"


def range_diff(repo: ShadowRepo, old_oid: str, new_oid: str, old_lines: list[str], new_lines: list[str],
               old_range: range, new_range: range, context: int) -> list[str]:
    """The diff of ``old_range`` of the old blob against ``new_range`` of the new one, aligned as git aligns the
    whole files.

    Args:
        repo: the shadow repository holding both blobs.
        old_oid, new_oid: the blob ids.
        old_lines, new_lines: each blob's text split into lines (without their ends).
        old_range, new_range: the 1-based line numbers of the range on each side.
        context: context lines around each change, taken from the ranges.

    Returns:
        Hunk header and body lines (``@@ -41,3 +41,4 @@``, ``-old``, ``+new``, `` same``) with the file's line
        numbers; empty when nothing in the ranges changed. Where git cannot diff the blobs, or its alignment keeps
        no line of the range in place (the symbol moved within the file: git shows it removed and added whole), the
        ranges are diffed alone (``difflib``), shifted to the file's line numbers: what changed in the symbol, not
        its whole body twice.
    """
    blocks = _blocks(repo, old_oid, new_oid) if old_range and new_range else None  # one side empty: all +, all -
    if blocks is None:
        return _alone(old_lines, new_lines, old_range, new_range, context)
    ops = _in_range(_aligned(blocks, len(old_lines), len(new_lines)), old_range, new_range)
    if not any(kind == " " for kind, _, _ in ops):
        # no line of the range kept where it was: the symbol moved in the file (git removes it and adds it whole),
        # or git saw no change where its lines differ; its own lines, diffed alone, say what changed in it
        return _alone(old_lines, new_lines, old_range, new_range, context)
    return _hunks(ops, old_lines, new_lines, context, old_range.start - 1, new_range.start - 1)


def _alone(old_lines: list[str], new_lines: list[str], old_range: range, new_range: range,
           context: int) -> list[str]:
    old_part = old_lines[old_range.start - 1:old_range.stop - 1]
    new_part = new_lines[new_range.start - 1:new_range.stop - 1]
    out = []
    for line in list(difflib.unified_diff(old_part, new_part, lineterm="", n=context))[2:]:
        if line.startswith("@@"):
            m = HUNK_HEADER.match(line)
            assert m is not None
            o = int(m[1]) + max(old_range.start - 1, 0)
            n = int(m[3]) + max(new_range.start - 1, 0)
            line = f"@@ -{o}{'' if m[2] is None else ',' + m[2]} +{n}{'' if m[4] is None else ',' + m[4]} @@"
        out.append(line)
    return out
