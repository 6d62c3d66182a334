"""git vouches for the files of a full scan: the stat cache's facts also kept as a git index, checked by git.

A restart of a large project spends its time on one ``lstat`` per file, to tell which files changed while nothing
recorded. In Python that loop costs more than all of ``git status``, whose loop runs in C on threads (issue 29: a
restart recorded <= 1 s beyond ``git status`` at 500,000 files). So after a full scan the files' ``lstat`` facts are
also written as a private git index (:mod:`code_trajectory.git.stat_index`, ``.trajectory/state/statindex-*.index``),
and the next full scan starts ``git diff-files`` on it before it walks the tree: a directory whose names did not
change (its listing is trusted, :class:`~.worktree.DirListing`) is then clean without an ``lstat`` of its files,
unless git names one of them (:func:`~.worktree.scan`).

Why a file git does not name is unchanged: its directory's listing packed the ``lstat`` facts of its files when
the stat cache held a trusted row for each (:attr:`~.worktree.DirListing.stats`), and the index was written from
those very rows, so the listing notes the digest of what the index holds for it
(:attr:`~.worktree.DirListing.indexed`, compared with :func:`~.worktree.listing_digest`); git saw the file with the
entry's facts. A row is written to the index only when its file's mtime and ctime are at least
:data:`~.worktree.RACY_MARGIN_NS` older than the scan that took them: git may compare whole seconds only, and any
change after the scan sets a ctime in a later second. Anything else (no index, a listing whose digest is not the
index's, git failing or its verdict not ours) falls back to this process's own ``lstat`` of the files.

The index is written at the initial import, and again when more than :data:`STALE_SHARE` of the files it could cover
are not in it (changes since: those directories are looked at in Python meanwhile, correct but slower). The rows
are the cache's: the index holds nothing the stat cache does not.
"""

from __future__ import annotations

import logging
import os
from array import array
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.git.gitcmd import Git
from code_trajectory.git.stat_index import IndexEntry, StatVerdict, write_stat_index
from code_trajectory.recording.listing import CTIME_OF, MTIME_OF
from code_trajectory.recording.stat_sentinel import sentinel_at
from code_trajectory.recording.statcache import Row, StatCache
from code_trajectory.recording.worktree import RACY_MARGIN_NS, DirListing, FileInfo, listing_digest

__all__ = ["MIN_FILES", "STALE_SHARE", "Written", "adopt_at_import", "holds_all", "refresh", "sentinel", "start"]

log = logging.getLogger(__name__)

#: Below this many files a scan keeps to its own ``lstat`` loop: a git process costs about as much as it saves.
MIN_FILES = 2000
#: The stat index is written again when more than this share of the files it could cover is missing from it.
STALE_SHARE = 0.1


@dataclass(frozen=True)
class Written:
    """A stat index written already by the initial import, for :func:`refresh` to adopt instead of writing one.

    Attributes:
        path: the file (written by :func:`~code_trajectory.git.stat_index.write_stat_index`, with :func:`sentinel`
            of ``name`` as its sentinel); renamed when adopted.
        name: the random name its sentinel was made from.
        checksum: what :func:`~code_trajectory.git.stat_index.write_stat_index` returned for it.
        holds: ``holds(entry)``: True when the file holds exactly ``entry`` for ``entry``'s path.
        holds_files: ``holds_files(files, blob_ids)``, if given: True when ``holds`` is True for each file with the
            blob id at the same place (one call a directory, see :func:`holds_all`).
    """

    path: Path
    name: str
    checksum: str
    holds: Callable[[IndexEntry], bool]
    holds_files: Callable[[Sequence[FileInfo], Sequence[str | None]], bool] | None = None


def sentinel(root: Path, stat_cache: StatCache, name: str) -> str | None:
    """The never-created path (relative to ``root``) that the index named ``name`` holds as its sentinel (None:
    the stat cache is not under ``root``)."""
    return sentinel_at(root, stat_cache.path, name)


def start(git: Git, root: Path, stat_cache: StatCache) -> tuple[str, StatVerdict] | None:
    """Start git's verdict on the stat index now named, if any: ``(its token, the running verdict)``, else None.

    The caller uses the verdict only when the listings it loads name the same token (:attr:`CachedScan.stat_index`),
    and closes it otherwise.
    """
    token = stat_cache.stat_index_token()
    if token is None:
        return None
    name, _, checksum = token.partition("-")
    index, sentinel = stat_cache.index_path(token), sentinel_at(root, stat_cache.path, name)
    if sentinel is None or not index.is_file():
        return None
    return token, StatVerdict(git, index, sentinel=sentinel, checksum=checksum)


def refresh(root: Path, stat_cache: StatCache, token: str | None, listings: Mapping[str, DirListing],
            rows: Callable[[], Mapping[str, Row]], *, written: Written | None = None,
            held: Collection[str] | None = None) -> bool:
    """Write the stat index again when it covers too little of ``listings`` (see the module docstring).

    Args:
        root: the project root.
        stat_cache: the stat cache the scan just saved.
        token: the stat index the scan's listings were loaded with (None: there was none).
        listings: the listings just saved (paths relative to the root).
        rows: called only when the index is written: the stat cache's rows for the files of ``listings``.
        written: an index the initial import wrote (its ``git diff-files`` on the project's entries): adopted when
            it holds the entries of all but :data:`STALE_SHARE` of the files this index would cover (the others are
            looked at in Python at the next scan, until an index is written again), else removed.
        held: with ``written``, at an initial import: the directories of ``listings`` (relative to the root) whose
            packed facts were just taken from the files :func:`holds_all` found ``written`` holding, as their rows
            give them; ``written`` is then adopted for those without building the entries again from ``rows``.

    Returns:
        True when a new index was written and named. Errors are logged, never raised (the next scan does more).
    """
    covered, stale = _coverage(listings)
    if covered < MIN_FILES or not stale or (token is not None and stale <= covered * STALE_SHARE):
        return False
    if written is not None and held is not None:
        kept = {rel_dir: listing_digest(listings[rel_dir]) for rel_dir in held if listings[rel_dir].stats is not None}
        if _adopt(stat_cache, written, listings, kept, covered):  # type: ignore[arg-type]  # stats: not None
            return True
        written = None  # removed, or not named: an index is written from the rows
    found = rows()
    entries: list[IndexEntry] = []
    digests: dict[str, bytes] = {}
    for rel_dir, listing in listings.items():
        listed = _entries(rel_dir, listing, found)
        if listed is not None:
            entries += listed
            digests[rel_dir] = listing_digest(listing)  # type: ignore[assignment]  # stats: not None here
    if written is not None and _adopt(stat_cache, written, listings, _kept(written, listings, digests, entries), covered):
        return True
    new = os.urandom(16).hex()
    sentinel = sentinel_at(root, stat_cache.path, new)
    if sentinel is None:
        return False
    staged = stat_cache.path.with_name(f"statindex-{new}.index.new")
    try:
        count, checksum = write_stat_index(staged, entries, sentinel=sentinel)
        os.replace(staged, stat_cache.index_path(f"{new}-{checksum}"))
    except OSError as exc:
        log.warning("cannot write the stat index (%s); restarts will lstat every file", exc)
        staged.unlink(missing_ok=True)
        return False
    if not stat_cache.save_index(f"{new}-{checksum}", digests):
        stat_cache.index_path(f"{new}-{checksum}").unlink(missing_ok=True)
        return False
    log.info("stat index written: %d files in %d directories (%d were not covered)", count, len(digests), stale)
    return True


def holds_all(written: Written, infos: Sequence[FileInfo], oids: Sequence[str | None], scanned_ns: int, *,
              as_written: bool = False) -> bool:
    """True when ``written`` holds, for each of ``infos``, the entry :func:`_entries` makes of the file's stat cache
    row: the file's ``lstat`` facts, its blob id at the same place of ``oids`` (None: it has none, and the answer is
    False), none of its mtime and ctime within :data:`~.worktree.RACY_MARGIN_NS` of ``scanned_ns`` (the scan writing
    the rows). In C but for one call a directory when ``written`` tells :attr:`Written.holds_files`. With
    ``as_written`` the caller knows ``infos`` and ``oids`` are the very facts and blob ids ``written`` was written
    from (the index seed's own, an import's common case): only the racy check is made."""
    if not infos:
        return True
    settled = scanned_ns - RACY_MARGIN_NS
    if None in oids or max(map(MTIME_OF, infos)) > settled or max(map(CTIME_OF, infos)) > settled:
        return False
    if as_written:
        return True
    if written.holds_files is not None:
        return written.holds_files(infos, oids)
    holds = written.holds
    return all(holds((rel, mode, oid, size, mtime_ns, ctime_ns, ino))  # type: ignore[arg-type]  # no None
               for (rel, mode, size, mtime_ns, ctime_ns, ino), oid in zip(infos, oids))


def _kept(written: Written, listings: Mapping[str, DirListing], digests: dict[str, bytes],
          entries: list[IndexEntry]) -> dict[str, bytes]:
    """The ``digests`` of the listings all of whose files' ``entries`` (as :func:`_entries` made them) ``written``
    holds."""
    holds = written.holds
    held = {entry[0] for entry in entries if holds(entry)}
    return {rel_dir: digest for rel_dir, digest in digests.items()
            if all((f"{rel_dir}/{name}" if rel_dir else name) in held for name in listings[rel_dir].files)}


def _coverage(listings: Mapping[str, DirListing]) -> tuple[int, int]:
    """``(files the listings give facts of, those of them in no listing the stat index was written from)``."""
    covered = stale = 0
    for listing in listings.values():
        if listing.stats is not None:
            covered += listing.file_count
            if listing.indexed is None or listing.indexed != listing_digest(listing):
                stale += listing.file_count
    return covered, stale


def adopt_at_import(stat_cache: StatCache, written: Written, listings: Mapping[str, DirListing],
                    held: Collection[str]) -> tuple[str, dict[str, bytes]] | None:
    """At an initial import, before its listings are saved: the stat index :func:`refresh` would adopt (``written``,
    for the directories ``held`` of ``listings``), its file renamed into place already, as ``(token, digests)`` for
    :meth:`~.statcache.StatCache.save` to name in the same transaction (no second write of 25,000 listings at
    500,000 files: 0.2-0.28 s). None when :func:`refresh` would not adopt it (it is then called as before).

    Raises nothing: a file that cannot be renamed is logged, and None returned."""
    covered, stale = _coverage(listings)
    if covered < MIN_FILES or not stale:
        return None
    kept = {rel_dir: listing_digest(listings[rel_dir]) for rel_dir in held if listings[rel_dir].stats is not None}
    token = _place(stat_cache, written, listings, kept, covered)  # type: ignore[arg-type]  # stats: not None
    if token is None:
        return None
    _log_adopted(listings, kept)
    return token, kept  # type: ignore[return-value]  # stats: not None, so neither is a digest


def _adopt(stat_cache: StatCache, written: Written, listings: Mapping[str, DirListing], kept: dict[str, bytes],
           covered: int) -> bool:
    """Name ``written`` the stat index, noting the digests of the listings whose entries it holds (``kept``), when
    those cover all but :data:`STALE_SHARE` of ``covered`` files; True when done. Otherwise its file is removed."""
    token = _place(stat_cache, written, listings, kept, covered)
    if token is None:
        return False
    if not stat_cache.save_index(token, kept):
        stat_cache.index_path(token).unlink(missing_ok=True)
        return False
    _log_adopted(listings, kept)
    return True


def _log_adopted(listings: Mapping[str, DirListing], kept: Collection[str]) -> None:
    log.info("stat index adopted from the import's git verdict: %d files in %d directories",
             sum(listings[rel_dir].file_count for rel_dir in kept), len(kept))


def _place(stat_cache: StatCache, written: Written, listings: Mapping[str, DirListing], kept: Mapping[str, bytes],
           covered: int) -> str | None:
    """Rename ``written`` to the stat index file of its token, when the listings ``kept`` (whose entries it holds)
    cover all but :data:`STALE_SHARE` of ``covered`` files; the token, or None (its file removed when it covers
    too little; a rename that fails is logged)."""
    count = sum(listings[rel_dir].file_count for rel_dir in kept)
    token = f"{written.name}-{written.checksum}"
    try:
        if count < covered * (1 - STALE_SHARE):
            written.path.unlink(missing_ok=True)
            return None
        os.replace(written.path, stat_cache.index_path(token))
    except OSError as exc:
        log.info("cannot adopt the import's stat index (%s); writing one", exc)
        return None
    return token


def _entries(rel_dir: str, listing: DirListing, rows: Mapping[str, Row]) -> list[IndexEntry] | None:
    """The index entries of ``listing``'s files from their rows, or None when one has no row, a row is too recent
    (mtime or ctime within the racy margin of its scan), or the rows do not pack to the listing's facts."""
    if listing.stats is None:
        return None
    entries: list[IndexEntry] = []
    packed = array("q")
    for name in listing.files:
        rel = f"{rel_dir}/{name}" if rel_dir else name
        row = rows.get(rel)
        if row is None:
            return None
        (mode, size, mtime_ns, ctime_ns, ino), oid, scanned_ns = row
        if mtime_ns + RACY_MARGIN_NS > scanned_ns or ctime_ns + RACY_MARGIN_NS > scanned_ns:
            return None
        entries.append((rel, mode, oid, size, mtime_ns, ctime_ns, ino))
        try:
            packed.extend((size, mtime_ns, ctime_ns, ino))
        except OverflowError:
            return None
    return entries if packed.tobytes() == listing.stats else None
