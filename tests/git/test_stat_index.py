"""The stat index (``git/stat_index.py``): an index file git reads as its own, whose entries git compares by
``lstat`` alone, and whose verdict is refused when it is not the index written (no sentinel)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

from code_trajectory.git.gitcmd import Git
from code_trajectory.git.index_file import read_index
from code_trajectory.git.stat_index import StatVerdict, write_stat_index, write_stat_index_copy
from code_trajectory.git.tree_format import git_mode
from support import git, rewrite_in_place, write

SENTINEL = ".trajectory/state/statindex-test.sentinel"


def entries(root: Path, rels: list[str]) -> list[tuple[str, str, str, int, int, int, int]]:
    found = []
    for rel in rels:
        st = os.lstat(root / rel)
        data = os.readlink(root / rel).encode() if os.path.islink(root / rel) else (root / rel).read_bytes()
        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        found.append((rel, git_mode(st), oid, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return found


def test_git_reads_the_index_and_names_only_what_changed(tmp_path: Path) -> None:
    root = tmp_path / "work"
    git(tmp_path, "init", "-q", str(root))
    rels = ["a.txt", "dir/b.txt", "dir/ü nicode.txt", "dir/c.sh"]
    for rel in rels:
        write(root, rel, f"{rel}\n")
    os.symlink("a.txt", root / "link")
    rels.append("link")
    # the caller's part of the contract: facts taken at least a second after the ctime (git may compare whole
    # seconds: without it, a same-size rewrite in the same second with its mtime set back would go unseen)
    time.sleep(2.1)
    index = tmp_path / "stat.index"
    count, checksum = write_stat_index(index, list(reversed(entries(root, rels))), sentinel=SENTINEL)
    assert count == len(rels)
    assert os.stat(index).st_mtime_ns == 0  # git's racy check is off: no content is ever read
    listed = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=root, env={**os.environ, "GIT_INDEX_FILE": str(index)},
                            capture_output=True, check=True).stdout.split(b"\0")
    assert sorted(p.split(b"\t")[1].decode() for p in listed if p) == sorted([*rels, SENTINEL])
    shadow = Git(root / ".git", root)
    assert StatVerdict(shadow, index, sentinel=SENTINEL, checksum=checksum).dirty() == set()
    target = root / "dir/b.txt"
    rewrite_in_place(target, "DIR/B.TXT\n")  # same size, mtime set back: only the ctime tells
    os.chmod(root / "dir/c.sh", 0o755)
    os.unlink(root / "a.txt")
    assert StatVerdict(shadow, index, sentinel=SENTINEL, checksum=checksum).dirty() == {"dir/b.txt", "dir/c.sh", "a.txt"}
    # an index changed since it was written (here: git itself marks an entry assume-unchanged, which git would
    # honour) is no verdict
    subprocess.run(["git", "update-index", "--assume-unchanged", "dir/b.txt"], cwd=root, check=True, capture_output=True,
                   env={**os.environ, "GIT_INDEX_FILE": str(index)})
    assert StatVerdict(shadow, index, sentinel=SENTINEL, checksum=checksum).dirty() is None


def test_a_missing_or_foreign_index_gives_no_verdict(tmp_path: Path) -> None:
    root = tmp_path / "work"
    git(tmp_path, "init", "-q", str(root))
    write(root, "a.txt", "a\n")
    shadow = Git(root / ".git", root)
    missing = StatVerdict(shadow, tmp_path / "missing.index", sentinel=SENTINEL, checksum="0" * 40)
    assert missing.dirty() is None  # git reads a missing index as an empty one: no sentinel reported
    foreign = tmp_path / "foreign.index"
    _count, checksum = write_stat_index(foreign, entries(root, ["a.txt"]), sentinel="another/sentinel")
    assert StatVerdict(shadow, foreign, sentinel=SENTINEL, checksum=checksum).dirty() is None
    (tmp_path / "garbage.index").write_bytes(b"DIRC garbage")
    assert StatVerdict(shadow, tmp_path / "garbage.index", sentinel=SENTINEL, checksum=checksum).dirty() is None
    verdict = StatVerdict(shadow, foreign, sentinel="another/sentinel", checksum=checksum)
    verdict.close()  # stopped unread: no verdict, no process left
    assert verdict.dirty() is None


def test_a_copy_of_the_projects_index_holds_its_entries_as_they_are_but_those_git_would_not_look_at(
        tmp_path: Path) -> None:
    """``write_stat_index_copy``: the project's version 2 index copied byte for byte, the sentinel in its sorted
    place; an entry marked assume-unchanged (git would not lstat its file), a gitlink and a racy entry are left out,
    so that git's silence about a path never stands for a file it did not look at."""
    root = tmp_path / "work"
    git(tmp_path, "init", "-q", str(root))
    rels = [".a", "a.txt", "dir/b.txt", "dir/c.txt", "z.txt"]
    for rel in rels:
        write(root, rel, f"{rel}\n")
    os.symlink("a.txt", root / "link")
    time.sleep(1.1)
    write(root, "zz/late.txt", "late\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "one")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{git(root, 'rev-parse', 'HEAD').strip()},sub")
    git(root, "update-index", "--assume-unchanged", "dir/c.txt")
    time.sleep(1.1)
    git(root, "update-index", "--refresh", check=False)  # "sub: needs update" (no such checkout)
    late = os.lstat(root / "zz/late.txt")  # the index dated back to the second of this file: its entry is racy
    os.utime(root / ".git" / "index", ns=(late.st_mtime_ns, late.st_mtime_ns))
    found = read_index(root / ".git" / "index")
    assert found.copy is not None
    assert found.copy.left_out == {b"dir/c.txt", b"sub", b"zz/late.txt"}
    index = tmp_path / "copy.index"
    count, checksum = write_stat_index_copy(index, found.copy, sentinel=SENTINEL)
    assert os.stat(index).st_mtime_ns == 0
    listed = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=root, env={**os.environ, "GIT_INDEX_FILE": str(index)},
                            capture_output=True, check=True).stdout.split(b"\0")
    paths = [p.split(b"\t")[1].decode() for p in listed if p]
    assert paths == sorted([".a", "a.txt", "dir/b.txt", "link", "z.txt", SENTINEL]) and count == len(paths) - 1
    shadow = Git(root / ".git", root)
    assert StatVerdict(shadow, index, sentinel=SENTINEL, checksum=checksum).dirty() == set()
    write(root, "dir/b.txt", "changed, and longer\n")
    write(root, "dir/c.txt", "changed, and longer\n")
    assert StatVerdict(shadow, index, sentinel=SENTINEL, checksum=checksum).dirty() == {"dir/b.txt"}


def test_no_copy_is_offered_of_an_index_of_another_version(tmp_path: Path) -> None:
    root = tmp_path / "work"
    git(tmp_path, "init", "-q", str(root))
    write(root, "a.txt", "a\n")
    git(root, "add", "-A")
    git(root, "update-index", "--index-version", "4")
    assert read_index(root / ".git" / "index").copy is None
