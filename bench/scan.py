"""Cold full scans against git, in the same run: restart reconcile, CLI checkpoint, memory of ``serve``.

Builds the project of ``bench/run.py`` (``--files`` files in ``--files / 25`` directories plus an ignored
``node_modules``), imports it once, then measures, alternating ours and git's runs so load on the shared
machine hits both alike:

1. restart with 1 file edited while stopped: a new process opens the recorder and reconciles (Python start-up
   and imports included: ``python -c`` running ``Recorder.open(...).reconcile()``), against ``git status`` and
   ``git add -A && git commit`` on a git dir with an index over the same work tree;
2. the same reconcile in this process (no start-up), nothing changed and 1 file changed;
3. ``code-trajectory checkpoint`` from the CLI (a full scan: no watcher in that process);
4. resident memory (VmRSS) of ``code-trajectory serve`` once its start-up reconcile is done;
5. the initial import of the same tree as a git project whose index is fresh (the baseline's git dir moved to
   ``.git`` after ``git add -A && git commit``, packed by ``git gc`` as a clone's objects are, then ``git status``): unchanged tracked files are taken from the
   index (``recording/index_seed.py``), against importing the tree into a new git repository.

Usage: ``python bench/scan.py --files 100000`` (default 10,000). Prints a markdown table; figures are medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("CODE_TRAJECTORY_HOME", tempfile.mkdtemp(prefix="ct-bench-home-"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import generate, git_base, proc_stats, project_dir, timed, touch

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.recorder import Recorder

RESTART = ("import sys; from pathlib import Path; from code_trajectory.core.config import TrajectorySettings; "
           "from code_trajectory.recording.recorder import Recorder; root = Path(sys.argv[1]); "
           "r = Recorder.open(root, TrajectorySettings.load(root)); s = r.reconcile(); r.close(); "
           "assert s is not None, 'the edit was not recorded'")


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def wait_reconciled(proc: subprocess.Popen, root: Path, timeout: float = 600) -> None:
    """Wait until ``serve``'s start-up scan is over: the log line of the scan, else a quiet CPU."""
    deadline = time.monotonic() + timeout
    last_cpu, quiet = -1.0, 0
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited with {proc.returncode}")
        _w, _rss, cpu = proc_stats(proc.pid)
        quiet = quiet + 1 if cpu - last_cpu < 0.02 else 0
        last_cpu = cpu
        if quiet >= 6:
            return
        time.sleep(0.5)
    raise RuntimeError("serve did not settle")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp, root = project_dir("ct-bench-scan-")
    try:
        generate(root, args.files, max(1, args.files // 25), args.files // 5)
        base = tmp / "baseline.git"
        git_base(base, root, "init", "-q")
        git_base(base, root, "config", "core.bare", "false")
        t_git_import = timed(lambda: (git_base(base, root, "add", "-A"),
                                      git_base(base, root, "commit", "-q", "-m", "import")))
        settings = TrajectorySettings.load(root)
        recorder = Recorder.open(root, settings)
        t_import = timed(recorder.reconcile)
        recorder.reconcile()  # the stat cache now trusts every row (past the racy margin on the next scans)
        recorder.close()
        time.sleep(2.1)
        files = sorted(str(p.relative_to(root)) for p in (root / "src").rglob("*.py"))[:args.runs * 4]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        ours, git_status, git_commit, ours_inproc, ours_noop, cli = [], [], [], [], [], []
        for n in range(args.runs):
            touch(root, [files[n]], n)
            ours.append(timed(lambda: subprocess.run([sys.executable, "-c", RESTART, str(root)], check=True,
                                                     env=env)))
            git_status.append(timed(lambda: git_base(base, root, "status", "--porcelain")))
            git_commit.append(timed(lambda n=n: (git_base(base, root, "add", "-A"),
                                             git_base(base, root, "commit", "-q", "-m", f"x{n}"))))
            recorder = Recorder.open(root, settings)
            try:
                ours_noop.append(timed(recorder.reconcile))
                touch(root, [files[args.runs + n]], n)
                ours_inproc.append(timed(recorder.reconcile))
            finally:
                recorder.close()
            touch(root, [files[2 * args.runs + n]], n)
            cli.append(timed(lambda n=n: subprocess.run(
                [sys.executable, "-m", "code_trajectory", "checkpoint", "--project", str(root), "-m", f"bench {n}"],
                check=True, env=env, capture_output=True)))
        proc = subprocess.Popen([sys.executable, "-m", "code_trajectory", "serve", "--project", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_reconciled(proc, root)
            _watches, rss_kib, _cpu = proc_stats(proc.pid)
        finally:
            proc.stdin.close()
            proc.terminate()
            proc.wait(timeout=30)
        # 5: the same tree as a git project with a fresh index
        shutil.rmtree(root / ".trajectory")
        shutil.rmtree(root / ".git", ignore_errors=True)  # the generated project's own (empty) repository
        shutil.move(str(base), str(root / ".git"))
        for git_args in (["gc", "-q"], ["status", "--porcelain"]):  # packed, as a clone is; the index fresh
            subprocess.run(["git", "-C", str(root), *git_args], check=True, capture_output=True, env=os.environ)
        time.sleep(0.1)
        recorder = Recorder.open(root, settings)
        try:
            t_import_git = timed(recorder.reconcile)
        finally:
            recorder.close()
        status_ms, commit_ms = median_ms(git_status), median_ms(git_commit)
        rows = [
            ("initial import", f"{t_import:.2f} s", f"{t_git_import:.2f} s (git add -A && git commit)",
             f"{t_import / t_git_import:.2f}x (target <= 1.3x)"),
            ("initial import, git project with a fresh index", f"{t_import_git:.2f} s",
             f"{t_git_import:.2f} s (git init && git add -A && git commit)",
             f"{t_import_git / t_git_import:.2f}x (target <= 0.1x)"),
            ("restart, 1 file edited while stopped -> recorded (new process)", f"{median_ms(ours):.0f} ms",
             f"git status {status_ms:.0f} ms; add -A && commit {commit_ms:.0f} ms",
             f"{(median_ms(ours) - status_ms) / 1000:.2f} s beyond git status (target <= 2 s)"),
            ("full scan in process, nothing changed", f"{median_ms(ours_noop):.0f} ms", f"git status {status_ms:.0f} ms",
             f"{median_ms(ours_noop) / status_ms:.2f}x"),
            ("full scan in process, 1 file changed", f"{median_ms(ours_inproc):.0f} ms",
             f"add -A && commit {commit_ms:.0f} ms", f"{commit_ms / median_ms(ours_inproc):.1f}x faster"),
            ("CLI checkpoint, 1 file changed (new process, full scan)", f"{median_ms(cli):.0f} ms",
             f"add -A && commit {commit_ms:.0f} ms", f"{commit_ms / median_ms(cli):.1f}x faster"),
            ("resident memory of serve after start-up", f"{rss_kib / 1024:.0f} MiB", "", "target <= 120 MB"),
        ]
        print(f"\n{args.files:,} files, {args.runs} runs each, medians\n")
        print("| measurement | ours | baseline (same run) | ratio / target |\n|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
