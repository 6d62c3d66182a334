"""The session summary: whether a new session starts now, and what the last one did, branch by branch.

A session is a run of snapshots without a gap longer than ``session_gap_seconds`` (1 h by default) across
every shadow branch. The last session is told branch by branch (the agent's work on ``feature`` is not
mixed with what a checkout back to ``main`` did): snapshots, intents, the files most changed ranked by
relevance (edited source first, generated-looking files last), git operations, and the net change.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from code_trajectory.git.log import CommitRecord, describe_files
from code_trajectory.git.messages import FileChange, display_path
from code_trajectory.history.headings import Step, net_zero_line, net_zero_spans, operation_label, why
from code_trajectory.history.narrative import fit, fmt_duration, fmt_time

#: Files listed per branch under "files most changed".
FILES_LISTED = 8
#: Intents listed per branch, the newest (the earlier ones are counted).
INTENTS_LISTED = 12
#: Extensions of source code: their files rank first among changed files.
SOURCE_EXTENSIONS = frozenset({".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java",
                               ".kt", ".kts", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs",
                               ".rb", ".php", ".swift", ".m", ".mm", ".lua", ".sh", ".bash", ".zsh", ".sql", ".r",
                               ".jl", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart", ".vue", ".svelte"})
#: Names and extensions of files that are usually generated, vendored or binary assets: they rank last.
GENERATED_NAMES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Cargo.lock",
                             "go.sum", "uv.lock", "Pipfile.lock", "composer.lock", "Gemfile.lock"})
GENERATED_EXTENSIONS = frozenset({".lock", ".min.js", ".map", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".ico",
                                  ".pdf", ".woff", ".woff2", ".ttf", ".pyc", ".so", ".dll", ".dylib", ".o", ".a",
                                  ".class", ".jar", ".whl", ".zip", ".gz"})
GENERATED_DIRS = frozenset({"dist", "build", "vendor", "node_modules", "__pycache__", "target", "out", "assets",
                            "static", "generated", "gen", "coverage"})

#: How to ask for less than a summary cut to its budget (it takes no size parameter).
_ASK_LESS = ("get_global_trajectory with a limit for the snapshots, get_file_trajectory for one file; CLI `log --limit N`, `file PATH`")


def relevance_tier(path: str) -> int:
    """0 for source code, 1 for other text (docs, config), 2 for generated-looking files and assets."""
    name = posixpath.basename(path)
    lowered = name.lower()
    parts = path.split("/")[:-1]
    if name in GENERATED_NAMES or any(lowered.endswith(ext) for ext in GENERATED_EXTENSIONS) or \
            any(part in GENERATED_DIRS for part in parts):
        return 2
    return 0 if posixpath.splitext(lowered)[1] in SOURCE_EXTENSIONS else 1


#: Files of a branch's net change the session summary lists (and names the changed symbols of).
NET_FILES_LISTED = 20


def net_order(changes: list[FileChange]) -> list[FileChange]:
    """A net change's files in the order the summary lists them: source code first, then other text, then
    generated-looking files (:func:`relevance_tier`), each by path."""
    return sorted(changes, key=lambda c: (relevance_tier(c.path), c.path))


def restore_line(record: CommitRecord) -> str:
    """A restore as the summary lists it: ``[RESTORE] from abc123 (checkpoint "x"): M src/a.py (+1 -6)``, its
    intent left out (the intents are listed above) and its time said once."""
    files = record.subject.split(" - ")[-1] if record.changes else ""
    return f"{operation_label(record)}{': ' + files if files else ''}"


@dataclass
class BranchWork:
    """What the last session did on one branch (its snapshots newest first)."""

    branch: str
    records: list[CommitRecord] = field(default_factory=list)

    def edits(self) -> list[CommitRecord]:
        """The agent's (and the user's) snapshots: not imports, git operations nor restores (a restore and its undo
        put files back: counting their lines as work doubled a file's). A consolidation is the work it squashed (its
        snapshots are gone from the history): left out, a task consolidated as done vanished from the intents and
        the files most changed."""
        return [r for r in self.records if not (r.is_import or r.is_git_operation or r.kind == "restore")]

    def restores(self) -> list[CommitRecord]:
        """The restores of the session, newest first."""
        return [r for r in self.records if r.kind == "restore"]

    def ranked_files(self) -> list[tuple[str, int, int, int]]:
        """``(path, snapshots, added, deleted)`` of the files edited, most relevant first."""
        touched: Counter[str] = Counter()
        plus: Counter[str] = Counter()
        minus: Counter[str] = Counter()
        for record in self.edits():
            for change in record.changes:
                touched[change.path] += 1
                plus[change.path] += change.added or 0
                minus[change.path] += change.deleted or 0
        order = sorted(touched, key=lambda p: (relevance_tier(p), -touched[p], -(plus[p] + minus[p]), p))
        return [(p, touched[p], plus[p], minus[p]) for p in order]


def split_by_branch(records: list[CommitRecord]) -> list[BranchWork]:
    """Group a session's snapshots (newest first) by branch, the branch worked on last first."""
    work: dict[str, BranchWork] = {}
    for record in records:
        name = record.branch or "?"
        work.setdefault(name, BranchWork(name)).records.append(record)
    return list(work.values())


def render(*, now: datetime, gap_seconds: float, sessions: list[list[CommitRecord]], current_intent: str | None,
           current_branch: str, net_by_branch: dict[str, list[FileChange]], pending: bool, recap: str | None,
           budget_tokens: int, notices: list[str], tests: str | None = None,
           net_symbols: dict[str, dict[str, str]] | None = None, points_line: str | None = None,
           trees: dict[str, str] | None = None, points_listed: Collection[str] = ()) -> str:
    """Render the session summary as markdown within ``budget_tokens``.

    Args:
        now: the current time (aware).
        gap_seconds: the session gap, seconds.
        sessions: the sessions, newest first, each newest snapshot first.
        current_intent: the intent with its age, or None.
        current_branch: the project's branch now.
        net_by_branch: per branch of the last session, the net change from before its first snapshot of the
            session to its last one.
        net_symbols: the symbols that changed in those files, by branch then path (named after each file).
        trees: ``{commit: tree id}`` of the git operations and their first parents: operations that cancel out
            are said in one line (:func:`code_trajectory.history.headings.net_zero_spans`).
        pending: changes are waiting for the debounce.
        recap, tests: markdown sections shown after the work (None: left out).
        points_line: the points named in the session (see :func:`code_trajectory.history.markers.names_line`),
            shown before the final state.
        points_listed: the names ``points_line`` lists, not said again among a branch's checkpoints.
        budget_tokens: the token budget of the answer.
        notices: what the reader must know first (recording stopped, damage...).
    """
    out = ["# Session summary",
           f"Now: {fmt_time(now)}; project branch `{current_branch}`; current intent: "
           f"{current_intent or '(none set: call set_trajectory_intent; CLI `code-trajectory intent TEXT`)'}."]
    out += [f"**Notice:** {notice}" for notice in notices]
    if not sessions:
        out.append("No snapshots recorded yet: **this is a new session.**")
        out += [section for section in (tests, recap) if section]
        return fit("\n\n".join(out), budget_tokens, ask_less=_ASK_LESS)
    last = sessions[0]
    newest, oldest = last[0], last[-1]
    idle = (now - newest.time).total_seconds()
    if idle > gap_seconds:
        out.append(f"The last snapshot was {fmt_duration(idle)} ago, more than the {fmt_duration(gap_seconds)} "
                   "session gap: **a new session starts now.** The summary below is of the previous session.")
    else:
        out.append(f"The last snapshot was {fmt_duration(idle)} ago: **the current session continues.**")
    if pending:
        out.append("Changes saved since the last snapshot are waiting for the debounce.")
    span = (newest.time - oldest.time).total_seconds()
    work = split_by_branch(last)
    out.append(f"## Last session: {fmt_time(oldest.time)} → {fmt_time(newest.time)} ({fmt_duration(span)}), "
               f"{len(last)} snapshot(s) on " + ", ".join(f"`{w.branch}`" for w in work))
    for branch_work in work:
        out.append(_branch_section(branch_work, net_by_branch.get(branch_work.branch), (net_symbols or {}).get(branch_work.branch, {}),
                                   trees or {}, points_listed))
    if points_line:
        out.append(points_line)
    restored = newest.kind == "restore"  # its branch's "Restores:" line says it: said once
    out.append(f"Final state: last snapshot {fmt_time(newest.time)} `{newest.oid[:12]}` on `{newest.branch or '?'}`: "
               f"{why(newest, restore=not restored)}{' · the restore listed above' if restored else ''}")
    out += [section for section in (tests, recap) if section]
    if len(sessions) > 1:
        prev = sessions[1]
        out.append(f"Earlier: {len(sessions) - 1} older session(s) in the history read; the one before ran "
                   f"{fmt_time(prev[-1].time)} → {fmt_time(prev[0].time)} ({len(prev)} snapshot(s)).")
    return fit("\n\n".join(out), budget_tokens, ask_less=_ASK_LESS)


def _branch_section(work: BranchWork, net: list[FileChange] | None, symbols: dict[str, str],
                    trees: dict[str, str], points_listed: Collection[str] = ()) -> str:
    edits = work.edits()
    lines = [f"### On `{work.branch}`: {len(edits)} edit snapshot(s)"]
    intents: list[tuple[str, datetime, datetime]] = []
    for record in reversed(edits):
        if record.intent:
            if intents and intents[-1][0] == record.intent:
                intents[-1] = (record.intent, intents[-1][1], record.time)
            else:
                intents.append((record.intent, record.time, record.time))
    if intents:
        earlier = f"{len(intents) - INTENTS_LISTED} earlier, then " if len(intents) > INTENTS_LISTED else ""
        lines.append(f"- Intents, in order: {earlier}" + "; ".join(
            f"\"{i}\" ({_minutes(t0, t1)})" for i, t0, t1 in intents[-INTENTS_LISTED:]))
    files = work.ranked_files()
    if files:
        shown = ", ".join(f"`{display_path(p)}` ({n} snapshot(s), +{a} -{d})" for p, n, a, d in files[:FILES_LISTED])
        more = f", and {len(files) - FILES_LISTED} more" if len(files) > FILES_LISTED else ""
        lines.append(f"- Files most changed: {shown}{more}")
    checkpoints = _checkpoints(work.records, points_listed)
    if checkpoints:
        lines.append("- Checkpoints: " + "; ".join(checkpoints[-12:]))
    operations = _operations(work.records, trees)
    if operations:
        lines.append("- Git operations: " + "; ".join(operations[-8:]))
    restores = work.restores()
    if restores:
        lines.append("- Restores: " + "; ".join(f"{r.time.astimezone().strftime('%H:%M')} {restore_line(r)}"
                                               for r in reversed(restores[:5])))
    consolidations = [r for r in work.records if r.is_consolidation]
    if consolidations:
        # as the restores: time and name (the subject repeated its date and time), the newest 5 oldest first
        lines.append("- Consolidations: " + "; ".join(
            f"{r.time.astimezone().strftime('%H:%M')} {why(r).removeprefix('consolidation: ')}"
            for r in reversed(consolidations[:5])))
    if net is not None:
        lines.append(f"- Net change on `{work.branch}` over the session ({len(net)} file(s)):" if net else
                     f"- Net change on `{work.branch}`: none (this branch ended where it began in the session)")
        lines += describe_files(net_order(net), NET_FILES_LISTED, symbols=symbols, rest_by_directory=True)
    return "\n".join(lines)


def _minutes(first: datetime, last: datetime) -> str:
    """``17:50–18:05``, or ``17:50`` when both are in one minute (an intent of one snapshot: said once, as the
    structured content says it)."""
    start, end = first.strftime("%H:%M"), last.strftime("%H:%M")
    return start if start == end else f"{start}–{end}"


def _checkpoints(records: list[CommitRecord], listed: Collection[str] = ()) -> list[str]:
    """The checkpoints' names of ``records`` (newest first), oldest first, each once with its time, a name given
    several times once with its count and the first and last time: ``"before test run: pytest -q" ×3
    (17:50–18:05)`` (a test command run after each edit names each snapshot so); but the names in ``listed``
    (the named points' line says them, with their snapshots)."""
    times: dict[str, list[str]] = {}
    for record in reversed(records):
        if record.checkpoint_note and record.checkpoint_note not in listed:
            note = record.checkpoint_note
            times.setdefault(note, []).append(record.time.astimezone().strftime("%H:%M"))
            times[note] = times.pop(note)  # ordered by the last time it was given
    return [f"\"{note}\" ({at[0]})" if len(at) == 1 else f"\"{note}\" ×{len(at)} ({at[0]}–{at[-1]})"
            for note, at in times.items()]


def _operations(records: list[CommitRecord], trees: dict[str, str]) -> list[str]:
    """``14:02 [RESET] moving to HEAD~1`` for each git operation of ``records`` (newest first), oldest first; a
    run of them that ends on the tree it started from is one entry (``… back to where it was, no net change``)."""
    chronological = list(reversed(records))
    spans = net_zero_spans([Step(trees.get(r.parents[0]) if r.parents else None, trees.get(r.oid),
                                 r.is_git_operation and r.oid in trees) for r in chronological])
    starts = {a: b for a, b in spans}
    inside = {k for a, b in spans for k in range(a + 1, b + 1)}
    found = []
    for i, record in enumerate(chronological):
        if i in inside or not record.is_git_operation:
            continue
        when = record.time.astimezone().strftime("%H:%M")
        found.append(f"{when} {net_zero_line(chronological[i:starts[i] + 1])}" if i in starts
                     else f"{when} {operation_label(record)}")
    return found
