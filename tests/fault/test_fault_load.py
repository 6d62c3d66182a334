"""Load: a storm of writes and a huge checkout under a watched session.

A git project is recorded by a watched session (debounce 0.5 s, max delay 2 s so snapshots
are written *during* the storm). A writer thread makes 10,000 writes in about 10 s
across 1,000 files while the test thread keeps asking ``global_trajectory(5)`` and
``file_trajectory(...)``: the slowest answer over the storm must take under 1 s (the one
timing assertion). A sampler thread reads this process's RSS (``VmRSS``): its growth over
the whole test must stay under 500 MB. Then the storm's files are committed in the
project's git on a branch ``storm``, a branch ``rewrite`` that rewrites ``CT_LOAD_FILES``
files (default 20,000: the 1,000 storm files changed plus new small files) is made with
``git fast-import`` and checked out. Once the watcher settles (nothing pending, the shadow
tip unchanged for 3 s) the last snapshot's tree must equal what ``git add -A`` records
from the project's actual files, and ``refs/heads/shadow/rewrite`` must exist.
"""

from __future__ import annotations

import os
import random
import subprocess
import threading
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.history import service as history_service
from code_trajectory.recording.session import ProjectSession
from support import git
from support.fault_report import ExpectedTree, report, rss_kib, shadow_tree, tree_diff

WRITES = 10_000
STORM_FILES = 1_000
STORM_SECONDS = 10.0
CHECKOUT_FILES = int(os.environ.get("CT_LOAD_FILES", "20000"))
MAX_ANSWER_SECONDS = 1.0
MAX_RSS_GROWTH_MB = 500


def storm_path(i: int) -> str:
    return f"storm/d{i % 50:02d}/f{i:04d}.txt"


class Sampler(threading.Thread):
    """Samples this process's RSS every 50 ms until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="rss-sampler")
        self.stop = threading.Event()
        self.baseline = rss_kib()
        self.peak = self.baseline

    def run(self) -> None:
        while not self.stop.wait(0.05):
            self.peak = max(self.peak, rss_kib())


def wait_settled(session: ProjectSession, root: Path, branch: str, *, stable: float = 3.0,
                 timeout: float = 60.0) -> float:
    """Wait until nothing is pending and the shadow tip of ``branch`` stayed put for ``stable`` s; seconds waited."""
    started = time.monotonic()
    last, since = None, time.monotonic()
    while time.monotonic() - started < timeout:
        tip = shadow_tree(root, branch)
        if tip != last or session.recorder.has_pending():
            last, since = tip, time.monotonic()
        elif tip is not None and time.monotonic() - since >= stable:
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"the watcher did not settle on {branch} within {timeout} s "
                         f"(pending={session.recorder.has_pending()}, error={session.watcher.last_error})")


def fast_import_rewrite(root: Path, base: str, branch: str, files: int) -> None:
    """Create ``branch`` on top of ``base`` rewriting every storm file and adding small files, up to ``files``."""
    paths = [storm_path(i) for i in range(STORM_FILES)]
    paths += [f"gen/d{i // 100:03d}/g{i:05d}.txt" for i in range(max(0, files - STORM_FILES))]
    chunks = [f"commit refs/heads/{branch}\ncommitter Dev <dev@example.com> 1700000000 +0000\n"
              f"data 8\nrewrite\nfrom refs/heads/{base}\n".encode()]
    for n, path in enumerate(paths):
        body = f"rewritten {n} {path}\n".encode()
        chunks.append(f"M 100644 inline {path}\ndata {len(body)}\n".encode() + body + b"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"".join(chunks), env=env, check=True,
                   capture_output=True, timeout=120)


@pytest.mark.slow
def test_write_storm_and_huge_checkout(project: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    root = project
    for d in range(0, 50, 2):  # half the directories exist before the watch starts, half appear in the storm
        (root / f"storm/d{d:02d}").mkdir(parents=True)
    expected_tree = ExpectedTree(tmp_path)
    sampler = Sampler()
    sampler.start()
    settings = TrajectorySettings.load(root, debounce_seconds=0.5, max_delay_seconds=2.0)
    session = ProjectSession(root, settings, watch=True)
    session.start()
    latencies: list[float] = []
    slowest: tuple[float, str] = (0.0, "")
    writes_done = 0
    try:
        def writer() -> None:
            nonlocal writes_done
            rng = random.Random(7)
            t0 = time.monotonic()
            for k in range(WRITES):
                i = rng.randrange(STORM_FILES)
                path = root / storm_path(i)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"file {i} write {k}\n" * rng.randint(1, 5))
                writes_done = k + 1
                if k % 20 == 19:  # keep to the schedule: WRITES over STORM_SECONDS
                    ahead = t0 + (k + 1) * STORM_SECONDS / WRITES - time.monotonic()
                    if ahead > 0:
                        time.sleep(ahead)

        thread = threading.Thread(target=writer, name="storm-writer", daemon=True)
        storm_started = time.monotonic()
        thread.start()
        rng = random.Random(11)
        while thread.is_alive():
            for query, call in (("global_trajectory(5)", lambda: history_service.global_trajectory(session, 5)),
                                ("file_trajectory(src/app.py)", lambda: history_service.file_trajectory(session, "src/app.py")),
                                ("file_trajectory(storm file)",
                                 lambda: history_service.file_trajectory(session, storm_path(rng.randrange(STORM_FILES)), 3))):
                t = time.monotonic()
                answer = call()
                took = time.monotonic() - t
                assert answer.startswith("#"), answer[:200]
                latencies.append(took)
                if took > slowest[0]:
                    slowest = (took, query)
        thread.join()
        storm_seconds = time.monotonic() - storm_started
        storm_rss_peak = sampler.peak
        settle_storm = wait_settled(session, root, "main")
        want, have = expected_tree(root), shadow_tree(root, "main")
        assert want == have, tree_diff(root, want, have, expected_tree.git_dir)
        storm_commits = int(git(root, "--git-dir=.trajectory", "rev-list", "--count", "refs/heads/shadow/main"))

        git(root, "checkout", "-q", "-b", "storm")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "the storm's files")
        generate_started = time.monotonic()
        fast_import_rewrite(root, "storm", "rewrite", CHECKOUT_FILES)
        generate_seconds = time.monotonic() - generate_started
        checkout_started = time.monotonic()
        git(root, "checkout", "-q", "rewrite")
        checkout_git_seconds = time.monotonic() - checkout_started
        settle_checkout = wait_settled(session, root, "rewrite", timeout=90.0)
        checkout_seconds = time.monotonic() - checkout_started
        want, have = expected_tree(root), shadow_tree(root, "rewrite")
        assert have is not None, "no shadow branch for the checked-out branch `rewrite`"
        assert want == have, tree_diff(root, want, have, expected_tree.git_dir)
        recorded = int(git(root, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/rewrite")
                       .count("\n"))
        assert recorded >= CHECKOUT_FILES
        # snapshots since the storm, by the branch they were recorded for: while git writes the files, HEAD
        # still names the old branch, so with a short max delay part of the checkout lands on `storm` first
        branches = git(root, "--git-dir=.trajectory", "log", "--format=%(trailers:key=Trajectory-Branch,valueonly)",
                       "refs/heads/shadow/main..refs/heads/shadow/rewrite").split()
        checkout_snapshots = {b: branches.count(b) for b in sorted(set(branches))}
        assert session.watcher is not None and session.watcher.running
        last_error = session.watcher.last_error
    finally:
        session.close()
        sampler.stop.set()
        sampler.join()
    elapsed = time.monotonic() - started
    growth_mb = (sampler.peak - sampler.baseline) / 1024
    max_latency = max(latencies)
    report("load", f"load: {writes_done} writes over {STORM_FILES} files in {storm_seconds:.1f} s, "
                   f"{len(latencies)} queries (slowest {max_latency:.2f} s: {slowest[1]}), checkout of "
                   f"{CHECKOUT_FILES} files recorded in {checkout_seconds:.1f} s, RSS peak +{growth_mb:.0f} MB, "
                   f"0 failures ({elapsed:.0f} s)",
           writes=writes_done, storm_files=STORM_FILES, storm_seconds=round(storm_seconds, 1),
           storm_snapshots=storm_commits, queries=len(latencies), max_query_seconds=round(max_latency, 3),
           slowest_query=slowest[1], median_query_seconds=round(sorted(latencies)[len(latencies) // 2], 3),
           checkout_files=CHECKOUT_FILES, checkout_snapshots=checkout_snapshots,
           branch_generation_seconds=round(generate_seconds, 1),
           checkout_git_seconds=round(checkout_git_seconds, 1), checkout_recorded_seconds=round(checkout_seconds, 1),
           settle_seconds_storm=round(settle_storm, 1), settle_seconds_checkout=round(settle_checkout, 1),
           rss_baseline_mb=round(sampler.baseline / 1024), rss_peak_mb=round(sampler.peak / 1024),
           rss_peak_during_storm_mb=round(storm_rss_peak / 1024), rss_growth_mb=round(growth_mb),
           watcher_last_error=last_error, seconds=round(elapsed, 1), failures=0)
    assert max_latency < MAX_ANSWER_SECONDS, f"slowest answer during the storm: {max_latency:.2f} s ({slowest[1]})"
    assert growth_mb < MAX_RSS_GROWTH_MB, f"RSS grew by {growth_mb:.0f} MB"
    assert writes_done == WRITES
