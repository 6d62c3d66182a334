"""What the page's templates are given: rows of the timeline, sessions, snapshots and file histories.

Plain data built by :class:`code_trajectory.ui.data.History`; times are aware datetimes in the machine's zone and
paths are ``/``-separated, relative to the project root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from code_trajectory.git.file_versions import FileVersion
from code_trajectory.git.log import CommitRecord
from code_trajectory.git.messages import CONSOLIDATE_PREFIX, TRAILER_SQUASHED, FileChange
from code_trajectory.git.points import Point
from code_trajectory.history.headings import operation_label
from code_trajectory.testruns.model import TestRun
from code_trajectory.ui import render

#: Files named in a timeline row (the rest as ``+N more``).
ROW_FILES = 4


@dataclass(frozen=True)
class Filters:
    """What the timeline is narrowed to; both empty means everything.

    Attributes:
        path: case-insensitive substring of a changed path (old or new path of a rename).
        text: case-insensitive substring of the intent, the first line, the checkpoint note or a changed path.
    """

    path: str = ""
    text: str = ""

    @property
    def active(self) -> bool:
        return bool(self.path or self.text)

    def matches(self, record: CommitRecord) -> bool:
        """True when ``record`` passes both filters."""
        paths = [p.lower() for c in record.changes for p in (c.path, c.old_path) if p]
        if self.path and not any(self.path.lower() in p for p in paths):
            return False
        if self.text:
            needle = self.text.lower()
            hay = [record.subject, record.intent or "", record.checkpoint_note or "", *paths]
            if not any(needle in h.lower() for h in hay):
                return False
        return True


@dataclass(frozen=True)
class TestMark:
    """The verdict shown on a snapshot: the newest run's summary line and whether it passed; ``partial`` when it
    passed but the snapshot is not green for the full suite (a partial or unknown scope, or a full-suite failure
    on it; see :mod:`code_trajectory.testruns.green`)."""

    __test__ = False  # not a pytest test class

    text: str
    green: bool
    runs: int
    partial: bool = False


@dataclass(frozen=True)
class Session:
    """A run of snapshots without a gap longer than the session gap.

    Attributes:
        key: the id of its oldest commit (stable while new snapshots join the session).
        newest, oldest: times of its newest and oldest snapshot.
        count: snapshots in it.
    """

    key: str
    newest: datetime
    oldest: datetime
    count: int

    @property
    def minutes(self) -> int:
        return round((self.newest - self.oldest).total_seconds() / 60)


@dataclass
class Row:
    """One snapshot as a timeline row.

    Attributes:
        record: the commit (with line counts when computed).
        message: what to show besides the intent: a checkpoint note, a consolidation's or restore's first line.
        files: the first :data:`ROW_FILES` changes; ``more_files`` the rest.
        added, deleted: total changed lines (None when not counted: more than 300 files, or binary only).
        test: the test verdict recorded on it, if any.
        foreign_branch: the project branch it was recorded on when not the one shown (the chain of a new branch
            starts with the snapshots of the branch it came from).
        session: set when a session header goes before this row (the first row shown of its session).
        points: the named points on this snapshot, oldest first (also those named when nothing changed).
    """

    record: CommitRecord
    message: str | None
    files: list[FileChange]
    more_files: int
    added: int | None
    deleted: int | None
    test: TestMark | None
    foreign_branch: str | None
    session: Session | None = None
    points: list[Point] = field(default_factory=list)

    @property
    def oid(self) -> str:
        return self.record.oid

    @property
    def user_points(self) -> list[Point]:
        """The points named by the user (the automatic ones apart: see :func:`code_trajectory.git.points.automatic_kind`)."""
        return [p for p in self.points if p.automatic is None]

    @property
    def automatic_points(self) -> list[Point]:
        return [p for p in self.points if p.automatic is not None]

    @property
    def kind(self) -> str:
        return self.record.kind


@dataclass
class TimelinePage:
    """One page of a branch's timeline.

    Attributes:
        branch: the project branch shown; ``tip`` its shadow ref's commit (None: nothing recorded on it).
        rows: the snapshots, newest first.
        next_cursor: where the next page starts (None at the end of the history).
        scanned_out: a filter stopped after :data:`MAX_SCAN` snapshots without filling the page.
        total, session_count: snapshots and sessions on the whole chain.
        notes: the commit of the test-run notes ref (a change means new verdicts).
        points_key: what the named points are now (a change means a point was named, see ``History.points_key``).
    """

    branch: str
    tip: str | None
    rows: list[Row]
    next_cursor: str | None
    scanned_out: bool
    total: int
    session_count: int
    notes: str | None
    points_key: str = ""


@dataclass
class Update:
    """What changed since the page last looked: new rows on top, or ``reload`` when the history was rewritten.

    Attributes:
        tip, notes: the new tip and notes commit.
        rows: new snapshots (newest first) that pass the filters.
        same_session: the oldest new row continues the session of the row that was on top (its old header goes).
        reload: the page must reload its list.
        marks: test verdicts of the newest :data:`MAX_LIVE` snapshots when the notes changed, else None.
        total, session_count: snapshots and sessions on the chain now (None when the tip did not move).
        points_key: what the named points are now; ``points``: when they changed, the points on each of the newest
            :data:`MAX_LIVE` snapshots (a point named while nothing changed adds no row), else None.
    """

    tip: str | None
    notes: str | None
    points_key: str = ""
    points: dict[str, list[Point]] | None = None
    rows: list[Row] = field(default_factory=list)
    same_session: bool = False
    reload: bool = False
    marks: dict[str, TestMark] | None = None
    total: int | None = None
    session_count: int | None = None


@dataclass
class FileEntry:
    """One file of a snapshot: its change, changed symbols (None: language not supported) and diff (None: lazy)."""

    change: FileChange
    symbols: str | None
    diff: render.FileDiff | None


@dataclass
class SnapshotView:
    """A snapshot opened: its row, all its test runs, and its files (the first ``data.MAX_FILES`` of ``total``)."""

    row: Row
    branch: str
    runs: list[TestRun]
    files: list[FileEntry]
    total: int


@dataclass
class VersionView:
    """One version of a file: where it was (``version.path``), its change, symbols, diff (None: lazy), verdict,
    and ``reverts_to``: the time of an earlier version with the very same content (a revert), else None."""

    version: FileVersion
    row: Row
    change: FileChange
    symbols: str | None
    diff: render.FileDiff | None
    reverts_to: datetime | None = None


@dataclass
class FileView:
    """A file's trajectory on a branch: its versions, newest first (renames followed); ``total`` versions, or
    more than that when ``more`` (they were not all read)."""

    path: str
    branch: str
    versions: list[VersionView]
    total: int
    more: bool = False


def make_row(record: CommitRecord, branch: str, test: TestMark | None, session: Session | None) -> Row:
    counted = [c for c in record.changes if c.added is not None]
    added = sum(c.added or 0 for c in counted) if counted else None
    deleted = sum(c.deleted or 0 for c in counted) if counted else None
    return Row(record, message_of(record), record.changes[:ROW_FILES], max(0, len(record.changes) - ROW_FILES),
               added, deleted, test, record.branch if record.branch and record.branch != branch else None, session)


def message_of(record: CommitRecord) -> str | None:
    """What a row shows besides the intent: a checkpoint's note, a consolidation's squash count, a restore's or git
    operation's label as the CLI's headings say it (``[RESTORE] from abc123 (checkpoint "x")``: its time, the
    intent and the files are the row's own), the first line of any commit of an unknown kind; None for plain
    snapshots."""
    if record.checkpoint_note:
        return record.checkpoint_note
    if record.is_consolidation:
        squashed = record.trailers.get(TRAILER_SQUASHED)
        return (f"squashed {squashed} snapshot{'' if squashed == '1' else 's'}") if squashed else record.subject.removeprefix(CONSOLIDATE_PREFIX).strip()
    if record.kind in ("snapshot", "checkpoint", "reconcile", "import"):
        return None
    if record.kind == "restore" or record.is_git_operation:
        return operation_label(record)
    return record.subject
