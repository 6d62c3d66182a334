"""Helpers shared by the fault-injection tests (``tests/fault/test_fault_*.py``).

* :func:`report` prints the one-line summary of a fault test and, when
  ``CT_RELIABILITY_REPORT`` is set, writes the counts as JSON: to that file when it
  ends in ``.json`` (merged with what is already there, one key per test, under a file lock: the
  tests run in parallel pytest-xdist workers), else to
  ``<dir>/fault_<name>.json``. Printing alone would be lost without ``pytest -s``.
* :func:`expected_tree` is the tree id ``git add -A`` would give the project: a
  throwaway index in a scratch git directory whose work tree is the project, so the
  project's ``.gitignore`` files apply (and its ``.git`` is never touched).
* :func:`shadow_tree`, :func:`fsck` and :func:`all_objects` read the shadow repository
  with plain git.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

from filelock import FileLock

REPORT_ENV = "CT_RELIABILITY_REPORT"


def git_env(**extra: str) -> dict[str, str]:
    """Environment for plain git calls: no inherited GIT_*, no user or system config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", **extra)
    return env


def run_git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env or git_env(), capture_output=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): "
                             f"{proc.stderr.decode('utf-8', 'replace')}")
    return proc


def report(name: str, line: str, **counts: object) -> dict[str, object]:
    """Print ``line`` and record ``counts`` under ``name`` in the reliability report (if asked for)."""
    print(f"\n{line}", flush=True)
    data = {"summary": line, **counts}
    target = os.environ.get(REPORT_ENV)
    if target:
        path = Path(target)
        if path.suffix == ".json":
            path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(f"{path}.lock"):  # read, merge and replace as one step among the xdist workers
                try:
                    merged = json.loads(path.read_text("utf-8"))
                    if not isinstance(merged, dict):
                        merged = {}
                except (OSError, ValueError):
                    merged = {}
                merged[name] = data
                _replace(path, merged)
        else:
            path.mkdir(parents=True, exist_ok=True)
            _replace(path / f"fault_{name}.json", data)
    return data


def _replace(path: Path, data: dict[str, object]) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file and a rename (readers never see half a file)."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)


class ExpectedTree:
    """Computes the tree ``git add -A`` would record for a work tree, with a scratch git dir."""

    def __init__(self, scratch: Path) -> None:
        self.git_dir = scratch / "scratch.git"
        if not self.git_dir.exists():
            run_git("init", "-q", "--bare", str(self.git_dir))
            run_git(f"--git-dir={self.git_dir}", "config", "core.autocrlf", "false")
            # as the project's own git has it: .trajectory/ is a nested repository (code_trajectory.git.nested)
            (self.git_dir / "info").mkdir(exist_ok=True)
            (self.git_dir / "info" / "exclude").write_text("/.trajectory\n")
        self.index = scratch / "throwaway.index"

    def __call__(self, work_tree: Path) -> str:
        with contextlib.suppress(FileNotFoundError):
            self.index.unlink()
        env = git_env(GIT_INDEX_FILE=str(self.index))
        base = [f"--git-dir={self.git_dir}", f"--work-tree={work_tree}"]
        run_git(*base, "add", "-A", cwd=work_tree, env=env)
        return run_git(*base, "write-tree", cwd=work_tree, env=env).stdout.decode().strip()


def shadow_tree(root: Path, branch: str = "main") -> str | None:
    """The tree of the shadow branch's tip, or None when the branch does not exist."""
    proc = run_git("--git-dir=.trajectory", "rev-parse", "--verify", "--quiet",
                   f"refs/heads/shadow/{branch}^{{tree}}", cwd=root, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def fsck(root: Path) -> subprocess.CompletedProcess[bytes]:
    """``git fsck --strict`` of the shadow repository (dangling objects do not fail it)."""
    return run_git("--git-dir=.trajectory", "fsck", "--strict", "--no-progress", "--no-dangling", cwd=root,
                   check=False)


def all_objects(root: Path) -> bytes:
    """Raw content of every object in the shadow repository, loose and packed."""
    return run_git("--git-dir=.trajectory", "cat-file", "--batch-all-objects", "--batch", cwd=root).stdout


def tree_diff(root: Path, expected_tree: str, actual_tree: str, scratch_git_dir: Path) -> str:
    """A short ``name-status`` of the difference between two trees living in two repositories."""
    env = git_env(GIT_ALTERNATE_OBJECT_DIRECTORIES=str(root / ".trajectory" / "objects"))
    proc = run_git(f"--git-dir={scratch_git_dir}", "diff-tree", "-r", "--name-status", actual_tree, expected_tree,
                   env=env, check=False)
    return (proc.stdout or proc.stderr).decode("utf-8", "replace")[:3000]


def rss_kib() -> int:
    """Resident set size of this process, KiB (``VmRSS`` of ``/proc/self/status``)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
