"""The initial import of a git project lets git vouch for its unchanged tracked files, and imports exactly the tree
that the full walk imports (issue 29: import what git already has, without a Python ``lstat`` per file).

The project holds what the recording policy treats apart: ignored files (one of them tracked), untracked files, a
modified tracked file (another of the same size, another made executable), a symlink, a submodule, a file over the
size cap, secrets tracked and untracked, a virtual environment holding a tracked file, and file names with a
newline and with bytes that are not UTF-8.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording import gitvouch, listing_reuse, reconcile
from code_trajectory.recording.index_seed import IndexSeed
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.statcache import StatCache
from support import git, git_repo, recorded, restart, rewrite_in_place, write
from support.hostile import fired, hostile_config, make_programs

ODD = os.fsdecode(b"odd\nname-\xff.txt")  # a newline, and a byte that is not UTF-8


def a_project(root: Path) -> Path:
    git_repo(root / "vendor" / "lib", {"lib.py": "LIB = 1\n"}, branch="main", commit="lib")
    git_repo(root, {
        ".gitignore": "*.log\nbuild/\n",
        "src/a.py": "a = 1\n", "src/b.py": "b = 2\n", "src/c.py": "c = 3\n", "src/run.sh": "echo run\n",
        "src/big.bin": "x" * 6000,
        ".env": "TOKEN=committed-by-mistake\n",
        "venv/pyvenv.cfg": "home = /usr\n", "venv/tracked.py": "v = 1\n",
        ODD: "odd\n",
        **{f"pkg/m{i}.py": f"m = {i}\n" for i in range(30)},
    }, branch="main")
    os.symlink("src/a.py", root / "link.py")
    write(root, "build/keep.cfg", "kept\n")
    git(root, "add", "-A")
    git(root, "add", "-f", "build/keep.cfg")  # tracked although ignored: recorded
    git(root, "commit", "-qm", "initial")
    time.sleep(1.1)  # the entries a second older than the index git status writes next: not racy
    git(root, "status", "--porcelain")
    # after git's last look: changes git must name, and files it never knew
    write(root, "src/a.py", "a = 'edited'\n")
    write(root, "src/b.py", "b = 9\n")  # the same size as before
    os.chmod(root / "src" / "run.sh", 0o755)
    write(root, "notes.txt", "untracked\n")
    write(root, "debug.log", "ignored\n")
    write(root, "build/out.o", "ignored, untracked\n")
    write(root, "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    write(root, os.fsdecode(b"new-\xfe\nfile.txt"), "untracked odd name\n")
    return root


def import_tree(root: Path, *, seeded: bool, monkeypatch: pytest.MonkeyPatch, in_child: bool = False) -> str:
    """Import ``root`` into a new shadow repository (the index's help taken or not, the index read on a thread or
    in a child process); return the snapshot's tree."""
    shutil.rmtree(root / ".trajectory", ignore_errors=True)
    with monkeypatch.context() as patch:
        if not seeded:
            patch.setattr(reconcile, "IndexSeed", lambda *args, **kwargs: None)
        else:
            patch.setattr(reconcile, "IndexSeed", functools.partial(IndexSeed, in_child=in_child))
        settings = dataclasses.replace(TrajectorySettings.load(root), max_file_bytes=4096)
        recorder = Recorder.open(root, settings)
        try:
            assert recorder.reconcile(with_intent=False) is not None
        finally:
            recorder.close()
    return git(root, "--git-dir=.trajectory", "rev-parse", "HEAD^{tree}").strip()


def stat_cache_state(root: Path) -> tuple[dict, dict]:
    """The stat cache of ``root`` after an import: each file's row without the time of its scan (path -> facts and
    blob id), each listing's names and packed facts (path -> both)."""
    cache = StatCache(root / ".trajectory" / "state" / "statcache.sqlite")
    try:
        with contextlib.closing(sqlite3.connect(cache.path)) as db:
            rules = db.execute("SELECT value FROM meta WHERE key = 'rules'").fetchone()[0]
        loaded = cache.load(rules)
    finally:
        cache.close()
    return ({rel: (facts, oid) for rel, (facts, oid, _scanned_ns) in loaded.rows.items()},
            {rel: (listing.packed_files, listing.stats) for rel, listing in loaded.listings.items()})


@pytest.mark.parametrize("in_child", [False, True], ids=["thread", "child"])
def test_the_import_git_vouches_for_is_the_tree_of_the_full_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture,
                                                                   in_child: bool) -> None:
    root = a_project(tmp_path / "project")
    git(root, "write-tree")  # git's cache-tree complete, as a commit leaves it (git status may drop none of it)
    written: list[set[bytes]] = []  # the names of each tree object the import wrote
    write_tree = ShadowRepo.write_tree
    monkeypatch.setattr(ShadowRepo, "write_tree", lambda repo, entries: written.append(set(entries))
                        or write_tree(repo, entries))
    with caplog.at_level(logging.INFO, logger="code_trajectory.recording.index_seed"):
        seeded = import_tree(root, seeded=True, monkeypatch=monkeypatch, in_child=in_child)
    # directories holding exactly the index's files are git's trees, not written again; the others are written
    assert git(root, "--git-dir=.trajectory", "rev-parse", "HEAD:pkg") == git(root, "rev-parse", "HEAD:pkg")
    assert not any(b"m0.py" in names or b"keep.cfg" in names for names in written), written  # build/: as indexed
    assert any(b"a.py" in names for names in written) and any(b".gitignore" in names for names in written)
    assert any(b"lib.py" in names for names in written)  # a submodule's files: the index holds a gitlink there
    written.clear()
    vouched = [r.getMessage() for r in caplog.records if "of them vouched for by git" in r.getMessage()]
    assert vouched and int(vouched[0].split(" of them vouched")[0].split("(")[-1]) >= 30, vouched
    entries = set(git(root, "--git-dir=.trajectory", "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0"))
    assert {"src/a.py", "src/b.py", "notes.txt", "build/keep.cfg", "link.py", "vendor/lib/lib.py", ODD} <= entries
    assert not entries & {".env", "id_rsa", "debug.log", "build/out.o", "venv/tracked.py"}, entries
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:src/b.py") == "b = 9\n"
    assert "x" * 100 not in git(root, "--git-dir=.trajectory", "show", "HEAD:src/big.bin")  # a size note
    assert git(root, "--git-dir=.trajectory", "ls-tree", "HEAD", "src/run.sh").startswith("100755")

    assert import_tree(root, seeded=False, monkeypatch=monkeypatch) == seeded
    assert any(b"m0.py" in names for names in written)  # the full walk writes every tree



@pytest.mark.parametrize("in_child", [False, True], ids=["thread", "child"])
def test_a_project_whose_files_all_match_its_index_imports_heads_tree_writing_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_child: bool) -> None:
    """Every file taken from the index, as many as git's cache-tree counts at the root: the import's tree is
    ``HEAD``'s, and no tree object is written (500,000 files: no file looked at to build it). One tracked file our
    policy leaves out (a secret) changes the count: the trees are built, as the full walk builds them."""
    root = git_repo(tmp_path / "project", {f"pkg/sub{i}/m{j}.py": f"m = {i}{j}\n" for i in range(3) for j in range(4)},
                    branch="main", commit="initial")
    time.sleep(1.1)
    git(root, "status", "--porcelain")
    written: list[set[bytes]] = []
    write_tree = ShadowRepo.write_tree
    monkeypatch.setattr(ShadowRepo, "write_tree", lambda repo, entries: written.append(set(entries))
                        or write_tree(repo, entries))
    time.sleep(1.0)  # the files out of the stat cache's racy margin too: their facts are packed
    assert import_tree(root, seeded=True, monkeypatch=monkeypatch, in_child=in_child) == git(
        root, "rev-parse", "HEAD^{tree}").strip()
    assert written == []
    taken = stat_cache_state(root)  # every file taken from the index: no change, no path made per file
    assert import_tree(root, seeded=False, monkeypatch=monkeypatch) == git(root, "rev-parse", "HEAD^{tree}").strip()
    assert stat_cache_state(root) == taken and len(taken[0]) == 12  # the same rows and listings as the full walk's
    assert all(stats for _names, stats in taken[1].values() if _names), taken[1]
    write(root, ".env", "TOKEN=secret\n")
    git(root, "add", ".env")
    git(root, "commit", "-qm", "a secret, committed")
    time.sleep(1.1)
    git(root, "status", "--porcelain")
    tree = import_tree(root, seeded=True, monkeypatch=monkeypatch, in_child=in_child)
    assert written and tree == git(root, "rev-parse", "HEAD~1^{tree}").strip()  # the secret left out
    assert import_tree(root, seeded=False, monkeypatch=monkeypatch) == tree


@pytest.mark.parametrize("in_child", [False, True], ids=["thread", "child"])
def test_the_projects_config_runs_no_program_while_git_vouches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture, in_child: bool) -> None:
    """The project's ``.git/config`` is the user's data: its fsmonitor, hooks, filters and the rest never run while
    git compares the index's entries with the work tree (the comparison runs on a private index, under the
    shadow's config)."""
    root = git_repo(tmp_path / "project", {f"pkg/m{i}.py": f"m = {i}\n" for i in range(20)}, branch="main",
                    commit="initial")
    time.sleep(1.1)
    git(root, "status", "--porcelain")
    write(root, "pkg/m1.py", "m = 'edited'\n")
    bin_dir, markers = make_programs(tmp_path / "hostile")
    with open(root / ".git" / "config", "a") as config:
        config.write(hostile_config(bin_dir) + "[core]\n\tuntrackedCache = true\n\tsplitIndex = false\n")
    with caplog.at_level(logging.INFO, logger="code_trajectory.recording.index_seed"):
        tree = import_tree(root, seeded=True, monkeypatch=monkeypatch, in_child=in_child)
    assert any("(19 of them vouched for by git)" in r.getMessage() for r in caplog.records), caplog.text
    assert fired(markers) == []
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m1.py") == "m = 'edited'\n"
    assert import_tree(root, seeded=False, monkeypatch=monkeypatch) == tree


@pytest.mark.parametrize("in_child", [False, True], ids=["thread", "child"])
def test_the_restart_after_an_import_uses_the_index_git_vouched_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    caplog: pytest.LogCaptureFixture,
                                                                    in_child: bool) -> None:
    """The private index git compared at the import becomes the stat index of the next start (not written twice):
    the restart lets git ``lstat`` the files, and an edit keeping size and mtime while stopped is still recorded."""
    monkeypatch.setattr(gitvouch, "MIN_FILES", 1)
    root = git_repo(tmp_path / "project", {f"pkg/sub{i}/m{j}.py": f"m = {i}{j}\n" for i in range(4) for j in range(5)},
                    branch="main", commit="initial")
    time.sleep(2.1)  # the entries out of the stat index's racy margin
    git(root, "status", "--porcelain")
    with caplog.at_level(logging.INFO, logger="code_trajectory.recording.gitvouch"):
        import_tree(root, seeded=True, monkeypatch=monkeypatch, in_child=in_child)
    assert "stat index adopted from the import's git verdict: 20 files in 6 directories" in caplog.text
    assert not list((root / ".trajectory" / "state").glob("seed-*"))
    target = root / "pkg" / "sub2" / "m3.py"
    rewrite_in_place(target, "m = 99\n")  # same size and the old mtime: only the ctime tells
    lstat_dirs: list[str] = []
    unchanged = listing_reuse.unchanged
    monkeypatch.setattr(listing_reuse, "unchanged", lambda d, listing: lstat_dirs.append(d) or unchanged(d, listing))
    snap = restart(root)
    assert snap is not None and [(c.path, c.status) for c in snap.changes] == [("pkg/sub2/m3.py", "M")]
    assert recorded(root, snap.ref, "pkg/sub2/m3.py") == "m = 99"
    assert lstat_dirs == []  # git looked at the files, on the index the import wrote


def test_a_cache_tree_naming_another_tree_with_the_same_counts_is_not_taken(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's cache-tree is only what the index file says: its root planted to name the previous commit's
    tree (present, a tree, the same number of files and directories) is not the import's tree; the files are."""
    root = git_repo(tmp_path / "project", {f"pkg/m{j}.py": f"m = {j}\n" for j in range(6)}, branch="main",
                    commit="initial")
    old_tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    write(root, "pkg/m3.py", "m = 'changed'\n")
    git(root, "commit", "-qam", "second")
    time.sleep(1.1)
    git(root, "status", "--porcelain")
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes())
    at = data.index(b"TREE") + 8  # the root node: its empty name, "<entries> <subtrees>\n", then its tree id
    at = data.index(b"\n", at) + 1
    assert data[at:at + 20].hex() == git(root, "rev-parse", "HEAD^{tree}").strip()
    data[at:at + 20] = bytes.fromhex(old_tree)
    data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    index.write_bytes(bytes(data))
    tree = import_tree(root, seeded=True, monkeypatch=monkeypatch)
    assert tree == git(root, "rev-parse", "HEAD^{tree}").strip() != old_tree
    assert git(root, "--git-dir=.trajectory", "show", "HEAD:pkg/m3.py") == "m = 'changed'\n"
