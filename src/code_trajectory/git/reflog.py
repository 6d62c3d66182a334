"""The project's reflogs, read as files: which git operations rewrote the work tree, and when (read-only).

A reflog line (gitrepository-layout(5) ``logs/``; git-reflog(1)) is
``<old id> <new id> <name> <<email>> <epoch seconds> <zone>TAB<message>``. The HEAD reflog (``logs/HEAD`` in this
work tree's git dir) names checkouts, resets, merges, rebases, pulls, cherry-picks, reverts, ``am`` and commits; the
stash reflog (``logs/refs/stash`` in the common dir) names each stash, and loses its entry on ``stash pop``/``drop``.

The files are untrusted data: they are only read, never run or passed to a program; a malformed line is skipped;
messages stay text (redacted where they are written into a commit message, see
:func:`code_trajectory.git.messages.free_text`). Two readers: :class:`ReflogCursor` for a recorder that runs (what was
appended since its last read), and :func:`operations_since` for a recorder that starts (what git did while nothing
recorded), whose operations :func:`combine` folds into one label.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.git.project import ProjectRepo

#: Bytes read from the end of a reflog by :class:`ReflogCursor`: enough for its last entries, bounded for huge ones.
REFLOG_TAIL_BYTES = 16 * 1024
#: Bytes read from the end of a reflog at start-up: what git did while nothing recorded (a long rebase included).
STARTUP_TAIL_BYTES = 256 * 1024
#: Reflog messages listed in the body of a combined operation (:func:`combine`), the newest.
COMBINED_LISTED = 20
#: Longest time between the stash reflog entry ``git stash`` writes and the reset it then writes into the HEAD reflog
#: for the reset to be taken as the stash's (:class:`ReflogCursor`), seconds: git's times are whole seconds, and a
#: loaded machine can take more than one to go from the one to the other.
STASH_RESET_SECONDS = 2

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class GitOperation:
    """A git command that rewrote the work tree, read from the project's reflog.

    Attributes:
        kind: ``checkout``, ``reset``, ``merge``, ``rebase``, ``pull``, ``cherry-pick``, ``revert``, ``stash``, ``am``
            or (at start-up only) ``commit``; several joined by ``,`` for a combined operation (:func:`combine`).
        label: what the snapshot's first line says, e.g. ``[CHECKOUT] feature → main``.
        reflog: the reflog message as git wrote it (``checkout: moving from feature to main``); one a line for a
            combined operation.
        timestamp: when git wrote it, seconds since the epoch; 0 when git wrote no entry (a stash popped while
            nothing recorded).
        unstaged: its changes need not match the index (a stash pop puts back unstaged changes), so every change
            of its snapshot is its own; else only the changes whose content equals the index entry are.
    """

    kind: str
    label: str
    reflog: str
    timestamp: int
    unstaged: bool = False


@dataclass(frozen=True)
class ReflogEntry:
    """One well-formed reflog line: the id the ref moved to, when (epoch seconds) and git's message."""

    new: str
    timestamp: int
    message: str


#: Reflog message prefixes (git's own wording, see git-reflog(1) and the messages of each command) of the
#: operations that rewrite work tree files, by kind. ``commit`` and ``branch`` are absent: they change no file.
_WORK_TREE_OPERATIONS = (
    ("checkout: ", "checkout"), ("reset: ", "reset"), ("merge ", "merge"), ("pull", "pull"),
    ("rebase", "rebase"), ("cherry-pick", "cherry-pick"), ("revert", "revert"), ("am", "am"),
)
#: At start-up a commit counts too: files edited and committed while nothing recorded are the commit's.
_STARTUP_OPERATIONS = (*_WORK_TREE_OPERATIONS, ("commit", "commit"))
#: The reset ``git stash`` writes into the HEAD reflog beside its stash entry.
_STASH_RESET = "reset: moving to HEAD"


def _open_regular(path: str | os.PathLike[str], flags: int) -> int:
    """``open``'s opener for a reflog: a regular file only (followed through a link, as git follows one), opened
    without waiting: a FIFO (or a link to ``/dev/zero``) planted in a project's ``.git`` that came in a tarball made
    every opening wait forever or read until memory ran out, while git itself never reads the file."""
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def read_reflog(path: Path, offset: int = 0, tail: int = REFLOG_TAIL_BYTES) -> tuple[list[ReflogEntry], int]:
    """The well-formed entries of the reflog file ``path`` written after byte ``offset`` (oldest first; at most the
    last ``tail`` bytes), and the file's size now (0 when it does not exist or cannot be read).

    A line cut by the ``tail`` bound, a line with a malformed id or time, and a line without a message are skipped.
    """
    try:
        with open(path, "rb", opener=_open_regular) as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            start = max(offset, size - tail) if size >= offset else max(0, size - tail)
            f.seek(start)
            data = f.read() if size > offset else b""
    except OSError:
        return [], 0
    lines = data.decode("utf-8", "replace").split("\n")
    if start > 0 and start != offset:
        lines = lines[1:]  # the tail began inside a line
    entries = []
    for line in lines:
        head, tab, message = line.partition("\t")
        fields = head.split(" ")
        if not tab or len(fields) < 5 or not (_OID.fullmatch(fields[0]) and _OID.fullmatch(fields[1])):
            continue
        try:
            entries.append(ReflogEntry(fields[1], int(fields[-2]), message.strip()))
        except ValueError:
            continue
    return entries, size


def _classify(message: str, table: tuple[tuple[str, str], ...]) -> str | None:
    for prefix, kind in table:
        if message.startswith(prefix):
            return kind
    return None


def _label(kind: str, message: str) -> str:
    if kind == "checkout":
        match = re.match(r"checkout: moving from (.+) to (.+)$", message)
        if match:
            return f"[CHECKOUT] {match.group(1)} → {match.group(2)}"
    detail = message.split(": ", 1)[1] if ": " in message else message
    return f"[{kind.upper()}] {detail}"


def _log_files(project: ProjectRepo) -> tuple[Path | None, Path | None]:
    """The HEAD reflog of this work tree and the stash reflog (the common dir's), None outside git."""
    common = project.common_dir or project.git_dir
    return (project.git_dir / "logs" / "HEAD" if project.git_dir else None,
            common / "logs" / "refs" / "stash" if common else None)


@dataclass(frozen=True)
class ReflogMark:
    """Where the project's reflogs stood when a recorder last looked (to tell what git did since).

    Attributes:
        head_size: the HEAD reflog's size, bytes (it only grows, until ``git reflog expire`` rewrites it).
        head_last: its last line then (``""`` when empty), to check that the file was not rewritten since.
        stash: the commit ids of the stash reflog, oldest first (``stash pop``/``drop`` removes one: git writes
            no other trace of them).
    """

    head_size: int
    head_last: str
    stash: tuple[str, ...]


def mark(project: ProjectRepo) -> ReflogMark:
    """Where the project's reflogs stand now (an empty mark outside git)."""
    head_log, stash_log = _log_files(project)
    size, last = 0, ""
    if head_log is not None:
        try:
            with open(head_log, "rb", opener=_open_regular) as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - 4096))
                last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
        except OSError:
            size, last = 0, ""
    stash = [e.new for e in read_reflog(stash_log, 0, STARTUP_TAIL_BYTES)[0]] if stash_log else []
    return ReflogMark(size, last, tuple(stash))


def _head_offset(head_log: Path, since: ReflogMark) -> int | None:
    """``since.head_size`` when the HEAD reflog still holds ``since.head_last`` there (only appended to since), else
    None."""
    if since.head_size == 0:
        return 0
    tail = (since.head_last + "\n").encode("utf-8", "replace")
    try:
        with open(head_log, "rb", opener=_open_regular) as f:
            f.seek(max(0, since.head_size - len(tail)))
            return since.head_size if f.read(len(tail)) == tail else None
    except OSError:
        return None


def _stash(entry: ReflogEntry) -> GitOperation:
    return GitOperation("stash", f"[STASH] {entry.message}", entry.message, entry.timestamp)


def operations_since(project: ProjectRepo, since: float, last_mark: ReflogMark | None) -> list[GitOperation]:
    """The git operations of the project's reflogs since recording stopped, oldest first: what git did while nothing
    recorded.

    Args:
        project: the project's repository.
        since: epoch seconds: the last recorded snapshot's time, or the last recorder's stop, whichever is later.
        last_mark: where the reflogs stood when the last recorder stopped (:func:`mark`), None when unknown. With
            it, the entries written after it count (and of them, none before ``since``'s second); a stash id it
            holds that is gone was popped or dropped. Without it (or when the HEAD reflog was rewritten since), the
            entries written after ``since`` count, and a pop cannot be seen.

    Returns:
        HEAD reflog entries that rewrite files or commit (:data:`_STARTUP_OPERATIONS`; others, such as a ``branch``
        entry, are left out), each new stash, and one ``[STASH] pop or drop`` when a known stash is gone. The reset
        that ``git stash`` writes beside its own entry is left out.
    """
    head_log, stash_log = _log_files(project)
    offset = _head_offset(head_log, last_mark) if head_log is not None and last_mark is not None else None

    def new(entry: ReflogEntry, known: bool) -> bool:  # git's times are whole seconds
        return entry.timestamp >= int(since) if known else entry.timestamp > since

    heads = ([e for e in read_reflog(head_log, offset or 0, STARTUP_TAIL_BYTES)[0] if new(e, offset is not None)]
             if head_log else [])
    stash_now = read_reflog(stash_log, 0, STARTUP_TAIL_BYTES)[0] if stash_log else []
    if last_mark is not None:
        stashes = [e for e in stash_now if e.new not in last_mark.stash and new(e, True)]
    else:
        stashes = [e for e in stash_now if new(e, False)]
    # ordered by (time, place): git's times are whole seconds, so within one second a stash takes the place of the
    # reset `git stash` wrote into the HEAD reflog (the reset itself is the stash's, left out)
    keyed: list[tuple[int, float, GitOperation]] = []
    unpaired = list(stashes)
    for place, entry in enumerate(heads):
        kind = _classify(entry.message, _STARTUP_OPERATIONS)
        if kind is None:
            continue
        if entry.message == _STASH_RESET:
            pair = next((s for s in unpaired if abs(s.timestamp - entry.timestamp) <= 1), None)
            if pair is not None:
                unpaired.remove(pair)
                keyed.append((pair.timestamp, place, _stash(pair)))
                continue
        keyed.append((entry.timestamp, place, GitOperation(kind, _label(kind, entry.message), entry.message,
                                                           entry.timestamp)))
    keyed += [(e.timestamp, float("inf"), _stash(e)) for e in unpaired]
    found = [op for _, _, op in sorted(keyed, key=lambda k: (k[0], k[1]))]
    if last_mark is not None:
        present = {e.new for e in stash_now}
        gone = sum(1 for oid in last_mark.stash if oid not in present)
        if gone:
            found.append(GitOperation("stash", "[STASH] pop or drop",
                                      f"stash: {gone} of {len(last_mark.stash)} stash entries popped or dropped", 0,
                                      unstaged=True))
    return found


def combine(operations: Sequence[GitOperation], context: str) -> GitOperation | None:
    """One operation standing for ``operations`` (oldest first), None when there are none.

    Its kind lists theirs in order of first appearance (``checkout,stash``), its label starts with all of them
    (``[CHECKOUT][STASH] <context>: main → feat; WIP on main: 1a2b3c fix``), and its reflog holds their messages, one
    a line with the time (the newest :data:`COMBINED_LISTED`).
    """
    if not operations:
        return None
    kinds = list(dict.fromkeys(op.kind for op in operations))
    details = "; ".join(dict.fromkeys(op.label.partition("] ")[2] for op in operations))
    lines = [f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(op.timestamp)) if op.timestamp else 'no entry:'}"
             f" {op.reflog}" for op in operations[-COMBINED_LISTED:]]
    if len(operations) > COMBINED_LISTED:
        lines.insert(0, f"... {len(operations) - COMBINED_LISTED} earlier entries")
    return GitOperation(",".join(kinds), f"{''.join(f'[{k.upper()}]' for k in kinds)} {context}: {details}",
                        "\n".join(lines), max(op.timestamp for op in operations),
                        unstaged=any(op.unstaged for op in operations))


class ReflogCursor:
    """Reads the git operations written to the project's reflogs since the last read (read-only).

    The HEAD reflog (``logs/HEAD``) names checkouts, resets, merges, rebases, pulls, cherry-picks and reverts;
    the stash reflog (``logs/refs/stash``) names a stash, and shrinks or disappears on ``stash pop``/``drop``.
    Only what was appended after the previous read counts, so an operation is never reported twice.
    """

    def __init__(self, project: ProjectRepo) -> None:
        self.project = project
        self._head_log, self._stash_log = _log_files(project)
        self._sizes = {path: read_reflog(path, 1 << 62)[1] for path in (self._head_log, self._stash_log) if path}
        #: the last stash entry read: the reset ``git stash`` writes after it may be read on a later call
        self._last_stash: GitOperation | None = None

    def unread(self) -> tuple[bool, bool]:
        """Whether the HEAD reflog and the stash reflog changed since the last read (their sizes), without reading
        them or moving the cursor: git wrote there while no watch looked."""
        changed = []
        for path in (self._head_log, self._stash_log):
            try:
                size = os.stat(path).st_size if path is not None else 0
            except OSError:
                size = 0
            changed.append(path is not None and size != self._sizes.get(path, 0))
        return changed[0], changed[1]

    def new_operation(self) -> GitOperation | None:
        """The newest work-tree-rewriting operation written since the previous call, or None (commits and other
        operations that leave the work tree alone give None)."""
        found: list[GitOperation] = []
        if self._head_log is not None:
            entries, self._sizes[self._head_log] = read_reflog(self._head_log, self._sizes.get(self._head_log, 0))
            for entry in entries:
                kind = _classify(entry.message, _WORK_TREE_OPERATIONS)
                if kind is not None:
                    found.append(GitOperation(kind, _label(kind, entry.message), entry.message, entry.timestamp))
        if self._stash_log is not None:
            before = self._sizes.get(self._stash_log, 0)
            stashed, size = read_reflog(self._stash_log, before)
            self._sizes[self._stash_log] = size
            # a stash's changes, live, are all its own (what `stash pop` puts back is unstaged)
            found += [GitOperation("stash", f"[STASH] {e.message}", e.message, e.timestamp, unstaged=True)
                      for e in stashed]
            if size < before:  # `stash pop` or `drop` removed an entry
                found.append(GitOperation("stash", "[STASH] pop or drop", "stash: an entry was popped or dropped",
                                          int(time.time()), unstaged=True))
        # a stash also resets HEAD, after its stash entry: the stash entry names the operation
        newest = max(found, key=lambda op: (op.timestamp, op.kind == "stash")) if found else None
        if newest is not None and newest.kind == "stash" and newest.timestamp:
            self._last_stash = newest
        elif newest is not None and newest.kind == "reset" and newest.reflog == _STASH_RESET:
            # git wrote the stash entry, then its reset, up to STASH_RESET_SECONDS later (the next second, under
            # load): both read now, or the stash entry on an earlier call (a read came between the two)
            stash = max((op for op in found if op.kind == "stash" and op.timestamp), key=lambda op: op.timestamp,
                        default=self._last_stash)
            if stash is not None and 0 <= newest.timestamp - stash.timestamp <= STASH_RESET_SECONDS:
                return stash
        return newest
