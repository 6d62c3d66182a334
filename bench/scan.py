"""Cold full scans against git, in the same run: restart reconcile, CLI checkpoint, memory of ``serve``.

Builds the project of ``bench/run.py`` (``--files`` files in ``--files / 25`` directories plus an ignored
``node_modules`` of ``--files / 5``), imports it once, then measures, alternating ours and git's runs so load on
the shared machine hits both alike:

1. restart with 1 file edited while stopped: a new ``code-trajectory serve`` process answers the MCP
   ``initialize`` and records the edit (the time until its shadow ref moves), against ``git status`` and
   ``git add -A && git commit`` on a git dir with an index over the same work tree; also the recorder alone
   (``python -c`` running ``Recorder.open(...).reconcile()``: no MCP server);
2. the same reconcile in this process (no start-up), nothing changed and 1 file changed;
3. ``code-trajectory checkpoint`` from the CLI (a full scan: no watcher in that process);
4. resident memory (VmRSS) of ``code-trajectory serve`` once its start-up reconcile is done;
5. the initial import of the same tree as a git project whose index is fresh (the baseline's git dir moved to
   ``.git`` after ``git add -A && git commit``, packed by ``git gc`` as a clone's objects are, then ``git status``): unchanged tracked files are taken from the
   index (``recording/index_seed.py``), against importing the tree into a new git repository.

Usage: ``python bench/scan.py --files 100000`` (default 10,000). Prints a markdown table; figures are medians.
Building 500,000 files takes minutes: ``--keep`` keeps the work directory (its path is printed; after step 5 the
project is the git project), and ``--reuse DIR`` measures 1-4 again on it, without building or importing.
"""

from __future__ import annotations

import argparse
import json
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

from run import (
    add_tree_arguments,
    compile_bytecode,
    generate,
    git_base,
    proc_stats,
    project_dir,
    timed,
    touch,
    tree_size,
)

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


def shadow_tips(root: Path) -> dict[str, str]:
    """``{ref: commit}`` of the shadow branches, read from the loose ref files and ``packed-refs`` (no git process,
    so polling them costs the measured server nothing)."""
    git_dir = root / ".trajectory"
    tips: dict[str, str] = {}
    try:
        for line in (git_dir / "packed-refs").read_text().splitlines():
            oid, _, ref = line.partition(" ")
            if ref.startswith("refs/heads/shadow/"):
                tips[ref] = oid
    except OSError:
        pass
    heads = git_dir / "refs/heads/shadow"
    for path in heads.rglob("*") if heads.is_dir() else ():
        if path.is_file():
            try:
                tips[str(path.relative_to(git_dir))] = path.read_text().strip()
            except OSError:
                continue
    return tips


def serve_restart(root: Path, env: dict[str, str], timeout: float = 600) -> tuple[float, float]:
    """Start ``code-trajectory serve`` on ``root``, send the MCP ``initialize`` (then ``initialized``) over stdio,
    and wait until a shadow branch moves (the edit made while stopped is recorded).

    Returns:
        ``(seconds until initialize was answered, seconds until recorded)``, both from the process's start.
    """
    before = shadow_tips(root)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "code_trajectory", "serve", "--project", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
        proc.stdin.write((json.dumps(hello) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        initialized = time.perf_counter() - started
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while shadow_tips(root) == before:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("serve did not record the edit")
            time.sleep(0.005)
        return initialized, time.perf_counter() - started
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=60)


def import_as_git_project(root: Path, base: Path, settings: TrajectorySettings) -> float:
    """Step 5: make ``base`` the project's ``.git`` (packed by ``git gc`` as a clone's objects are, the index fresh),
    drop ``.trajectory`` and time the initial import; seconds."""
    shutil.rmtree(root / ".trajectory")
    shutil.rmtree(root / ".git", ignore_errors=True)  # the generated project's own (empty) repository
    shutil.move(str(base), str(root / ".git"))
    for git_args in (["gc", "-q"], ["status", "--porcelain"]):  # packed, as a clone is; the index fresh
        subprocess.run(["git", "-C", str(root), *git_args], check=True, capture_output=True, env=os.environ)
    time.sleep(0.1)
    recorder = Recorder.open(root, settings)
    try:
        return timed(recorder.reconcile)
    finally:
        recorder.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_arguments(parser, 10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reuse", type=Path, help="a work directory kept by --keep: measure 1-4 on it again")
    args = parser.parse_args()
    compile_bytecode()
    if args.reuse:
        tmp, root = args.reuse.resolve(), args.reuse.resolve() / "project"
    else:
        tmp, root = project_dir("ct-bench-scan-")
    try:
        base = tmp / "baseline.git"
        t_import = t_git_import = None
        settings = TrajectorySettings.load(root)
        if not args.reuse:
            dirs, ignored = tree_size(args)
            generate(root, args.files, dirs, ignored)
            git_base(base, root, "init", "-q")
            git_base(base, root, "config", "core.bare", "false")
            git_base(base, root, "config", "gc.auto", "0")  # a detached auto gc would load the runs below, and
            # make step 5's own `git gc` fail ("gc is already running")
            t_git_import = timed(lambda: (git_base(base, root, "add", "-A"),
                                          git_base(base, root, "commit", "-q", "-m", "import")))
            recorder = Recorder.open(root, settings)
            t_import = timed(recorder.reconcile)
            recorder.reconcile()  # the stat cache now trusts every row (past the racy margin on the next scans)
            recorder.close()
            time.sleep(2.1)
        elif not base.exists():
            base = root / ".git"  # step 5 of the --keep run made the project the git project
        if args.reuse:
            recorder = Recorder.open(root, settings)
            recorder.reconcile()  # whatever an earlier run left unrecorded
            recorder.close()
            time.sleep(2.1)
        files = sorted(str(p.relative_to(root)) for p in (root / "src").rglob("*.py"))[:args.runs * 5]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        ours, served, initialized, git_status, git_commit, ours_inproc, ours_noop, cli = [], [], [], [], [], [], [], []
        for n in range(args.runs):
            touch(root, [files[n]], n)
            t_init, t_recorded = serve_restart(root, env)
            initialized.append(t_init)
            served.append(t_recorded)
            git_status.append(timed(lambda: git_base(base, root, "status", "--porcelain")))
            touch(root, [files[3 * args.runs + n]], n)
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
            time.sleep(2.1)  # the next edit lands out of the racy window of this round's scans, as a restart's does
        proc = subprocess.Popen([sys.executable, "-m", "code_trajectory", "serve", "--project", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_reconciled(proc, root)
            _watches, rss_kib, _cpu = proc_stats(proc.pid)
        finally:
            proc.stdin.close()
            proc.terminate()
            proc.wait(timeout=30)
        status_ms, commit_ms = median_ms(git_status), median_ms(git_commit)
        status_ms = median_ms(git_status)
        print(f"\nrestart (serve, MCP initialize included): {median_ms(served):.0f} ms against git status "
              f"{status_ms:.0f} ms; initialize {median_ms(initialized):.0f} ms", file=sys.stderr, flush=True)
        t_import_git = None
        if not args.reuse:  # 5: the same tree as a git project with a fresh index
            try:
                t_import_git = import_as_git_project(root, base, settings)
            except subprocess.CalledProcessError as exc:
                print(f"step 5 skipped: {exc}: {exc.stderr}", file=sys.stderr)
        rows = []
        if t_import is not None and t_git_import is not None:
            rows.append(("initial import", f"{t_import:.2f} s", f"{t_git_import:.2f} s (git add -A && git commit)",
                         f"{t_import / t_git_import:.2f}x (target <= 1.3x)"))
        if t_import_git is not None and t_git_import is not None:
            rows.append(("initial import, git project with a fresh index", f"{t_import_git:.2f} s",
                         f"{t_git_import:.2f} s (git init && git add -A && git commit)",
                         f"{t_import_git / t_git_import:.2f}x (target <= 0.1x)"))
        rows += [
            ("restart, 1 file edited while stopped -> recorded (new `serve` process, MCP initialize included)",
             f"{median_ms(served):.0f} ms", f"git status {status_ms:.0f} ms",
             f"{(median_ms(served) - status_ms) / 1000:.2f} s beyond git status (target <= 1 s)"),
            ("restart: `initialize` answered (same runs)", f"{median_ms(initialized):.0f} ms", "",
             "target <= 1 s"),
            ("restart, the recorder alone (new process: start-up, full scan, snapshot; no MCP server)",
             f"{median_ms(ours):.0f} ms", f"git status {status_ms:.0f} ms; add -A && commit {commit_ms:.0f} ms",
             f"{(median_ms(ours) - status_ms) / 1000:.2f} s beyond git status"),
            ("full scan in process, nothing changed", f"{median_ms(ours_noop):.0f} ms", f"git status {status_ms:.0f} ms",
             f"{median_ms(ours_noop) / status_ms:.2f}x"),
            ("full scan in process, 1 file changed", f"{median_ms(ours_inproc):.0f} ms",
             f"add -A && commit {commit_ms:.0f} ms", f"{commit_ms / median_ms(ours_inproc):.1f}x faster"),
            ("CLI checkpoint, 1 file changed (new process, full scan)", f"{median_ms(cli):.0f} ms",
             f"add -A && commit {commit_ms:.0f} ms", f"{commit_ms / median_ms(cli):.1f}x faster"),
            ("resident memory of serve after start-up", f"{rss_kib / 1024:.0f} MiB", "", "target <= 150 MB"),
        ]
        print(f"\n{f'the kept tree of {args.reuse}' if args.reuse else f'{args.files:,} files'}, {args.runs} runs each, "
              f"medians, load {os.getloadavg()[0]:.1f}\n")
        print("| measurement | ours | baseline (same run) | ratio / target |\n|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        if args.keep:
            print(f"kept: {tmp} (--reuse {tmp})", file=sys.stderr)
        return 0
    finally:
        if not args.keep and not args.reuse:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
