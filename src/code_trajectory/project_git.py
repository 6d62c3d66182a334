"""Read-only facts about the project's own git repository (never written).

Only ``git rev-parse`` and ``git config --get`` are run against the project's
repository, with ``GIT_OPTIONAL_LOCKS=0``; the current branch is read from the
``HEAD`` file. Nothing here can write under the project's ``.git``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.errors import GitError
from code_trajectory.gitcmd import Git, git_executable
from code_trajectory.ignore import default_global_excludes

log = logging.getLogger(__name__)

#: Shadow branch name used while the project's HEAD is detached. git refuses to
#: create a branch called ``HEAD``, so it never collides with a real branch.
DETACHED_BRANCH = "HEAD"
#: Shadow branch name used when the project is not a git repository. git refuses
#: branch names starting with ``-``, so it never collides with a real branch either.
NO_GIT_BRANCH = "-no-git"


@dataclass(frozen=True)
class ProjectRepo:
    """The project's repository, as discovered from the project root.

    Attributes:
        root: the project root (absolute).
        git_dir: the repository's git directory for this work tree (for a linked
            worktree, ``.git/worktrees/<name>``), or None when the project is not in a
            git repository.
        common_dir: the directory holding ``info/exclude`` (the main git dir).
    """

    root: Path
    git_dir: Path | None
    common_dir: Path | None

    @classmethod
    def discover(cls, root: Path) -> ProjectRepo:
        """Find the repository containing ``root`` (None fields when there is none)."""
        git = Git(root / ".git", None, isolated=False)
        # rev-parse needs discovery, not an explicit --git-dir: run it plainly in root.
        import subprocess

        try:
            proc = subprocess.run([git_executable(), "rev-parse", "--absolute-git-dir", "--git-common-dir"],
                                  cwd=root, env=git.env, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("cannot run git rev-parse in %s: %s", root, exc)
            return cls(root, None, None)
        if proc.returncode != 0:
            return cls(root, None, None)
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        git_dir = Path(lines[0])
        common = Path(lines[1]) if len(lines) > 1 else git_dir
        if not common.is_absolute():
            common = (root / common).resolve()
        return cls(root, git_dir, common)

    @property
    def is_git(self) -> bool:
        """True when the project is inside a git repository."""
        return self.git_dir is not None

    @property
    def head_file(self) -> Path | None:
        """The ``HEAD`` file whose changes signal a branch switch, or None."""
        return self.git_dir / "HEAD" if self.git_dir else None

    @property
    def info_exclude(self) -> Path | None:
        """The repository's ``info/exclude`` file (may not exist), or None."""
        return self.common_dir / "info" / "exclude" if self.common_dir else None

    def current_branch(self) -> str:
        """Return the project's current branch name.

        Returns :data:`DETACHED_BRANCH` for a detached HEAD and :data:`NO_GIT_BRANCH`
        when the project is not a git repository. An unborn branch (no commit yet)
        gives its name.
        """
        if self.git_dir is None:
            return NO_GIT_BRANCH
        try:
            head = (self.git_dir / "HEAD").read_text("utf-8", "surrogateescape").strip()
        except OSError:
            return DETACHED_BRANCH
        if head.startswith("ref: refs/heads/") and head != "ref: refs/heads/.invalid":
            return head[len("ref: refs/heads/"):]
        if head.startswith("ref:"):  # reftable backend keeps a placeholder in HEAD: ask git
            try:
                out = Git(self.git_dir, None, isolated=False).run(["symbolic-ref", "-q", "HEAD"], check=False)
            except GitError:
                return DETACHED_BRANCH
            ref = out.stdout.decode("utf-8", "surrogateescape").strip()
            if out.returncode == 0 and ref.startswith("refs/heads/"):
                return ref[len("refs/heads/"):]
        return DETACHED_BRANCH

    def global_excludes(self) -> Path:
        """The user's global excludes file: ``core.excludesFile`` or git's default location."""
        import subprocess

        env = Git(self.root, None, isolated=False).env
        try:
            proc = subprocess.run([git_executable(), "config", "--path", "--get", "core.excludesFile"],
                                  cwd=self.root, env=env, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return default_global_excludes()
        value = proc.stdout.decode("utf-8", "surrogateescape").strip()
        if proc.returncode == 0 and value:
            path = Path(value).expanduser()
            return path if path.is_absolute() else self.root / path
        return default_global_excludes()
