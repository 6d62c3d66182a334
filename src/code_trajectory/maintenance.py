"""Keeping the shadow repository small and fast to query, off the hot path.

:func:`run_maintenance` packs loose objects (``git repack -d --geometric=2``, so
packs roll up geometrically instead of being rewritten whole), removes the loose
copies, and writes a commit-graph with changed-path Bloom filters
(``git commit-graph write --reachable --changed-paths``), which makes
``git log -- <path>`` skip commits that cannot touch the path. Reflogs are never
expired (they keep consolidated snapshots reachable) and nothing younger than
two weeks is pruned, so objects written concurrently by a snapshot are safe.

:class:`MaintenancePolicy` decides when: only after the project has been quiet for
a while (never during a burst of snapshots) and only when enough new objects
accumulated.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timezone

import filelock

from code_trajectory.shadow_repo import ShadowRepo

log = logging.getLogger(__name__)

#: Snapshots since the last maintenance that make the next one due.
SNAPSHOTS_BETWEEN_RUNS = 200
#: Seconds without a snapshot before maintenance may run.
QUIET_SECONDS = 30.0


@dataclass
class MaintenanceReport:
    """What a maintenance run did: seconds taken and loose objects before/after."""

    seconds: float
    loose_before: int
    loose_after: int
    finished_at: str


def _loose_count(repo: ShadowRepo) -> int:
    out = repo.git.text(["count-objects", "-v"])
    for line in out.splitlines():
        if line.startswith("count:"):
            return int(line.split(":")[1])
    return 0


def run_maintenance(repo: ShadowRepo) -> MaintenanceReport | None:
    """Pack, clean and index the shadow repository; None when another process is already doing it.

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
        loose_before = _loose_count(repo)
        repo.git.run(["repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index"])
        repo.git.run(["prune-packed", "-q"])
        repo.git.run(["prune", "--expire=2.weeks.ago"])
        repo.git.run(["pack-refs", "--all"])
        repo.git.run(["commit-graph", "write", "--reachable", "--changed-paths", "--split"])
        report = MaintenanceReport(time.perf_counter() - started, loose_before, _loose_count(repo),
                                   datetime.now(timezone.utc).isoformat())
        (repo.state_dir / "maintenance.json").write_text(json.dumps(report.__dict__), "utf-8")
        log.info("maintenance seconds=%.2f loose_before=%d loose_after=%d", report.seconds, loose_before,
                 report.loose_after)
        return report
    finally:
        lock.release()


def last_report(repo: ShadowRepo) -> MaintenanceReport | None:
    """The last maintenance run recorded in ``.trajectory/state/maintenance.json``, if any."""
    try:
        return MaintenanceReport(**json.loads((repo.state_dir / "maintenance.json").read_text("utf-8")))
    except (OSError, ValueError, TypeError):
        return None


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
        return self.since_last >= self.every and time.monotonic() - self.last_snapshot >= self.quiet_seconds

    def done(self) -> None:
        self.since_last = 0
