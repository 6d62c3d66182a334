"""Latency of the agent hooks as installed against Python's own start-up, in the same run.

Builds a project of ``--files`` files in a temp dir, records it once, then times (median of ``--runs``) the command
line the Claude Code installer writes (this interpreter's ``code-trajectory`` console script, ``hook edit|prompt
--project <root>``; ``python -m code_trajectory`` where there is no script):

- ``python -c pass`` with the same interpreter: the start-up every hook pays;
- ``hook edit`` after a file was saved and ``hook prompt``, first with nothing recording (the edit hook hands the
  edit over and starts a detached worker that records it), then while ``code-trajectory watch`` records the project
  (the hook hands the edit over to it and exits); for both, how long after the hook exits the snapshot of that edit
  is on disk (the shadow branch's tip moved);
- ``git add F && git commit`` of the same one-file change in a git dir with an index, for scale.

Issue 29's targets: ``hook edit`` and ``hook prompt`` within 30 ms of Python's start-up when a server records,
within 60 ms when none does, and the edit still lands with its intent.
Usage: ``python bench/hook.py`` (default 2,000 files, 15 runs). The package's bytecode is written first
(``run.compile_bytecode``), as an install does.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import compile_bytecode, generate, git_base, median_ms, project_dir


def wait_recording(root: Path) -> None:
    """Wait until a process holds the project's ``recorder.lock`` (``watch`` started)."""
    from code_trajectory.recording.liveness import recording_now

    deadline = time.monotonic() + 60
    while not recording_now(root / ".trajectory"):
        if time.monotonic() > deadline:
            raise SystemExit("code-trajectory watch did not start recording within 60 s")
        time.sleep(0.05)


def commits(root: Path, env: dict) -> str:
    """The shadow branch tips (``git for-each-ref``), to see a new snapshot land."""
    return subprocess.run(["git", f"--git-dir={root / '.trajectory'}", "for-each-ref", "--format=%(objectname)",
                           "refs/heads/"], capture_output=True, text=True, env=env).stdout


def hook_command() -> list[str]:
    """The hook's program as installed: this interpreter's ``code-trajectory`` script, else ``python -m``."""
    script = shutil.which("code-trajectory", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "code_trajectory"]


def wait_landed(root: Path, env: dict, before: str) -> float:
    """Milliseconds until the shadow branch tips differ from ``before`` (at most 10 s)."""
    started = time.perf_counter()
    while commits(root, env) == before and time.perf_counter() - started < 10:
        time.sleep(0.005)
    return (time.perf_counter() - started) * 1000


def wait_idle(root: Path, *, watching: bool) -> None:
    """Wait until no hand-over waits and, when nothing else records (``watching`` False), no edit worker holds the
    recorder lock (the next run starts quiet). While ``watch`` records, it holds that lock for good."""
    from code_trajectory.recording.handoff import waiting as pending
    from code_trajectory.recording.liveness import recording_now

    deadline = time.monotonic() + 30
    while ((not watching and recording_now(root / ".trajectory")) or pending(root / ".trajectory" / "state")) \
            and time.monotonic() < deadline:
        time.sleep(0.01)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    compile_bytecode()
    tmp, root = project_dir("ct-bench-hook-")
    env = {**os.environ, "CODE_TRAJECTORY_HOME": str(tmp / "home"), "HOME": str(tmp / "home"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        generate(root, args.files, max(1, args.files // 25), 0)
        exe = [sys.executable, "-m", "code_trajectory"]
        hook_exe = hook_command()
        subprocess.run([*exe, "checkpoint", "--project", str(root), "-m", "start"], check=True, env=env,
                       capture_output=True)
        target = next((root / "src").rglob("*.py"))
        edit = json.dumps({"session_id": "bench", "cwd": str(root), "hook_event_name": "PostToolUse",
                           "tool_name": "Edit", "tool_input": {"file_path": str(target)}}).encode()
        prompt = json.dumps({"session_id": "bench", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                             "prompt": "Make the parser accept tabs\nand more"}).encode()
        base = tmp / "baseline.git"
        git_base(base, root, "init", "-q")
        git_base(base, root, "config", "core.bare", "false")
        git_base(base, root, "add", "-A")
        git_base(base, root, "commit", "-q", "-m", "start")
        rel = target.relative_to(root).as_posix()

        def save(n: int) -> None:
            target.write_text(f"value = {n}\n")

        def timed(argv: list[str], data: bytes = b"") -> tuple[float, float]:
            """Wall and CPU (user + system, of the process itself) milliseconds of one run of ``argv``."""
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            proc = subprocess.run(argv, input=data, env=env, capture_output=True)
            wall = (time.perf_counter() - started) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0 or proc.stderr or proc.stdout:
                raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
            return wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000

        python: list[tuple[float, float]] = []

        def hook(event: str) -> tuple[float, float]:
            python.append(timed([sys.executable, "-c", "pass"]))  # interleaved: the same load for both
            return timed([*hook_exe, "hook", event, "--project", str(root)], edit if event == "edit" else prompt)

        def timed_edits(base_n: int, *, watching: bool) -> tuple[list[tuple[float, float]], list[float]]:
            """Each run: save, time the edit hook, time until its snapshot is on disk, wait until all is quiet."""
            spent, landed = [], []
            for n in range(args.runs):
                save(base_n + n)
                before = commits(root, env)
                spent.append(hook("edit"))
                landed.append(wait_landed(root, env, before))
                wait_idle(root, watching=watching)
            return spent, landed

        t_prompt = [hook("prompt") for _ in range(args.runs)]  # sets the intent the edits carry
        t_edit, landed_idle = timed_edits(0, watching=False)
        intent = subprocess.run(["git", f"--git-dir={root / '.trajectory'}", "log", "-1", "--all",
                                 "--format=%(trailers:key=Trajectory-Intent,valueonly)%(trailers:key="
                                 "Trajectory-Origin,valueonly)"], capture_output=True, text=True, env=env).stdout
        t_git = median_ms(lambda: (git_base(base, root, "add", rel), git_base(base, root, "commit", "-q", "-m", "x")),
                          args.runs, save)
        watcher = subprocess.Popen([*exe, "watch", str(root), "--debounce", "30"], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_recording(root)
            t_edit_live, landed_live = timed_edits(1000, watching=True)
            t_prompt_live = [hook("prompt") for _ in range(args.runs)]
        finally:
            watcher.terminate()
            watcher.wait(60)
        wall0 = statistics.median(w for w, _ in python)
        cpu0 = statistics.median(c for _, c in python)
        print(f"\n{args.files:,} files, {args.runs} runs each, medians; hook: {' '.join(hook_exe[-3:])}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
        print("| measurement | wall | beyond Python start-up | CPU beyond Python's | target (beyond) | snapshot on disk "
              "after the hook exits |\n|---|---|---|---|---|---|")

        def row(what: str, runs: list[tuple[float, float]], target: str, landed: str = "") -> None:
            wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
            print(f"| {what} | {wall:.0f} ms | {wall - wall0:.0f} ms | {cpu - cpu0:.0f} ms | {target} | {landed} |")

        row("hook edit, a server records (hand-over)", t_edit_live, "<= 30 ms",
            f"{statistics.median(landed_live):.0f} ms")
        row("hook prompt, a server records", t_prompt_live, "<= 30 ms")
        row("hook edit, nothing records (hand-over to a worker)", t_edit, "<= 60 ms",
            f"{statistics.median(landed_idle):.0f} ms (git add && git commit: {t_git:.0f} ms)")
        row("hook prompt, nothing records", t_prompt, "<= 60 ms")
        print(f"| python -c pass | {wall0:.0f} ms | | CPU {cpu0:.0f} ms | | |")
        print(f"\nthe last snapshot's intent and origin: {' / '.join(intent.split())}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
