"""What a restore did, and its answer: the result's fields, the text an agent reads (what was written, removed, left
alone and why, the safety snapshot and its undo), the dry run's diff and the message of a failed restore."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from code_trajectory.core.answer import Answer, code_block, fenced, short
from code_trajectory.core.text import cli_operands, path_field
from code_trajectory.git.messages import display_path, how_named
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.narrative import fit

#: Files a dry run or an answer lists by name at most.
LISTED = 40
#: The result's lists of paths, in the order its answer's fields give them (each path: ``path_field``).
_PATH_LISTS = ("written", "removed", "saved_first", "not_recorded", "kept_unrecorded")


@dataclass
class RestoreResult:
    """What a restore did (or, for a dry run, would do).

    Attributes:
        source: the snapshot restored from (commit id); how: how the reference named it.
        safety_snapshot: the snapshot holding the state before the restore (restore it to undo), None in a dry run.
        commit: the ``[RESTORE]`` snapshot, None when nothing changed or in a dry run.
        written, removed: paths written and removed, relative to the project root.
        saved_first: paths saved while the restore ran: recorded before they were overwritten.
        not_recorded: paths left as they are because a content involved was not recorded (over the size cap): the
            snapshot's (never written over a file), or the file's now (it could not be put back).
        kept_unrecorded: paths left as they are because what is there now is in no snapshot, so overwriting or
            removing it could not be undone: a file ignored or a secret now (by name or content), one that cannot
            be read, or one saved again and again while the restore ran.
        other_branch: the branch whose shadow history holds the source, when it is not this branch's.
        diff: the change applied (or that would be), without git's file headers.
        dry_run: nothing was written.
        scope: the files, directories or globs the restore was limited to, as given (empty: the whole project); the
            undo the answer suggests is limited to them too.
        text: the markdown answer.
    """

    source: str
    how: str
    safety_snapshot: str | None = None
    commit: str | None = None
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    saved_first: list[str] = field(default_factory=list)
    not_recorded: list[str] = field(default_factory=list)
    kept_unrecorded: list[str] = field(default_factory=list)
    other_branch: str | None = None
    diff: str = ""
    dry_run: bool = False
    scope: list[str] = field(default_factory=list)
    text: str = ""

    def answer(self) -> Answer:
        """The markdown with the result's fields as data (see :mod:`code_trajectory.core.answer`): ``source``,
        ``how``, ``safety_snapshot`` and ``commit`` (ids as the text shows them), the paths ``written``,
        ``removed``, ``saved_first``, ``not_recorded``, ``kept_unrecorded``, ``other_branch``, ``dry_run`` and,
        for a dry run, the
        ``diff`` as shown."""
        return Answer(self.text, {"source": short(self.source) if self.source else None, "how": self.how,
                                  "safety_snapshot": short(self.safety_snapshot) if self.safety_snapshot else None,
                                  "commit": short(self.commit) if self.commit else None,
                                  **{key: [path_field(p) for p in getattr(self, key)] for key in _PATH_LISTS},
                                  "other_branch": self.other_branch,
                                  "dry_run": self.dry_run, "diff": fenced(self.text) if self.dry_run else None})


def failure_message(result: RestoreResult, exc: Exception, failed: str | None, done: list[str], not_back: list[str]) -> str:
    """The error of a restore that failed part-way and was put back."""
    safety = (result.safety_snapshot or "")[:12]
    failed_back = set(not_back)
    back = [p for p in done if p not in failed_back]
    lines = [f"restore from {result.source[:12]} failed" + (f" writing `{display_path(failed)}`" if failed else "") + f": {exc}."]
    if back:
        shown = ", ".join(f"`{display_path(p)}`" for p in back[:LISTED]) + (f" and {len(back) - LISTED} more"
                                                             if len(back) > LISTED else "")
        lines.append(f"Put back as they were before the restore ({len(back)}): {shown}.")
    else:
        lines.append("No file had been changed yet.")
    if not_back:
        lines.append(f"Could not put back ({len(not_back)}): {', '.join(f'`{display_path(p)}`' for p in not_back[:LISTED])}; "
                     f"restore them from the safety snapshot: restore(snapshot=\"{safety}\", paths=[...]) or "
                     f"`code-trajectory restore {safety} PATH...`.")
    if safety:
        lines.append(f"The safety snapshot `{safety}` holds every file as it was before: "
                     f"restore(snapshot=\"{safety}\") returns to it.")
    lines.append("Fix the cause (disk space, permissions, what is in the way) and restore again.")
    return " ".join(lines)


def _header_name(pair: str) -> str:
    """The path of ``diff --git``'s ``a/NAME b/NAME`` (without renames both are one), each in double quotes with C
    escapes when git quotes it (a tab, a line feed, a quote, a byte that is not UTF-8:
    :func:`~code_trajectory.git.log.unquote_path`); a name may hold `` b/`` itself (``x b/y.py``)."""
    from code_trajectory.git.log import unquote_path

    if pair.startswith('"'):  # '"a/Q" "b/Q"': a quote inside Q is escaped, so the last ' "' starts the second
        return unquote_path(pair[pair.rindex(' "') + 1:])[len("b/"):]
    return pair[(len(pair) + 1) // 2 + len("b/"):]  # 'a/N b/N': the second half after 'b/'


def planned_diff(repo: ShadowRepo, old_tree: str | None, new_tree: str, paths: set[str], budget_tokens: int) -> str:
    """The diff from ``old_tree`` to ``new_tree`` limited to ``paths`` (relative to the project root), read in one
    ``git diff-tree`` and cut to half of ``budget_tokens``; each file starts with a ``--- path`` line (the path
    shown: :func:`~code_trajectory.git.messages.display_path`) instead of
    git's four header lines, source code first (then other text, then generated-looking files, each by path: the
    order of ``compare``), and a cut names every file not shown whole."""
    from code_trajectory.git.tree_format import EMPTY_TREE_OID
    from code_trajectory.history.narrative import CHARS_PER_TOKEN
    from code_trajectory.history.summary import relevance_tier

    if not paths:
        return ""
    out = repo.git.out(["diff-tree", "-p", "--no-color", "--no-ext-diff", "-U2", "--no-renames",
                        old_tree or EMPTY_TREE_OID, new_tree]).strip()
    files: dict[str, list[str]] = {}
    lines: list[str] | None = None
    for raw in out.split(b"\n"):
        line = raw.decode("utf-8", "replace")  # the content as the text shows it; a name as Python holds it:
        if raw.startswith(b"diff --git "):
            name = _header_name(raw[len(b"diff --git "):].decode("utf-8", "surrogateescape"))
            lines = files.setdefault(name, [f"--- {display_path(name)}"]) if name in paths else None
        elif lines is not None and not line.startswith(("index ", "--- ", "+++ ", "new file mode ",
                                                          "deleted file mode ")):
            lines.append(line)
    order = sorted(files, key=lambda p: (relevance_tier(p), p))
    limit = budget_tokens * CHARS_PER_TOKEN // 2
    kept: list[str] = []
    size = 0
    for index, name in enumerate(order):
        for line in files[name]:
            size += len(line) + 1
            if size > limit:
                # the files whose diff is cut or not shown, and how to see one (a dry run of it alone)
                missing = [*order[index:], *sorted(paths - set(files))]
                named = ", ".join(f"`{display_path(p)}`" for p in missing[:LISTED]) + (f" and {len(missing) - LISTED} more"
                                                                           if len(missing) > LISTED else "")
                kept.append(f"… [diff cut to fit the answer; {len(paths)} file(s) in all, {len(missing)} not shown "
                            f"(whole or in part): {named}; a dry run with one of them as paths shows its diff]")
                return "\n".join(kept)
            kept.append(line)
    return "\n".join(kept)


#: Files a whole-project restore changed up to which its undo names them (beyond, the undo is the whole project's).
UNDO_NAMED = 10


def _undo_hint(safety: str, scope: list[str], changed: list[str]) -> str:
    """How to undo a restore from its safety snapshot ``safety``: limited to the restore's ``scope`` (the paths it
    was given), or to the files it ``changed`` (written or removed) when it had none and they are few, so that the
    undo puts back only what the restore changed and leaves later edits elsewhere alone; the whole project
    otherwise, which also undoes the edits made since (said)."""
    if not scope and 0 < len(changed) <= UNDO_NAMED:
        scope = changed
    if scope:
        return (f"undo with restore(snapshot=\"{safety}\", paths={json.dumps(scope, ensure_ascii=False)}) (or "
                f"`code-trajectory restore {safety} {cli_operands(scope)}`).")
    return (f"undo with restore(snapshot=\"{safety}\") (or `code-trajectory restore {safety}`): the whole project, "
            "so edits made after this restore are undone too; name paths to undo only those files.")


def describe(result: RestoreResult, budget_tokens: int) -> str:
    verb = "Would restore" if result.dry_run else "Restored"
    lines = [f"# {verb} from `{result.source[:12]}`{how_named(result.source, result.how)}"]
    if result.other_branch:
        lines.append(f"Note: that snapshot is on another branch's shadow history (`{result.other_branch}`), not "
                     "this branch's.")
    if not result.written and not result.removed:
        lines.append("Nothing written." if result.not_recorded or result.kept_unrecorded
                     else "Nothing to change: the selected files already match that snapshot.")
    else:
        labels = ("Would write", "Would remove") if result.dry_run else ("Written", "Removed")
        for label, items in zip(labels, (result.written, result.removed)):
            if items:
                shown = ", ".join(f"`{display_path(p)}`" for p in items[:LISTED])
                more = f" and {len(items) - LISTED} more" if len(items) > LISTED else ""
                lines.append(f"- {label} ({len(items)}): {shown}{more}")
    if result.not_recorded:
        lines.append(f"- Left as they are ({len(result.not_recorded)}): "
                     f"{', '.join(f'`{display_path(p)}`' for p in result.not_recorded[:LISTED])}: the snapshot's content or what "
                     "is there now was not recorded (over the size cap), so a restore could not write it or undo the "
                     "write (raise max_file_bytes to record such files)")
    if result.kept_unrecorded:
        lines.append(f"- Left as they are ({len(result.kept_unrecorded)}): "
                     f"{', '.join(f'`{display_path(p)}`' for p in result.kept_unrecorded[:LISTED])}: what is there now is in no "
                     "snapshot (ignored or a secret now, unreadable, or saved again while the restore ran), so "
                     "replacing it could not be undone; move it aside or record it, then restore again")
    if result.saved_first:
        lines.append(f"- Saved while the restore ran, recorded before being overwritten: "
                     f"{', '.join(f'`{display_path(p)}`' for p in result.saved_first)}")
    if result.safety_snapshot and (result.written or result.removed):
        lines.append(f"**Safety snapshot:** `{result.safety_snapshot[:12]}` holds the state before this restore; "
                     f"{_undo_hint(result.safety_snapshot[:12], result.scope, [*result.written, *result.removed])}")
    if result.commit:
        lines.append(f"Recorded as `{result.commit[:12]}` ([RESTORE]).")
    if result.diff and result.dry_run:
        lines.append(code_block(result.diff))
    return fit("\n\n".join(lines), budget_tokens, ask_less="fewer paths")
