"""What every heading of a narrative says about *why* a snapshot exists, and git operations that cancel out.

Every heading of the file trajectory, the project trajectory, ``compare`` and the session summary names the
reason for its snapshot (issue 23, item 5; issue 28, item 3): the checkpoint's name, the intent, or for what the
agent did not write (git's operations, restores, consolidations, the start of recording) what the commit's first
line says. :func:`why` is that one rule.

A run of git operations (or restores) that ends where it began — ``git reset --hard HEAD~1`` then
``git reset --hard ORIG_HEAD``, a ``git stash`` then its ``pop`` — changed nothing: :func:`net_zero_spans` finds
such runs by comparing object ids (a file's blob ids, a commit's tree ids), so a narrative says them in one line
("back to where it was: no net change") instead of two diffs that undo each other, and spends the budget on the
agent's edits. A file's trajectory and a symbol's find them alike, by the file's blob ids (:func:`file_spans`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from code_trajectory.core.errors import StorageError
from code_trajectory.core.freetext import free_text
from code_trajectory.git.file_versions import FileVersion
from code_trajectory.git.log import CommitRecord
from code_trajectory.git.messages import CONSOLIDATE_PREFIX, one_line
from code_trajectory.git.shadow import ShadowRepo

#: Characters of an intent, or a checkpoint's name, repeated from the heading before (the first heading that has it
#: shows it whole): a test command run after each edit names each snapshot ``before test run: <command>``.
REPEATED_INTENT_CHARS = 48


def operation_label(record: CommitRecord) -> str:
    """``[RESET] moving to HEAD~1`` for a git operation's snapshot (``[RESTORE] from abc (~2)`` for a restore):
    the first line without its time and file summary, and without a restore's intent (the heading says it apart)."""
    subject = record.subject
    if record.kind == "restore" and record.intent:
        head, _, rest = subject.partition(" - ")
        said = free_text(record.intent) + " - "
        if rest.startswith(said):
            subject = f"{head} - {rest[len(said):]}"
    parts = subject.split(" - ")
    head = parts[0].split("] ")[0] + "]" if parts[0].startswith("[") else parts[0]
    middle = parts[1:-1] if record.changes and len(parts) >= 3 else parts[1:]
    return f"{head} {' - '.join(middle)}" if middle else head


#: Display names of the clients whose hooks record origins (``Trajectory-Origin``).
CLIENT_NAMES = {"claude-code": "Claude Code"}
#: The origin of code-trajectory's own writes to the project (``install``/``uninstall`` of a client's set-up).
OWN_CLIENT = "code-trajectory"


def editor_of(record: CommitRecord) -> str | None:
    """Who made the snapshot ``record`` when it holds an origin: ``Claude Code (Edit)`` (the client's display name,
    then the tool), ``code-trajectory (install claude-code)``; None for one no hook nor set-up recorded."""
    origin = record.origin
    if not origin:
        return None
    client = CLIENT_NAMES.get(origin["client"], origin["client"])
    return client + (f" ({origin['tool']})" if origin.get("tool") else "")


def why(record: CommitRecord, *, previous_intent: str | None = None, previous_note: str | None = None,
        import_files: bool = True, restore: bool = True) -> str:
    """Why the snapshot ``record`` exists, in a few words, for a heading.

    Args:
        record: the snapshot.
        previous_intent: the intent of the heading shown just before; a repeated intent is shortened to
            :data:`REPEATED_INTENT_CHARS` characters.
        previous_note: the checkpoint's name of the heading shown just before; a repeated one is shortened alike.
        import_files: for the start of recording, say how many files it holds (a project-wide heading).
        restore: say where a restore came from (False: said apart, as the session summary's "Restores:" line).

    Returns:
        ``checkpoint: before refactor · Intent: Fix login`` (name and intent, either alone), ``[RESET] moving to
        HEAD~1 (git)``, ``restore: [RESTORE] from abc123 (~2)``, ``consolidation: Fix login``, ``start of recording:
        42 files``, ``edited by code-trajectory (install claude-code)`` for a client set-up's write (it carries no
        intent), or ``no intent set`` for a snapshot nobody explained (``found by a full scan, no intent set`` for
        a start-up scan's or a rescan's).
    """
    if record.is_import:
        files = record.change_count
        return f"start of recording: {files} file(s)" if import_files and files else "start of recording"
    if record.is_git_operation:
        return f"{operation_label(record)} (git)"
    if record.is_consolidation:
        subject = record.subject.removeprefix(CONSOLIDATE_PREFIX).strip()
        return f"consolidation: {subject.split(' - ', 1)[1] if ' - ' in subject else subject}"
    parts = []
    if record.checkpoint_note:
        note = record.checkpoint_note
        if note == previous_note:
            note = one_line(note, REPEATED_INTENT_CHARS)
        parts.append(f"checkpoint: {note}")
    if record.intent:
        intent = record.intent
        if intent == previous_intent:
            intent = one_line(intent, REPEATED_INTENT_CHARS)
        parts.append(f"Intent: {intent}")
    if record.kind == "restore" and restore:
        parts.append(f"restore: {operation_label(record)}")
    if not parts and record.kind == "reconcile":  # a start-up or rescan's snapshot: saves nothing recorded one by one
        return "found by a full scan, no intent set"
    if not parts and record.origin and record.origin["client"] == OWN_CLIENT:  # a set-up's write carries no intent
        return f"edited by {editor_of(record)}"
    return " · ".join(parts) if parts else "no intent set"


def began_recording(record: CommitRecord) -> bool:
    """True for the history's first snapshot (the import, or a first ``checkpoint`` of a project nothing recorded
    before): what it holds is how things were when recording began, a baseline rather than news."""
    return record.is_import or not record.parents


def label(record: CommitRecord) -> str:
    """A project-wide heading's line: the kind's prefix and :func:`why` (``[AUTO-TRJ] Intent: Fix login``,
    ``[AUTO-TRJ] checkpoint: before refactor``, ``[RESET] moving to HEAD~1 (git)``); a consolidation's first line."""
    if record.is_consolidation:
        return record.subject
    text = why(record)
    return text if text.startswith("[") else f"{record.subject.split(' ', 1)[0]} {text}"


@dataclass(frozen=True)
class Step:
    """One change in a sequence, for :func:`net_zero_spans`.

    Attributes:
        before: the id of the state before it (a blob or tree id; None or the zero id: absent).
        after: the id of the state after it.
        operation: True for what the agent did not edit: a git operation, a restore.
    """

    before: str | None
    after: str | None
    operation: bool


def net_zero_spans(steps: Sequence[Step]) -> list[tuple[int, int]]:
    """Runs of at least two consecutive operations that end in the state they started from.

    Args:
        steps: the changes, oldest first, each starting where the one before ended.

    Returns:
        ``(first, last)`` index pairs (inclusive), oldest first, not overlapping; each is the shortest such run
        starting at ``first``.
    """
    spans = []
    i = 0
    while i < len(steps):
        if steps[i].operation:
            for j in range(i + 1, len(steps)):
                if not steps[j].operation:
                    break
                if steps[j].after == steps[i].before:
                    spans.append((i, j))
                    i = j
                    break
        i += 1
    return spans


def is_operation(record: CommitRecord) -> bool:
    """True for a snapshot nobody edited: a git operation's or a restore's (what :class:`Step` calls an operation)."""
    return record.is_git_operation or record.kind == "restore"


def file_spans(entries: Sequence[FileVersion]) -> list[tuple[int, int]]:
    """:func:`net_zero_spans` of a file's versions (oldest first), by the file's blob ids: the runs of git operations
    and restores after which the file is byte for byte as before the first. A symbol's versions (those of its
    file that changed it) are told by the same rule: the file back as it was is the symbol back as it was."""
    return net_zero_spans([Step(e.change.old_oid, e.change.new_oid, is_operation(e.record)) for e in entries])


def net_zero_line(records: Sequence[CommitRecord]) -> str:
    """``[RESET] moving to HEAD~1, then [RESET] moving to ORIG_HEAD: back to where it was, no net change``."""
    return f"{', then '.join(operation_label(r) for r in records)}: back to where it was, no net change"


def cap_names(names: list[str], limit: int) -> tuple[list[str], int]:
    """The first ``limit`` of ``names`` and how many were left out (for a closing ``+ N more``)."""
    return (names, 0) if len(names) <= limit else (names[:limit], len(names) - limit)


def operation_trees(repo: ShadowRepo, records: Sequence[CommitRecord]) -> dict[str, str]:
    """``{commit: tree id}`` of the git operations and restores among ``records`` and of their first parents: what
    :func:`net_zero_spans` compares to find operations that cancel out."""
    trees: dict[str, str] = {}
    for record in records:
        if record.is_git_operation or record.kind == "restore":
            for oid in [record.oid, *record.parents[:1]]:
                try:
                    trees.setdefault(oid, repo.commit_tree_oid(oid))
                except StorageError:  # a parent not fetched with a shared trajectory: nothing to compare
                    continue
    return trees
