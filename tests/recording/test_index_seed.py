"""The initial import reuses what the project's git index already knows (issue 29: import what git already has)."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import time
from pathlib import Path

from support import git, git_repo, server_command, subprocess_env, write


def import_project(root: Path) -> None:
    """The initial import, as a user starts it (``code-trajectory checkpoint``)."""
    proc = subprocess.run([*server_command(), "checkpoint", "--project", str(root), "-m", "start"],
                          env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def recorded(root: Path) -> dict[str, str]:
    """``{path: blob id}`` of the newest snapshot."""
    out = git(root, "--git-dir=.trajectory", "ls-tree", "-r", "-z", "HEAD")
    entries = {}
    for record in out.split("\0"):
        if record:
            meta, _, path = record.partition("\t")
            entries[path] = meta.split()[2]
    return entries


def work_tree_blobs(root: Path, paths: list[str]) -> dict[str, str]:
    """What git computes from the bytes in the work tree (``hash-object --no-filters``)."""
    out = git(root, "hash-object", "--no-filters", *paths)
    return dict(zip(paths, out.split(), strict=True))


def linked_objects(root: Path) -> int:
    """Files in the shadow's objects directory that are hard links (a second name of the project's objects)."""
    return sum(1 for p in (root / ".trajectory" / "objects").rglob("*") if p.is_file() and p.stat().st_nlink > 1)


def a_library(root: Path, files: int = 60) -> Path:
    git_repo(root, {f"pkg/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(files)},
             branch="main", commit="initial")
    return root


def settle(root: Path) -> None:
    """Make the index fresh and not racy, as it is some time after the last ``git status``."""
    time.sleep(0.05)
    git(root, "status", "--porcelain")


def test_unchanged_tracked_files_come_from_the_index_and_every_file_is_recorded_as_the_work_tree_has_it(
        tmp_path: Path) -> None:
    root = a_library(tmp_path / "lib")
    write(root, "pkg/m1.py", "def f1():\n    return 'edited, not staged'\n")
    write(root, "pkg/m2.py", "def f2():\n    return 'staged, not committed'\n")
    git(root, "add", "pkg/m2.py")
    write(root, "notes.txt", "untracked\n")
    settle(root)
    import_project(root)
    entries = recorded(root)
    paths = sorted(p for p in entries if not p.startswith(".git"))
    assert entries == {**entries, **work_tree_blobs(root, paths)}  # every recorded file is the work tree's bytes
    assert {"pkg/m1.py", "pkg/m2.py", "notes.txt"} <= set(entries)
    assert linked_objects(root) >= 50  # the unchanged files were not read again: their objects are git's own


def test_packs_are_shared_by_hard_links_that_survive_gc_prune_and_a_rebase(tmp_path: Path) -> None:
    root = a_library(tmp_path / "lib")
    git(root, "gc", "-q")
    settle(root)
    import_project(root)
    packs = list((root / ".trajectory" / "objects" / "pack").glob("pack-*.pack"))
    assert packs and all(p.stat().st_nlink == 2 for p in packs)
    before = recorded(root)
    # the user rewrites their history and prunes everything unreachable
    write(root, "pkg/m3.py", "def f3():\n    return 'rewritten'\n")
    git(root, "commit", "-qam", "rewrite")
    git(root, "rebase", "-q", "--exec", "true", "HEAD~1")
    git(root, "commit", "-q", "--amend", "-m", "amended")
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now", "--aggressive")
    assert all(p.stat().st_nlink == 1 for p in packs)  # the project's own names are gone
    fsck = subprocess.run(["git", "--git-dir", str(root / ".trajectory"), "fsck", "--full", "--no-dangling"],
                          capture_output=True, text=True, env=subprocess_env())
    assert fsck.returncode == 0, fsck.stderr
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m3.py") == "def f3():\n    return 3\n"
    assert recorded(root) == before


def test_a_clean_filter_that_keeps_the_size_is_not_trusted(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    git_repo(root, {".gitattributes": "*.txt filter=upper\n", "a.txt": "lower case text\n"}, branch="main")
    git(root, "config", "filter.upper.clean", "tr a-z A-Z")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    assert git(root, "show", "HEAD:a.txt") == "LOWER CASE TEXT\n"  # the index holds the cleaned content
    settle(root)
    import_project(root)
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:a.txt") == "lower case text\n"


def test_end_of_line_conversion_is_recorded_as_the_work_tree_has_it(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    git_repo(root, {".gitattributes": "*.txt text eol=crlf\n", "a.txt": "one\ntwo\n"}, branch="main",
             commit="initial")
    os.remove(root / "a.txt")
    git(root, "checkout", "--", "a.txt")  # written with CRLF, the index has LF
    assert (root / "a.txt").read_bytes() == b"one\r\ntwo\r\n"
    settle(root)
    import_project(root)
    shown = subprocess.run(["git", "--git-dir", str(root / ".trajectory"), "cat-file", "blob", "HEAD:a.txt"],
                           capture_output=True, env=subprocess_env()).stdout
    assert shown == b"one\r\ntwo\r\n"


def test_a_project_without_git_imports_as_before(plain_dir: Path) -> None:
    write(plain_dir, "a.py", "x = 1\n")
    import_project(plain_dir)
    assert git(plain_dir, "--git-dir=.trajectory", "show", "HEAD:a.py") == "x = 1\n"
    assert linked_objects(plain_dir) == 0


def test_a_symlinked_pack_or_loose_object_in_the_project_is_not_linked(tmp_path: Path) -> None:
    """Only regular files are hard-linked: a pack or loose object that is a symlink (pointing anywhere) is left
    alone, and the files it stood for are read from the work tree instead."""
    root = a_library(tmp_path / "lib", files=8)
    git(root, "gc", "-q")
    pack_dir = root / ".git" / "objects" / "pack"
    outside = tmp_path / "outside"
    outside.mkdir()
    for pack in list(pack_dir.glob("pack-*")):
        moved = outside / pack.name
        pack.rename(moved)
        pack.symlink_to(moved)
    settle(root)
    import_project(root)
    shadow_packs = root / ".trajectory" / "objects" / "pack"
    assert not any(p.is_symlink() or p.stat().st_nlink > 1 for p in shadow_packs.glob("pack-*"))
    entries = recorded(root)
    paths = sorted(p for p in entries if p.startswith("pkg/"))
    assert entries == {**entries, **work_tree_blobs(root, paths)}


def vouch_for_work_tree_stat(root: Path, rel: str) -> None:
    """Make the project's (version 2) index claim that ``rel``'s current ``lstat`` is that of its staged blob: what
    git's index says when the file changed within the timestamp tick in which git last read it (racy git)."""
    git(root, "update-index", "--index-version", "2")
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes())
    at = data.index(rel.encode() + b"\0") - 62  # the stat fields, the object id and the flags come first
    fields = list(struct.unpack_from(">10I", data, at))
    st = os.lstat(root / rel)
    fields[0:4] = [st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9, st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9]
    fields[5], fields[9] = st.st_ino & 0xFFFFFFFF, st.st_size
    struct.pack_into(">10I", data, at, *fields)
    data[-20:] = hashlib.sha1(data[:-20]).digest()
    index.write_bytes(bytes(data))


def test_a_file_changed_in_the_tick_git_last_read_it_is_hashed_again(tmp_path: Path) -> None:
    """The index's stat data matches the file but the index is not newer than the file (racy): not trusted."""
    root = a_library(tmp_path / "lib")
    write(root, "pkg/m1.py", "def f1():\n    return 7\n")  # the same size as the committed content
    vouch_for_work_tree_stat(root, "pkg/m1.py")
    mtime_ns = os.lstat(root / "pkg" / "m1.py").st_mtime_ns
    os.utime(root / ".git" / "index", ns=(mtime_ns, mtime_ns))  # written in the same tick as the file
    import_project(root)
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m1.py") == "def f1():\n    return 7\n"
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m2.py") == "def f2():\n    return 2\n"


def test_the_same_claim_in_an_index_newer_than_the_file_is_taken(tmp_path: Path) -> None:
    """The counterpart of the racy case: with the index written after the file, its stat data vouches for the
    staged blob (which is how the index spares reading 500,000 files); this is what the racy rule guards."""
    root = a_library(tmp_path / "lib")
    write(root, "pkg/m1.py", "def f1():\n    return 7\n")
    vouch_for_work_tree_stat(root, "pkg/m1.py")
    later = os.lstat(root / "pkg" / "m1.py").st_mtime_ns + 5 * 10**9
    os.utime(root / ".git" / "index", ns=(later, later))
    import_project(root)
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m1.py") == "def f1():\n    return 1\n"


def test_a_file_marked_assume_unchanged_is_looked_at(tmp_path: Path) -> None:
    """git does not ``lstat`` a file its index marks assume-unchanged (``git update-index --assume-unchanged``),
    so its silence says nothing of that file: the private index copied from the project's leaves the entry out,
    and the file is recorded as the work tree has it, not as the index claims."""
    root = a_library(tmp_path / "lib")
    git(root, "update-index", "--assume-unchanged", "pkg/m1.py", "pkg/m2.py")
    write(root, "pkg/m1.py", "def f1():\n    return 'edited while git looked away'\n")
    time.sleep(1.1)  # the index written a second later: no entry is racy (a racy one is left out of the copy anyway)
    settle(root)
    import_project(root)
    found = recorded(root)
    assert found["pkg/m1.py"] == work_tree_blobs(root, ["pkg/m1.py"])["pkg/m1.py"]
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m1.py").endswith("looked away'\n")
    assert found["pkg/m2.py"] == git(root, "rev-parse", "HEAD:pkg/m2.py").strip()


def test_a_working_tree_encoding_that_keeps_the_size_is_not_trusted(tmp_path: Path) -> None:
    """``working-tree-encoding=IBM037`` turns ASCII text into EBCDIC byte for byte: the index's blob (UTF-8) has the
    work tree file's size but not its bytes. The import records the work tree's bytes, so a restore writes them."""
    root = tmp_path / "lib"
    git_repo(root, {".gitattributes": "*.txt working-tree-encoding=IBM037\n", "other.py": "x = 1\n"}, branch="main")
    (root / "a.txt").write_bytes("plain ascii text\n".encode("cp037"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    assert git(root, "show", "HEAD:a.txt") == "plain ascii text\n"  # the index holds UTF-8, the work tree EBCDIC
    settle(root)
    import_project(root)
    shown = subprocess.run(["git", "--git-dir", str(root / ".trajectory"), "cat-file", "blob", "HEAD:a.txt"],
                           capture_output=True, env=subprocess_env()).stdout
    assert shown == (root / "a.txt").read_bytes() == "plain ascii text\n".encode("cp037")
