"""The full scan: the whole work tree read into a tree object, at the cost of what changed since the last one.

Used at start-up, on a rescan (``HEAD`` moved, an ignore file changed, events lost) and by a ``checkpoint`` that no
watcher vouches for. The walk reuses the directory listings of the last scan (:class:`~.worktree.DirListing`), the
files whose ``lstat`` facts match the stat cache are not read (:mod:`.statcache`), the others are hashed on worker
threads (:func:`~.blobs.write_blobs`), and the new tree is edited from the base tree along the changed paths only
(:func:`~code_trajectory.git.trees.apply_changes`). When the stat cache's rows describe the base tree, that tree
is not even listed. In a large project git ``lstat``s the files of unchanged directories for the scan, on threads,
against a stat index of ours (:mod:`.gitvouch`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from code_trajectory.git import trees
from code_trajectory.git.messages import AddedFiles
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.recording import gitvouch, secretfiles
from code_trajectory.recording.blobs import write_blobs
from code_trajectory.recording.ignore import RecordingPolicy
from code_trajectory.recording.listing import MTIME_OF, REL_OF
from code_trajectory.recording.statcache import ByDir, CachedScan, Row, RowEntries, StatCache
from code_trajectory.recording.worktree import RACY_MARGIN_NS, DirListing, FileInfo, ScanResult, pack_stats, scan

log = logging.getLogger(__name__)

#: ``(phase, done, total)``: phases ``scan``, ``hash``, ``write``.
ProgressFn = Callable[[str, int, int | None], None]


class Seed(Protocol):
    """What the initial import knows before reading files (:class:`~.index_seed.IndexSeed`: the project's index)."""

    def vouched(self) -> Mapping[str, FileInfo]:
        """Files whose ``lstat`` facts are known without looking (see :func:`~.worktree.scan`'s ``known``), as far as
        known yet."""
        ...

    def withdrawn(self) -> Collection[str]:
        """Those of :meth:`vouched`'s files no longer known (see :func:`~.worktree.scan`'s ``withdrawn``)."""
        ...

    def __call__(self, files: Mapping[str, FileInfo]) -> dict[str, str]:
        """``{path: blob id}`` for the scan's ``files`` whose blob is known (present in the shadow repository)."""
        ...

    def trees(self) -> Mapping[str, tuple[int, int, str]]:
        """Directories whose tree the repository holds already, with their counts (:class:`.trees.KnownTrees`)."""
        ...

    def written(self) -> gitvouch.Written | None:
        """A stat index holding the known files' facts, for :func:`.gitvouch.refresh` to adopt (else removed)."""
        ...


@dataclass
class FullScan:
    """What a full scan built.

    Attributes:
        tree: the tree of the work tree (its objects written).
        base: the tree it was compared with (None: nothing recorded yet).
        oversize: files over the size cap (path relative to the root -> size in bytes), stored as a size note.
        imported: every file added, sorted by path, when there was no base (an initial import), else None; its
            :class:`~code_trajectory.git.messages.FileChange` objects are made only as they are read.
        files: how many files the scan found.
    """

    tree: str
    base: str | None
    oversize: dict[str, int]
    imported: AddedFiles | None
    files: int


def full_scan(root: Path, policy: RecordingPolicy, repo: ShadowRepo, stat_cache: StatCache,
              base_tree: Callable[[], str | None], *, max_file_bytes: int,
              progress: ProgressFn | None = None, seed: Seed | None = None) -> FullScan:
    """Scan the whole work tree under ``root`` into a tree written to ``repo``.

    Args:
        root: the project root.
        policy: what is recorded (its caches are dropped first: ignore files may have changed unseen).
        repo: the shadow repository the blobs and trees are written to.
        stat_cache: the stat cache, read before and written after the scan.
        base_tree: called once the work tree is walked: the tree to compare with (the last recorded state).
        max_file_bytes: files larger than this are stored as a size note.
        progress: called with ``(phase, done, total)``.
        seed: for an initial import (no base tree): the files whose ``lstat`` facts are known are not looked at by
            the walk (:meth:`Seed.vouched`), and, called with the scan's files, the blob ids already known for some
            of them (present in ``repo``), which are not read (:mod:`.index_seed`: the project's index).

    Raises:
        StorageError, GitError: objects cannot be written.
    """
    policy.invalidate()
    scan_started_ns = time.time_ns()
    hint = stat_cache.tracked_hint()
    if hint is not None:  # the last scan's fingerprint of the tracked set, while the project's index is unchanged
        policy.tracked.remember(hint)
    # an import: the tracked set's fingerprint after the walk (the caller has git list the set meanwhile:
    # TrackedFiles.prefetch, before the seed that takes it)
    fingerprint = policy.rules_fingerprint() if seed is None else None
    started = gitvouch.start(repo.git, root, stat_cache)  # git lstats while the cache loads and the tree is walked
    try:
        cached = stat_cache.load(fingerprint if fingerprint is not None else policy.rules_fingerprint, rows=False)
        verdict = started[1] if started is not None and started[0] == cached.stat_index else None
        result = scan(root, policy, listings=cached.listings, skip_clean=True, verdict=verdict.dirty if verdict else None,
                      progress=(lambda n: progress("scan", n, None)) if progress else None,
                      known=seed.vouched if seed is not None else None,  # the walk goes on meanwhile
                      withdrawn=seed.withdrawn if seed is not None else None)
    finally:
        if started is not None:
            started[1].close()
    for rel, why in result.skipped[:20]:
        log.info("not recorded: %s (%s)", rel, why)
    base = base_tree()
    # the rows describe the last scanned tree: when it is the base, no need to list it, a file whose row is
    # trusted is unchanged, and so is every file of a clean directory (its rows need not even be read)
    rows_are_base = base is not None and cached.tree == base
    rows = stat_cache.rows_outside(result.clean if rows_are_base else ())
    files = result.files if rows_are_base else _with_clean_files(root, result, rows)
    recorded = RowEntries(rows) if rows_are_base else trees.list_files(repo, base)
    changes: dict[str, TreeEntry | None] = {path: None for path in recorded if path not in files}
    to_hash: list[FileInfo] = []
    seeded = seed(files) if seed is not None and base is None else {}
    reused: list[tuple[FileInfo, str]] = []
    taken_pairs: Collection[tuple[FileInfo, str]] = ()  # at an import whose every file was taken: all of them
    settled: set[str] = set()  # files with a row out of the racy window after this scan
    vouched: set[str] | None = settled  # None: see below
    taken: Mapping[str, str] | None = None  # at an import whose every file was taken from the index: their blob ids
    if base is None and not rows and not recorded:  # an import: no row to trust, nothing to compare with
        found = list(map(seeded.get, files))
        if found and None not in found:  # no loop over the files (500,000 at an import), no change made per file
            known_oids = cast("list[str]", found)
            taken = seeded if len(seeded) == len(found) else dict(zip(files, known_oids))
            taken_pairs = _Pairs(files.values(), known_oids)  # no tuple a file: read only if no index is adopted
            vouched = None  # every file's blob is known: a row is vouched for when its mtime is out of the window
        for rel, info, oid in zip(files, files.values(), found) if taken is None else ():
            if oid is None:
                to_hash.append(info)
            else:
                reused.append((info, oid))
                changes[rel] = TreeEntry(info.mode, oid)
    else:
        for rel, info in files.items():
            oid = CachedScan.trusted(info, rows.get(rel))
            if oid is not None:
                settled.add(rel)
            elif (oid := seeded.get(rel)) is not None:
                reused.append((info, oid))
            if oid is None:
                to_hash.append(info)
            elif not rows_are_base and recorded.get(rel) != (entry := TreeEntry(info.mode, oid)):
                changes[rel] = entry
    if progress:
        progress("hash", 0, len(to_hash))
    with repo.batch():
        contents: dict[str, str] = {}
        entries, oversize = write_blobs(repo, root, to_hash, max_file_bytes, progress=progress, secrets=contents)
        for rel, written in entries.items():
            if written is None:
                changes[rel] = None
            elif recorded.get(rel) != written:
                changes[rel] = written
        by_rel = {i.rel: i for i in to_hash}
        hashed_here = [(by_rel[rel], e.oid) for rel, e in entries.items() if e is not None]
        hashed: Collection[tuple[FileInfo, str]] = [*hashed_here, *reused] if taken is None else taken_pairs
        if progress:
            progress("write", 0, len(changes) if taken is None else len(taken))
        # a directory holding exactly the index's files (each taken from the index: its blob id, and a mode equal
        # to the index's, see index_seed) is the index's tree: git's own, not written again
        known = (trees.KnownTrees(seed.trees(), lambda path, entry: seeded.get(path) == entry.oid,
                                  all_held=not to_hash and len(reused) == len(changes) or taken is not None)
                 if seed is not None and base is None and seeded else None)
        tree = (trees.apply_changes(repo, None, _TakenEntries(files, taken), known=known) if taken is not None
                else trees.apply_changes(repo, base, changes, known=known) if changes or base is None else base)
    if vouched is not None:
        settled.update(info.rel for info, _oid in hashed if info.mtime_ns + RACY_MARGIN_NS <= scan_started_ns)
    removed = [rel for rel in rows if rel not in files or entries.get(rel, True) is None]
    seed_index = seed.written() if seed is not None else None
    # at an import the new rows are those of ``hashed``: grouped by directory in passing (the stat cache then packs
    # each directory's rows in C), and which directories the seed's index holds is told too
    oids = (taken if taken is not None else {info.rel: oid for info, oid in hashed}) if base is None else None
    adopt = (seed_index, scan_started_ns) if seed_index is not None and oids is not None else None
    listings, held, by_dir = _with_stats(result, files, vouched, scan_started_ns - RACY_MARGIN_NS, adopt, oids)
    # the index git vouched on at the import, named with the listings it was made from (else refreshed after)
    adopted = (gitvouch.adopt_at_import(stat_cache, seed_index, listings, held)
               if seed_index is not None and held is not None and cached.stat_index is None else None)
    if fingerprint is None:
        fingerprint = policy.rules_fingerprint()
    stat_cache.save(cached, hashed=hashed, removed=removed, listings=listings, fingerprint=fingerprint, tree=tree,
                    scanned_ns=scan_started_ns, tracked=policy.tracked.known(), by_dir=by_dir, stat_index=adopted)
    if adopted is None:
        gitvouch.refresh(root, stat_cache, cached.stat_index, listings, (
            (lambda: {i.rel: ((i.mode, i.size, i.mtime_ns, i.ctime_ns, i.ino), oid, scan_started_ns)
                      for i, oid in hashed}) if base is None
            else (lambda: stat_cache.rows_outside(()))), written=seed_index, held=held)
    if seed_index is not None:
        seed_index.path.unlink(missing_ok=True)  # not adopted (an adopted one was renamed)
    secretfiles.save_scan(repo.state_dir, policy.denied(), contents)
    # the paths sorted, not (path, entry) pairs: 500,000 of them in 0.2 s instead of 1.4 s; ``taken``'s paths are
    # the files' (see above) in the index's order, which is sorted for UTF-8 names: one pass, not a sort
    imported = (None if base is not None else AddedFiles(sorted(taken), taken) if taken is not None
                else AddedFiles(sorted(p for p, e in changes.items() if e is not None), _OidsOf(changes)))
    return FullScan(tree, base, oversize, imported, result.count())


class _Pairs(Collection[tuple[FileInfo, str]]):
    """``(file, blob id)`` of files and blob ids given in one order, made as they are read."""

    def __init__(self, files: Collection[FileInfo], oids: Collection[str]) -> None:
        self._files, self._oids = files, oids

    def __iter__(self) -> Iterator[tuple[FileInfo, str]]:
        return zip(self._files, self._oids)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, pair: object) -> bool:
        return any(pair == mine for mine in self)


class _TakenEntries(Mapping[str, TreeEntry]):
    """The tree entries of an import whose every file was taken from the index, made from the files' modes and
    blob ids only as they are read (none at all when the index's root tree is the import's: see
    :class:`~code_trajectory.git.trees.KnownTrees`)."""

    def __init__(self, files: Mapping[str, FileInfo], oids: Mapping[str, str]) -> None:
        self._files, self._oids = files, oids

    def __getitem__(self, path: str) -> TreeEntry:
        return TreeEntry(self._files[path].mode, self._oids[path])

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


class _OidsOf(Mapping[str, str]):
    """The blob ids of a scan's changes, read from them (no copy of 500,000 entries)."""

    def __init__(self, changes: Mapping[str, TreeEntry | None]) -> None:
        self._changes = changes

    def __getitem__(self, path: str) -> str:
        entry = self._changes[path]
        if entry is None:
            raise KeyError(path)
        return entry.oid

    def __iter__(self) -> Iterator[str]:
        return (path for path, entry in self._changes.items() if entry is not None)

    def __len__(self) -> int:
        return sum(1 for entry in self._changes.values() if entry is not None)


def _with_clean_files(root: Path, result: ScanResult, rows: Mapping[str, Row]) -> dict[str, FileInfo]:
    """The scan's files, those of its clean directories included: from their rows (the packed ``lstat`` facts
    of the directory match them), or from a ``lstat`` where a row is missing."""
    if not result.clean:
        return result.files
    files = dict(result.files)
    for rel_dir, listing in result.clean.items():
        for name in listing.files:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            row = rows.get(rel)
            if row is not None:
                files[rel] = FileInfo(rel, *row[0])
                continue
            try:
                info = FileInfo.from_stat(rel, os.lstat(f"{root}/{rel}"))
            except OSError:
                continue
            if info is not None:
                files[rel] = info
    return files


def _with_stats(result: ScanResult, files: Mapping[str, FileInfo], vouched: set[str] | None, settled_ns: int,
                adopt: tuple[gitvouch.Written, int] | None = None,
                oids: Mapping[str, str] | None = None,
                ) -> tuple[dict[str, DirListing], list[str] | None, dict[str, ByDir] | None]:
    """The scan's listings, each directory read (or re-listed) this time with the packed ``lstat`` facts of its
    files (:func:`~.worktree.pack_stats`) when all of them are ``vouched`` for, else with none. ``vouched`` None:
    every file of ``files`` is vouched for whose mtime (ns) is ``settled_ns`` or earlier (an import whose every
    file's blob is known), told in C a directory at a time.

    With ``adopt`` (an initial import: the index the seed wrote, the scan's start) and ``oids``, also the
    directories given facts here whose files that index holds as their rows give them (:func:`.gitvouch.holds_all`),
    else None. With ``oids`` (an initial import: the blob id of each file hashed or taken from the index, by path),
    also those files grouped by directory (:meth:`.StatCache.save`'s ``by_dir``) when every one of them is in a
    listing read this time, else None."""
    listings = dict(result.listings)
    held: list[str] | None = [] if adopt is not None and oids is not None else None
    by_dir: dict[str, ByDir] | None = {} if oids is not None and not result.clean else None
    grouped = 0
    for rel_dir, listing in result.listings.items():
        if rel_dir in result.clean:
            continue
        known = result.known.get(rel_dir)  # the walk's files for these names, in order: their paths, the dict's keys
        if known is not None and len(known) != listing.file_count:
            known = None  # not all of them: looked up by path
        if known is not None:  # the names kept packed, as the rows keep them
            names: Sequence[str] | bytes = listing.packed_files
            rels = list(map(REL_OF, known))
        else:
            names = listing.files
            rels = list(map(f"{rel_dir}/".__add__, names)) if rel_dir else list(names)
        stats = infos = blob_ids = None
        if vouched is None:
            infos = known if known is not None else list(map(files.__getitem__, rels))
            if infos and max(map(MTIME_OF, infos)) > settled_ns:
                infos = None
        elif vouched.issuperset(rels):  # each a file of the scan, then
            infos = list(map(files.__getitem__, rels))
        if infos is not None:
            stats = pack_stats(infos)
            if oids is not None:
                blob_ids = list(map(oids.get, rels))
            # at an import whose every file is the index's, a directory whose files are all the walk's known
            # ones has the seed's facts and blob ids: those its index was written from
            if adopt is not None and held is not None and stats is not None and blob_ids is not None \
                    and gitvouch.holds_all(adopt[0], infos, blob_ids, adopt[1],
                                           as_written=vouched is None and infos is known):
                held.append(rel_dir)
        if stats != listing.stats:
            listings[rel_dir] = listing.with_stats(stats)
        if by_dir is not None and oids is not None and names:
            if blob_ids is None:
                blob_ids = list(map(oids.get, rels))
            if None in blob_ids or infos is None:  # a file not hashed (too large), or not vouched for
                names = listing.files
                kept = [(name, rel, oid) for name, rel, oid in zip(names, rels, blob_ids) if oid is not None]
                names, rels, blob_ids = [k[0] for k in kept], [k[1] for k in kept], [k[2] for k in kept]
                infos, stats = list(map(files.__getitem__, rels)), None
            by_dir[rel_dir] = (names, infos, blob_ids, stats)  # type: ignore[assignment]  # no None left
            grouped += len(rels)
    if by_dir is not None and oids is not None and grouped != len(oids):
        by_dir = None  # a file hashed outside the listings: rows are then written file by file
    return listings, held, by_dir
