"""Which objects the shadow may reuse (``git/shared_objects.py``): ``blobs_of_size`` asks git once for all of them
and trusts a blob only when it is present, a blob, and of the size the index recorded."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.git.gitcmd import Git
from code_trajectory.git.shared_objects import blobs_of_size
from support import git, git_repo


def test_only_present_blobs_of_the_given_size_are_trusted(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "p", {"a.txt": "alpha\n", "b.txt": "beta beta\n", "c.txt": "alpha\n"}, commit="one")
    repo = Git(root / ".git", root)
    a, b = (git(root, "rev-parse", f"HEAD:{name}").strip() for name in ("a.txt", "b.txt"))
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    missing = "0123456789abcdef0123456789abcdef01234567"
    all_good = [(a, 6), (b, 10), (a, 6)]  # the same blob twice (two files of the same content) is answered twice
    assert blobs_of_size(repo, *_split(all_good)) == [True, True, True]
    mixed = [(a, 6), (b, 9), (missing, 6), (tree, 1), (a, 6)]
    assert blobs_of_size(repo, *_split(mixed)) == [True, False, False, False, True]
    assert blobs_of_size(repo, [], []) == []


def _split(wanted: list[tuple[str, int]]) -> tuple[list[str], list[int]]:
    return [oid for oid, _size in wanted], [size for _oid, size in wanted]
