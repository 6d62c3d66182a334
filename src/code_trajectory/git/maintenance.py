"""Keeping the shadow repository small and fast to query, off the hot path.

:func:`run_maintenance` packs loose objects (``git repack -d -f --geometric=2``, so
packs roll up geometrically instead of being rewritten whole; ``-f`` computes the deltas
of the packs it rolls up again: a snapshot's objects are written whole, loose or in a
pack, and kept whole through roll-ups the history took 1.71x the disk of
``git gc --aggressive`` at 4,000 snapshots, 1.41x with ``-f``), removes the loose
copies, and writes a commit-graph with changed-path Bloom filters
(``git commit-graph write --reachable --changed-paths``), which makes
``git log -- <path>`` skip commits that cannot touch the path, and brings each shadow
ref's search index and file index up to its tip (:mod:`code_trajectory.git.search_index`,
:mod:`code_trajectory.git.file_index`). Reflogs are never
expired (they keep consolidated snapshots reachable) and nothing younger than
two weeks is pruned, so objects written concurrently by a snapshot are safe.

:class:`MaintenancePolicy` decides when: only after the project has been quiet for
a while (never during a burst of snapshots) and only when enough new objects
accumulated.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import filelock

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object
from code_trajectory.git import file_index, search_index
from code_trajectory.git.shadow import ShadowRepo

log = logging.getLogger(__name__)

#: Snapshots since the last maintenance that make the next one due.
SNAPSHOTS_BETWEEN_RUNS = 200
#: Seconds without a snapshot before maintenance may run.
QUIET_SECONDS = 30.0
#: Packs in the repository past which a roll-up runs at once, on its own thread, even during a burst:
#: every object lookup searches the packs, so many small ones slow down reads and writes alike.
MAX_PACKS = 40


@dataclass
class MaintenanceReport:
    """What a maintenance run did: seconds taken and loose objects before/after."""

    seconds: float
    loose_before: int
    loose_after: int
    finished_at: str


def count_objects_fields(out: str) -> dict[str, int]:
    """The numbers of ``git count-objects -v``'s output ``out``: ``count`` (loose objects), ``size`` (KiB),
    ``in-pack``, ``packs``, ``size-pack`` (KiB), ``prune-packable``, ``garbage``, ``size-garbage`` (KiB); a line
    that holds no number is left out."""
    found: dict[str, int] = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if value.strip().isdigit():
            found[key.strip()] = int(value)
    return found


def _loose_count(repo: ShadowRepo) -> int:
    return count_objects_fields(repo.git.text(["count-objects", "-v"])).get("count", 0)


def run_maintenance(repo: ShadowRepo, *, cap_bytes: int | None = None,
                    retention_days: float = 30.0) -> MaintenanceReport | None:
    """Pack, clean and index the shadow repository; None when another process is already doing it.

    With ``cap_bytes``, history older than ``retention_days`` is then dropped while the
    repository is larger than the cap (:func:`enforce_size_cap`).

    Raises:
        GitError: a git step failed (the repository stays valid: each step is atomic in git).
    """
    lock = filelock.FileLock(str(repo.git_dir / "maintenance.lock"), timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        return None
    try:
        started = time.perf_counter()
        from code_trajectory.git.health import clear_leftovers

        clear_leftovers(repo.git_dir)  # e.g. a commit-graph-chain.lock or a tmp_pack_* left by a killed run
        loose_before = _loose_count(repo)
        repo.git.run(["repack", "-d", "-q", "-f", "--geometric=2", "--no-write-bitmap-index"])
        repo.git.run(["prune-packed", "-q"])
        repo.git.run(["prune", "--expire=2.weeks.ago"])
        repo.git.run(["pack-refs", "--all"])
        # git neither reads nor writes a commit-graph while .trajectory/shallow lists boundaries (commit-graph.c:
        # commit_graph_compatible() is false in a shallow repository); the graph is written again by the first run
        # after `git prune` above has dropped the last boundary (prune_shallow: once no ref or reflog reaches it
        # and it is older than the --expire age)
        if not (repo.git_dir / "shallow").exists():
            repo.git.run(["commit-graph", "write", "--reachable", "--changed-paths", "--split"])
        search_index.update_all(repo)
        file_index.update_all(repo)
        if cap_bytes is not None:
            enforce_size_cap(repo, cap_bytes, retention_days)
        report = MaintenanceReport(time.perf_counter() - started, loose_before, _loose_count(repo),
                                   datetime.now(UTC).isoformat())
        replace_file(repo.state_dir / "maintenance.json", json.dumps(report.__dict__), fsync=False)
        log.info("maintenance seconds=%.2f loose_before=%d loose_after=%d", report.seconds, loose_before,
                 report.loose_after)
        return report
    finally:
        lock.release()


def repository_bytes(repo: ShadowRepo, count_objects: str | None = None) -> int:
    """Disk use of the shadow repository's objects, bytes (loose plus packs and garbage), from ``git count-objects
    -v``'s output ``count_objects`` when the caller read it already (the status shows it too), else read here."""
    if count_objects is None:
        count_objects = repo.git.text(["count-objects", "-v"])
    found = count_objects_fields(count_objects)
    return sum(found.get(key, 0) for key in ("size", "size-pack", "size-garbage")) * 1024


def drop_commit_graph(repo: ShadowRepo) -> None:
    """Remove the commit-graph files: one listing parents beyond a shallow boundary would be stale."""
    info = repo.git_dir / "objects" / "info"
    for path in [info / "commit-graph", *(info / "commit-graphs").glob("*")]:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def enforce_size_cap(repo: ShadowRepo, cap_bytes: int, retention_days: float) -> int:
    """Drop snapshots older than the retention window while the repository exceeds ``cap_bytes``.

    For each shadow branch the oldest commit inside the window (the tip when every
    commit is older: the latest state of a branch is never dropped) becomes a history
    boundary in ``.trajectory/shallow``, git's own mechanism for cut-off history;
    reflog entries older than the window expire; the commits behind the boundaries
    become unreachable and are loosened and pruned. Objects written in the last two
    weeks and not yet referenced are never deleted (``repack -A`` then ``prune
    --expire``), so a concurrent snapshot is safe.

    Returns:
        The number of boundaries written (0 when the repository is under the cap).
    """
    if repository_bytes(repo) <= cap_bytes:
        return 0
    cutoff = int(time.time() - retention_days * 86400)
    boundaries: set[str] = set()
    for ref, tip in repo.shadow_refs().items():
        inside = repo.git.text(["rev-list", f"--since={cutoff}", "--first-parent", ref]).split()
        boundary = inside[-1] if inside else tip
        if repo.git.text(["rev-list", "--count", "--first-parent", boundary]) != "1":
            boundaries.add(boundary)
    if not boundaries:
        return 0
    shallow = repo.git_dir / "shallow"
    existing = set(shallow.read_text().split()) if shallow.exists() else set()
    replace_file(shallow, "".join(f"{oid}\n" for oid in sorted(existing | boundaries)))
    drop_commit_graph(repo)  # git neither uses nor rewrites a commit-graph in a repository with shallow boundaries
    repo.git.run(["reflog", "expire", f"--expire={cutoff}", f"--expire-unreachable={cutoff}", "--all"])
    repo.git.run(["repack", "-A", "-d", "-q"])
    repo.git.run(["prune", "--expire=2.weeks.ago"])
    log.info("history pruned: %d boundary commit(s), repository now %d bytes", len(boundaries),
             repository_bytes(repo))
    return len(boundaries)


def last_report(repo: ShadowRepo) -> MaintenanceReport | None:
    """The last maintenance run recorded in ``.trajectory/state/maintenance.json``, if any: None when there is none
    or the file holds anything else (it is untrusted: a number where a text is, a text where a number is)."""
    try:
        report = MaintenanceReport(**(read_json_object(repo.state_dir / "maintenance.json") or {}))
    except (OSError, ValueError, TypeError):
        return None
    numbers = (report.seconds, report.loose_before, report.loose_after)
    if (not isinstance(report.finished_at, str) or any(isinstance(n, bool) for n in numbers)
            or not isinstance(report.seconds, (int, float))
            or not all(isinstance(n, int) for n in (report.loose_before, report.loose_after))):
        return None
    return report


class BackgroundMaintenance:
    """Runs :func:`run_maintenance` on a daemon thread, one run at a time (off the snapshot path).

    git's repack and commit-graph writes are safe while snapshots write new objects and
    move refs; the ``maintenance.lock`` keeps two runs from overlapping.
    """

    def __init__(self, repo: ShadowRepo, **options: Any) -> None:
        self.repo = repo
        self.options = options
        self._thread: threading.Thread | None = None
        self.last: MaintenanceReport | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """Start a run unless one is running; True when started."""
        if self.running:
            return False

        def work() -> None:
            try:
                self.last = run_maintenance(self.repo, **self.options)
            except Exception as exc:  # noqa: BLE001 - maintenance never takes the recorder down
                log.warning("maintenance failed, will retry later: %s", exc)

        self._thread = threading.Thread(target=work, name="trajectory-maintenance", daemon=True)
        self._thread.start()
        return True

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


class MaintenancePolicy:
    """Counts snapshots and says when maintenance is due (quiet and enough new snapshots).

    Args:
        every: snapshots between runs.
        quiet_seconds: time since the last snapshot before a run may start, seconds.
    """

    def __init__(self, every: int = SNAPSHOTS_BETWEEN_RUNS, quiet_seconds: float = QUIET_SECONDS) -> None:
        self.every = every
        self.quiet_seconds = quiet_seconds
        self.since_last = 0
        self.last_snapshot = time.monotonic()

    def snapshot_written(self) -> None:
        self.since_last += 1
        self.last_snapshot = time.monotonic()

    def due(self) -> bool:
        """True when the project has been quiet long enough after enough snapshots."""
        return self.since_last >= self.every and time.monotonic() - self.last_snapshot >= self.quiet_seconds

    def rollup_due(self, repo: ShadowRepo) -> bool:
        """True when so many packs accumulated that a roll-up should not wait for quiet."""
        return repo.pack_count() > MAX_PACKS

    def done(self) -> None:
        self.since_last = 0
