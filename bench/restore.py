"""Restore against ``git checkout`` of the same trees, side by side in the same run.

Generates a project of ``--files`` files (default 10,000), records it (state A), rewrites every file and records
again (state B), then times, median of ``--runs``, ours and git's runs alternating:

* restoring one file from A (safety snapshot, write, ``[RESTORE]`` snapshot) against
  ``git checkout A -- <file>`` in a plain git repository holding the same two commits;
* restoring the whole project from A (every file written) against ``git checkout -f A`` there; each run goes back
  to B first (not timed).

Before each timed run both sides wait ``--settle`` seconds (default 2.1) after going back: files last written more
than 2 s before a restore, as after an edit spree, which the stat cache can vouch for (within 2 s of a write the stat
data cannot, git's "racy clean" rule, and the safety snapshot and the check for late saves read every file; pass
``--settle 0`` to measure that case).

Targets (issue 13): one file <= 100 ms; the whole project <= 1.5x ``git checkout``.
Usage: python bench/restore.py [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("CODE_TRAJECTORY_HOME", tempfile.mkdtemp(prefix="ct-bench-home-"))


def write_state(root: Path, files: int, version: int) -> None:
    for i in range(files):
        path = root / "src" / f"d{i % 200}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i} version {version}\n" + "".join(f"v{j} = {i * j + version}\n" for j in range(10)))


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def settled_time(settle: float, fn):
    """Flush written files to disk (``os.sync``), wait ``settle`` seconds, then time ``fn()``.

    Returns:
        ``(seconds fn took, what it returned)``.
    """
    os.sync()
    time.sleep(settle)
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def wait_idle(session, quiet: float) -> None:
    """Wait until the watcher has recorded what it saw (nothing pending for ``quiet`` seconds)."""
    calm_since = time.monotonic()
    while time.monotonic() - calm_since < quiet:
        time.sleep(0.05)
        if session.recorder.has_pending():
            calm_since = time.monotonic()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--settle", type=float, default=2.1, help="seconds between going back and a timed run")
    args = parser.parse_args()
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession
    from code_trajectory.restore.service import restore

    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = Path(tmp) / "ours", Path(tmp) / "git"
        for root in (ours, theirs):
            root.mkdir()
            git(root, "init", "-q", "-b", "main")
        one = "src/d7/mod7.py"
        write_state(theirs, args.files, 1)
        git(theirs, "add", "-A")
        git(theirs, "commit", "-q", "-m", "A")
        write_state(theirs, args.files, 2)
        git(theirs, "commit", "-q", "-am", "B")
        write_state(ours, args.files, 1)
        session = ProjectSession(ours, TrajectorySettings.load(ours))
        one_file, whole, git_one, git_whole, watched, git_watched = [], [], [], [], [], []
        try:
            a = session.recorder.checkpoint("A").commit
            write_state(ours, args.files, 2)
            b = session.recorder.checkpoint("B").commit
            for _ in range(args.runs):  # ours and git's alternate, so both see the same load
                # each timed run starts with the files on disk (removing unflushed files is cheaper)
                one_file.append(settled_time(args.settle, lambda: restore(session, a, [one]))[0])
                restore(session, b, [one])
                git_one.append(settled_time(args.settle, lambda: git(theirs, "checkout", "HEAD~1", "--", one))[0])
                git(theirs, "checkout", "HEAD", "--", one)
            for _ in range(args.runs):  # no watcher (a CLI restore): every file changed since the last snapshot
                seconds, done = settled_time(args.settle, lambda: restore(session, a))
                whole.append(seconds)
                assert len(done.written) == args.files, len(done.written)
                restore(session, b)
                git_whole.append(settled_time(args.settle, lambda: git(theirs, "checkout", "-q", "-f", "HEAD~1"))[0])
                git(theirs, "checkout", "-q", "-f", "main")
        finally:
            session.close()
        # with the watcher of a running server: it records the files the previous restore wrote, as it records
        # every save, so the safety snapshot finds them known
        session = ProjectSession(ours, TrajectorySettings.load(ours, debounce_seconds=0.5), watch=True)
        session.start()
        try:
            for _ in range(args.runs):
                wait_idle(session, 1.0)
                seconds, done = settled_time(args.settle, lambda: restore(session, a))
                watched.append(seconds)
                assert len(done.written) == args.files, len(done.written)
                restore(session, b)
                wait_idle(session, 1.0)
                git_watched.append(settled_time(args.settle, lambda: git(theirs, "checkout", "-q", "-f", "HEAD~1"))[0])
                git(theirs, "checkout", "-q", "-f", "main")
        finally:
            session.close()
    print(f"| restore, {args.files:,}-file project | ours (ms, median of {args.runs}) | git checkout (same run) | "
          "ratio | target |\n|---|---|---|---|---|")
    print(f"| one file | {median_ms(one_file):.0f} | {median_ms(git_one):.0f} | "
          f"{median_ms(one_file) / median_ms(git_one):.1f}x | <= 100 ms |")
    print(f"| whole project ({args.files:,} files written), a server's watcher recording | {median_ms(watched):.0f} | "
          f"{median_ms(git_watched):.0f} | {median_ms(watched) / median_ms(git_watched):.2f}x | <= 1.5x |")
    print(f"| whole project, no watcher: every file changed since the last snapshot (a CLI restore) | "
          f"{median_ms(whole):.0f} | {median_ms(git_whole):.0f} | {median_ms(whole) / median_ms(git_whole):.2f}x | "
          "<= 1.5x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
