"""A long history as the product keeps it: the five history answers and the disk, against git in the same run.

Builds ``--snapshots`` snapshot commits (default 100,000) on ``refs/heads/shadow/main`` of a shadow repository with
``git fast-import`` (the ui tests' history builder, ``tests/support/ui.py``: the recorder's commit messages and
trailers, an import of ``--files`` Python files, then snapshots changing one or two of them, a session gap every
250, a checkpoint every 97th, files capped at ``--max-functions`` functions). It is written as the recorder leaves
it: loose objects, as the recorder writes a snapshot's few objects, ``--chunk`` snapshots at a time (200:
:data:`code_trajectory.git.maintenance.SNAPSHOTS_BETWEEN_RUNS`, after which the watcher's maintenance is due), and
after each chunk the product's own :func:`code_trajectory.git.maintenance.run_maintenance` (geometric repack,
commit-graph with changed-path Bloom filters), as the watcher runs it. Then, median of ``--runs``, in process on a
:class:`~code_trajectory.recording.session.ProjectSession`:

* ``get_file_trajectory(depth=10)`` of the most edited file;
* ``get_global_trajectory(limit=20)``;
* ``get_symbol_trajectory`` (default depth 10) of the function of that file added last and of its oldest one
  (there since the import: its 10 changes lie far back);
* ``search_trajectory`` of a text added in the last 300 snapshots and of a text added once half way back;
* the UI's first page (server time of ``GET /``, a ``UIServer`` in a thread, once its warm-up is done);
* ``.trajectory`` on disk (its search index included) against a copy of the repository (without that index)
  after ``git gc --aggressive --prune=now``.

Before measuring, maintenance runs once more (a kept history built before the search index gets it there).

git's own command for each question runs beside it (``git log -n10 -p -- F``, ``git log -n20 --stat``,
``git log -S``). Targets (issue 29): each answer <= 300 ms, disk <= 1.5x. The machine is shared: read the ratios.

Usage: ``python bench/history.py [--snapshots 100000] [--keep DIR]`` (100,000 snapshots: the build and its 500
maintenance runs take ~15 minutes on a 2-core machine; ``--keep DIR`` reuses a history built there before).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent / "tests"))
os.environ.setdefault("CODE_TRAJECTORY_HOME", tempfile.mkdtemp(prefix="ct-bench-home-"))

TARGET_MS = 300
TARGET_DISK = 1.5


def build(root: Path, snapshots: int, files: int, chunk: int, max_functions: int) -> tuple[float, list[float]]:
    """Write the history into ``root/.trajectory`` with the product's maintenance between chunks.

    Returns:
        ``(seconds in all, seconds of each maintenance run)``.
    """
    from code_trajectory.git.maintenance import run_maintenance
    from code_trajectory.git.shadow import ShadowRepo
    from support.ui import build_history

    started, runs = time.perf_counter(), []
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, capture_output=True)  # branch main
    with ShadowRepo(root) as repo:
        def maintain(done: int) -> None:
            began = time.perf_counter()
            run_maintenance(repo)
            runs.append(time.perf_counter() - began)
            if done % 10_000 == 0:
                print(f"  {done:,} snapshots, {time.perf_counter() - started:.0f} s", file=sys.stderr)

        build_history(root, snapshots, files=files, chunk=chunk, between=maintain, loose=True,
                      max_functions=max_functions)
    return time.perf_counter() - started, runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--max-functions", type=int, default=60)
    parser.add_argument("--chunk", type=int, default=200, help="snapshots between maintenance runs")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the history here and keep it (reused when present)")
    parser.add_argument("--no-disk", action="store_true", help="leave out the disk comparison (git gc --aggressive)")
    args = parser.parse_args()
    from run import dir_size  # bench/run.py: this script's directory is on sys.path

    work = Path(tempfile.mkdtemp(prefix="ct-history-"))
    root = (args.keep or work / "project").resolve()
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not (root / ".trajectory" / "HEAD").exists():
            print(f"building {args.snapshots:,} snapshots ...", file=sys.stderr)
            built, runs = build(root, args.snapshots, args.files, args.chunk, args.max_functions)
            print(f"built in {built:.0f} s; {len(runs)} maintenance runs: {sum(runs):.0f} s in all, the longest "
                  f"{max(runs):.1f} s, the last {runs[-1]:.1f} s", file=sys.stderr)
        from code_trajectory.git.maintenance import run_maintenance
        from code_trajectory.git.shadow import ShadowRepo

        with ShadowRepo(root) as repo:  # a kept history may predate the search index: maintenance writes it
            started = time.perf_counter()
            run_maintenance(repo)
            print(f"maintenance before measuring: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        rows = measure(root, args.runs)
        ours, gc_size, gc_seconds = dir_size(root / ".trajectory"), 0, 0.0
        if not args.no_disk:
            copy = work / "gc-copy.git"  # without our search index: git has no such file
            shutil.copytree(root / ".trajectory", copy, ignore=shutil.ignore_patterns("search-index"))
            started = time.perf_counter()
            git(copy, "gc", "--quiet", "--aggressive", "--prune=now")
            gc_seconds = time.perf_counter() - started
            gc_size = dir_size(copy)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.snapshots:,} snapshots, {args.files} files; load average {os.getloadavg()[0]:.1f} at the end; "
          f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}\n")
    print("| measurement | ours: first call, then median | git, same run (median) | target |\n|---|---|---|---|")
    for name, first, mine, theirs, label in rows:
        verdict = "ok" if max(first, mine) <= TARGET_MS else "OVER"
        print(f"| {name} | {first:.0f} ms, {mine:.0f} ms | {theirs:.0f} ms `{label}` | <= {TARGET_MS} ms ({verdict}) |")
    if not gc_size:
        print(f"| .trajectory on disk | {ours / 2**20:.1f} MiB | (--no-disk) | |")
        return 0
    ratio = ours / gc_size
    print(f"| .trajectory on disk | {ours / 2**20:.1f} MiB | {gc_size / 2**20:.1f} MiB after `git gc --aggressive` "
          f"({gc_seconds:.0f} s) | {ratio:.2f}x, <= {TARGET_DISK}x ({'ok' if ratio <= TARGET_DISK else 'OVER'}) |")
    return 0


def git(git_dir: Path, *args: str) -> bytes:
    from code_trajectory.git.gitcmd import base_env

    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True,
                          env=base_env(isolate_config=True)).stdout


def first_and_median(fn, runs: int) -> tuple[float, float]:
    """``(ms of the first call, median ms of the next runs)``: the first pays for cold caches (a new server)."""
    from run import median_ms, timed

    return timed(fn) * 1000, median_ms(fn, runs)


def measure(root: Path, runs: int) -> list[tuple[str, float, float, float, str]]:
    """Time the five answers and git's command for each; ``[(name, ours first ms, ours median ms, git ms, git
    command)]``."""
    from run import median_ms

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession
    from code_trajectory.ui.security import cookie_name
    from support.ui import request, running_ui

    shadow = root / ".trajectory"
    ref = "refs/heads/shadow/main"
    counts = Counter(p for p in git(shadow, "log", "-n2000", "--format=", "--name-only", ref).decode().split()
                     if p.endswith(".py"))
    hot = counts.most_common(1)[0][0]
    text = git(shadow, "show", f"{ref}:{hot}").decode()
    newest = next(line[4:line.index("(")] for line in reversed(text.splitlines()) if line.startswith("def g"))
    oldest = next(line[4:line.index("(")] for line in text.splitlines() if line.startswith("def f"))
    total = int(git(shadow, "rev-list", "--count", ref))
    added = [line[1:].strip() for line in git(shadow, "log", "-p", "-U0", "-n300", f"--skip={total // 2}", ref)
             .decode().splitlines() if line.startswith("+    return y * ")]
    recent_needle = f"return y * {total - 300}" if total > 1000 else "return x + 1"
    old_needle = added[-1] if added else "return y * 1"  # added once, half way back

    def timed_git(*args: str) -> float:
        return median_ms(lambda: git(shadow, *args), runs)

    session = ProjectSession(root, TrajectorySettings.load(root), create=False)
    rows = []
    try:
        rows.append(("get_file_trajectory(depth=10)",
                     *first_and_median(lambda: service.file_trajectory(session, hot, 10), runs),
                     timed_git("log", "-n10", "-p", ref, "--", hot), f"git log -n10 -p -- {hot}"))
        rows.append(("get_global_trajectory(limit=20)",
                     *first_and_median(lambda: service.global_trajectory(session, 20), runs),
                     timed_git("log", "-n20", "--stat", ref), "git log -n20 --stat"))
        for label, symbol in (("added lately", newest), ("there since the import", oldest)):
            rows.append((f"get_symbol_trajectory({symbol}), {label}",
                         *first_and_median(lambda symbol=symbol: service.symbol_trajectory(session, hot, symbol),
                                           runs),
                         timed_git("log", "-n10", f"-L:{symbol}:{hot}", ref), f"git log -n10 -L:{symbol}:{hot}"))
        for label, needle in (("recent", recent_needle), ("old", old_needle)):
            rows.append((f"search_trajectory({needle!r}, {label})",
                         *first_and_median(lambda needle=needle: service.search_trajectory(session, needle), runs),
                         timed_git("log", "-n20", "-S" + needle, "--format=%H", ref), "git log -n20 -S"))
    finally:
        session.close()
    started = time.perf_counter()
    with running_ui(root) as ui:
        ui.server.page.warmed.wait(120)  # the server's warm-up: templates, the branch's sessions
        print(f"UI server started and warmed up in {time.perf_counter() - started:.2f} s", file=sys.stderr)
        cookie = {"Cookie": f"{cookie_name(ui.port)}={ui.token}"}
        rows.append(("UI first page (GET /)",
                     *first_and_median(lambda: request(ui.port, "GET", "/", headers=cookie), runs),
                     timed_git("log", "-n150", "--stat", ref), "git log -n150 --stat"))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
