"""Helpers of the sharing tests: a bare remote, two users' clones of it, real recordings (no mocks)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.consolidate import consolidate
from code_trajectory.recording.recorder import Recorder
from support import git, write

ALICE = "alice@example.com"
BOB = "bob@example.com"


@dataclass
class Team:
    """A bare remote and two clones, one per user, each with its own ``user.email``."""

    remote: Path
    alice: Path
    bob: Path


def make_team(tmp_path: Path) -> Team:
    """Create ``remote.git`` (bare, with ``main`` and a tag) and clones ``alice`` and ``bob``."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(remote), str(seed))
    git(seed, "checkout", "-q", "-b", "main")
    write(seed, "src/app.py", "def main():\n    return 1\n")
    write(seed, ".gitignore", "*.log\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial")
    git(seed, "tag", "-a", "v1", "-m", "release 1")
    git(seed, "push", "-q", "origin", "main", "v1")
    users = {}
    for name, email in (("alice", ALICE), ("bob", BOB)):
        clone = tmp_path / name
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        git(clone, "config", "user.email", email)
        users[name] = clone.resolve()
    return Team(remote.resolve(), users["alice"], users["bob"])


def record(root: Path, edits: list[tuple[str, str]], *, intent: str | None = None,
           consolidate_as: str | None = None, checkpoint: str | None = None) -> None:
    """Record ``root`` with the real recorder: start-up snapshot, one snapshot per edit, then optionally consolidate."""
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        recorder.reconcile()
        if intent:
            recorder.intent.set(intent)
        for rel, text in edits:
            write(root, rel, text)
            recorder.record_paths([rel])
        if checkpoint:
            recorder.checkpoint(checkpoint)
        if consolidate_as:
            consolidate(recorder, consolidate_as)
    finally:
        recorder.close()


def remote_refs(remote: Path, *patterns: str) -> str:
    """``git for-each-ref`` of the bare remote (object, type, name, and for tags their target), as text."""
    return git(remote, "for-each-ref", "--format=%(objectname) %(objecttype) %(refname) %(*objectname)", *patterns)


def shadow_git(root: Path, *args: str, check: bool = True) -> str:
    """Run git on the shadow repository of ``root``."""
    return git(root, "--git-dir=.trajectory", *args, check=check)


def shadow_tip(root: Path, branch: str = "main") -> str:
    """The commit of ``refs/heads/shadow/<branch>``."""
    return shadow_git(root, "rev-parse", f"refs/heads/shadow/{branch}").strip()


def git_dir_fingerprint(root: Path) -> dict[str, str]:
    """Every file under ``root/.git`` with a hash of its content: proves the project's repository was not written."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / ".git").rglob("*")) if p.is_file()}
