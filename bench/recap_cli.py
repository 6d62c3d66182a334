"""Benchmark: ``code-trajectory recap --json`` start-up versus ``python -c pass``.

The read-only recap command is called by editors on every refresh, so it must
start about as fast as a bare interpreter. This script times, in the same run and
interleaved (so machine load affects both alike), the median wall time of:

* the baseline ``python -c pass``;
* ``python -m code_trajectory recap --json --project <dir>`` on a recap holding
  ``--entries`` entries (falls back to calling ``code_trajectory.recap.commands.main``
  directly when ``code_trajectory.cli`` does not exist yet, and says so);

and prints both medians and their ratio (target: <= 3x). It uses a throw-away
``CODE_TRAJECTORY_HOME`` and ``HOME``; nothing is written elsewhere.

Usage: ``python bench/recap_cli.py [--runs N] [--entries N] [--max-ratio R] [--imports]``;
exits 1 when the ratio exceeds ``--max-ratio`` (default 3.0).
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

SRC = Path(__file__).resolve().parent.parent / "src"
DIRECT = "import sys; from code_trajectory.recap.commands import main; sys.exit(main(sys.argv[1:]))"


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, CODE_TRAJECTORY_HOME=str(home / "state"), HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure with cached bytecode, as installed
    return env


def _recap_command(project: Path, env: dict[str, str]) -> tuple[list[str], str]:
    probe = subprocess.run([sys.executable, "-c", "import code_trajectory.cli"], env=env,
                           capture_output=True, check=False)
    args = ["recap", "--json", "--project", str(project)]
    if probe.returncode == 0:
        return [sys.executable, "-m", "code_trajectory", *args], "python -m code_trajectory recap --json"
    return [sys.executable, "-c", DIRECT, *args[1:]], "recap_cli.main (code_trajectory.cli not importable yet)"


def _fill(project: Path, env: dict[str, str], entries: int) -> None:
    code = ("import sys; from code_trajectory import recap\n"
            "p = sys.argv[1]\n"
            "recap.set_goal(p, 'Benchmark goal')\n"
            f"for i in range({entries}):\n"
            "    recap.add_entry(p, ('decision', 'insight', 'risk', 'assumption', 'fix')[i % 5], f'entry {i}')\n")
    subprocess.run([sys.executable, "-c", code, str(project)], env=env, check=True)


def _time_once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _top_imports(cmd: list[str], env: dict[str, str], count: int = 8) -> list[tuple[int, str]]:
    """The ``count`` costliest imports of one run (``-X importtime``), as (cumulative µs, module)."""
    done = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], env=env, capture_output=True, text=True,
                          check=True)
    costs = []
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            costs.append((int(parts[1]), parts[2].rstrip()))
    return sorted(costs, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="timed runs of each command (default 30)")
    parser.add_argument("--entries", type=int, default=50, help="entries in the benchmarked recap (default 50)")
    parser.add_argument("--max-ratio", type=float, default=3.0, help="fail above this ratio (default 3.0)")
    parser.add_argument("--imports", action="store_true", help="also list the costliest imports of the command")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recap-bench-") as tmp:
        home = Path(tmp)
        project = home / "my project"
        project.mkdir()
        env = _env(home)
        _fill(project, env, opts.entries)
        recap_cmd, label = _recap_command(project, env)
        baseline_cmd = [sys.executable, "-c", "pass"]
        for _ in range(3):  # warm up caches and bytecode
            _time_once(baseline_cmd, env)
            _time_once(recap_cmd, env)
        baseline, recap = [], []
        for _ in range(opts.runs):
            baseline.append(_time_once(baseline_cmd, env))
            recap.append(_time_once(recap_cmd, env))
        top = _top_imports(recap_cmd, env) if opts.imports else []
    base_ms = statistics.median(baseline) * 1000
    recap_ms = statistics.median(recap) * 1000
    ratio = recap_ms / base_ms
    print(f"python -c pass: {base_ms:.1f} ms (median of {opts.runs})")
    print(f"{label}: {recap_ms:.1f} ms (median of {opts.runs}, {opts.entries} entries)")
    print(f"ratio: {ratio:.2f}x (target <= {opts.max_ratio:g}x)")
    if top:
        print("costliest imports (cumulative, one run):")
        for micros, module in top:
            print(f"  {micros / 1000:6.1f} ms {module}")
    return 0 if ratio <= opts.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
