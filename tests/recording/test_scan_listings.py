"""Full scans reuse the directory listings of the previous scan while directories are unchanged, and never
return another set of files than a scan from nothing would."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.worktree import ScanResult, scan
from support import age_everything, git, write
from support.gitdirs import policy_for


@pytest.fixture
def tree(project: Path) -> Path:
    for i in range(3):
        write(project, f"pkg/sub{i}/mod.py", f"x = {i}\n")
        write(project, f"pkg/sub{i}/deep/data.txt", "data\n")
    write(project, "pkg/build/out.o", "ignored")
    write(project, ".gitignore", "build/\n*.o\n")
    write(project, "venv/pyvenv.cfg", "home = /usr\n")
    write(project, "venv/lib/site.py", "generated\n")
    age_everything(project)
    return project


def rescan(root: Path, previous: ScanResult) -> ScanResult:
    """A scan with ``previous``'s listings, checked against a scan from nothing."""
    again = scan(root, policy_for(root), listings=previous.listings)
    fresh = scan(root, policy_for(root))
    assert again.files == fresh.files
    assert set(again.directories) == set(fresh.directories)
    return again


def test_an_unchanged_tree_is_listed_again_without_reading_directories(tree: Path) -> None:
    first = scan(tree, policy_for(tree))
    assert first.reused == 0 and "pkg/sub1/mod.py" in first.files
    again = rescan(tree, first)
    assert again.reused == len(first.listings) and again.listings == first.listings


def test_created_deleted_and_edited_files_are_seen(tree: Path) -> None:
    first = scan(tree, policy_for(tree))
    write(tree, "pkg/sub1/new.py", "new\n")
    os.unlink(tree / "pkg/sub2/mod.py")
    write(tree, "pkg/sub0/mod.py", "x = 'edited'\n")
    (tree / "pkg/sub0/deep").rename(tree / "pkg/sub0/moved")
    again = rescan(tree, first)
    assert "pkg/sub1/new.py" in again.files and "pkg/sub2/mod.py" not in again.files
    assert "pkg/sub0/moved/data.txt" in again.files and "pkg/sub0/deep/data.txt" not in again.files
    assert again.files["pkg/sub0/mod.py"].size == len("x = 'edited'\n")
    assert again.reused > 0  # the untouched directories were not read again


def test_a_changed_gitignore_below_the_root_changes_the_verdicts_below_it(tree: Path) -> None:
    first = scan(tree, policy_for(tree))
    write(tree, "pkg/sub1/.gitignore", "deep/\n")  # the new file changes pkg/sub1's mtime, not deep's
    again = rescan(tree, first)
    assert "pkg/sub1/deep/data.txt" not in again.files
    (tree / "pkg/sub1/.gitignore").write_text("mod.py\n")  # edited in place: no directory's mtime changes
    third = rescan(tree, again)
    assert "pkg/sub1/deep/data.txt" in third.files and "pkg/sub1/mod.py" not in third.files


def test_a_gitignore_rewritten_within_its_mtime_tick_is_read_again(tree: Path) -> None:
    """git's racy-clean case for the ``.gitignore`` stamps: a rewrite of the same size in the same mtime tick as the
    scan saw keeps ``(mtime, size, inode)``; a stamp that close to the scan is not taken as unchanged."""
    ignore = tree / "pkg/sub1/.gitignore"
    ignore.write_text("deep/\n")
    age_everything(tree)
    os.utime(ignore)  # just saved: its mtime is now; the directories' stay old (their listings are trusted)
    first = scan(tree, policy_for(tree))
    assert "pkg/sub1/deep/data.txt" not in first.files
    saved = os.lstat(ignore)
    ignore.write_text("mod.p\n")  # rewritten in place: the same size and inode
    os.utime(ignore, ns=(saved.st_atime_ns, saved.st_mtime_ns))  # within the same mtime tick
    now = os.lstat(ignore)
    assert first.listings["pkg/sub1"].ignore_file == (now.st_mtime_ns, now.st_size, now.st_ino)
    again = rescan(tree, first)
    assert "pkg/sub1/deep/data.txt" in again.files


def test_a_directory_that_becomes_or_stops_being_a_virtual_environment(tree: Path) -> None:
    first = scan(tree, policy_for(tree))
    assert not any(p.startswith("venv/") for p in first.files)
    os.unlink(tree / "venv/pyvenv.cfg")  # venv/ is no longer generated; its parent's mtime is unchanged
    again = rescan(tree, first)
    assert "venv/lib/site.py" in again.files
    age_everything(tree)
    third = rescan(tree, scan(tree, policy_for(tree)))
    write(tree, "pkg/sub2/pyvenv.cfg", "home = /usr\n")  # now pkg/sub2 is one
    fourth = rescan(tree, third)
    assert not any(p.startswith("pkg/sub2/") for p in fourth.files)


def test_racy_directories_are_read_again(tree: Path) -> None:
    write(tree, "pkg/sub1/fresh.py", "written just now\n")  # pkg/sub1's mtime is within the racy margin
    first = scan(tree, policy_for(tree))
    again = rescan(tree, first)
    assert again.listings["pkg/sub1"] is not first.listings["pkg/sub1"]
    assert again.listings["pkg/sub0"] is first.listings["pkg/sub0"]


def test_recorder_keeps_listings_across_restarts_and_drops_them_when_rules_change(tree: Path) -> None:
    settings = TrajectorySettings.load(tree)
    recorder = Recorder.open(tree, settings)
    try:
        recorder.reconcile()
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint())
        assert cached.listings and cached.tree is not None
    finally:
        recorder.close()
    write(tree, "pkg/sub1/mod.py", "x = 'while stopped'\n")
    (tree / ".git/info").mkdir(exist_ok=True)
    (tree / ".git/info/exclude").write_text("deep/\n")  # a rule outside the project: the fingerprint changes
    recorder = Recorder.open(tree, settings)
    try:
        assert recorder.stat_cache.load(recorder.policy.rules_fingerprint()).listings == {}
        snap = recorder.reconcile()
        changed = {c.path for c in snap.changes}
        assert "pkg/sub1/mod.py" in changed and "pkg/sub0/deep/data.txt" in changed  # edited; now excluded
        recorded = git(tree, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", snap.ref).split()
        assert "pkg/sub1/mod.py" in recorded and not any(p.endswith("data.txt") for p in recorded)
    finally:
        recorder.close()


def test_a_change_of_the_tracked_set_drops_the_listings(tree: Path) -> None:
    policy = policy_for(tree)
    before = policy.rules_fingerprint()
    first = scan(tree, policy)
    assert "pkg/build/out.o" not in first.files
    git(tree, "add", "-f", "pkg/build/out.o")  # tracked although ignored: git records it, so do we
    policy.invalidate()
    assert policy.rules_fingerprint() != before
    assert "pkg/build/out.o" in scan(tree, policy).files


def test_snapshots_between_scans_and_a_second_writer_are_accounted_for(tree: Path) -> None:
    settings = TrajectorySettings.load(tree)
    recorder = Recorder.open(tree, settings)
    try:
        first = recorder.reconcile()
        write(tree, "pkg/sub0/mod.py", "x = 'saved'\n")
        recorder.record_paths(["pkg/sub0/mod.py"])  # the branch moves past the tree the rows describe
        os.unlink(tree / "pkg/sub1/mod.py")
        snap = recorder.reconcile()
        assert {(c.path, c.status) for c in snap.changes} == {("pkg/sub1/mod.py", "D")}
        assert recorder.reconcile() is None
        # a second process (a CLI checkpoint) writes between this recorder's load and save
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint())
        assert cached.tree is not None and cached.listings
        other = Recorder.open(tree, settings)
        try:
            write(tree, "pkg/sub2/other.py", "from the other process\n")
            assert other.reconcile() is not None
        finally:
            other.close()
        recorder.stat_cache.save(cached, hashed=[], removed=[], listings=cached.listings,
                                 fingerprint=recorder.policy.rules_fingerprint(), tree=cached.tree,
                                 scanned_ns=time.time_ns())
        after = recorder.stat_cache.load(recorder.policy.rules_fingerprint())
        assert after.tree is None and after.listings == {}  # nothing claimed on a stale view
        assert "pkg/sub2/other.py" in after.rows  # the other process's rows are facts and stay
        assert first is not None and recorder.reconcile() is None
    finally:
        recorder.close()


def test_snapshots_of_changed_paths_keep_the_stat_cache_fresh_for_full_scans(tree: Path, monkeypatch) -> None:
    from code_trajectory.recording import fullscan

    recorder = Recorder.open(tree, TrajectorySettings.load(tree))
    try:
        recorder.reconcile()
        write(tree, "pkg/sub0/mod.py", "x = 'saved'\n")
        write(tree, "pkg/new/file.py", "new\n")
        os.unlink(tree / "pkg/sub1/mod.py")
        past = time.time() - 10  # saved a while before the watcher records them: out of the racy window
        for rel in ("pkg/sub0/mod.py", "pkg/new/file.py"):
            os.utime(tree / rel, (past, past))
        snap = recorder.record_paths(["pkg/sub0/mod.py", "pkg/new", "pkg/sub1/mod.py"])
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint())
        assert cached.tree == recorder.repo.commit_tree_oid(snap.commit)  # the rows describe the new tip
        assert "pkg/new/file.py" in cached.rows and "pkg/sub1/mod.py" not in cached.rows
        hashed: list[int] = []
        real = fullscan.write_blobs
        monkeypatch.setattr(fullscan, "write_blobs", lambda repo, root, infos, *a, **k: (
            hashed.append(len(infos)) or real(repo, root, infos, *a, **k)))
        assert recorder.reconcile() is None and hashed == [0]  # nothing read again, nothing missed
        write(tree, "pkg/sub2/mod.py", "x = 'edited with no watcher'\n")
        os.utime(tree / "pkg/sub2/mod.py", (past, past + 1))
        assert {c.path for c in recorder.reconcile().changes} == {"pkg/sub2/mod.py"} and hashed[-1] == 1
    finally:
        recorder.close()


def test_listings_keep_their_file_names_packed_through_the_stat_cache(tree: Path) -> None:
    """A listing holds its file names as the stat cache stores them (one ``bytes``, issue 29: a server's full scan
    holds every listing at once), decoded on access to the same names, non-UTF-8 and non-ASCII ones included."""
    odd = os.fsdecode(b"caf\xe9.py")  # not UTF-8: kept by surrogateescape
    write(tree, "pkg/sub1/" + odd, "odd\n")
    write(tree, "pkg/sub1/naïve.py", "accent\n")
    age_everything(tree)
    settings = TrajectorySettings.load(tree)
    recorder = Recorder.open(tree, settings)
    try:
        recorder.reconcile()
        cached = recorder.stat_cache.load(recorder.policy.rules_fingerprint())
    finally:
        recorder.close()
    listing = cached.listings["pkg/sub1"]
    assert type(listing.packed_files) is bytes and not hasattr(listing, "__dict__")  # no per-name str kept
    assert set(listing.files) == {"mod.py", odd, "naïve.py"} and listing.file_count == 3
    assert cached.listings["pkg/sub1/deep"].files == ("data.txt",)
    again = scan(tree, policy_for(tree), listings=cached.listings)  # the loaded listings are reused as they are
    assert again.listings["pkg/sub1"] is listing and {"pkg/sub1/" + odd, "pkg/sub1/naïve.py"} <= set(again.files)


def test_known_files_taken_back_after_the_walk_are_looked_at_as_any_other(tree: Path) -> None:
    """The initial import walks with the files git is asked about as known (their facts the index's) and hears git's
    verdict only after: the files it takes back are looked at then (``lstat``), one deleted meanwhile is in neither
    the files nor its directory's listing, and the others keep the facts they were given."""
    fresh = scan(tree, policy_for(tree))
    given = {rel: info._replace(size=info.size + 1000) for rel, info in fresh.files.items()}  # the index's facts

    def withdrawn() -> set[str]:
        os.unlink(tree / "pkg/sub2/mod.py")  # while git compared
        return {"pkg/sub1/mod.py", "pkg/sub2/mod.py", "venv/lib/site.py"}  # the last in no directory walked

    found = scan(tree, policy_for(tree), known=lambda: given, withdrawn=withdrawn)
    assert set(found.files) == set(fresh.files) - {"pkg/sub2/mod.py"}
    assert found.files["pkg/sub1/mod.py"] == fresh.files["pkg/sub1/mod.py"]  # looked at again
    assert all(info == given[rel] for rel, info in found.files.items() if rel != "pkg/sub1/mod.py")  # as given
    assert found.listings["pkg/sub2"].files == () and found.listings["pkg/sub1"].files == ("mod.py",)
    assert "pkg/sub1" not in found.known and "pkg/sub0" in found.known


def test_a_scan_from_nothing_stamps_the_ignore_files_it_lists(tree: Path) -> None:
    """A directory read for the first time takes its ``.gitignore``'s stamp from its own listing (no ``lstat`` where
    there is none): the stamps are those an ``lstat`` gives, and None where there is no such file."""
    write(tree, "pkg/sub1/.gitignore", "*.tmp\n")
    first = scan(tree, policy_for(tree))
    for rel_dir in ("", "pkg/sub1"):
        st = os.lstat(tree / rel_dir / ".gitignore")
        assert first.listings[rel_dir].ignore_file == (st.st_mtime_ns, st.st_size, st.st_ino)
    assert first.listings["pkg"].ignore_file is None and first.listings["pkg/sub0"].ignore_file is None
    write(tree, "pkg/sub1/.gitignore", "*.tmp\nmod.py\n")  # read again: the changed stamp starts the scan over
    assert "pkg/sub1/mod.py" not in rescan(tree, first).files


def test_an_import_walk_judges_directories_once_listed_as_a_walk_that_judges_first(tree: Path) -> None:
    """The import's walk (files known beforehand, no earlier listings) judges a subdirectory once it has read it, the
    markers of a generated directory looked for among its names: it finds the same files, enters the same
    directories and notes the same excluded ones, with their mtimes, as the walk that judges each subdirectory
    before entering it."""
    write(tree, "cache/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")
    write(tree, "cache/blob.bin", "cached\n")
    write(tree, "notcache/CACHEDIR.TAG", "not the signature\n")  # not a cache: recorded
    write(tree, "pkg/sub1/fake/pyvenv.cfg/inside.txt", "a directory named pyvenv.cfg: not a marker\n")
    first = scan(tree, policy_for(tree))
    found = scan(tree, policy_for(tree), known=dict)
    assert found.files == first.files
    assert "pkg/sub1/fake/pyvenv.cfg/inside.txt" in found.files and "notcache/CACHEDIR.TAG" in found.files
    assert not any(rel.startswith(("venv/", "cache/", "pkg/build/")) for rel in found.files)
    assert set(found.listings) == set(first.listings)
    for rel_dir, listing in found.listings.items():
        assert set(listing.subdirs) == set(first.listings[rel_dir].subdirs), rel_dir
        assert sorted(listing.excluded) == sorted(first.listings[rel_dir].excluded), rel_dir
    assert {name for name, _ in found.listings[""].excluded} == {"venv", "cache"}
    assert sorted(found.skipped) == sorted(first.skipped)


def test_a_file_added_by_a_tool_that_puts_the_directorys_mtime_back_is_seen(tree: Path) -> None:
    first = scan(tree, policy_for(tree))
    lib = tree / "pkg" / "sub1"
    before = os.lstat(lib)
    write(tree, "pkg/sub1/b.js", "b, extracted\n")  # as tar (or npm's 1985 mtimes) extracts a second file ...
    os.utime(lib, ns=(before.st_atime_ns, before.st_mtime_ns))  # ... and sets the directory's mtime as archived
    assert os.lstat(lib).st_mtime_ns == before.st_mtime_ns and os.lstat(lib).st_ino == before.st_ino
    again = rescan(tree, first)
    assert "pkg/sub1/b.js" in again.files
