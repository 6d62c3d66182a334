"""Scale benchmark: our side against git baselines measured in the same run.

Builds a generated project in a temp dir — ``--files`` source files in ~``--dirs``
directories plus an ignored ``node_modules`` of ``--ignored`` files — then measures,
each against a baseline run here and now (the machine is shared and noisy: read
the ratios, not the absolute times):

1. snapshot latency, 1 and 20 changed files: ``Recorder.record_paths`` (changed paths
   to shadow ref updated) against ``git add -A && git commit`` on a git dir with an
   index over the same work tree;
2. initial import: our start-up reconcile into a fresh ``.trajectory`` against
   ``git add -A && git commit`` into a fresh git dir;
3. history queries over ``--snapshots`` snapshots, after our maintenance:
   ``get_file_trajectory(depth=5)`` and ``get_global_trajectory(limit=20)``;
4. disk: ``.trajectory`` against a copy after ``git gc --aggressive --prune=now``;
5. the watcher of a real ``code-trajectory serve``: inotify watches against the
   number of non-ignored directories, resident memory, CPU while idle.

Usage: ``python bench/run.py --files 100000`` (default 20,000 files, under 2 minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("CODE_TRAJECTORY_HOME", tempfile.mkdtemp(prefix="ct-bench-home-"))

import contextlib

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.gitcmd import base_env
from code_trajectory.git.maintenance import BackgroundMaintenance, MaintenancePolicy, run_maintenance
from code_trajectory.history import service as history_service
from code_trajectory.recording.session import ProjectSession


def real_sizes(repos: list[Path]) -> list[int]:
    """The sizes in bytes of the files of ``HEAD`` in the git repositories ``repos`` (work trees or bare),
    symlinks and submodules left out: what ``--sizes-from`` gives :func:`generate`, so that a generated tree has
    real projects' file sizes."""
    sizes = []
    for repo in repos:
        out = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "-l", "-z", "HEAD"], check=True,
                             capture_output=True, env=base_env(isolate_config=True)).stdout
        for record in out.split(b"\0"):
            fields = record.partition(b"\t")[0].split()
            if len(fields) == 4 and fields[0] in (b"100644", b"100755"):
                sizes.append(int(fields[3]))
    if not sizes:
        raise SystemExit(f"--sizes-from {' '.join(map(str, repos))}: no file")
    return sizes


def _text_of(i: int, size: int) -> str:
    """A module of about ``size`` bytes (at least its first line): lines that differ from file to file."""
    head = f"# module {i}\n"
    lines, length, j = [head], len(head), 0
    while length < size:
        line = f"value_{j} = {i * j}  # {'-' * (j % 40)}\n"
        lines.append(line)
        length += len(line)
        j += 1
    return "".join(lines)


def generate(root: Path, files: int, dirs: int, ignored: int, seed: int = 7, sizes: list[int] | None = None) -> int:
    """Write the generated project at ``root``: ``files`` modules in ``dirs`` directories (1 to 4 deep) under
    ``src/``, ``ignored`` files under an ignored ``node_modules/``, a ``.gitignore``, and ``git init``.

    Args:
        sizes: the modules' sizes in bytes, cycled in a shuffled order (see :func:`real_sizes`); None: each module
            is 13 lines, ~210 bytes.

    Returns:
        The number of directories of ``src/`` (itself included) plus one (the root).
    """
    rng = random.Random(seed)
    order = rng.sample(sizes, len(sizes)) if sizes else None
    directories = []
    for i in range(dirs):
        depth = rng.randint(1, 4)
        parts = [f"d{rng.randint(0, 25)}" for _ in range(depth - 1)] + [f"pkg{i}"]
        directories.append(os.path.join(*parts))
    made = set()
    for i in range(files):
        d = root / "src" / directories[i % dirs]
        if d not in made:
            d.mkdir(parents=True, exist_ok=True)
            made.add(d)
        (d / f"mod{i}.py").write_text(_text_of(i, order[i % len(order)]) if order else
                                      f"# module {i}\n" + "".join(f"value_{j} = {i * j}\n" for j in range(12)))
    for i in range(ignored):
        d = root / "node_modules" / f"lib{i % 400}" / f"sub{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"index{i}.js").write_text(f"module.exports = {i};\n")
    (root / ".gitignore").write_text("node_modules/\n.trajectory/\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=base_env(isolate_config=True))
    return sum(1 for _ in (root / "src").rglob("*") if _.is_dir()) + 1


def compile_bytecode() -> None:
    """Write the bytecode of the ``code_trajectory`` package being measured, as ``pip install`` does.

    A start-up figure (a server's first answers, a hook) is a user's only with bytecode cached: a module whose
    ``.pyc`` is missing or older than its source is compiled at every start while ``PYTHONDONTWRITEBYTECODE`` is
    set, as on this machine (measured: 0.15 s instead of 0.09 s to import the server's modules after an edit).
    ``compileall`` writes the ``__pycache__`` files whatever that variable says.
    """
    import compileall

    import code_trajectory

    compileall.compile_dir(str(Path(code_trajectory.__file__).parent), quiet=1)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_ms(fn, runs: int, prepare=None) -> float:
    """The median wall time of ``runs`` calls of ``fn()``, in milliseconds.

    Args:
        fn: what is timed; runs: how many calls.
        prepare: when given, ``prepare(n)`` runs before call ``n`` (0-based), outside the timing.
    """
    values = []
    for n in range(runs):
        if prepare is not None:
            prepare(n)
        values.append(timed(fn))
    return statistics.median(values) * 1000


def add_tree_arguments(parser: argparse.ArgumentParser, files: int) -> None:
    """Add the options of the generated tree (see :func:`generate`): ``--files`` (default ``files``), ``--dirs``,
    ``--ignored`` (:func:`tree_size` reads them) and ``--keep`` (the caller keeps the tree)."""
    parser.add_argument("--files", type=int, default=files)
    parser.add_argument("--dirs", type=int, default=None, help="default: files / 25")
    parser.add_argument("--ignored", type=int, default=None, help="node_modules files (default: files / 5)")
    parser.add_argument("--keep", action="store_true", help="keep the generated tree")
    parser.add_argument("--sizes-from", type=Path, nargs="+", default=None, metavar="REPO",
                        help="give the modules the sizes of the files of real git repositories' HEAD, cycled "
                             "(default: ~210 bytes each)")


def tree_size(args: argparse.Namespace) -> tuple[int, int]:
    """``(dirs, ignored)`` for :func:`generate` from the options :func:`add_tree_arguments` added, defaults filled."""
    dirs = args.dirs or max(10, args.files // 25)
    ignored = args.ignored if args.ignored is not None else args.files // 5
    return dirs, ignored


def project_dir(prefix: str) -> tuple[Path, Path]:
    """A new temporary directory (``prefix`` begins its name) and the empty ``project`` directory made in it.

    Returns:
        ``(temporary directory, project directory)``; the caller removes the first.
    """
    work = Path(tempfile.mkdtemp(prefix=prefix))
    root = work / "project"
    root.mkdir()
    return work, root


def generate_tree(root: Path, args: argparse.Namespace) -> int:
    """Generate at ``root`` the tree the options of :func:`add_tree_arguments` ask for, saying so on stderr.

    Returns:
        What :func:`generate` returns: the number of non-ignored directories.
    """
    dirs, ignored = tree_size(args)
    sizes = real_sizes(args.sizes_from) if args.sizes_from else None
    print(f"generating {args.files} files in ~{dirs} dirs + {ignored} ignored"
          + (f", the sizes of {len(sizes)} real files (mean {sum(sizes) // len(sizes)} bytes, median "
             f"{sorted(sizes)[len(sizes) // 2]})" if sizes else "") + " ...", file=sys.stderr)
    return generate(root, args.files, dirs, ignored, sizes=sizes)


def git_base(git_dir: Path, root: Path, *args: str) -> None:
    subprocess.run(["git", f"--git-dir={git_dir}", f"--work-tree={root}", *args], check=True,
                   env=base_env(isolate_config=True), capture_output=True)


def touch(root: Path, rels: list[str], n: int) -> None:
    for rel in rels:
        with open(root / rel, "a") as f:
            f.write(f"edit_{n} = {n}\n")


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def proc_stats(pid: int) -> tuple[int, int, float]:
    """(inotify watches, resident KiB, cpu seconds) of a process, from /proc."""
    watches = 0
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        with contextlib.suppress(OSError):
            watches += Path(f"/proc/{pid}/fdinfo/{fd}").read_text().count("inotify wd:")
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / tick
    return watches, rss, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_arguments(parser, 20_000)
    parser.add_argument("--snapshots", type=int, default=1000, help="snapshots for the history queries")
    parser.add_argument("--runs", type=int, default=15, help="repetitions of each latency measurement")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    dirs, ignored = tree_size(args)
    work, root = project_dir("ct-bench-")
    rows: list[tuple[str, str, str, str]] = []
    results: dict[str, float] = {}
    try:
        n_dirs = generate_tree(root, args)
        rels = [str(p.relative_to(root)) for p in (root / "src").rglob("*.py")]
        rng = random.Random(1)

        # -- initial import ---------------------------------------------------------------
        base = work / "baseline.git"
        subprocess.run(["git", "init", "-q", "--bare", str(base)], check=True, env=base_env(isolate_config=True))
        git_base(base, root, "config", "core.bare", "false")
        t_base_import = timed(lambda: (git_base(base, root, "add", "-A"),
                                       git_base(base, root, "commit", "-q", "-m", "import")))
        settings = TrajectorySettings.load(root)
        session = ProjectSession(root, settings)
        t_import = timed(session.start)
        rows.append(("initial import", f"{t_import:.2f} s", f"{t_base_import:.2f} s (git add -A && commit)",
                     f"{t_import / t_base_import:.2f}x (target <= 1.3x)"))
        results.update(import_s=t_import, import_baseline_s=t_base_import)

        # -- snapshot latency ----------------------------------------------------------------
        recorder = session.recorder
        for count in (1, 20):
            ours, theirs = [], []
            for n in range(args.runs):
                chosen = rng.sample(rels, count)
                touch(root, chosen, n)
                ours.append(timed(lambda chosen=chosen: recorder.record_paths(chosen)))
            for n in range(max(3, args.runs // 3)):
                chosen = rng.sample(rels, count)
                touch(root, chosen, 1000 + n)
                theirs.append(timed(lambda: (git_base(base, root, "add", "-A"),
                                             git_base(base, root, "commit", "-q", "-m", "x"))))
            mo, mt = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
            target = "<= 30 ms and >= 10x faster" if count == 1 else "<= 60 ms"
            rows.append((f"snapshot, {count} changed file(s)", f"{mo:.1f} ms", f"{mt:.1f} ms (git add -A && commit)",
                         f"{mt / mo:.1f}x faster (target {target})"))
            results[f"snapshot_{count}_ms"] = mo
            results[f"snapshot_{count}_baseline_ms"] = mt

        # -- history ---------------------------------------------------------------------------
        hot = rels[:50]
        print(f"writing {args.snapshots} snapshots ...", file=sys.stderr)
        # as the watcher does: a pack roll-up on its own thread whenever packs pile up
        policy, background = MaintenancePolicy(), BackgroundMaintenance(recorder.repo)
        t0 = time.perf_counter()
        for n in range(args.snapshots):
            rel = hot[n % len(hot)] if n % 3 else rng.choice(rels)
            touch(root, [rel], 5000 + n)
            recorder.record_paths([rel])
            if policy.rollup_due(recorder.repo):
                background.start()
            if n % 1000 == 999:
                print(f"  {n + 1} snapshots", file=sys.stderr)
        per = (time.perf_counter() - t0) / args.snapshots * 1000
        background.join()
        before_fq = statistics.median(timed(lambda: history_service.file_trajectory(session, hot[0], 5)) for _ in range(5)) * 1000
        before_gq = statistics.median(timed(lambda: history_service.global_trajectory(session, 20)) for _ in range(5)) * 1000
        t_maint = timed(lambda: run_maintenance(recorder.repo))
        fq = statistics.median(timed(lambda: history_service.file_trajectory(session, hot[0], 5)) for _ in range(args.runs)) * 1000
        gq = statistics.median(timed(lambda: history_service.global_trajectory(session, 20)) for _ in range(args.runs)) * 1000
        rows.append((f"get_file_trajectory(depth=5), {args.snapshots} snapshots", f"{fq:.1f} ms",
                     f"{before_fq:.1f} ms before maintenance", "target <= 150 ms"))
        rows.append((f"get_global_trajectory(limit=20), {args.snapshots} snapshots", f"{gq:.1f} ms",
                     f"{before_gq:.1f} ms before maintenance", "target <= 100 ms"))
        rows.append(("snapshots written back to back", f"{per:.1f} ms each", f"maintenance {t_maint:.1f} s", ""))
        results.update(file_query_ms=fq, global_query_ms=gq, maintenance_s=t_maint)

        # -- disk ------------------------------------------------------------------------------
        ours_size = dir_size(root / ".trajectory")
        copy = work / "gc-copy.git"
        shutil.copytree(root / ".trajectory", copy)
        subprocess.run(["git", f"--git-dir={copy}", "gc", "--quiet", "--aggressive", "--prune=now"], check=True,
                       env=base_env(isolate_config=True))
        gc_size = dir_size(copy)
        rows.append((".trajectory on disk", f"{ours_size / 2**20:.1f} MiB", f"{gc_size / 2**20:.1f} MiB after git gc",
                     f"{ours_size / gc_size:.2f}x (target <= 2x)"))
        results.update(disk_mib=ours_size / 2**20, disk_gc_mib=gc_size / 2**20)
        session.close()

        # -- watcher of a real server ----------------------------------------------------------
        env = dict(os.environ)
        proc = subprocess.Popen([sys.executable, "-m", "code_trajectory", "serve", "--project", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        try:
            deadline = time.time() + 600
            watches = 0
            while time.time() < deadline:
                time.sleep(1)
                watches, rss, cpu0 = proc_stats(proc.pid)
                if watches >= n_dirs * 0.9:
                    break
            time.sleep(5)
            watches, rss, cpu0 = proc_stats(proc.pid)
            time.sleep(10)
            _, rss, cpu1 = proc_stats(proc.pid)
            node_dirs = sum(1 for p in (root / "node_modules").rglob("*") if p.is_dir()) + 1
            rows.append(("inotify watches of serve", str(watches),
                         f"{n_dirs} non-ignored dirs, {node_dirs} ignored", "target: ~ non-ignored dirs"))
            rows.append(("resident memory of serve", f"{rss / 1024:.0f} MiB", "", "target <= 120 MB"))
            rows.append(("CPU of serve over 10 s idle", f"{cpu1 - cpu0:.2f} s", "", "target: ~0"))
            results.update(watches=watches, dirs=n_dirs, rss_mib=rss / 1024, idle_cpu_s=cpu1 - cpu0)
        finally:
            proc.stdin.close()
            proc.terminate()
            proc.wait(timeout=30)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nMachine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}")
    print(f"Project: {args.files} files, {n_dirs} non-ignored dirs, {ignored} ignored files in node_modules\n")
    print("| measurement | ours | baseline (same run) | ratio / target |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
