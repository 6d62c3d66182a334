"""The recording process that ``tests/test_fault_crash.py`` kills with SIGKILL.

Run as ``python fault_crash_child.py PROJECT PHASE_FILE``: a *zygote* that imports
code_trajectory once, then for every seed read on stdin forks a worker, prints
``pid <pid>``, waits until the worker and every process it started are gone (the
zygote is a child subreaper, so orphaned git processes are reaped here too) and
prints ``done <pid> <wait status>``. Forking from the warm zygote keeps a crash
cycle cheap (no interpreter start-up per kill).

The worker (its own process group, so the test can kill it together with its git
children) opens a :class:`Recorder` on PROJECT, reconciles, then loops forever:
edit files under ``w/`` (write, delete, rename, chmod, symlink, remove a directory,
write ignored files, sometimes a file of a few MiB), then ``record_paths``,
``reconcile``, ``checkpoint``, ``consolidate`` or ``run_maintenance`` (sometimes with a
size cap so small that it cuts the history older than 5 s). Before each
step it writes the step's name to PHASE_FILE, so the test can say where its kills
landed. An exception in the worker is written to ``PHASE_FILE.error`` and the worker
exits with status 3 (a product failure, not a kill).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import shutil
import sys
import traceback
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.maintenance import run_maintenance
from code_trajectory.recording.consolidate import consolidate
from code_trajectory.recording.recorder import Recorder

PR_SET_CHILD_SUBREAPER = 36
DIRS = 6
FILES = 20


def _phase(fd: int, name: str) -> None:
    os.pwrite(fd, name.encode().ljust(32), 0)


def _content(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.85:
        line = f"line {rng.random()} {'x' * rng.randrange(60)}\n".encode()
        return line * rng.randrange(1, 100)
    if roll < 0.99:
        return rng.randbytes(rng.randrange(1, 8_000))
    # a pack that takes a while to write (kept rare: every byte is re-read by each cycle's fsck)
    return rng.randbytes(rng.randrange(300_000, 1_000_000))


def edit(rng: random.Random, root: Path) -> list[str]:
    """A handful of random edits under ``w/``; returns the paths touched (relative)."""
    touched: list[str] = []
    for _ in range(rng.randint(1, 10)):
        rel_dir = f"w/d{rng.randrange(DIRS)}"
        rel = f"{rel_dir}/f{rng.randrange(FILES)}.txt"
        path = root / rel
        roll = rng.random()
        try:
            if roll < 0.6:
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.is_symlink():
                    path.unlink()
                path.write_bytes(_content(rng))
            elif roll < 0.7:
                if path.is_symlink() or path.exists():
                    path.unlink()
            elif roll < 0.78:
                other = f"w/d{rng.randrange(DIRS)}/f{rng.randrange(FILES)}.txt"
                if (path.exists() or path.is_symlink()) and other != rel:
                    (root / other).parent.mkdir(parents=True, exist_ok=True)
                    os.replace(path, root / other)
                    touched.append(other)
            elif roll < 0.84:
                if path.is_file() and not path.is_symlink():
                    path.chmod(path.stat().st_mode ^ 0o100)
            elif roll < 0.88:
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.is_symlink() or path.exists():
                    path.unlink()
                os.symlink(rng.choice(["f1.txt", "../d0", "../../../outside", "missing/target"]), path)
            elif roll < 0.91:
                shutil.rmtree(root / rel_dir, ignore_errors=True)
                touched.append(rel_dir)
                continue
            else:  # ignored by the project's .gitignore: never recorded, never expected
                ignored = rng.choice(["build/out.bin", "node_modules/pkg/index.js", f"{rel_dir}/run.log"])
                (root / ignored).parent.mkdir(parents=True, exist_ok=True)
                (root / ignored).write_bytes(_content(rng)[:5000])
                touched.append(ignored)
                continue
        except OSError:
            pass
        touched.append(rel)
    return touched


def work(root: Path, seed: int, phase_fd: int) -> None:
    rng = random.Random(seed)
    _phase(phase_fd, "open")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    _phase(phase_fd, "startup-reconcile")
    recorder.reconcile()
    while True:
        roll = rng.random()
        _phase(phase_fd, "edit")
        touched = edit(rng, root)
        if roll < 0.55:
            _phase(phase_fd, "record_paths")
            recorder.record_paths(touched)
        elif roll < 0.68:
            _phase(phase_fd, "reconcile")
            recorder.reconcile()
        elif roll < 0.76:
            _phase(phase_fd, "checkpoint")
            recorder.checkpoint(f"checkpoint {seed}")
        elif roll < 0.88:
            _phase(phase_fd, "consolidate")
            recorder.record_paths(touched)
            consolidate(recorder, f"crash test work {seed}")
        elif roll < 0.95:
            _phase(phase_fd, "maintenance")
            run_maintenance(recorder.repo)
        else:  # the size cap: history older than a few seconds is cut (shallow boundaries, reflog expiry)
            _phase(phase_fd, "maintenance-size-cap")
            run_maintenance(recorder.repo, cap_bytes=1, retention_days=5 / 86400)


def main() -> None:
    root, phase_file = Path(sys.argv[1]), Path(sys.argv[2])
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for line in sys.stdin:
        seed = int(line)
        phase_fd = os.open(phase_file, os.O_RDWR | os.O_CREAT, 0o600)
        pid = os.fork()
        if pid == 0:  # the worker
            os.setpgid(0, 0)
            status = 0
            try:
                work(root, seed, phase_fd)
            except BaseException:  # noqa: BLE001 - reported to the test
                Path(f"{phase_file}.error").write_text(f"seed {seed}\n{traceback.format_exc()}", "utf-8")
                status = 3
            finally:
                os._exit(status)
        os.close(phase_fd)
        with contextlib.suppress(OSError):  # the worker did it first (or is already gone)
            os.setpgid(pid, pid)
        print(f"pid {pid}", flush=True)
        worker_status = None
        while True:  # the worker, then every orphaned git process (we are their subreaper)
            try:
                done, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if done == pid:
                worker_status = status
        print(f"done {pid} {worker_status}", flush=True)


if __name__ == "__main__":
    main()
