"""What the page shows, read from the shadow repository: timeline pages, sessions, snapshots, file histories.

Read-only. A branch's timeline is the first-parent chain of its shadow ref (as ``get_global_trajectory`` reads it),
newest first, in pages of :data:`PAGE_SIZE`; the next page continues from a cursor (a commit id on the chain), so a
page costs the same at the top of 10 snapshots or deep in 100,000. Sessions split that chain at gaps longer than
the configured session gap (1 h by default, the rule of ``get_session_summary``); they come from one
``git rev-list --first-parent --timestamp`` of the chain, cached by tip and extended by the new commits alone when
the tip moved on (:mod:`code_trajectory.ui.sessions`). Paths are ``/``-separated, relative to the
project root; times are aware datetimes in the machine's zone.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime

from code_trajectory.core.errors import InvalidArgumentError, TrajectoryError
from code_trajectory.git import file_versions, indexed_log, log, messages, points
from code_trajectory.git.file_versions import FileVersion
from code_trajectory.git.log import CommitRecord
from code_trajectory.git.messages import FileChange
from code_trajectory.git.points import Point
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo, branch_of_ref, shadow_ref
from code_trajectory.history import markers
from code_trajectory.history.versions import LOOKBACK
from code_trajectory.testruns import store as testruns
from code_trajectory.testruns.green import green_proof
from code_trajectory.testruns.scope import Scope
from code_trajectory.ui import render
from code_trajectory.ui.sessions import SessionIndex
from code_trajectory.ui.views import (
    FileEntry,
    FileView,
    Filters,
    Row,
    SnapshotView,
    TestMark,
    TimelinePage,
    Update,
    VersionView,
    make_row,
)

logger = logging.getLogger(__name__)

#: Snapshots per timeline page.
PAGE_SIZE = 150
#: With a filter, at most this many snapshots are scanned per page (the page then offers to scan on).
MAX_SCAN = 5000
SCAN_CHUNK = 1000
#: Files of a snapshot listed in its pane (40,000 were a 33 MB pane Chromium took 21 s to show); a line says how
#: many more, and the timeline's path filter lists its matches first.
MAX_FILES = 1000
#: Files of a snapshot whose diff is shown at once; the others load when opened.
INLINE_DIFFS = 20
#: Files of a snapshot whose changed symbols are computed.
SYMBOL_FILES = 60
#: Versions of a file shown; the first :data:`INLINE_VERSIONS` with their diff at once, the first
#: :data:`SYMBOL_VERSIONS` with their changed symbols (the others show them with their diff, when opened).
FILE_VERSIONS = 200
INLINE_VERSIONS = 5
SYMBOL_VERSIONS = 25
#: New snapshots a live update carries at most (more: the page reloads its list).
MAX_LIVE = 300
_OID = re.compile(r"^[0-9a-f]{40}$")
#: What git refuses in a branch name (``git check-ref-format``) and what would make a revision expression of it.
_NOT_A_BRANCH = re.compile(r"[~^:?*\[\\\s\x00-\x1f\x7f]|\.\.|@\{|^/|/$|\.lock$")


class NotFoundError(InvalidArgumentError):
    """A snapshot, branch or file the page asked for is not in the shadow history."""


class HistoryChangedError(TrajectoryError):
    """The history the page was showing was rewritten (a consolidation): the page must reload its list."""


class History:
    """The queries of the page over one shadow repository (thread-safe; one per server).

    Args:
        repo: the shadow repository (the caller closes it).
        gap_seconds: the session gap, seconds.
    """

    def __init__(self, repo: ShadowRepo, gap_seconds: float) -> None:
        self.repo = repo
        self.gap = gap_seconds
        self._indexes: OrderedDict[str, SessionIndex] = OrderedDict()
        self._lock = threading.Lock()
        self._building = threading.Lock()

    # -- branches and sessions ---------------------------------------------------------------------------------------

    def branches(self) -> list[str]:
        """Project branches with a shadow ref, most recently recorded first."""
        out = self.repo.git.out(["for-each-ref", "--sort=-committerdate", "--format=%(refname)",
                                 "refs/heads/shadow/"])
        return [branch_of_ref(r) for r in out.decode("utf-8", "surrogateescape").splitlines() if r]

    def tip(self, branch: str) -> str | None:
        """The commit of ``branch``'s shadow ref, or None (also for a name that is not a plain branch name, such as
        ``main~3``: the page shows branches, not revision expressions)."""
        if not branch or _NOT_A_BRANCH.search(branch):
            return None
        return self.repo.resolve_ref(shadow_ref(branch))

    def notes_tip(self) -> str | None:
        """The commit of the test-run notes ref, or None when no run was recorded."""
        return self.repo.resolve_ref(testruns.NOTES_REF)

    def index(self, tip: str) -> SessionIndex:
        """The session index of the chain ending at ``tip`` (cached for the last few tips; one build at a time, so
        a page asking while the server's warm-up builds it waits for that build instead of doing it again)."""
        with self._lock:
            cached = self._indexes.get(tip)
            if cached is not None:
                self._indexes.move_to_end(tip)
                return cached
        with self._building:
            with self._lock:
                cached = self._indexes.get(tip)
                base = next(reversed(self._indexes.values()), None)  # the last one used: new snapshots on top
            if cached is not None:
                return cached
            built = SessionIndex(self.repo, tip, self.gap, base)
            with self._lock:
                self._indexes[tip] = built
                while len(self._indexes) > 4:
                    self._indexes.popitem(last=False)
            return built

    # -- the timeline ------------------------------------------------------------------------------------------------

    def timeline(self, branch: str, filters: Filters = Filters(), *, cursor: str | None = None,
                 prev: str | None = None, limit: int = PAGE_SIZE) -> TimelinePage:
        """One page of ``branch``'s snapshots, newest first.

        Args:
            branch: a project branch (see :meth:`branches`).
            filters: what to narrow the list to.
            cursor: where to continue (a previous page's ``next_cursor``); None for the first page.
            prev: the last row already shown above this page (a session header goes before a row only when its
                session differs from the row above).
            limit: rows at most.

        Raises:
            NotFoundError: the branch has no shadow ref.
            HistoryChangedError: ``cursor`` is no longer on the branch's chain (the history was rewritten).
        """
        tip = self.tip(branch)
        if tip is None:
            if branch in self.branches():
                raise NotFoundError(f"the shadow ref of branch {branch!r} cannot be read")
            return TimelinePage(branch, None, [], None, False, 0, 0, self.notes_tip(), self.points_key())
        index = self.index(tip)
        for oid in (cursor, prev):
            if oid is not None and (not _OID.match(oid) or oid not in index):
                raise HistoryChangedError("the history changed since the page was loaded; reload it")
        records: list[CommitRecord] = []
        next_cursor, scanned_out = None, False
        chunk = limit + 1 if not filters.active else SCAN_CHUNK
        for scanned, record in enumerate(self._walk(cursor or tip, chunk)):
            if filters.active and scanned >= MAX_SCAN:
                next_cursor, scanned_out = record.oid, True
                break
            if filters.matches(record):
                if len(records) == limit:
                    next_cursor = record.oid
                    break
                records.append(record)
        rows = self.rows(records, branch, index, prev=prev)
        return TimelinePage(branch, tip, rows, next_cursor, scanned_out, len(index), len(index.sessions),
                            self.notes_tip(), self.points_key())

    def _walk(self, start: str, chunk: int) -> Iterator[CommitRecord]:
        position: str | None = start
        while position is not None:
            records = log.read_log(self.repo, [position], limit=chunk + 1, first_parent=True)
            yield from records[:chunk]
            position = records[chunk].oid if len(records) > chunk else None

    def rows(self, records: list[CommitRecord], branch: str, index: SessionIndex, *,
             prev: str | None = None) -> list[Row]:
        """Rows for ``records`` (newest first, on ``branch``'s chain): line counts, verdicts, session headers."""
        log.add_line_counts(self.repo, records)
        marks = self.marks([r.oid for r in records])
        named = self.points([r.oid for r in records])
        rows = []
        above = index.session(prev) if prev else None
        for record in records:
            session = index.session(record.oid)
            row = make_row(record, branch, marks.get(record.oid),
                           session if session is not None and session != above else None)
            row.points = named.get(record.oid, [])
            rows.append(row)
            above = session
        return rows

    def points_key(self) -> str:
        """What the named points are now, as a short text that changes when a point is named or removed."""
        named = points.points(self.repo)
        return f"{len(named)}:{named[0].ref.rsplit('/', 1)[-1]}" if named else ""

    def points(self, oids: list[str]) -> dict[str, list[Point]]:
        """The named points on each of ``oids`` that has any, oldest first (see :mod:`code_trajectory.history.markers`)."""
        found: dict[str, list[Point]] = {}
        for point in markers.on_commits(points.points(self.repo), oids):
            found.setdefault(point.commit, []).append(point)
        return found

    def marks(self, oids: list[str]) -> dict[str, TestMark]:
        """The test verdict of each of ``oids`` that has a recorded run: the newest run's line, marked partial when
        it passed but the snapshot is not green for the full suite."""
        marks = {}
        for oid, runs in testruns.runs_for(self.repo, oids).items():
            newest = max(runs, key=lambda r: r.started or datetime.min.replace(tzinfo=UTC))
            text = newest.summary_line()
            if len({r.outcome for r in runs}) > 1:
                text += f" ({len(runs)} runs, not all {newest.outcome})"
            partial = newest.is_green and green_proof(runs, Scope.full()) is None
            marks[oid] = TestMark(text, newest.is_green, len(runs), partial)
        return marks

    def updates(self, branch: str, known_tip: str | None, known_notes: str | None, filters: Filters = Filters(),
                top: str | None = None, known_points: str | None = None) -> Update:
        """What is new on ``branch`` since the page saw ``known_tip`` and ``known_notes``.

        Args:
            branch: the branch shown.
            known_tip, known_notes: the tip and notes commit the page was rendered with ('' or None: none).
            filters: the page's filters.
            top: the row on top of the page, if any (to tell whether the new rows continue its session).
            known_points: the :meth:`points_key` the page was rendered with (None: not asked, points left alone).
        """
        tip, notes = self.tip(branch), self.notes_tip()
        update = Update(tip, notes, self.points_key())
        if (notes or None) != (known_notes or None) and tip is not None:
            chain = log.read_log(self.repo, [tip], limit=MAX_LIVE, first_parent=True, with_changes=False)
            update.marks = self.marks([r.oid for r in chain])
        if known_points is not None and known_points != update.points_key and tip is not None:
            chain = log.read_log(self.repo, [tip], limit=MAX_LIVE, first_parent=True, with_changes=False)
            oids = [r.oid for r in chain]
            found = self.points(oids)
            update.points = {oid: found.get(oid, []) for oid in oids}
        if (tip or None) == (known_tip or None):
            return update
        if tip is None or not known_tip:
            update.reload = True
            return update
        chain = log.read_log(self.repo, [tip], limit=MAX_LIVE + 1, first_parent=True)
        position = next((i for i, r in enumerate(chain) if r.oid == known_tip), None)
        if position is None:
            update.reload = True
            return update
        index = self.index(tip)
        update.total, update.session_count = len(index), len(index.sessions)
        new = [r for r in chain[:position] if filters.matches(r)]
        update.rows = self.rows(new, branch, index)
        if new and top is not None and index.session(new[-1].oid) is not None:
            update.same_session = index.session(new[-1].oid) == index.session(top)
        return update

    # -- a snapshot ----------------------------------------------------------------------------------------------

    def record(self, oid: str) -> CommitRecord:
        """The commit ``oid`` with its file changes and line counts.

        Raises:
            NotFoundError: ``oid`` is not a full commit id of the shadow repository.
        """
        if not isinstance(oid, str) or not _OID.match(oid):
            raise NotFoundError(f"{oid!r} is not a snapshot id (40 hexadecimal digits)")
        found = self.repo.read_object(oid)
        if found is None or found[0] != "commit":
            raise NotFoundError(f"snapshot {oid[:12]} is not in the shadow history")
        records = log.read_log(self.repo, [oid], limit=1)
        log.add_line_counts(self.repo, records)
        return records[0]

    def snapshot(self, oid: str, branch: str, path: str = "") -> SnapshotView:
        """A snapshot with its test runs, and per file (the first :data:`MAX_FILES`, those whose path holds ``path``
        first, as :class:`Filters` matches it) its changed symbols and (for the first files) its diff.

        Raises:
            NotFoundError: see :meth:`record`.
        """
        record = self.record(oid)
        runs = testruns.runs_for(self.repo, [oid]).get(oid, [])
        row = make_row(record, branch, self.marks([oid]).get(oid), None)
        row.points = self.points([oid]).get(oid, [])
        many_imported = record.is_import and len(record.changes) > INLINE_DIFFS
        changes = record.changes
        if len(changes) > MAX_FILES and path:
            needle = path.lower()
            changes = sorted(changes, key=lambda c: not any(needle in p.lower() for p in (c.path, c.old_path) if p))
        files = []
        for i, change in enumerate(changes[:MAX_FILES]):
            symbols = self.symbols(change) if i < SYMBOL_FILES and not many_imported else None
            diff = self.diff(record, change) if i < INLINE_DIFFS and not many_imported else None
            files.append(FileEntry(change, symbols, diff))
        return SnapshotView(row, branch, runs, files, len(record.changes))

    def symbols(self, change: FileChange) -> str | None:
        """The one-line summary of the symbols ``change`` touched, or None (unsupported language, or unreadable)."""
        from code_trajectory.symbols import compare_blobs

        try:
            changes = compare_blobs(change.path, change.old_oid, change.new_oid, self.repo.read_blob_or_none)
        except Exception as exc:  # noqa: BLE001 - symbols are a courtesy: the diff is still shown
            logger.warning("symbols of %s unavailable: %s", messages.display_path(change.path), exc)
            return None
        return changes.summary() if changes is not None else None

    def diff(self, record: CommitRecord, change: FileChange) -> render.FileDiff:
        """The highlighted diff of one file of ``record`` against its first parent."""
        patch = file_versions.file_patch(self.repo, FileVersion(record, change.path, change))
        old = log.blob_text(self.repo, change.old_oid) if change.old_oid != ZERO_OID else None
        new = log.blob_text(self.repo, change.new_oid) if change.new_oid != ZERO_OID else None
        return render.parse_patch(patch, change.path, old, new)

    def file_diff(self, oid: str, path: str) -> tuple[render.FileDiff, str | None]:
        """The diff of ``path`` (its new path, for a rename) in snapshot ``oid``, and its changed symbols.

        Raises:
            NotFoundError: the snapshot is unknown or did not change ``path``.
        """
        record = self.record(oid)
        change = next((c for c in record.changes if c.path == path), None)
        if change is None:
            raise NotFoundError(f"snapshot {oid[:12]} did not change {messages.display_path(path)}")
        return self.diff(record, change), self.symbols(change)

    # -- a file ------------------------------------------------------------------------------------------------------

    def file(self, branch: str, path: str) -> FileView:
        """The versions of ``path`` on ``branch``, newest first, each with symbols; the newest with their diff.
        Its newest ``LOOKBACK + 1`` versions are read (:data:`code_trajectory.history.versions.LOOKBACK`, as
        ``get_file_trajectory`` reads them; through the branch's file index when there is one): a file with more
        says "more than LOOKBACK", and reverts are found among those.

        Raises:
            NotFoundError: the branch has no shadow ref, or no snapshot on it changed ``path``.
        """
        tip = self.tip(branch)
        if tip is None:
            raise NotFoundError(f"nothing is recorded on branch {branch!r}")
        versions = file_versions.file_history(self.repo, tip, path, limit=LOOKBACK + 1, counted=0,  # the shown: counted below
                                    lister=indexed_log.open_log(self.repo, shadow_ref(branch), tip))
        if not versions:
            raise NotFoundError(f"no snapshot on branch {branch!r} changed {messages.display_path(path)}")
        more = len(versions) > LOOKBACK
        reverts = _reverts(versions)
        shown = versions[:FILE_VERSIONS]
        records = list({v.record.oid: v.record for v in shown}.values())
        log.add_line_counts(self.repo, records)
        marks = self.marks([r.oid for r in records])
        views = []
        for i, version in enumerate(shown):
            change = next((c for c in version.record.changes if c.path == version.path), version.change)
            if version.change.old_path and not change.old_path:
                change = version.change
            row = make_row(version.record, branch, marks.get(version.record.oid), None)
            diff = self.diff(version.record, change) if i < INLINE_VERSIONS else None
            views.append(VersionView(version, row, change, self.symbols(change) if i < SYMBOL_VERSIONS else None,
                                     diff, reverts.get(version.record.oid)))
        return FileView(path, branch, views, min(len(versions), LOOKBACK), more)


def _reverts(versions: list[FileVersion]) -> dict[str, datetime]:
    """``{commit: time}`` for the versions (newest first) whose content equals an earlier, not adjacent, version:
    the time is that of the latest such earlier version (the rule of ``get_file_trajectory``)."""
    seen: dict[str, datetime] = {}
    found: dict[str, datetime] = {}
    previous = None
    for version in reversed(versions):
        blob = version.change.new_oid
        if blob != ZERO_OID:
            if blob in seen and blob != previous:
                found[version.record.oid] = seen[blob]
            seen[blob] = version.record.time
        previous = blob
    return found


