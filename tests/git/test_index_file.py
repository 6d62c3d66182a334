"""Reading git's index file directly gives what ``git ls-files --stage --debug`` says, for every index version."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from code_trajectory.git.index_file import IndexFormatError, read_index
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.project_index import head_trees, index_with_stat
from support import conflict, git, git_repo, write

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
    assert found.entries.rows() == expected
    assert found.mtime_ns == os.stat(root / ".git" / "index").st_mtime_ns


def test_conflicted_paths_are_listed_apart(tmp_path: Path) -> None:
    root = a_repo(tmp_path / "r")
    conflict(root, "README.md")
    found = read_index(root / ".git" / "index")
    assert found.unmerged == {b"README.md"}
    assert b"README.md" not in found.entries.names


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
    found = index_with_stat(ProjectRepo.discover(root))
    assert found is not None
    rows = found.entries.rows()
    assert found.trees == {}  # git's listing has no cache-tree
    assert b"README.md" not in rows  # staged, not committed
    assert rows[b"run.sh"][0] == "100755" and rows[b"link"][0] == "120000"
    assert len(rows) == len(ls_files_debug(root)) - 1


def git_trees(root: Path) -> dict[bytes, tuple[int, int, str]]:
    """Every directory of HEAD's tree as the cache-tree describes it: (files below it, subdirectories, tree id)."""
    files = git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0")[:-1]
    found = {b"": (len(files), 0, git(root, "rev-parse", "HEAD^{tree}").strip())}
    for line in git(root, "ls-tree", "-r", "-d", "-z", "HEAD").split("\0")[:-1]:
        meta, path = line.split("\t", 1)
        found[path.encode()] = (sum(1 for f in files if f.startswith(path + "/")), 0, meta.split()[2])
    for directory in found:
        count, _subdirs, oid = found[directory]
        subdirs = sum(1 for d in found if d and d.rpartition(b"/")[0] == directory and d != directory)
        found[directory] = (count, subdirs, oid)
    return found


@pytest.mark.parametrize("version", ["2", "4"])
def test_the_cache_tree_reads_as_git_wrote_it_and_a_changed_directory_is_left_out(tmp_path: Path,
                                                                                    version: str) -> None:
    root = a_repo(tmp_path / "r")
    git(root, "update-index", "--index-version", version)
    git(root, "write-tree")  # the cache-tree complete, as after a commit
    expected = git_trees(root)
    assert len(expected) > 40 and read_index(root / ".git" / "index").trees == expected
    write(root, "pkg/sub1/module_1.py", "x = 'staged'\n")
    git(root, "add", "pkg/sub1/module_1.py")  # invalidates pkg/sub1, pkg and the top, nothing else
    trees = read_index(root / ".git" / "index").trees
    assert trees == {d: t for d, t in expected.items() if d not in (b"", b"pkg", b"pkg/sub1")}
    found = index_with_stat(ProjectRepo.discover(root))
    assert found is not None and found.trees["pkg/sub0"] == expected[b"pkg/sub0"]


def test_a_damaged_cache_tree_gives_no_trees(tmp_path: Path) -> None:
    root = a_repo(tmp_path / "r")
    git(root, "write-tree")
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes()[:-20])
    at = data.index(b"TREE")
    data[at + 8:at + 9] = b"x"  # the top's name is no longer empty
    index.write_bytes(bytes(data) + hashlib.sha1(bytes(data)).digest())
    found = read_index(index)
    assert found.trees == {} and found.entries.rows() == ls_files_debug(root)


def test_a_planted_deep_cache_tree_is_refused_within_its_bounds(tmp_path: Path) -> None:
    """A chain of nested one-letter directories (a few bytes each in the extension, their paths growing with the
    square of the depth) is refused past PATH_MAX: no trees, the entries intact."""
    import struct

    root = a_repo(tmp_path / "r")
    git(root, "write-tree")
    entries = ls_files_debug(root)
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes()[:-20])
    at = data.index(b"TREE")
    (size,) = struct.unpack_from(">I", data, at + 4)
    oid = bytes(20)  # valid nodes (with a tree id) would each be kept under its whole path
    depth = 3000  # paths up to 5,999 bytes; at 100,000 the old parser took 19 s
    planted = b"\0" + b"1 1\n" + oid + (b"a\0" + b"1 1\n" + oid) * (depth - 1) + b"a\0" + b"1 0\n" + oid
    data[at:at + 8 + size] = b"TREE" + struct.pack(">I", len(planted)) + planted
    index.write_bytes(bytes(data) + hashlib.sha1(bytes(data)).digest())
    found = read_index(index)
    assert found.trees == {} and found.entries.rows() == entries  # (git itself refuses this index)


def test_heads_trees_are_named_relative_to_the_project_root(tmp_path: Path) -> None:
    """``head_trees``: ``HEAD``'s tree of the root and of each directory below it, the keys relative to the project
    root, also when the project is a subdirectory of its work tree."""
    root = a_repo(tmp_path / "r")
    expected = {path.decode(): value[2] for path, value in git_trees(root).items()}
    assert head_trees(ProjectRepo.discover(root)) == expected
    inner = head_trees(ProjectRepo.discover(root / "pkg"))
    assert inner is not None and inner[""] == expected["pkg"] and inner["sub0"] == expected["pkg/sub0"]
    assert all(not key.startswith("pkg") for key in inner)


def test_directories_with_odd_names_are_named_alike_by_the_cache_tree_and_head(tmp_path: Path) -> None:
    """A directory whose name holds a newline, a tab or a byte that is not UTF-8 gets the same key from the index's
    cache-tree as from ``HEAD``'s trees: the import compares the two by that key."""
    odd = os.fsdecode(b"odd\ndir\t-\xff")
    root = git_repo(tmp_path / "r", {f"{odd}/x.txt": "x\n", f"{odd}/sub/y.txt": "y\n", "plain/z.txt": "z\n"},
                    branch="main", commit="odd names")
    git(root, "write-tree")  # the cache-tree complete
    found = index_with_stat(ProjectRepo.discover(root))
    heads = head_trees(ProjectRepo.discover(root))
    assert found is not None and heads is not None
    assert {odd, f"{odd}/sub", "plain", ""} <= set(found.trees)
    assert all(heads[directory] == tree[2] for directory, tree in found.trees.items())


def test_a_path_of_0xfff_bytes_or_more_reads_as_git_lists_it(tmp_path: Path) -> None:
    """A path too long for the length bits of an entry's flags (0xFFF and more bytes: git then finds its NUL) is read
    the general way, between entries read the usual way, in a version 2 and a version 3 index."""
    root = a_repo(tmp_path / "r")
    blob = git(root, "rev-parse", "HEAD:README.md").strip()
    long_path = "/".join(["d" * 200] * 25) + "/long.txt"  # 5,033 bytes
    git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long_path}")
    for version in ("2", "3"):
        git(root, "update-index", "--index-version", version)
        found = read_index(root / ".git" / "index")
        assert long_path.encode() in found.entries.names
        assert found.entries.rows() == ls_files_debug(root)


def test_entries_out_of_git_order_are_refused(tmp_path: Path) -> None:
    """git keeps its entries sorted by path and refuses an index that is not; so does the reader (a damaged or
    planted index: the import then asks git, which refuses it too)."""
    root = git_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n"}, branch="main", commit="two")
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes()[:-20])
    first, second = 12, 12 + 72  # two entries of 62 bytes and a 5-byte path padded to 72
    assert data[first + 62:first + 67] == b"a.txt" and data[second + 62:second + 67] == b"b.txt"
    data[first:second], data[second:second + 72] = data[second:second + 72], data[first:second]
    index.write_bytes(bytes(data) + hashlib.sha1(bytes(data)).digest())
    with pytest.raises(IndexFormatError, match="order"):
        read_index(index)


@pytest.mark.parametrize("version", ["2", "4"])
def test_a_sha256_index_reads_as_git_lists_it(tmp_path: Path, version: str) -> None:
    """Object ids of 32 bytes: the fixed part of an entry is 12 bytes longer, its flags and path after it."""
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(root))
    write(root, "a.txt", "a\n")
    write(root, "dir/b.txt", "b\n")
    write(root, "dir/" + "long" * 30 + ".txt", "c\n")
    git(root, "add", "-A")
    git(root, "update-index", "--index-version", version)
    found = read_index(root / ".git" / "index", oid_bytes=32)
    assert found.entries.rows() == ls_files_debug(root) and len(found.entries) == 3
    assert len(found.entries.oid_texts()[0]) == 64


@pytest.mark.parametrize("damage", ["shorter", "longer", "count"])
def test_an_entry_whose_length_or_count_lies_is_refused(tmp_path: Path, damage: str) -> None:
    """A planted index with a valid checksum: an entry's path length that does not end on its NUL, or more entries
    counted than the file holds, is refused (``IndexFormatError``: the import then asks git), never read as paths."""
    root = git_repo(tmp_path / "r", {"abcde.txt": "a\n", "b.txt": "b\n"}, branch="main", commit="two")
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes()[:-20])
    flags_at = 12 + 60  # the first entry's flags, after its stat data and its SHA-1
    assert data[flags_at + 2:flags_at + 11] == b"abcde.txt"
    if damage == "count":
        data[8:12] = (1000).to_bytes(4, "big")
    else:
        data[flags_at + 1] += -1 if damage == "shorter" else 1  # 9 -> 8 or 10: not the path's NUL
    index.write_bytes(bytes(data) + hashlib.sha1(bytes(data)).digest())
    with pytest.raises(IndexFormatError):
        read_index(index)
