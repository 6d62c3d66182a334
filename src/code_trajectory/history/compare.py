"""The net change between two trees, per file: counts, the symbols that changed, and every changed line.

Used by ``diff_since_green`` (the last green snapshot against the newest) and ``compare`` (any two snapshots, or
a snapshot and the work tree). Files are told most relevant first (source code, then other text, then
generated-looking files); each keeps its line with counts and symbols, then each file's diff, changed lines only
(:data:`~code_trajectory.history.versions.LEAN_CONTEXT` lines of context: git's hunk header names the enclosing
function), so a breaking one-line change is shown line for line rather than as ``M calc.py (+1 -1)``. The token
budget is a safety cap: the diffs that do not fit in it are named with their changed lines and the exact call
that shows each.
"""

from __future__ import annotations

import json
import shlex

from code_trajectory.core.answer import Answer, code_block, fenced, message, sections
from code_trajectory.core.text import cli_option, path_field
from code_trajectory.git.diffs import tree_changes
from code_trajectory.git.log import literal
from code_trajectory.git.messages import FileChange, display_path
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import fields
from code_trajectory.history.change_lines import change_set_lines
from code_trajectory.history.narrative import CHARS_PER_TOKEN, cut_diff, fit, lean_hunk_headers
from code_trajectory.history.summary import relevance_tier
from code_trajectory.history.versions import LEAN_CONTEXT

#: Characters kept for the file list's closing note (which diffs were left out, and the calls that show them): 20
#: names and 3 spelled calls of long paths take ~2,400.
NOTE_RESERVE = 2600
#: Left-out files whose exact ``compare`` call the note spells out.
CALLS_SPELLED = 3


def file_diff(repo: ShadowRepo, old_tree: str | None, new_tree: str, change: FileChange) -> str:
    """The diff of one file between two trees, without git's file header lines, with :data:`LEAN_CONTEXT` lines of
    context (the file's line names the changed symbols, the hunk headers where)."""
    from code_trajectory.git.tree_format import EMPTY_TREE_OID

    paths = [change.path] + ([change.old_path] if change.old_path else [])
    out = repo.git.text(["diff-tree", "-p", "-M", "--no-color", "--no-ext-diff", f"-U{LEAN_CONTEXT}",
                         old_tree or EMPTY_TREE_OID, new_tree, "--", *literal(paths)])  # `:/a.py` is a name
    skip = ("diff --git ", "index ", "--- ", "+++ ", "similarity index ", "rename from ", "rename to ",
            "new file mode ", "deleted file mode ")
    return lean_hunk_headers("\n".join(line for line in out.split("\n") if not line.startswith(skip)).strip("\n"))


def render_net_change(repo: ShadowRepo, old_commit: str | None, new_tree: str, budget_tokens: int, *,
                      heading: str, new_label: str, only: str | None = None) -> Answer:
    """Markdown of the net change from ``old_commit`` (None: nothing) to the tree ``new_tree``.

    Args:
        repo: the shadow repository.
        old_commit: the snapshot compared from.
        new_tree: the tree compared to (a snapshot's, or the work tree's written as a tree).
        budget_tokens: the answer's budget.
        heading: the first lines (what is compared with what).
        new_label: how to name the newer side in hints (a commit id, or ``now``).
        only: one file (relative to the project root): the change of that file alone.

    Returns:
        The markdown and its data (``files``: status, paths, counts, symbols, whether the diff is shown).
    """
    old_tree = repo.commit_tree_oid(old_commit) if old_commit else None
    changes = tree_changes(repo, old_tree, new_tree)
    if only is not None:
        changes = [c for c in changes if only in (c.path, c.old_path)]
    changes.sort(key=lambda c: (relevance_tier(c.path), c.path))
    if not changes:
        return message(f"{heading}\n\nNo difference: the two states are identical.")
    lines: list[str] = []
    data = []
    # a deleted file's symbols too (what it took away, as the log says); one moved to another file said moved
    said = change_set_lines(repo, changes, lean=True)
    for change in changes:
        symbols = said.get(change.path)
        counts = change.counts()
        lines.append(f"- {change.status} {change.where('`')}{' ' + counts if counts else ''}{': ' + symbols if symbols else ''}")
        data.append({"status": change.status, "path": change.path, "old_path": change.old_path,
                     "added": change.added, "deleted": change.deleted, "symbols": symbols, "diff_shown": False,
                     "mark": f"### `{display_path(change.path)}`\n```"})
    budget = budget_tokens * CHARS_PER_TOKEN  # no share or per-diff cap: the diffs may fill what the list leaves
    lines = _listed(lines, budget - len(heading) - 200 - NOTE_RESERVE)
    room = max(0, budget - len(heading) - sum(len(x) + 1 for x in lines) - 100 - NOTE_RESERVE)
    diffs: list[str] = []
    left_out: list[FileChange] = []
    for change, item in zip(changes, data):
        if change.status == "D" or room < 200:
            if change.status != "D":
                left_out.append(change)
            continue
        diff = file_diff(repo, old_tree, new_tree, change)
        if not diff:
            continue
        if len(diff) + 40 > room:
            if diffs:  # later files: name them, the first one is cut to fit
                left_out.append(change)
                continue
            diff = cut_diff(diff, room - 40, _whole_diff_how(old_commit, new_label, change.path, alone=only is not None))
        block = f"### `{display_path(change.path)}`\n{code_block(diff)}"
        diffs.append(block)
        room -= len(block)
        item["diff_shown"] = True
    out = [heading, f"## Files ({len(changes)}), most relevant first", "\n".join(lines)]
    if diffs:
        out.append("## Diffs")
        out += diffs
    if left_out:
        out.append(left_out_note(old_commit, new_label, left_out))
    text = fit("\n\n".join(out), budget_tokens, ask_less="one file with filepath, or snapshots closer together")
    return Answer(text, net_change_data(text, data))


def _listed(lines: list[str], room: int) -> list[str]:
    """The file list's ``lines`` (most relevant first) that fit in ``room`` characters, then one line counting the
    others, so that the list never pushes the answer's closing note past its budget."""
    size = sum(len(line) + 1 for line in lines)
    if size <= room:
        return lines
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > room - 200:
            break
        kept.append(line)
        size += len(line) + 1
    kept.append(f"- … and {len(lines) - len(kept)} more changed file(s), not listed to fit the answer's budget "
                "(give `filepath` for one of them, or compare snapshots closer together)")
    return kept


def left_out_note(old_commit: str | None, new_label: str, left_out: list[FileChange]) -> str:
    """Which files' diffs were left out (only past the answer's budget), how many changed lines they hold, and the
    exact ``compare`` call and CLI command that show each."""
    old = (old_commit or "")[:12]
    lines = sum((c.added or 0) + (c.deleted or 0) for c in left_out)
    names = ", ".join(f"`{display_path(c.path)}`" for c in left_out[:20])
    more = f" and {len(left_out) - 20} more" if len(left_out) > 20 else ""
    paths = [c.path for c in left_out]
    out = [f"_Diffs left out: {names}{more}, {lines} changed line(s) past this answer's token budget. One file "
           "at a time:_"]
    out += [f"- `compare(from_snapshot=\"{old}\", to_snapshot=\"{new_label}\", filepath={json.dumps(p)})` "
            f"(CLI: `code-trajectory compare {old} {new_label} {cli_option('--file', p)}`)" for p in paths[:CALLS_SPELLED]]
    if len(paths) > CALLS_SPELLED:
        out.append("- the others alike, with their `filepath`")
    return "\n".join(out)


def _whole_diff_how(old_commit: str | None, new_label: str, path: str, *, alone: bool) -> str:
    """How to see a cut diff whole: this file alone through ``compare``, or (already alone) git itself."""
    old = (old_commit or "")[:12]
    if not alone:
        return f"this file alone: `compare(from_snapshot=\"{old}\", to_snapshot=\"{new_label}\", filepath={json.dumps(path)})`"
    if new_label == "now":
        return f"the whole diff: `git --git-dir=.trajectory --work-tree=. diff {old} -- {shlex.quote(path)}`"
    return f"the whole diff: `git --git-dir=.trajectory diff {old} {new_label} -- {shlex.quote(path)}`"


def net_change_data(text: str, files: list[dict]) -> dict:
    """The structured content of a net change (see :mod:`code_trajectory.core.answer`): ``files``, rows of ``cols``
    (:data:`~code_trajectory.history.fields.FILE_COLUMNS` as far as a row reaches) in the text's order (most
    relevant first), and ``diffs``: path -> the diff as shown, for the files whose diff
    the text shows, in its order."""
    shown_files = [f for f in files if f["diff_shown"]]
    diffs = {path_field(f["path"]): fenced(part)
             for f, part in zip(shown_files, sections(text, [f["mark"] for f in shown_files]))}
    rows = [[f["status"], path_field(f["path"]), f["added"], f["deleted"], f["symbols"],
             f["old_path"] and path_field(f["old_path"])] for f in files]
    return {"cols": fields.file_columns(rows), "files": rows, "diffs": diffs}
