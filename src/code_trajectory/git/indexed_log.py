"""A file's versions read through its branch's file index (:mod:`code_trajectory.git.file_index`), checked as read.

:func:`open_log` gives a :data:`~code_trajectory.git.file_versions.Lister` for a branch's tip: the commits newer than the
index come from ``git log <tip> ^<indexed tip> -- <path>`` (a few hundred at most: maintenance brings the index
up every 200 snapshots), the older ones from the index's positions, read with one
``git log --no-walk --stdin -- <path>`` per page (:func:`code_trajectory.git.log.read_commits`). Every version
read through the index is checked against what git says of it: the commit changed the path, its one parent is the
commit before it in the index, and its older blob is the newer blob of the next older version (nothing between
them changed the file). A check that fails, a git error, or a path git would read as a pattern (``*``, ``?``,
``[``, ``\\``, a leading ``:``) make the lister answer None, and the caller asks ``git log`` itself.
"""

from __future__ import annotations

import logging
import re
import struct
from dataclasses import dataclass

from code_trajectory.core.errors import GitError
from code_trajectory.git import file_index
from code_trajectory.git.log import CommitRecord, read_commits, read_log
from code_trajectory.git.shadow import ShadowRepo

log = logging.getLogger(__name__)

#: Commits newer than the index past which it is not used (maintenance is overdue: ``git log`` walks anyway).
NEWER_AT_MOST = 5000
_PATTERN = re.compile(r"[*?\[\\]|^:")


@dataclass
class IndexedLog:
    """A :data:`~code_trajectory.git.file_versions.Lister` over one index and the commits newer than it (newest first)."""

    repo: ShadowRepo
    index: file_index.FileIndex
    newer: list[str]

    def __call__(self, start: str, path: str, limit: int | None) -> list[CommitRecord] | None:
        if _PATTERN.search(path) or (limit is not None and limit < 1):
            return None
        try:
            records = self._read(start, path, limit)
        except (GitError, ValueError, struct.error) as exc:
            log.warning("file index not used for %r: %s", path, exc)
            return None
        if records is None:
            log.warning("file index of %s disagrees with git for %r: read with git log", self.index.tip[:12], path)
        return records

    def _read(self, start: str, path: str, limit: int | None) -> list[CommitRecord] | None:
        index = self.index
        records: list[CommitRecord] = []
        up_to = index.position(start) if start not in self.newer else index.count - 1
        if up_to is None:
            return None
        if start in self.newer:
            records = read_log(self.repo, [start, f"^{index.tip}"], paths=(path,), limit=limit, line_counts=False)
        candidates = index.candidates(path, up_to)
        wide, done = set(index.wide), 0
        while done < len(candidates) and (limit is None or len(records) < limit):
            batch = candidates[done:] if limit is None else candidates[done:done + limit - len(records)]
            done += len(batch)
            found = {r.oid: r for r in read_commits(self.repo, [index.oid(p) for p in batch], path)}
            for position in batch:
                record = found.pop(index.oid(position), None)
                if record is None and position in wide:
                    continue  # an import that did not touch this path
                if (record is None or record.parents != ([index.oid(position - 1)] if position else [])
                        or not any(c.path == path for c in record.changes)):
                    return None
                records.append(record)
            if found:
                return None
        return records if _chained(records, path) else None


def _chained(records: list[CommitRecord], path: str) -> bool:
    """True when each version's older blob is the next older version's newer blob (newest first)."""
    sides = [next(((c.old_oid, c.new_oid) for c in r.changes if c.path == path), None) for r in records]
    return all(newer is None or older is None or newer[0] == older[1] for newer, older in zip(sides, sides[1:]))


def open_log(repo: ShadowRepo, ref: str, tip: str) -> IndexedLog | None:
    """A lister of the versions of files on ``ref`` up to ``tip`` (its commit id) through ``ref``'s file index, or
    None when there is none to use: none written yet, one that does not parse, a history that is not linear, old
    history dropped since, a tip neither in the index nor descending from its tip by one chain of commits, or
    more than :data:`NEWER_AT_MOST` commits newer than it."""
    index = file_index.load(repo, ref)
    if index is None or not index.linear or not index.count or index.shallow != file_index.shallow_digest(repo):
        return None
    newer: list[str] = []
    if index.position(tip) is None:  # newer than the index (an older tip is read from it directly)
        try:
            out = repo.git.text(["rev-list", "--parents", f"-n{NEWER_AT_MOST}", "--end-of-options", tip,
                                 f"^{index.tip}", "--"])
        except GitError:
            return None
        rows = [line.split() for line in out.splitlines()]
        if not rows or len(rows) >= NEWER_AT_MOST or rows[0][0] != tip:
            return None
        for row, older in zip(rows, [r[0] for r in rows[1:]] + [index.tip]):
            if len(row) != 2 or row[1] != older:
                return None
        newer = [row[0] for row in rows]
    return IndexedLog(repo, index, newer)
