"""Reading the project's work tree: what is there, as git would store it.

:func:`scan` walks the whole tree, pruning directories the
:class:`~code_trajectory.recording.ignore.RecordingPolicy` excludes before descending into
them; :func:`probe` looks at one path for the watcher. Neither follows symlinks:
a symlink is recorded as a symlink (its target string), so loops and links that
point outside the project are harmless. FIFOs, sockets and devices are skipped.

What it reuses from the last walk, :class:`~.listing.DirListing` with its packed names, ``lstat`` facts and digest,
is in :mod:`.listing` (re-exported here), whether it still holds in :mod:`.listing_reuse`; the stat cache that stores
the listings lives in :mod:`.statcache`, git's verdict on them in :mod:`.gitvouch`.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, itemgetter, methodcaller, not_
from pathlib import Path

from code_trajectory.recording import listing_reuse
from code_trajectory.recording.ignore import GITIGNORE
from code_trajectory.recording.known_files import known_files, look_again
from code_trajectory.recording.listing import (
    RACY_MARGIN_NS,
    REL_OF,
    DirListing,
    FileInfo,
    IgnoreFileStamp,
    listing_digest,
    pack_names,
    pack_stats,
)
from code_trajectory.recording.own_exclusions import never_entered
from code_trajectory.recording.walk_policy import WalkPolicy

__all__ = ["RACY_MARGIN_NS", "DirListing", "FileInfo", "ScanResult", "listing_digest", "pack_names", "pack_stats",
           "probe", "scan"]

log = logging.getLogger(__name__)


@dataclass
class ScanResult:
    """Outcome of a full scan: recordable files by path, plus what was skipped and why.

    ``listings`` holds every directory entered (relative to the root, ``""`` for the root), for the
    next scan; ``reused`` counts the directories whose earlier listing was used instead of reading them.
    ``clean`` holds the directories whose files are all unchanged since their listing's
    :attr:`DirListing.stats` (only when the scan was asked to skip them): their files are not in ``files``.
    ``known`` holds the directories whose every file's facts were taken as the walk was given them (``known``:
    an import's files that git vouches for), with those files in the order of their listing's names.
    """

    files: dict[str, FileInfo]
    skipped: list[tuple[str, str]]
    directories: list[str]
    listings: dict[str, DirListing] = field(default_factory=dict)
    reused: int = 0
    clean: dict[str, DirListing] = field(default_factory=dict)
    known: dict[str, list[FileInfo]] = field(default_factory=dict)

    def count(self) -> int:
        """How many recordable files the scan found, those of ``clean`` directories included."""
        return len(self.files) + sum(listing.file_count for listing in self.clean.values())


class _VerdictUnusable(Exception):
    """A directory git's verdict sent back to be looked at has lost a listed file: scan without the verdict."""


#: The paths whose ``lstat`` no longer matches the stat index (relative to the root), None: no verdict.
Verdict = Callable[[], "set[str] | None"]


def scan(root: Path, policy: WalkPolicy, *, progress: Callable[[int], None] | None = None,
         listings: Mapping[str, DirListing] | None = None, skip_clean: bool = False,
         verdict: Verdict | None = None, known: Callable[[], Mapping[str, FileInfo]] | None = None,
         withdrawn: Callable[[], Collection[str]] | None = None) -> ScanResult:
    """Walk the work tree under ``root`` and return every recordable file.

    Args:
        root: the project root.
        policy: decides what is recorded; excluded directories are never entered.
        progress: called now and then with the number of files found so far.
        listings: the ``listings`` of an earlier scan with the same policy inputs (see
            :class:`DirListing`); an unchanged directory is then not read again nor its entries
            judged again, only its files' ``lstat`` taken. A changed ``.gitignore`` anywhere makes
            the scan start over without them.
        skip_clean: a trusted listing whose files' ``lstat`` facts still pack to its
            :attr:`DirListing.stats` goes to ``clean``, its files left out of ``files``.
        verdict: with ``skip_clean``, git's verdict on the stat index (:mod:`.gitvouch`), called once after the
            walk: a trusted listing whose :attr:`DirListing.indexed` is its :func:`listing_digest` is clean without
            an ``lstat`` of its files unless the verdict names one of them (or gives None).
        known: called once the directories are walked (their files are looked at after it answers, so that the
            walk proceeds while it is prepared): regular files git tracks whose ``lstat`` facts are already known
            (the initial import's files that git vouches for, :meth:`~.index_seed.IndexSeed.vouched`). Found in a
            directory as a regular file, such a file is neither ``lstat``ed nor matched against ignore rules
            (``tracked=True``, see :meth:`~.ignore.RecordingPolicy.entry_excluded`); its facts are taken as given.
        withdrawn: with ``known``, called once its files are placed: those of them no longer known (git's verdict
            came meanwhile, :meth:`~.index_seed.IndexSeed.withdrawn`), each then ``lstat``ed as any other file.

    Unreadable directories are skipped (logged, listed in ``skipped``).
    """
    try:
        try:
            return _scan(root, policy, progress, listings or {}, skip_clean, verdict if skip_clean else None, known,
                         withdrawn)
        except _VerdictUnusable:
            return _scan(root, policy, progress, listings or {}, skip_clean, None, known, withdrawn)
    except listing_reuse.IgnoreFileChanged:
        return _scan(root, policy, progress, {}, False, None, known, withdrawn)


def _scan(root: Path, policy: WalkPolicy, progress: Callable[[int], None] | None,
          listings: Mapping[str, DirListing], skip_clean: bool, verdict: Verdict | None,
          later: Callable[[], Mapping[str, FileInfo]] | None,
          withdrawn: Callable[[], Collection[str]] | None = None) -> ScanResult:
    started_ns = time.time_ns()
    result = ScanResult({}, [], [])
    files, skipped = result.files, result.skipped
    #: with ``later``: the directories read, their files still to be looked at (once ``later`` answered)
    waiting: list[tuple[str, tuple[int, int], IgnoreFileStamp, list[str], list[tuple[str, int]],
                       list[os.DirEntry[str]]]] = []

    def take(rel_dir: str, entry: os.DirEntry[str], names: list[str]) -> None:
        """Record the file ``entry`` of directory ``rel_dir`` in ``files`` and its name in ``names``, unless the
        policy skips it (or it cannot be looked at: noted in ``skipped``)."""
        name = entry.name
        rel = f"{rel_dir}/{name}" if rel_dir else name
        try:
            if policy.entry_excluded(rel_dir, name, False):
                return
            info = FileInfo.from_stat(rel, entry.stat(follow_symlinks=False))
        except OSError as exc:
            skipped.append((rel, f"cannot stat: {exc.strerror or exc}"))
            return
        if info is None:
            skipped.append((rel, "not a regular file or symlink (FIFO, socket or device)"))
            return
        files[rel] = info
        names.append(name)
        if progress is not None and len(files) % 5000 == 0:
            progress(len(files))

    by_git: dict[str, DirListing] = {}  # clean on git's verdict, still to be heard
    stack: list[tuple[str, bool]] = [("", False)]  # (directory, whether its parent's listing was reused)
    # an import (no listing of an earlier scan, files placed later): a subdirectory is judged once its own names are
    # read, the markers of a generated directory looked for among them (no stat each: 25,000 directories); those
    # found excluded then are noted here, by parent, as their parent's listing notes excluded subdirectories
    unjudged: set[str] | None = set() if later is not None and not listings else None
    judged_out: dict[str, list[tuple[str, int]]] = {}
    # directories whose verdict waits for the tracked set git is still listing (an ignore rule matches them): judged
    # once the rest is walked, so that the walk does not wait for git meanwhile
    postponed: list[tuple[str, bool]] | None = [] if unjudged is not None else None
    while stack or postponed:
        if not stack and postponed is not None:
            stack, postponed = postponed[::-1], None  # judged now: the tracked set is read, or read now
        rel_dir, parent_reused = stack.pop()
        if postponed is not None and unjudged is not None and rel_dir in unjudged:
            parent, _, name = rel_dir.rpartition("/")
            if policy.waits_for_tracked(parent, name):
                postponed.append((rel_dir, parent_reused))
                continue
        directory = f"{root}/{rel_dir}" if rel_dir else str(root)
        old = listings.get(rel_dir)
        git_vouches = (verdict is not None and old is not None and old.indexed is not None
                       and old.indexed == listing_digest(old))
        if skip_clean and old is not None and old.stats is not None and (
                listing_reuse.dir_unchanged(directory, old) if git_vouches else listing_reuse.unchanged(directory, old)):
            if git_vouches:
                by_git[rel_dir] = old
            result.directories.append(rel_dir)
            result.listings[rel_dir] = result.clean[rel_dir] = old
            result.reused += 1
            stack.extend((f"{rel_dir}/{name}" if rel_dir else name, True) for name in old.subdirs)
            continue
        try:
            st = os.lstat(directory)
        except OSError as exc:
            skipped.append((rel_dir, f"unreadable directory: {exc.strerror or exc}"))
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        # a directory listed before: its ignore file's stamp now, to compare; else once its names are read
        signature = (st.st_mtime_ns, st.st_ino)
        ignore_file = listing_reuse.ignore_file_stamp(directory) if old is not None else None
        if old is not None and not old.same_ignore_file(ignore_file):
            raise listing_reuse.IgnoreFileChanged(rel_dir)
        if old is not None and old.trusted(directory, signature, ignore_file, st.st_ctime_ns):
            relisted = listing_reuse.relisted(directory, rel_dir, old)
            if relisted is not None:
                result.directories.append(rel_dir)
                result.listings[rel_dir] = old
                result.reused += 1
                files.update((info.rel, info) for info in relisted)
                stack.extend((f"{rel_dir}/{name}" if rel_dir else name, True) for name in old.subdirs)
                continue
        if parent_reused:  # its parent judged it before it changed (a new pyvenv.cfg makes it generated)
            parent, _, name = rel_dir.rpartition("/")
            if policy.entry_excluded(parent, name, True):
                continue
        judge = unjudged is not None and rel_dir in unjudged
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            if judge and _judged_out(policy, rel_dir, None, st, judged_out):
                continue
            skipped.append((rel_dir, f"unreadable directory: {exc.strerror or exc}"))
            log.warning("skipping unreadable directory %s: %s", rel_dir or ".", exc)
            continue
        listed = list(map(_NAME, entries)) if old is None else None
        if judge and _judged_out(policy, rel_dir, listed, st, judged_out):
            continue
        if listed is not None and GITIGNORE in listed:  # no lstat where there is none (an import: 25,000)
            # one made since is seen: it changes the directory's mtime
            ignore_file = listing_reuse.ignore_file_stamp(directory)
        result.directories.append(rel_dir)
        names: list[str] = []
        subdirs: list[str] = []
        excluded: list[tuple[str, int]] = []
        others: list[os.DirEntry[str]] = []
        try:  # the directory entry's type, no system call where the file system fills it in: told in C
            directories = list(map(_IS_DIR, entries))
        except OSError:
            directories = None
        if directories is not None:
            others = list(compress(entries, map(not_, directories)))
        for entry in compress(entries, directories) if directories is not None else entries:
            name = entry.name
            try:
                if not entry.is_dir(follow_symlinks=False):
                    others.append(entry)
                elif unjudged is not None:  # judged once listed (above); .git is never entered, nor noted
                    if not never_entered(name):
                        child = f"{rel_dir}/{name}" if rel_dir else name
                        unjudged.add(child)
                        stack.append((child, False))
                        subdirs.append(name)
                elif not policy.entry_excluded(rel_dir, name, True):
                    stack.append((f"{rel_dir}/{name}" if rel_dir else name, False))
                    subdirs.append(name)
                elif not never_entered(name):  # .git's mtime moves with every git command: not watched
                    excluded.append((name, entry.stat(follow_symlinks=False).st_mtime_ns))
            except OSError as exc:
                skipped.append((f"{rel_dir}/{name}" if rel_dir else name, f"cannot stat: {exc.strerror or exc}"))
        if later is not None:
            waiting.append((rel_dir, signature, ignore_file, subdirs, excluded, others))
            continue
        for entry in others:
            take(rel_dir, entry, names)
        result.listings[rel_dir] = DirListing(signature, started_ns, ignore_file, pack_names(names), tuple(subdirs),
                                                 tuple(excluded))
    if waiting:
        assert later is not None
        known = later()
        # in the order of the paths (the index's, as ``known`` was made): its files are looked up, and the listings
        # made, in the order they lie in memory, not the walk's
        waiting.sort(key=itemgetter(0))
        counted = len(files) // 5000
        known_count = 0  # the files of the directories wholly taken from ``known``: added to ``files`` at the end
        placed: list[tuple[list[str], list[FileInfo | None], bool]] = []  # per directory waiting: its entries'
        # names, their facts known, whether all are known
        for rel_dir, _signature, _ignore_file, _subdirs, _excluded, others in waiting:
            entry_names = list(map(_NAME, others))
            found = known_files(known, f"{rel_dir}/" if rel_dir else "", others, entry_names)
            placed.append((entry_names, found, bool(found) and None not in found))
        # the tracked files whose facts are known are judged together, one call for all the directories
        skips = policy.tracked_files_excluded([
            (rel_dir, entry_names if all_known else [name for name, info in zip(entry_names, found) if info])
            for (rel_dir, *_rest), (entry_names, found, all_known) in zip(waiting, placed)])
        for (rel_dir, signature, ignore_file, subdir_list, excluded_list, others), (entry_names, found, all_known) in zip(
                waiting, placed):
            out = judged_out.get(rel_dir)
            gone = {name for name, _mtime in out} if out is not None else set()
            subdir_names = tuple(subdir_list) if out is None else tuple(n for n in subdir_list if n not in gone)
            excluded_dirs = tuple(excluded_list) if out is None else (*excluded_list, *out)
            names = []
            skip_names = skips.get(rel_dir)
            skip = set(skip_names) if skip_names else ()
            if all_known and not skip:  # the common case of an import: each file the index's
                names = entry_names
                known_count += len(found)
                result.known[rel_dir] = found  # type: ignore[assignment]  # no None in found
            else:
                for entry, info in zip(others, found) if found else ((entry, None) for entry in others):
                    if info is None:
                        take(rel_dir, entry, names)
                    elif entry.name not in skip:
                        files[info.rel] = info
                        names.append(entry.name)
            if progress is not None and (len(files) + known_count) // 5000 != counted:
                counted = (len(files) + known_count) // 5000
                progress(len(files) + known_count)
            result.listings[rel_dir] = DirListing(signature, started_ns, ignore_file, pack_names(names), subdir_names,
                                                     excluded_dirs)
        if withdrawn is not None:
            known_count -= look_again(root, result.files, result.known, result.listings, withdrawn(), take)
        if not files and known_count == len(known):  # each of ``known`` seen once, and no other file: a copy of it
            result.files = files = dict(known)  # (in C; 500,000 files at an import, not a dict entry a file here)
        else:
            for taken in result.known.values():
                files.update(zip(map(REL_OF, taken), taken))
    if by_git and verdict is not None:
        _hear_verdict(root, result, by_git, verdict())
    return result


_NAME = attrgetter("name")  # os.DirEntry.name
_IS_DIR = methodcaller("is_dir", follow_symlinks=False)


def _judged_out(policy: WalkPolicy, rel_dir: str, listed: list[str] | None, st: os.stat_result,
                judged_out: dict[str, list[tuple[str, int]]]) -> bool:
    """True when the directory ``rel_dir``, read (``listed``: its names) but not judged yet, is not entered: it is
    then noted in ``judged_out`` under its parent with its mtime (``st``: its ``lstat``), as its parent's listing
    notes an excluded subdirectory."""
    parent, _, name = rel_dir.rpartition("/")
    if not policy.entry_excluded(parent, name, True, listed=listed):
        return False
    judged_out.setdefault(parent, []).append((name, st.st_mtime_ns))
    return True


def _hear_verdict(root: Path, result: ScanResult, by_git: Mapping[str, DirListing], dirty: set[str] | None) -> None:
    """Look at the files of the directories ``dirty`` names (or of all of them, when git gave no verdict) that
    the walk took as clean on git's word (``by_git``): a directory with a changed file leaves ``clean``.

    Raises:
        _VerdictUnusable: a listed file is gone from a directory whose names did not change (it changed during
            the scan): the caller scans again without the verdict.
    """
    dirty_dirs = None if dirty is None else {p.rpartition("/")[0] for p in dirty}
    for rel_dir, listing in by_git.items():
        if rel_dir not in result.clean:
            continue  # the walk found the directory itself changed
        directory = f"{root}/{rel_dir}" if rel_dir else str(root)
        if dirty_dirs is None:
            if listing_reuse.unchanged(directory, listing):
                continue
        elif rel_dir not in dirty_dirs:
            continue
        relisted = listing_reuse.relisted(directory, rel_dir, listing)
        if relisted is None:
            raise _VerdictUnusable(rel_dir)
        del result.clean[rel_dir]
        result.files.update((info.rel, info) for info in relisted)


def probe(root: Path, rel: str) -> FileInfo | str | None:
    """Look at one path: a :class:`FileInfo`, ``"dir"`` for a real directory, or None when absent/unrecordable."""
    try:
        st = os.lstat(root / rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        log.debug("cannot stat %s: %s", rel, exc)
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return FileInfo.from_stat(rel, st)
