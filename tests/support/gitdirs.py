"""Views of a project's git state for the recording tests: what git itself would take, a recording policy as the
recorder builds it, and fingerprints of every ``.git`` (to prove nothing in one was touched)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from code_trajectory.git.project import ProjectRepo
from code_trajectory.recording.ignore import RecordingPolicy
from support import git


def git_view(root: Path) -> set[str]:
    """Files `git add -A` would take: tracked plus untracked-not-ignored, as git status sees them."""
    out = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return {p for p in out.split("\0") if p}


def policy_for(root: Path, deny: tuple[str, ...] = ()) -> RecordingPolicy:
    repo = ProjectRepo.discover(root)
    return RecordingPolicy(root, deny_patterns=deny, info_exclude=repo.info_exclude,
                           global_excludes=repo.global_excludes())


def git_dir_fingerprint(git_path: Path) -> dict[str, tuple]:
    """Everything under a `.git` directory (or the `.git` file itself), keyed by path relative to its parent.

    Files give ``(sha256, mode, mtime_ns, inode)``, directories ``("dir", mode, mtime_ns, inode)``: a write,
    a rewrite with equal content, a rename, a file created then removed (the directory's mtime) all show.
    """
    base = git_path.parent
    found: dict[str, tuple] = {}
    paths = [git_path] if git_path.is_file() else [git_path, *git_path.rglob("*")]
    for path in paths:
        st = os.lstat(path)
        rel = path.relative_to(base).as_posix()
        if stat.S_ISDIR(st.st_mode):
            found[rel] = ("dir", st.st_mode, st.st_mtime_ns, st.st_ino)
        elif stat.S_ISLNK(st.st_mode):
            found[rel] = (os.readlink(path), st.st_mode, st.st_mtime_ns, st.st_ino)
        else:
            found[rel] = (hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mode, st.st_mtime_ns, st.st_ino)
    return found


def all_git_dirs(root: Path) -> dict[str, dict[str, tuple]]:
    """Fingerprints of every `.git` entry under ``root`` (the top one, nested ones, submodules' `.git` files)."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames or ".git" in filenames:
            found[os.path.relpath(os.path.join(dirpath, ".git"), root)] = git_dir_fingerprint(Path(dirpath) / ".git")
        dirnames[:] = [d for d in dirnames if d not in (".git", ".trajectory")]
    return found


def assert_untouched_but_the_exclude_line(root: Path, before: dict[str, dict[str, tuple]], prefix: str = "") -> None:
    """Every `.git` under ``root`` is as ``before`` (see :func:`all_git_dirs`), but for the one line the recorder adds
    to the top repository's ``info/exclude`` (issue 22: ``/<prefix>.trajectory``, see code_trajectory.git.nested)."""
    after = all_git_dirs(root)
    exclude = root / ".git" / "info" / "exclude"
    assert exclude.read_text().splitlines()[-1] == f"/{prefix}.trajectory"
    for entry in (after, before):
        entry[".git"] = {k: v for k, v in entry[".git"].items() if k not in (".git/info", ".git/info/exclude")}
    assert after == before


def shadow_files(root: Path, ref: str) -> set[str]:
    out = git(root, "--git-dir=.trajectory", "ls-tree", "-r", "-z", "--name-only", "--full-tree", ref)
    return {p for p in out.split("\0") if p}
