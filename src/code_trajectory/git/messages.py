"""Shadow commit messages: the readable first line and the machine-readable trailers.

A snapshot's message::

    [AUTO-TRJ] 14:02:11 - Fix login retry - M src/auth.py (+12 -3), A tests/test_auth.py (+40)

    M src/auth.py (+12 -3)
    A tests/test_auth.py (+40)

    Trajectory-Kind: snapshot
    Trajectory-Intent: Fix login retry
    Trajectory-Branch: main
    Trajectory-Timestamp: 2026-11-21T14:02:11.123456+00:00

The first line is for people and models; code reads only the trailers (parsed by
git itself, ``%(trailers)``), never the prose. The intent part of the first line
is left out when no intent is set. A consolidation's first line is
``[CONSOLIDATE] <ISO timestamp> - <intent>``.

Free text (intents, checkpoint notes, git's reflog and operation labels, how a restore's source was named) goes
through :func:`code_trajectory.core.secrets.redact` first (:func:`free_text`), so no message holds a secret.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import overload

# re-exported: their home is core.freetext, which a hook imports without this module
from code_trajectory.core.freetext import MAX_INTENT_CHARS as MAX_INTENT_CHARS
from code_trajectory.core.freetext import free_text as free_text
from code_trajectory.core.freetext import one_line as one_line

# re-exported: its home is core.text, beside its inverse, which project.confine reads client paths with
from code_trajectory.core.text import display_path as display_path
from code_trajectory.core.text import shown_pair

SNAPSHOT_PREFIX = "[AUTO-TRJ]"
CONSOLIDATE_PREFIX = "[CONSOLIDATE]"

TRAILER_KIND = "Trajectory-Kind"
TRAILER_INTENT = "Trajectory-Intent"
TRAILER_BRANCH = "Trajectory-Branch"
TRAILER_TIMESTAMP = "Trajectory-Timestamp"
TRAILER_CHECKPOINT = "Trajectory-Checkpoint"
TRAILER_SQUASHED = "Trajectory-Squashed"
TRAILER_SQUASHED_RANGE = "Trajectory-Squashed-Range"
TRAILER_GIT_OPERATION = "Trajectory-Git-Operation"
TRAILER_RESTORED_FROM = "Trajectory-Restored-From"
#: Who made the change, when an agent's hook said so: ``<client>; tool=<tool>; session=<id>`` (e.g.
#: ``claude-code; tool=Edit; session=4f2a``). Snapshots without it were made by the watcher: the user or a command.
TRAILER_ORIGIN = "Trajectory-Origin"

KIND_SNAPSHOT = "snapshot"
KIND_CHECKPOINT = "checkpoint"
KIND_RECONCILE = "reconcile"
#: The first snapshot of a shadow repository: the whole existing tree, not work done in a session.
KIND_IMPORT = "import"
KIND_CONSOLIDATE = "consolidate"
#: A snapshot of what a git command (checkout, reset, merge, rebase, stash...) did to the work tree: not the agent's
#: work, so it carries no intent; its first line starts with the operation, e.g. ``[CHECKOUT] feature → main``.
KIND_GIT = "git"
#: A restore: files put back from an earlier snapshot; the first line starts with ``[RESTORE]`` and names the source.
KIND_RESTORE = "restore"
RESTORE_PREFIX = "[RESTORE]"

#: What the first line of a start-up snapshot says of changes no git operation explains: they were made while nothing
#: recorded, by someone (no intent is theirs).
UNRECORDED = "changed while not recording"

#: Files named in the first line before ``... and N more``.
SUBJECT_FILES = 5
#: Files listed in the body.
BODY_FILES = 200
#: Largest message code-trajectory writes, bytes, over-estimated: each file line (the subject's and the body's) names
#: up to two paths of PATH_MAX (4096) bytes, each shown in at most 4 bytes a byte (``\\xNN``); the rest (intent,
#: note, reflog lines, trailers) is far below 1 MiB. 7.4 MiB; a real message is a few KB.
MAX_MESSAGE_BYTES = (SUBJECT_FILES + BODY_FILES + 1) * 2 * 4 * 4096 + 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change between two trees.

    Attributes:
        status: git's letter: ``A`` added, ``M`` modified, ``D`` deleted, ``R`` renamed,
            ``T`` type changed (e.g. file to symlink).
        path: the path after the change (before it, for ``D``), relative to the root.
        old_path: the path before a rename, else None.
        added, deleted: changed line counts; None for binary files or when not computed.
        old_oid, new_oid: blob ids before and after (``0``*40 when absent).
        counted: True when line counts were computed (then None counts mean binary).
        note: replaces the counts when set, e.g. ``not stored: 12.3 MB``.
    """

    status: str
    path: str
    old_path: str | None = None
    added: int | None = None
    deleted: int | None = None
    old_oid: str = "0" * 40
    new_oid: str = "0" * 40
    counted: bool = False
    note: str | None = None

    @property
    def binary(self) -> bool:
        return self.counted and self.added is None

    def counts(self) -> str:
        """``(+12 -3)``-style counts; ``(binary)`` for binary content; ``""`` when not computed."""
        if self.note:
            return f"({self.note})"
        if not self.counted:
            return ""
        if self.added is None or self.deleted is None:
            return "(binary)"
        if self.status in ("R", "C") and not self.added and not self.deleted:
            return ""
        parts = [f"+{self.added}"] if self.added else []  # a count of 0 is not said (``(-31)``, as ``(+2)``)
        if self.deleted:
            parts.append(f"-{self.deleted}")
        return f"({' '.join(parts) or ('-0' if self.status == 'D' else '+0')})"

    def describe(self) -> str:
        """``M src/auth.py (+12 -3)`` or ``R old.py -> new.py (+1 -1)``; the paths as :func:`display_path` shows them
        (a line break in a name would start a line of the commit message: a forged trailer or file line)."""
        counts = self.counts()
        return f"{self.status} {self.where(arrow='->')}{' ' + counts if counts else ''}"

    def where(self, quote: str = "", arrow: str = "→") -> str:
        """The path as :func:`display_path` shows it, each in ``quote``; a rename ``old → new``, the two with their
        invisible characters escaped when they look the same (``a b`` → ``a\\u00a0b``: a no-break space,
        :func:`~code_trajectory.core.text.shown_pair`)."""
        if not self.old_path:
            return f"{quote}{display_path(self.path)}{quote}"
        old, new = shown_pair(self.old_path, self.path, lambda path: f"{quote}{display_path(path)}{quote}")
        return f"{old} {arrow} {new}"


class AddedFiles(Sequence[FileChange]):
    """The changes of a first snapshot (every file added), made into :class:`FileChange` objects only when read.

    An import lists 500,000 files; its message names the first :data:`BODY_FILES` of them, and building a
    :class:`FileChange` for every one cost 2.4 s at that size (this machine, loaded).

    Args:
        paths: the added paths (relative to the project root), in the order to list them.
        oids: the blob id of each path.
        notes: :attr:`FileChange.note` of some paths (e.g. ``not stored: 12.3 MB``).
    """

    def __init__(self, paths: Sequence[str], oids: Mapping[str, str], notes: Mapping[str, str] | None = None) -> None:
        self._paths, self._oids, self._notes = paths, oids, notes or {}

    def with_notes(self, notes: Mapping[str, str]) -> AddedFiles:
        """The same changes, ``notes`` (by path) added to those already given."""
        return AddedFiles(self._paths, self._oids, {**self._notes, **notes})

    def _change(self, path: str) -> FileChange:
        return FileChange("A", path, new_oid=self._oids[path], note=self._notes.get(path))

    @overload
    def __getitem__(self, index: int) -> FileChange: ...

    @overload
    def __getitem__(self, index: slice) -> list[FileChange]: ...

    def __getitem__(self, index: int | slice) -> FileChange | list[FileChange]:
        if isinstance(index, slice):
            return [self._change(path) for path in self._paths[index]]
        return self._change(self._paths[index])

    def __len__(self) -> int:
        return len(self._paths)

    def __iter__(self) -> Iterator[FileChange]:
        return (self._change(path) for path in self._paths)


def summarize(changes: Sequence[FileChange], max_items: int = SUBJECT_FILES) -> str:
    """Brief diff summary: the first ``max_items`` changes, then ``... and N more``."""
    if not changes:
        return "no file changes"
    shown = ", ".join(c.describe() for c in changes[:max_items])
    rest = len(changes) - max_items
    return f"{shown}, ... and {rest} more" if rest > 0 else shown


def snapshot_message(*, when: datetime, intent: str | None, branch: str, changes: Sequence[FileChange],
                     kind: str = KIND_SNAPSHOT, note: str | None = None, origin: str | None = None,
                     unrecorded: bool = False) -> str:
    """Compose a snapshot's commit message (see the module docstring).

    Args:
        when: the snapshot time (aware datetime; shown as local ``HH:MM:SS``).
        intent: the current intent, or None.
        branch: the project branch the snapshot belongs to.
        changes: the file changes against the parent commit.
        kind: one of ``snapshot``, ``checkpoint``, ``reconcile``.
        note: the checkpoint message given by the caller, if any.
        origin: who made the change, for a snapshot taken by an agent's hook (see :data:`TRAILER_ORIGIN`).
        unrecorded: the changes were made while nothing recorded (the start-up scan's catch-up): the first line
            says :data:`UNRECORDED` where an intent would stand.
    """
    parts = [f"{SNAPSHOT_PREFIX} {when.strftime('%H:%M:%S')}"]
    if unrecorded:
        parts.append(UNRECORDED)
    if intent:
        parts.append(free_text(intent))
    if note:
        parts.append(f"checkpoint: {free_text(note, 120)}")
    parts.append(summarize(changes))
    subject = " - ".join(parts)
    body = [c.describe() for c in changes[:BODY_FILES]]
    if len(changes) > BODY_FILES:
        body.append(f"... and {len(changes) - BODY_FILES} more")
    trailers = [(TRAILER_KIND, kind)]
    if intent:
        trailers.append((TRAILER_INTENT, free_text(intent)))
    if note:
        trailers.append((TRAILER_CHECKPOINT, free_text(note)))
    if origin:
        trailers.append((TRAILER_ORIGIN, one_line(origin, 300)))
    trailers += [(TRAILER_BRANCH, branch), (TRAILER_TIMESTAMP, when.isoformat())]
    return _assemble(subject, body, trailers)


def git_operation_message(*, when: datetime, label: str, kind: str, reflog: str, branch: str,
                          changes: Sequence[FileChange]) -> str:
    """Compose the message of a snapshot made by a git operation (no intent: it is not the agent's work).

    Args:
        when: the snapshot time (aware datetime).
        label: the operation as shown, e.g. ``[CHECKOUT] feature → main`` (see
            :meth:`code_trajectory.git.reflog.ReflogCursor.new_operation`).
        kind: the operation (``checkout``, ``stash``...), stored in the ``Trajectory-Git-Operation`` trailer.
        reflog: git's reflog message, kept in the body (several, one a line, for operations made while nothing
            recorded: each becomes a ``reflog:`` line).
        branch: the project branch after the operation.
        changes: the file changes against the parent commit.
    """
    head, _, rest = label.partition("] ")
    subject = f"{head}] {when.strftime('%H:%M:%S')} - {free_text(rest, 120)} - {summarize(changes)}"
    body = [f"reflog: {free_text(line, 300)}" for line in reflog.splitlines() or [""]]
    body += [""] + [c.describe() for c in changes[:BODY_FILES]]
    if len(changes) > BODY_FILES:
        body.append(f"... and {len(changes) - BODY_FILES} more")
    trailers = [(TRAILER_KIND, KIND_GIT), (TRAILER_GIT_OPERATION, kind), (TRAILER_BRANCH, branch),
                (TRAILER_TIMESTAMP, when.isoformat())]
    return _assemble(subject, body, trailers)


def how_named(commit: str, how: str) -> str:
    """`` (<how>)``, the way a snapshot reference named ``commit`` (full id) as an answer or message appends it to
    the id, or ``""`` when ``how`` is that id itself (``commit abc123456789``: ``abc123456789 (commit abc123456789)``
    said the id twice)."""
    return "" if how == f"commit {commit[:12]}" else f" ({how})"


def restore_message(*, when: datetime, intent: str | None, branch: str, changes: Sequence[FileChange],
                    source: str, how: str) -> str:
    """Compose a restore's message: ``[RESTORE] HH:MM:SS - from <commit> (<how>) - <files>``.

    Args:
        when: the restore time (aware datetime).
        intent: the current intent, or None.
        branch: the project branch.
        changes: the files the restore changed.
        source: the snapshot restored from (full commit id, kept in ``Trajectory-Restored-From``).
        how: how the snapshot was named (``checkpoint "before refactor"``, ``~2``...).
    """
    parts = [f"{RESTORE_PREFIX} {when.strftime('%H:%M:%S')}", f"from {source[:12]}{how_named(source, free_text(how, 80))}"]
    if intent:
        parts.insert(1, free_text(intent))
    parts.append(summarize(changes))
    body = [c.describe() for c in changes[:BODY_FILES]]
    if len(changes) > BODY_FILES:
        body.append(f"... and {len(changes) - BODY_FILES} more")
    trailers = [(TRAILER_KIND, KIND_RESTORE), (TRAILER_RESTORED_FROM, source)]
    if intent:
        trailers.append((TRAILER_INTENT, free_text(intent)))
    trailers += [(TRAILER_BRANCH, branch), (TRAILER_TIMESTAMP, when.isoformat())]
    return _assemble(" - ".join(parts), body, trailers)


def consolidate_message(*, when: datetime, intent: str, branch: str, squashed: int, first: str,
                        last: str, files: list[FileChange]) -> str:
    """Compose a consolidation's commit message: ``[CONSOLIDATE] <timestamp> - <intent>``."""
    subject = f"{CONSOLIDATE_PREFIX} {when.strftime('%Y-%m-%d %H:%M:%S')} - {free_text(intent)}"
    body = [f"Squashed {squashed} snapshot(s), {first[:12]}..{last[:12]}; they stay reachable "
            f"through the reflog of refs/heads/shadow/{branch}.", ""]
    body += [c.describe() for c in files[:BODY_FILES]]
    if len(files) > BODY_FILES:
        body.append(f"... and {len(files) - BODY_FILES} more")
    trailers = [(TRAILER_KIND, KIND_CONSOLIDATE), (TRAILER_INTENT, free_text(intent)),
                (TRAILER_BRANCH, branch), (TRAILER_TIMESTAMP, when.isoformat()),
                (TRAILER_SQUASHED, str(squashed)), (TRAILER_SQUASHED_RANGE, f"{first}..{last}")]
    return _assemble(subject, body, trailers)


def _assemble(subject: str, body: list[str], trailers: list[tuple[str, str]]) -> str:
    text = subject + "\n\n"
    if body:
        text += "\n".join(body) + "\n\n"
    text += "\n".join(f"{k}: {one_line(v, 1000)}" for k, v in trailers) + "\n"
    return text


def parse_trailers(blob: str, separator: str = "\x1d") -> dict[str, str]:
    """Parse git's ``%(trailers:unfold,separator=...)`` output into ``{key: value}`` (last wins)."""
    result: dict[str, str] = {}
    for item in blob.split(separator):
        key, sep, value = item.partition(":")
        if sep and key.strip():
            result[key.strip()] = value.strip()
    return result
