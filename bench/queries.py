"""Latency of the history queries over a long shadow history, against git doing the same search in the same run.

Builds ``--snapshots`` snapshot commits (default 10,000) with ``git fast-import`` (the ui tests' history builder:
an import of 40 Python files, then snapshots changing one or two of them), then times, median of ``--runs``:

* ``search_trajectory`` for text added once (``git log -S`` inside) against a bare ``git log -S`` on the same ref;
* ``search_trajectory`` with a regex and a path;
* ``get_symbol_trajectory`` of a function of the most edited file;
* ``get_file_trajectory(depth=10)`` of the most edited file.

Target (issue 12): each query <= 1 s over 10,000 snapshots. Usage: python bench/queries.py [--snapshots N]

The history here is one fast-import pack without the product's maintenance (no commit-graph, no search index):
``bench/history.py`` builds 100,000 snapshots as the recorder and its maintenance leave them (issue 29's targets).
"""

from __future__ import annotations

import argparse
import os
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from run import median_ms  # bench/run.py: this script's directory is on sys.path

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.git.gitcmd import base_env
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession
    from support.ui import build_history

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        start = time.perf_counter()
        commits = build_history(root, args.snapshots)
        built = time.perf_counter() - start
        session = ProjectSession(root, TrajectorySettings.load(root), create=False)
        try:
            repo = session.recorder.repo
            counts = Counter(p for p in repo.git.text(["log", "--format=", "--name-only",
                                                        "refs/heads/shadow/main"]).split() if p.endswith(".py"))
            hot = counts.most_common(1)[0][0]
            needle = "return y * 5000" if args.snapshots > 5000 else "return x + 1"
            symbol = _first_function(root, hot)
            git_env = base_env(isolate_config=True)

            def git_pickaxe() -> None:
                subprocess.run(["git", f"--git-dir={root / '.trajectory'}", "log", "-S" + needle, "--format=%H",
                                "-n20", "refs/heads/shadow/main"], check=True, capture_output=True, env=git_env)

            rows = [
                ("search_trajectory (text)", median_ms(lambda: service.search_trajectory(session, needle), args.runs),
                 median_ms(git_pickaxe, args.runs), "git log -S (bare)"),
                ("search_trajectory (regex, path)",
                 median_ms(lambda: service.search_trajectory(session, r"return y \* 5\d\d\d", regex=True,
                                                             path="src/pkg1"), args.runs), None, ""),
                ("get_symbol_trajectory", median_ms(lambda: service.symbol_trajectory(session, hot, symbol), args.runs),
                 None, ""),
                ("get_file_trajectory(depth=10)", median_ms(lambda: service.file_trajectory(session, hot, 10), args.runs),
                 None, ""),
            ]
        finally:
            session.close()
    print(f"{len(commits):,} snapshots built in {built:.1f} s; most edited file: {hot} ({counts[hot]} versions)")
    print("| query | ours (ms, median) | baseline (same run) | target |\n|---|---|---|---|")
    for name, ours, base, label in rows:
        baseline = f"{base:.0f} ms {label} ({ours / base:.1f}x)" if base else ""
        print(f"| {name} | {ours:.0f} | {baseline} | <= 1000 ms |")
    return 0


def _first_function(root: Path, path: str) -> str:
    from code_trajectory.git.shadow import ShadowRepo

    with ShadowRepo(root) as repo:
        text = repo.git.text(["show", f"refs/heads/shadow/main:{path}"])
    return next(line[4:line.index("(")] for line in text.splitlines() if line.startswith("def "))


if __name__ == "__main__":
    raise SystemExit(main())
