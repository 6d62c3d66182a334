"""Markdown narratives of the shadow history, sized to a token budget.

Each answer is estimated at :data:`CHARS_PER_TOKEN` characters a token (the
rule of thumb OpenAI and Anthropic give for English text and code) and kept
within the budget: diffs are cut hunk-wise with a marker saying what was left
out and how to see it, whole entries are dropped oldest first.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import shlex
from datetime import datetime

from code_trajectory.git.log import CommitRecord
from code_trajectory.git.messages import display_path

#: Characters per token used to estimate the size of an answer.
CHARS_PER_TOKEN = 4


_HUNK_RE = re.compile(r"^@@ [^@]* @@ ?(.*)$")


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text`` (``len / CHARS_PER_TOKEN``, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def fmt_time(when: datetime) -> str:
    """``2026-11-21 14:02:11`` in the machine's local time."""
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def day_once(when: datetime, previous_day: str | None) -> tuple[str, str]:
    """A heading's time with its day said at the first heading of that day only: ``(shown, day)``, ``shown``
    ``2026-11-21 14:02:11`` or ``14:02:11`` when ``previous_day`` (the day of the heading before) is the same."""
    day, clock = fmt_time(when).split(" ", 1)
    return (clock if day == previous_day else f"{day} {clock}"), day


def fmt_duration(seconds: float) -> str:
    """``2 h 05 min``, ``12 min``, ``40 s``."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    return f"{hours // 24} days {hours % 24} h"


def fit(text: str, budget_tokens: int, *, ask_less: str = "smaller depth or limit") -> str:
    """Cut ``text`` to the budget with a closing marker (last resort after smarter trimming) saying how to ask for
    less (``ask_less``: the tool's own parameters)."""
    limit = budget_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    marker = f"\n\n… [answer cut to fit the {budget_tokens} token budget; ask for less ({ask_less})]"
    return text[: max(0, limit - len(marker))].rstrip() + marker


def cut_diff(diff: str, max_chars: int, how_to_see: str) -> str:
    """Keep whole lines of ``diff`` while they and the closing marker (what was left out, ``how_to_see``) fit in
    ``max_chars``; ``diff`` itself when it fits."""
    if len(diff) <= max_chars:
        return diff
    lines = diff.split("\n")
    hunks_total = sum(1 for line in lines if line.startswith("@@"))
    marker_room = len(how_to_see) + 90  # "… [diff cut: N more line(s), N more hunk(s) not shown; …]"
    kept: list[str] = []
    size = 0
    hunks_kept = 0
    for line in lines:
        if size + len(line) + 1 > max_chars - marker_room:
            break
        if line.startswith("@@"):
            hunks_kept += 1
        kept.append(line)
        size += len(line) + 1
    left = len(lines) - len(kept)
    marker = (f"… [diff cut: {left} more line(s), {max(0, hunks_total - hunks_kept)} more hunk(s) not shown; "
              f"{how_to_see}]")
    return "\n".join(kept) + "\n" + marker


_HUNK_HEADER = re.compile(r"^(@@ [^@]* @@)(?: (.*))?$")


def lean_hunk_headers(diff: str) -> str:
    """``diff`` with a hunk header's function context (the text after ``@@ ... @@``) left out where the hunk
    before said the same one: consecutive hunks in one function name it once (issue 28: cut repeated headers)."""
    out, previous = [], None
    for line in diff.split("\n"):
        match = _HUNK_HEADER.match(line) if line.startswith("@@") else None
        if match:
            context = match.group(2) or None
            if context is not None and context == previous:
                line = match.group(1)
            previous = context
        out.append(line)
    return "\n".join(out)


#: A line that opens a definition in common languages; used to refine git's hunk header, which names
#: the definition above the hunk's first *context* line rather than above its first change.
_DEFINITION_RE = re.compile(r"^\s*(?:async\s+def|def|class|function|func|fn|impl|struct|interface|enum|trait|"
                            r"module|(?:public|private|protected|static|export)\b.*\()\b")


def hunk_labels(diff: str) -> list[str]:
    """Return the function or class enclosing each hunk's first change, de-duplicated, in order.

    Starts from git's hunk header (its diff drivers, set in the shadow repository's
    ``info/attributes``) and moves to a definition line that appears in the hunk's
    context before the first changed line, when there is one.
    """
    labels: list[str] = []
    label: str | None = None
    searching = False
    for line in diff.split("\n"):
        match = _HUNK_RE.match(line)
        if match:
            if searching and label and label not in labels:
                labels.append(label)
            label = match.group(1).strip() or None
            searching = True
            continue
        if not searching:
            continue
        if line.startswith(("+", "-")):
            if label and label not in labels:
                labels.append(label)
            searching = False
        elif _DEFINITION_RE.match(line[1:]):
            label = line[1:].strip()
    if searching and label and label not in labels:
        labels.append(label)
    return labels


def message_head(record: CommitRecord) -> str:
    """The commit's first line without its brief file summary (the files are listed with it already)."""
    files = file_summary(record)
    return record.subject[:-len(" - " + files)] if files else record.subject


def file_summary(record: CommitRecord) -> str:
    """The brief file summary ending the commit's first line (``M src/app.py (+1 -1)``), or ``""`` when it has none
    (a consolidation's, or a subject without the ``tag time - intent - files`` parts)."""
    parts = record.subject.split(" - ")
    return parts[-1] if record.changes and len(parts) >= 3 and not record.is_consolidation else ""


def similar_paths(path: str, candidates: list[str], n: int = 5) -> list[str]:
    """Recorded paths a mistyped or partial ``path`` probably meant: the same file name anywhere first, then
    close file names, then close full paths (``difflib``)."""
    name = posixpath.basename(path)
    found = [c for c in candidates if posixpath.basename(c) == name and c != path]
    by_name: dict[str, list[str]] = {}
    for candidate in candidates:
        by_name.setdefault(posixpath.basename(candidate), []).append(candidate)
    for close in difflib.get_close_matches(name, list(by_name), n=n, cutoff=0.6):
        found += [c for c in by_name[close] if c not in found]
    found += [c for c in difflib.get_close_matches(path, candidates, n=n, cutoff=0.5) if c not in found]
    return found[:n]


def never_recorded(path: str, reason: str | None, exists: bool, candidates: list[str], *,
                   is_directory: bool = False, elsewhere: list[str] | None = None) -> str:
    """Answer for a path no snapshot ever touched (or a directory given where a file is expected); ``elsewhere``:
    other branches whose history holds it."""
    lines = [f"# Trajectory of `{display_path(path)}`"]
    inside = [c for c in candidates if c.startswith(path.rstrip("/") + "/")]
    if is_directory or inside:
        lines.append(f"`{display_path(path)}` is a directory: a trajectory is of one file. Give one of its "
                     f"{len(inside)} recorded file(s), or call get_global_trajectory for the whole project (CLI `code-trajectory "
                     "log`).")
        if inside:
            lines.append("Recorded files in it: " + ", ".join(f"`{display_path(c)}`" for c in inside[:12]) +
                         (f", and {len(inside) - 12} more" if len(inside) > 12 else ""))
        return "\n\n".join(lines)
    lines.append("No snapshot on this shadow branch has recorded this path.")
    if elsewhere:
        lines.append(f"It is recorded on branch {', '.join(f'`{b}`' for b in elsewhere)}: "
                     f"get_file_trajectory(filepath={json.dumps(path)}, branch={json.dumps(elsewhere[0])}) "
                     f"(CLI `--branch {shlex.quote(elsewhere[0])}`).")
        return "\n\n".join(lines)
    if reason:
        lines.append(f"It is not recorded: {reason}.")
    elif exists:
        lines.append("The file exists but has not been snapshotted yet (saved less than the debounce ago?); "
                     "call `checkpoint` to record it now.")
    else:
        lines.append("No such file exists in the project. Paths are relative to the project root.")
    close = similar_paths(path, candidates)
    if close:
        lines.append("Recorded paths with similar names: " + ", ".join(f"`{display_path(c)}`" for c in close))
    return "\n\n".join(lines)


# -- get_global_trajectory -------------------------------------------------------------------------
