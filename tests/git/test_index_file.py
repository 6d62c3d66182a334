"""Reading git's index file directly gives what ``git ls-files --stage --debug`` says, for every index version."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from code_trajectory.git.index_file import IndexFormatError, read_index
from code_trajectory.git.project import ProjectRepo
from support import git, git_repo, write

DEBUG = re.compile(r"(\d{6}) ([0-9a-f]+) (\d)\t([^\0]*)\0  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n"
                   r"  dev: \d+\tino: (\d+)\n  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n")


def ls_files_debug(root: Path) -> dict[bytes, tuple[str, str, int, int, int, int]]:
    """git's own view of the stage-0 entries, for comparison."""
    out = git(root, "ls-files", "-z", "--stage", "--debug")
    return {m[3].encode(): (m[0], m[1], int(m[9]), int(m[6]) * 10**9 + int(m[7]), int(m[4]) * 10**9 + int(m[5]),
                            int(m[8]))
            for m in DEBUG.findall(out) if m[2] == "0"}


def a_repo(root: Path) -> Path:
    files = {f"pkg/sub{i % 3}/module_{i}.py": f"x = {i}\n" for i in range(40)}
    files.update({"README.md": "# hi\n", "pkg/a name with spaces.txt": "s\n", "caf\u00e9.txt": "accent\n",
                  "deep/" + "d/" * 40 + "leaf.txt": "deep\n", "run.sh": "#!/bin/sh\n"})
    git_repo(root, files, branch="main", commit="initial")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("README.md", root / "link")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "exec and link")
    return root


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_every_index_version_reads_as_git_lists_it(tmp_path: Path, version: str) -> None:
    root = a_repo(tmp_path / "r")
    git(root, "update-index", "--index-version", version)
    write(root, "new.txt", "intended\n")
    git(root, "add", "-N", "new.txt")  # intent to add: an extended flag (version 3 and later)
    found = read_index(root / ".git" / "index")
    expected = ls_files_debug(root)
    del expected[b"new.txt"]  # not content anybody committed: left out
    assert found.entries == expected
    assert found.mtime_ns == os.stat(root / ".git" / "index").st_mtime_ns


def test_conflicted_paths_are_listed_apart(tmp_path: Path) -> None:
    root = a_repo(tmp_path / "r")
    git(root, "checkout", "-qb", "other")
    write(root, "README.md", "# other\n")
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", "main")
    write(root, "README.md", "# main\n")
    git(root, "commit", "-qam", "main")
    git(root, "merge", "-q", "other", check=False)
    found = read_index(root / ".git" / "index")
    assert found.unmerged == {b"README.md"}
    assert b"README.md" not in found.entries


def test_a_split_index_a_torn_file_or_another_object_format_is_refused(tmp_path: Path) -> None:
    root = a_repo(tmp_path / "r")
    index = root / ".git" / "index"
    data = index.read_bytes()
    with pytest.raises(IndexFormatError):
        read_index(index, oid_bytes=32)  # a SHA-1 index read as SHA-256: the checksum does not match
    torn = tmp_path / "torn"
    torn.write_bytes(data[:len(data) // 2])
    with pytest.raises(IndexFormatError):
        read_index(torn)
    git(root, "update-index", "--split-index")
    with pytest.raises(IndexFormatError):
        read_index(index)


def test_a_split_index_is_read_through_git_instead(tmp_path: Path) -> None:
    root = a_repo(tmp_path / "r")
    git(root, "update-index", "--split-index")
    write(root, "README.md", "# staged\n")
    git(root, "add", "README.md")
    found = ProjectRepo.discover(root).index_with_stat()
    assert found is not None
    rows, _mtime = found
    assert "README.md" not in rows  # staged, not committed
    assert rows["run.sh"][0] == "100755" and rows["link"][0] == "120000"
    assert len(rows) == len(ls_files_debug(root)) - 1
