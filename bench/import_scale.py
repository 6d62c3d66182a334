"""The initial import at scale against git, in the same run: a plain tree and a git project with a fresh index.

Builds the project of ``bench/run.py`` (``--files`` files in ``--dirs`` directories, default ``files / 25``, plus an
ignored ``node_modules`` of ``--ignored`` files, default ``files / 5``) and measures, on the same machine and run
(the machine is shared: read the ratios, not the absolute times):

1. git's baseline: ``git init && git add -A && git commit`` of the tree into a new git directory;
2. our import of the same tree as a project without git: ``python -m code_trajectory.recording.importer`` (the
   child process a server runs for its initial import: Python start-up included);
3. the same import of the tree as a git project whose index is fresh: the baseline's git directory becomes the
   project's ``.git``, packed once (``git repack -ad``, as a clone's objects are), ``git status`` run; the
   unchanged tracked files are then taken from the index (``recording/index_seed.py``);
4. answering at once, for both projects: a real ``code-trajectory serve --project`` over stdio (the official MCP
   SDK client): the seconds from the spawn to the ``initialize`` answer and to the answers of the first tool
   calls, made while the initial import runs, and whether they say so.

Each import's phases are timed from its progress lines (``scan``, ``hash``, ``write``: seconds after start). Each
timed step (git's baseline, each import, each server's first answers) starts with the page cache written out and a
second's pause (:func:`settle`), so that the writeback of what came before does not land in it.

Usage: ``python bench/import_scale.py --files 500000 --dirs 20000 --ignored 100000`` (default 20,000 files);
``--fsck`` also runs ``git fsck`` on the shadow repository of the git project (slow at 500,000 files). The git
project's import runs ``--runs`` times (default 3; median and minimum). ``--sizes-from REPO...``
gives the modules the sizes of real repositories' files instead of ~210 bytes each: git's baseline then reads and
compresses as much as on a real project of that many files, while the import of a git project reads none of them.
git's baseline runs ``--git-runs`` times (default 2; the median is the ratios' denominator): its time moved between
46 and 103 s from one run to the next at 500,000 files on this machine.

``--answers-only --runs N`` measures only step 4, on the git project, ``N`` times alternating (medians and minima):
beside ``python -c pass`` and ``python -c "import mcp"`` (the SDK's own import: its package imports its client too),
the seconds from the spawn of ``serve --project`` to the answers of ``initialize``, ``tools/list`` and the first two
tool calls, during the initial import (on a first start, answered from the opening answers the package ships, and
with the opening answer an earlier start kept: ``code_trajectory/early_answer.py``) and on a restart (the project imported, nothing changed), with the load
average before and after.
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

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from run import add_tree_arguments, compile_bytecode, dir_size, generate_tree, git_base, project_dir, timed

from code_trajectory.git.gitcmd import base_env

#: The tool calls made right after ``initialize``, while the import runs.
FIRST_CALLS: list[tuple[str, dict]] = [("get_global_trajectory", {"limit": 5}), ("get_session_summary", {})]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def settle() -> None:
    """Write out what earlier steps left in the page cache (``os.sync``) and wait a second, before a timed step: the
    tree just generated, a repack's pack, the previous import's shadow repository. Else the kernel writes them back
    during the step timed next (gigabytes at 500,000 files), whichever it is; as ``bench/restore.py`` does."""
    os.sync()
    time.sleep(1)


def run_import(root: Path) -> tuple[float, dict[str, float], str]:
    """Run the import child on ``root`` (its ``.trajectory`` removed first, then :func:`settle`).

    Returns:
        ``(seconds, {phase: seconds after start when it was first reported}, the child's log lines about the
        index)``.
    """
    shutil.rmtree(root / ".trajectory", ignore_errors=True)
    settle()
    phases: dict[str, float] = {}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "code_trajectory.recording.importer", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
    assert proc.stdout is not None
    outcome = None
    for line in proc.stdout:
        message = json.loads(line)
        if "progress" in message:
            phases.setdefault(message["progress"][0], time.perf_counter() - start)
        else:
            outcome = message
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    code = proc.wait()
    seconds = time.perf_counter() - start
    if code != 0 or outcome is None or "error" in outcome:
        raise RuntimeError(f"import failed ({code}): {outcome} {err[-2000:]}")
    notes = "\n".join(line for line in err.splitlines() if "index" in line)
    return seconds, phases, notes


async def _first_answers(root: Path) -> list[tuple[str, float, bool]]:
    """Spawn ``serve --project root`` and return ``[(what, seconds after the spawn, says the import runs)]``."""
    found: list[tuple[str, float, bool]] = []
    params = StdioServerParameters(command=sys.executable, args=["-m", "code_trajectory", "serve", "--project",
                                                                  str(root)], env=child_env(), cwd=str(root))
    start = time.monotonic()
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            found.append(("initialize", time.monotonic() - start, False))
            await client.list_tools()
            found.append(("tools/list", time.monotonic() - start, False))
            for name, arguments in FIRST_CALLS:
                result = await client.call_tool(name, arguments)
                text = "\n".join(getattr(block, "text", "") for block in result.content)
                found.append((name, time.monotonic() - start, "scan is still running" in text))
    return found


def first_answers(root: Path, *, restart: bool = False, kept: bool = True) -> list[tuple[str, float, bool]]:
    """Step 4 on ``root``: during its initial import (``.trajectory`` removed first), or with ``restart`` on the
    project as it was recorded; after :func:`settle`, as every timed step. ``kept=False``: the server's first start
    after an install or upgrade (the SDK's opening answer kept by an earlier start is removed first: the answer the
    package ships is sent, see ``code_trajectory/early_answer.py``)."""
    if not restart:
        shutil.rmtree(root / ".trajectory", ignore_errors=True)
    if not kept:
        (Path(os.environ["CODE_TRAJECTORY_HOME"]) / "cache" / "opening-answers.json").unlink(missing_ok=True)
    settle()
    return anyio.run(_first_answers, root)


def python_seconds(code: str) -> float:
    """Seconds of ``python -c code`` (the baselines of the answers: Python's start, the SDK's import)."""
    return timed(lambda: subprocess.run([sys.executable, "-c", code], check=True, env=child_env()))


def answers_only(root: Path, args: argparse.Namespace) -> int:
    """``--answers-only``: step 4 on the git project, ``args.runs`` times alternating; prints a markdown table."""
    shutil.rmtree(root / ".git")
    git_in(root, "init", "-q", "-b", "main")
    git_in(root, "add", "-A")
    git_in(root, "commit", "-q", "-m", "import")
    git_in(root, "status", "--porcelain")  # the index fresh, as a clone's
    load_before = os.getloadavg()
    samples: dict[str, list[float]] = {}
    says: dict[str, bool] = {}

    def add(label: str, seconds: float, said: bool = False) -> None:
        samples.setdefault(label, []).append(seconds)
        says[label] = says.get(label, False) or said

    for run in range(args.runs):
        print(f"run {run + 1} of {args.runs} ...", file=sys.stderr)
        add("`python -c pass`", python_seconds("pass"))
        add('`python -c "import mcp"`', python_seconds("import mcp"))
        for kept in (False, True):
            for what, seconds, said in first_answers(root, kept=kept):
                add(f"{what}, initial import running, {'answer kept' if kept else 'first start'}", seconds, said)
    print("importing once for the restarts ...", file=sys.stderr)
    run_import(root)
    for _ in range(args.runs):
        for what, seconds, said in first_answers(root, restart=True):
            add(f"{what}, restart", seconds, said)
    load_after = os.getloadavg()
    print(f"\n{args.files:,} files in a git project with a fresh index; {args.runs} runs; load average (1 min) "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after\n")
    print("| seconds after the spawn | median | min | target |\n|---|---|---|---|")
    for label, values in samples.items():
        target = "" if label.startswith("`python") else "<= 1 s" + ("; says the import runs" if says[label] else "")
        print(f"| {label} | {statistics.median(values):.2f} | {min(values):.2f} | {target} |")
    return 0


def git_in(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=base_env(isolate_config=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_arguments(parser, 20_000)
    parser.add_argument("--fsck", action="store_true", help="git fsck the git project's shadow repository")
    parser.add_argument("--answers-only", action="store_true", help="only the first answers (see the docstring)")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of the git project's import, or of --answers-only (default 3)")
    parser.add_argument("--git-runs", type=int, default=2, help="runs of git's baseline (default 2; median)")
    args = parser.parse_args()
    compile_bytecode()
    work, root = project_dir("ct-bench-import-")
    rows: list[tuple[str, str, str, str]] = []
    try:
        generate_tree(root, args)
        if args.answers_only:
            return answers_only(root, args)
        shutil.rmtree(root / ".git")  # a project without git first
        base = work / "baseline.git"
        git_runs: list[float] = []
        for run in range(max(1, args.git_runs)):  # git's own time moves between runs (46-103 s at 500,000 files)
            print(f"git init && git add -A && git commit ({run + 1} of {args.git_runs}) ...", file=sys.stderr)
            shutil.rmtree(base, ignore_errors=True)
            settle()
            git_runs.append(timed(lambda: (git_base(base, root, "init", "-q", "-b", "main"),
                                           git_base(base, root, "config", "core.bare", "false"),
                                           git_base(base, root, "add", "-A"),
                                           git_base(base, root, "commit", "-q", "-m", "import"))))
        t_git = statistics.median(git_runs)
        git_figure = (f"{t_git:.2f} s (git init && git add -A && git commit"
                      + (f"; median of {len(git_runs)}: " + ", ".join(f"{t:.2f}" for t in git_runs)
                         if len(git_runs) > 1 else "") + ")")
        print("import, no git ...", file=sys.stderr)
        t_plain, phases_plain, _ = run_import(root)
        rows.append(("initial import, project without git", f"{t_plain:.2f} s", git_figure,
                     f"{t_plain / t_git:.2f}x (target <= 1.3x)"))
        print("first answers, no git ...", file=sys.stderr)
        answers_plain = first_answers(root)

        shutil.move(str(base), str(root / ".git"))
        git_in(root, "config", "--unset", "core.bare")
        print("git repack -ad && git status ...", file=sys.stderr)
        t_repack = timed(lambda: git_in(root, "repack", "-adq"))
        t_status = timed(lambda: git_in(root, "status", "--porcelain"))
        print(f"import, git project with a fresh index ({args.runs} runs) ...", file=sys.stderr)
        seeded_runs = [run_import(root) for _ in range(max(1, args.runs))]
        t_seeded = statistics.median(run[0] for run in seeded_runs)
        phases_seeded, notes = seeded_runs[0][1], seeded_runs[0][2]
        rows.append(("initial import, git project with a fresh packed index (median of "
                     f"{len(seeded_runs)}; min; each)", f"{t_seeded:.2f} s; {min(r[0] for r in seeded_runs):.2f} s; "
                     + ", ".join(f"{run[0]:.2f}" for run in seeded_runs),
                     git_figure, f"{t_seeded / t_git:.2f}x (target <= 0.1x)"))
        print(notes, file=sys.stderr)
        if args.fsck:
            fsck = subprocess.run(["git", f"--git-dir={root / '.trajectory'}", "fsck", "--no-progress"],
                                  capture_output=True, text=True, env=base_env(isolate_config=True))
            print(f"git fsck of the shadow repository: exit {fsck.returncode} {fsck.stderr[-500:]}", file=sys.stderr)
        print("first answers, git project ...", file=sys.stderr)
        answers_git = first_answers(root)

        for label, answers in (("project without git", answers_plain), ("git project", answers_git)):
            for what, seconds, says in answers:
                rows.append((f"{what} answered, {label}, import running", f"{seconds:.2f} s after spawn",
                             "", "target <= 1 s" + ("; says the import runs" if says else "")))
        phase_text = "; ".join(f"{label}: " + ", ".join(f"{p} at {s:.1f} s" for p, s in phases.items())
                               for label, phases in (("no git", phases_plain), ("git", phases_seeded)))
        sizes = ("~210 bytes a module" if not args.sizes_from else
                 f"module sizes of real files ({', '.join(p.name for p in args.sizes_from)})")
        print(f"\n{args.files:,} files (+ ignored), {sizes}, {dir_size(root / 'src') / 2**20:,.0f} MiB; "
              f"git repack -ad {t_repack:.1f} s, git status {t_status:.2f} s; load average (1 min) "
              f"{os.getloadavg()[0]:.1f}; phases: {phase_text}\n")
        print("| measurement | ours | git (same run) | ratio / target |\n|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return 0
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
