"""The journal's sections and entries on its git repository (:mod:`.repository`): a section is a markdown file (its
overview), an entry the message of a commit that touched it (see the package docstring).
"""

from __future__ import annotations

import time

from code_trajectory.core.errors import InvalidArgumentError, JournalConflictError, JournalError
from code_trajectory.core.secrets import redact
from code_trajectory.git.gitcmd import split_z
from code_trajectory.journal import LIST_LENGTH_RANGE, LIST_START_RANGE
from code_trajectory.journal.model import UNCHECKED, Entry, Overview, WriteResult, _hidden, make_entry
from code_trajectory.journal.repository import LOCK_TIMEOUT_SECONDS, JournalRepository
from code_trajectory.journal.text import (
    ID_SHA_LEN,
    MAX_OVERVIEW_CHARS,
    SUFFIX,
    build_message,
    clean_text,
    conflict_message,
    normalize_path,
    render_section,
    strip_entry_count,
)

#: Where sync keeps the local side of an overview conflict until it is resolved.
CONFLICT_REF_PREFIX = "refs/journal-conflicts/"


#: Entries of a section compared with a new one by :meth:`JournalStore.same_entry`.
SAME_ENTRY_LOOKBACK = 200


class JournalStore(JournalRepository):
    """One journal: its sections and entries, on its repository (:class:`~.repository.JournalRepository`).

    Args:
        settings: resolved journal settings (the repository is ``settings.journal_data_path``).

    The repository is created on first use (:meth:`ensure`). Methods are safe to
    call from several threads and several processes.
    """

    # -- sections

    def section_version(self, path: str, head: str | None = None) -> str | None:
        """The sha of the last commit that changed the section's file at ``head`` (default HEAD), or None."""
        head = self.head() if head is None else head
        if head is None:
            return None
        out = self.git.text(["rev-list", "-1", head, "--", path + SUFFIX])
        return out or None

    def count_entries(self, path: str, head: str | None) -> int:
        """How many non-merge commits touched the section's file up to ``head``."""
        if head is None:
            return 0
        return int(self.git.text(["rev-list", "--count", "--no-merges", head, "--", path + SUFFIX]) or 0)

    def sections(self, head: str | None = None) -> list[str]:
        """All section paths present at ``head`` (default HEAD), sorted."""
        head = self.head() if head is None else head
        if head is None:
            return []
        out = self.git.out(["ls-tree", "-r", "-z", "--name-only", head])
        names = [n.decode("utf-8", "replace") for n in split_z(out)]
        return sorted(n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX) and not _hidden(n))

    # -- reading

    def read_overview(self, path: str) -> Overview:
        """The current overview of section ``path`` (a missing section reads as empty, ``exists=False``)."""
        path = normalize_path(path)
        head = self.head()
        raw = self.blob_text(head, path + SUFFIX)
        version = self.section_version(path, head) if head else None
        count = self.count_entries(path, head) if version else 0
        last = None
        if version:
            last = int(self.git.text(["show", "-s", "--format=%at", version, "--"]) or 0)
        return Overview(path=path, exists=raw is not None, content=strip_entry_count(raw or ""),
                        version=version, entry_count=count, last_updated=last,
                        pending_conflict=self.pending_conflict(path))

    def read_entry(self, path: str, sha: str) -> Entry:
        """The entry ``sha`` (a prefix) of section ``path``.

        Raises:
            JournalError: unknown sha, not reachable from HEAD, or not touching this section.
        """
        path = normalize_path(path)
        head = self.head()
        if head is None:
            raise JournalError("the journal is empty; there are no entries yet")
        full = self.resolve_commit(sha)
        if not self._is_ancestor(full, head):
            raise JournalError(f"commit {sha} is not part of the journal's history")
        touched = self.git.out(["diff-tree", "--no-commit-id", "--root", "-r", "-z", "--name-only", "-m",
                                "--first-parent", full, "--", path + SUFFIX])
        if not split_z(touched):
            raise JournalError(f"commit {sha} is not an entry of section {path!r}; "
                               f"journal_list_entries('{path}') lists its entries")
        return self._entry(path, full)

    def _entry(self, path: str, sha: str) -> Entry:
        out = self.git.out(["show", "-s", "--no-notes", "--format=%at%x1f%an%x1f%B", sha, "--"])
        ts, _, rest = out.decode("utf-8", "replace").partition("\x1f")
        author, _, message = rest.partition("\x1f")
        return make_entry(path, sha, int(ts or 0), message, author)

    def list_entries(self, path: str, start: int = 0, length: int = 10) -> tuple[int, list[Entry]]:
        """``(total, entries)`` of section ``path``, newest first, ``length`` of them from index ``start``.

        Raises:
            InvalidArgumentError: negative start or non-positive length.
            JournalError: the section has no history.
        """
        path = normalize_path(path)
        if not LIST_START_RANGE[0] <= start <= LIST_START_RANGE[1]:
            raise InvalidArgumentError(f"start must be between {LIST_START_RANGE[0]} and {LIST_START_RANGE[1]} "
                                       f"(0 is the most recent entry), got {start}")
        if not LIST_LENGTH_RANGE[0] <= length <= LIST_LENGTH_RANGE[1]:
            raise InvalidArgumentError(f"length must be between {LIST_LENGTH_RANGE[0]} and {LIST_LENGTH_RANGE[1]}, "
                                       f"got {length}")
        head = self.head()
        total = self.count_entries(path, head)
        if total == 0 or head is None:  # an empty journal (no head) has no entries
            raise JournalError(f"no section {path!r} in the journal; journal_toc lists the sections "
                               "(CLI `code-trajectory journal toc`)")
        return total, [make_entry(path, sha, ts, message, author)
                       for sha, ts, author, message in self._log(path, head, start, length)]

    def _log(self, path: str, head: str, skip: int, count: int) -> list[tuple[str, int, str, str]]:
        """``(sha, time, author, message)`` of the entries of section ``path`` from ``head``, newest first, ``count``
        of them after the first ``skip``."""
        # NUL between commits (-z): a message, pulled by a sync, may hold any other control character
        out = self.git.out(["log", "-z", "--no-merges", "--no-notes", f"--skip={skip}", f"-n{count}",
                            "--format=%H%x1f%at%x1f%an%x1f%B", head, "--", path + SUFFIX])
        records = []
        for record in out.decode("utf-8", "replace").split("\0"):
            if not record.strip():
                continue
            sha, ts, author, message = (record.split("\x1f", 3) + ["", "", ""])[:4]
            records.append((sha.strip(), int(ts or 0), author, message))
        return records

    def same_entry(self, path: str, head: str | None, message: str, version: str | None) -> WriteResult | None:
        """The entry of section ``path`` (among its newest :data:`SAME_ENTRY_LOOKBACK`) whose message is ``message``
        (leading and trailing blank space aside), as a :class:`WriteResult` with ``duplicate`` set and the section's
        ``version`` (unchanged); None when none is: an agent that writes back what it read (``journal_read``, then
        ``journal_write``) adds nothing."""
        if head is None:
            return None
        wanted = message.strip()
        for sha, ts, _author, text in self._log(path, head, 0, SAME_ENTRY_LOOKBACK):
            if text.strip() == wanted:
                return WriteResult(path=path, sha=sha, version=version or head,
                                   entry_count=self.count_entries(path, head), overview_updated=False, created=False,
                                   timestamp=ts, duplicate=True)
        return None

    # -- conflicts left by sync

    def conflict_ref(self, path: str) -> str:
        return CONFLICT_REF_PREFIX + path + SUFFIX

    def pending_conflict(self, path: str) -> dict | None:
        """The local overview that a sync could not merge into ``path``, or None."""
        ref = self.conflict_ref(path)
        proc = self.git.run(["rev-parse", "-q", "--verify", ref], check=False)
        if proc.returncode != 0:
            return None
        sha = proc.stdout.decode().strip()
        text = self.blob_text(sha, path + SUFFIX)
        return {"local_version": strip_entry_count(text or ""), "local_commit": sha[:ID_SHA_LEN]}

    def set_conflict(self, path: str, commit: str) -> None:
        self.git.run(["update-ref", self.conflict_ref(path), commit])

    def clear_conflict(self, path: str) -> None:
        self.git.run(["update-ref", "-d", self.conflict_ref(path)], check=False)

    # -- writing

    def write(self, path: str, entry: str, overview: str | None = None, summary: str | None = None,
              expected_version: object = UNCHECKED, timestamp: int | None = None) -> WriteResult:
        """Commit a journal entry on section ``path``, optionally replacing its overview.

        Args:
            path: the section (created when missing); one holding a secret is refused (it is a file name).
            entry: the entry text (the commit message); must not be empty.
            overview: the new overview, or None (or blank) to keep the current one. Secrets are redacted from it
                and from the entry and summary (:func:`~.text.build_message`) before they are committed.
            summary: optional one-line summary, stored as a ``Journal-Summary:`` trailer.
            expected_version: the section version the caller read (``None`` = "the section
                did not exist"); the write fails with :class:`JournalConflictError` when the
                section moved since. :data:`UNCHECKED` skips the check.
            timestamp: the entry's time (epoch seconds); default now. For imports and tests.

        Raises:
            InvalidArgumentError: bad path (one holding a secret too), empty or oversized entry or overview.
            JournalConflictError: the section moved since ``expected_version``.
            JournalError: the lock could not be had, or git failed.
        """
        path = normalize_path(path)
        if redact(path) != path:  # entries are redacted; a path is a file name sync shares, and is refused
            raise InvalidArgumentError(f"journal path {redact(path)!r} holds a secret (`journal sync` would share it "
                                       "as a file name): give the section another name")
        message = build_message(entry, summary)
        if overview is not None and not isinstance(overview, str):
            raise InvalidArgumentError("overview must be a string")
        if overview is not None and not overview.strip():
            overview = None
        if overview is not None:
            overview = redact(strip_entry_count(clean_text(overview)))  # shared by sync, as the entries are
            if len(overview) > MAX_OVERVIEW_CHARS:
                raise InvalidArgumentError(f"the overview is longer than {MAX_OVERVIEW_CHARS} characters")
            if "\x00" in overview:
                raise InvalidArgumentError("the overview contains a NUL character")
        from filelock import Timeout

        try:
            with self.lock():
                for _attempt in range(20):
                    head = self.head()
                    version = self.section_version(path, head)
                    if expected_version is not UNCHECKED and version != expected_version:
                        raise JournalConflictError(conflict_message(path, expected_version, version))
                    file = path + SUFFIX
                    old_text = self.blob_text(head, file)
                    if overview is None or overview == strip_entry_count(old_text or ""):
                        same = self.same_entry(path, head, message, version)
                        if same is not None:
                            return same
                    new_overview = overview if overview is not None else strip_entry_count(old_text or "")
                    count = self.count_entries(path, head) + 1
                    content = render_section(new_overview, count)
                    ts = int(time.time()) if timestamp is None else int(timestamp)
                    env = {**self.author_env(), "GIT_AUTHOR_DATE": f"@{ts} +0000",
                           "GIT_COMMITTER_DATE": f"@{max(ts, int(time.time()))} +0000"}
                    commit = self.commit_files(head, {file: content}, message, env=env)
                    if not self.cas_head(head, commit, f"journal: {path}"):
                        continue  # someone moved HEAD without our lock: redo on the new head
                    self.refresh_worktree(head, commit)
                    if overview is not None:
                        self.clear_conflict(path)
                    self.maybe_gc()
                    return WriteResult(path=path, sha=commit, version=commit, entry_count=count,
                                       overview_updated=overview is not None and overview != strip_entry_count(
                                           old_text or ""), created=old_text is None, timestamp=ts)
                raise JournalError("the journal's HEAD kept moving during the write; try again")
        except Timeout as exc:
            raise JournalError(f"another process held the journal lock for more than {LOCK_TIMEOUT_SECONDS:.0f} s; "
                               "try again") from exc
