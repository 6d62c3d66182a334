"""A project recorded without git gets one while it records (``git init``), or loses it (``rm -rf .git``): the
running recorder follows at once. Before, it went on writing the ``-no-git`` branch and left ``.trajectory`` out of
the new repository's ``info/exclude``, so the user's first ``git clean -fdx`` deleted the whole history."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from code_trajectory.git import nested
from support import git, wait_for, watching, write


def shadow_show(root: Path, spec: str) -> str:
    return git(root, "--git-dir=.trajectory", "show", spec, check=False)


def test_git_init_while_recording_protects_the_history_and_records_on_the_new_branch(plain_dir: Path) -> None:
    with watching(plain_dir) as session:
        write(plain_dir, "notes.txt", "before git\n")
        wait_for(lambda: shadow_show(plain_dir, "refs/heads/shadow/-no-git:notes.txt") == "before git\n")
        git(plain_dir, "init", "-q", "-b", "trunk")
        wait_for(lambda: nested.has_marker(plain_dir / ".trajectory"), timeout=15)
        assert "/.trajectory" in (plain_dir / ".git" / "info" / "exclude").read_text()
        assert session.recorder.project.current_branch() == "trunk"
        write(plain_dir, "notes.txt", "after git\n")
        wait_for(lambda: shadow_show(plain_dir, "refs/heads/shadow/trunk:notes.txt") == "after git\n")
        assert git(plain_dir, "status", "--porcelain") == "?? notes.txt\n"  # .trajectory is not shown
        git(plain_dir, "clean", "-fdxq")
        assert not (plain_dir / "notes.txt").exists()
        assert shadow_show(plain_dir, "refs/heads/shadow/trunk:notes.txt") == "after git\n"
        assert shadow_show(plain_dir, "refs/heads/shadow/-no-git:notes.txt") == "before git\n"


def test_a_removed_git_directory_is_followed_too(project: Path) -> None:
    with watching(project) as session:
        shutil.rmtree(project / ".git")
        wait_for(lambda: session.recorder.project.git_dir is None, timeout=15)
        write(project, "src/app.py", "def main():\n    return 5\n")
        wait_for(lambda: "return 5" in shadow_show(project, "refs/heads/shadow/-no-git:src/app.py"))
        assert "return 5" not in shadow_show(project, "refs/heads/shadow/main:src/app.py")


def test_a_git_directory_removed_and_made_again_is_protected_again(project: Path) -> None:
    with watching(project) as session:
        wait_for(lambda: session.watcher is not None and session.watcher.running, timeout=60)  # a loaded machine
        shutil.rmtree(project / ".git")
        git(project, "init", "-q", "-b", "main")  # at once: .git is there at every look, but it is another one
        wait_for(lambda: "/.trajectory" in (project / ".git" / "info" / "exclude").read_text(), timeout=30)
        assert git(project, "status", "--porcelain", "--untracked-files=all").count(".trajectory") == 0
        git(project, "add", "-A")  # failed on the marker ('.trajectory/' does not have a commit checked out)
        git(project, "clean", "-fdxq")
        assert (project / ".trajectory" / "HEAD").is_file()


def test_a_git_directory_seen_half_made_is_followed_once_it_is_a_repository(project: Path) -> None:
    """``rm -rf .git && git init`` on a loaded machine: the watcher looked while the new ``.git`` had no ``HEAD`` yet,
    took the project up as having no repository, and never looked again (the same directory at every later look),
    so ``.trajectory`` stayed out of the new ``info/exclude`` (3 runs of 8 under load)."""
    with watching(project) as session:
        wait_for(lambda: session.watcher is not None and session.watcher.running, timeout=60)  # a loaded machine
        shutil.rmtree(project / ".git")
        (project / ".git" / "objects").mkdir(parents=True)  # what a look in the middle of git init sees
        time.sleep(3)  # several passes of the watcher's loop
        git(project, "init", "-q", "-b", "main")
        wait_for(lambda: "/.trajectory" in (project / ".git" / "info" / "exclude").read_text(), timeout=30)
        assert git(project, "status", "--porcelain", "--untracked-files=all").count(".trajectory") == 0


def test_an_exclude_file_made_again_without_the_line_gets_it_back(project: Path) -> None:
    """What ``rm -rf .git && git init`` does when the new ``.git`` gets the old one's inode (ext4 reuses it at once):
    the same directory to a stat, a new ``info/exclude`` without the shadow repository's line."""
    exclude = project / ".git" / "info" / "exclude"
    with watching(project) as session:
        assert "/.trajectory" in exclude.read_text()
        wait_for(lambda: session.watcher is not None and session.watcher.running, timeout=60)  # a loaded machine
        exclude.unlink()
        exclude.write_text("# git ls-files --others --exclude-from=.git/info/exclude\n")
        wait_for(lambda: "/.trajectory" in exclude.read_text(), timeout=30)
        assert git(project, "status", "--porcelain", "--untracked-files=all").count(".trajectory") == 0
