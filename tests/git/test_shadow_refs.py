"""Shadow refs are paths to git: a branch named like a deleted branch's directory (``fix`` after ``fix/a``) or the
reverse still gets its own history, the old one kept aside. Real git in temp dirs, the CLI as a subprocess."""

from __future__ import annotations

from pathlib import Path

from support import cli_stdout, git, git_repo, write


def test_a_branch_named_like_a_deleted_ones_directory_is_recorded(tmp_path: Path) -> None:
    """``fix/a`` recorded then deleted in the project, then ``fix`` created: git cannot hold
    ``refs/heads/shadow/fix`` beside ``refs/heads/shadow/fix/a``; the old history moves aside, kept."""
    root = git_repo(tmp_path / "p", {"a.txt": "a\n"}, branch="main", commit="initial")
    git(root, "checkout", "-qb", "fix/a")
    write(root, "a.txt", "a\nfix\n")
    cli_stdout(root, "checkpoint", "-m", "on fix/a")
    git(root, "commit", "-qam", "f")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-qD", "fix/a")
    git(root, "checkout", "-qb", "fix")
    write(root, "a.txt", "a\nnew\n")
    cli_stdout(root, "checkpoint", "-m", "on fix")
    shadow = ["--git-dir", str(root / ".trajectory")]
    assert git(root, *shadow, "show", "refs/heads/shadow/fix:a.txt") == "a\nnew\n"
    assert "on fix/a" in git(root, *shadow, "log", "-1", "--format=%B", "refs/trajectory-moved/shadow/fix/a")


def test_a_worktree_inside_the_project_is_a_project_of_its_own(tmp_path: Path) -> None:
    """Claude Code puts worktrees in ``.claude/worktrees/<name>``: inside the recorded project, yet a work tree of
    its own (a ``.git`` file), so its edits go to its own history and a restore there writes there."""
    from code_trajectory.project import find_project_root

    root = git_repo(tmp_path / "p", {"a.txt": "main\n"}, branch="main", commit="initial").resolve()
    cli_stdout(root, "checkpoint", "-m", "main start")
    tree = root / ".claude" / "worktrees" / "feat"
    git(root, "worktree", "add", "-q", str(tree), "-b", "feat")
    assert find_project_root(tree) == tree and find_project_root(tree / ".") == tree
    write(tree, "a.txt", "feat edit\n")
    cli_stdout(tree, "checkpoint", "-m", "feat work")
    assert git(tree, "--git-dir", str(tree / ".trajectory"), "show", "refs/heads/shadow/feat:a.txt") == "feat edit\n"
    cli_stdout(root, "checkpoint", "-m", "main again")
    listed = git(root, "--git-dir", str(root / ".trajectory"), "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
    assert ".claude/worktrees/feat/a.txt" not in listed.split(), listed
    cli_stdout(tree, "restore", "feat work", "a.txt")
    assert (root / "a.txt").read_text() == "main\n"  # the main checkout is left alone


def test_a_planted_dot_git_never_makes_a_worktree_nor_blocks(tmp_path: Path) -> None:
    """The ``.git`` entry read to tell a linked worktree is data: a FIFO is not opened to wait on, a link is not
    followed, an oversized file or one naming no ``worktrees`` directory is no worktree."""
    import os

    from code_trajectory.project import is_linked_worktree

    cases = {"fifo": None, "link": None, "big": "gitdir: /r/.git/worktrees/x\n" + "x" * 10_000,
             "module": "gitdir: ../.git/modules/lib\n", "nospace": "gitdir:/r/.git/worktrees/x\n",
             "real": "gitdir: /r/.git/worktrees/x\n"}
    for name, text in cases.items():
        (tmp_path / name).mkdir()
        if text is not None:
            (tmp_path / name / ".git").write_text(text)
    os.mkfifo(tmp_path / "fifo" / ".git")
    (tmp_path / "target").write_text("gitdir: /r/.git/worktrees/x\n")
    (tmp_path / "link" / ".git").symlink_to(tmp_path / "target")
    assert {name: is_linked_worktree(tmp_path / name) for name in cases} == {
        "fifo": False, "link": False, "big": False, "module": False, "nospace": False, "real": True}
