"""The journal's records: commits, entries, overviews, write results."""

from __future__ import annotations

from dataclasses import dataclass, field

from code_trajectory.journal.text import SUFFIX, derive_summary, entry_id, split_message, work_context_of


@dataclass(frozen=True)
class Commit:
    """One non-merge commit of the journal history (newest first in :meth:`JournalStore.history`)."""

    sha: str
    timestamp: int
    files: tuple[str, ...]

    @property
    def sections(self) -> tuple[str, ...]:
        """The sections (paths without ``.md``) whose file this commit touched."""
        return tuple(f[: -len(SUFFIX)] for f in self.files if f.endswith(SUFFIX) and not _hidden(f))


@dataclass(frozen=True)
class Entry:
    """A journal entry: the message of one commit on one section."""

    path: str
    sha: str
    timestamp: int
    text: str
    summary: str
    work_context: str | None
    author: str = ""

    @property
    def id(self) -> str:
        return entry_id(self.path, self.sha)


@dataclass(frozen=True)
class Overview:
    """A section's current overview."""

    path: str
    exists: bool
    content: str
    version: str | None
    entry_count: int
    last_updated: int | None
    pending_conflict: dict | None = None


@dataclass(frozen=True)
class WriteResult:
    """What :meth:`JournalStore.write` committed."""

    path: str
    sha: str
    version: str
    entry_count: int
    overview_updated: bool
    created: bool
    timestamp: int
    #: True when the section already held an entry of the same text (``sha`` is that entry): nothing was written.
    duplicate: bool = False

    @property
    def id(self) -> str:
        return entry_id(self.path, self.sha)


@dataclass
class _HistoryCache:
    head: str | None = None
    commits: list[Commit] = field(default_factory=list)


#: Pass as ``expected_version`` to skip the write protection (CLI, tests, sync).
UNCHECKED = object()


def _hidden(file: str) -> bool:
    return any(part.startswith(".") for part in file.split("/"))


def make_entry(path: str, sha: str, ts: int, message: str, author: str = "") -> Entry:
    """Build an :class:`Entry` from a raw commit message."""
    text, summary = split_message(message)
    return Entry(path=path, sha=sha, timestamp=ts, text=text, summary=summary or derive_summary(text),
                 work_context=work_context_of(text), author=author)

