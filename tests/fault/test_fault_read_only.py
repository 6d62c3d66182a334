"""A read-only command on a damaged history changes nothing: ``code-trajectory log`` on a ``.trajectory`` whose
ref held garbage moved it aside and started a new, empty history. Now every read-only command answers with one
line naming the damage, where it is and what to do, and leaves the project byte for byte as it was, and so do
``restore`` and ``consolidate``, which need that history; a recording start still sets the damaged history aside,
kept as it was, and says where."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import git, subprocess_env, write

READ_ONLY = (["log"], ["file", "src/app.py"], ["search", "return"], ["session"], ["symbol", "src/app.py", "main"],
             ["compare", "~1"], ["test-history"], ["since-green"], ["status"])


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m code_trajectory ARGS`` from ``cwd`` (this checkout's ``src``), never failing the test itself."""
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120, input="")


def tree_hash(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (the parent of the project: a directory moved aside beside it shows) with its
    kind, mode and content hash."""
    found = {}
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(dirpath, name)
            st = path.lstat()
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes() if path.is_file() else b""
            found[str(path.relative_to(root))] = f"{st.st_mode:o} {hashlib.sha256(data).hexdigest()}"
    return found


def damage(git_dir: Path, kind: str, tip: str) -> None:
    if kind == "garbage ref":
        (git_dir / "refs" / "heads" / "shadow" / "main").write_text("garbage\n")
    elif kind == "truncated packed-refs":
        git(git_dir, "--git-dir", str(git_dir), "pack-refs", "--all")
        packed = git_dir / "packed-refs"
        data = packed.read_bytes()
        packed.write_bytes(data[:data.index(tip.encode()) + 17])  # the ref's line cut in the middle of its id
    else:  # a loose object that is garbage: the tip commit
        obj = git_dir / "objects" / tip[:2] / tip[2:]
        obj.chmod(0o644)
        obj.write_bytes(b"this is not a zlib stream")


@pytest.mark.parametrize("kind", ["garbage ref", "truncated packed-refs", "garbage loose object"])
def test_read_only_commands_leave_a_damaged_history_as_it_was(project: Path, kind: str) -> None:
    proc = cli("checkpoint", "-m", "first", cwd=project)
    assert proc.returncode == 0, proc.stderr
    write(project, "src/app.py", "def main():\n    return 2\n")
    proc = cli("checkpoint", "-m", "second", cwd=project)
    assert proc.returncode == 0, proc.stderr
    git_dir = project / ".trajectory"
    tip = git(project, "--git-dir", str(git_dir), "rev-parse", "refs/heads/shadow/main").strip()
    damage(git_dir, kind, tip)
    before = tree_hash(project.parent)
    for args in READ_ONLY:
        proc = cli(*args, cwd=project)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and f"the history of {project} is damaged" in proc.stderr, proc.stderr
        assert f"nothing was changed, {git_dir} is as it was" in proc.stderr and "code-trajectory watch" in proc.stderr
        assert tree_hash(project.parent) == before, args
    # the commands that need this very history (restore, consolidate) leave it in place too: moved aside, it held
    # none of the snapshots they name
    for args in (["restore", "first", "src/app.py"], ["consolidate", "done"]):
        proc = cli(*args, cwd=project)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stdout, proc.stderr)
        assert f"the history of {project} is damaged" in proc.stderr, proc.stderr
        assert not list(project.glob(".trajectory.corrupt-*")) and tree_hash(project.parent) == before, args
    # recording sets it aside, kept byte for byte, and starts a new history; it says where
    proc = cli("checkpoint", "-m", "third", cwd=project)
    assert proc.returncode == 0 and f"moved it to {project}/.trajectory.corrupt-" in proc.stderr, proc.stderr
    aside = next(project.glob(".trajectory.corrupt-*"))
    prefix = f"{project.name}/.trajectory/"
    kept = {name[len(prefix):]: value for name, value in before.items() if name.startswith(prefix)}

    def history(entries: dict[str, str]) -> dict[str, str]:  # without the nested marker a moved history drops
        return {name: value for name, value in entries.items() if name != ".git" and not name.startswith(".git/")}

    assert history(tree_hash(aside)) == history(kept)
