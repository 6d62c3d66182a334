"""The git-backed journal: sections are markdown files, entries are commit messages.

Layout (as in ``journal-design.md``)::

    <journal>/
    ├── project-alpha.md              overview of section "project-alpha"
    ├── project-beta/api-design.md    overview of section "project-beta/api-design"
    └── .git/                         history: one commit per journal entry

Identifiers: ``project-alpha`` is the section (its current overview, the file
without the ``<!-- entry count: N -->`` comment); ``project-alpha#<sha>`` is one
journal entry, the message of a commit touching ``project-alpha.md``. Ids carry
the first 12 hex digits of the sha; any unique prefix of 4 or more digits is
accepted back.

Every write is one commit made with plumbing (``hash-object``, a temporary
index, ``write-tree``, ``commit-tree``) and published with a compare-and-swap
``update-ref HEAD <new> <old>``, all under an inter-process file lock in the
git directory. So two servers (or a server and the CLI) writing to one journal
serialise, and even a writer that ignores the lock (plain git, a sync) cannot
make us lose an entry: a lost CAS race is retried on the new head. The entry
count in the file is recomputed from history on every write ("resolve by
counting actual commits"), so it never conflicts for long.

Reads come from the committed objects (``HEAD``), never from the work tree; the
work tree is refreshed after each write for people who browse the files, and
a local edit there is left alone (and not read) rather than overwritten.

A section's *version* is the sha of the last commit that changed its file: the
write protection of the MCP tools compares it (see :meth:`JournalStore.write`).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from code_trajectory.errors import GitError, InvalidArgumentError, JournalConflictError, JournalError
from code_trajectory.gitcmd import Git, check_git_version, chunked, split_z
from code_trajectory.journal.settings import JournalSettings

log = logging.getLogger(__name__)

SUFFIX = ".md"
ID_SHA_LEN = 12
MAX_ENTRY_CHARS = 200_000
MAX_OVERVIEW_CHARS = 1_000_000
MAX_PATH_CHARS = 200
#: Where sync keeps the local side of an overview conflict until it is resolved.
CONFLICT_REF_PREFIX = "refs/journal-conflicts/"
SUMMARY_TRAILER = "Journal-Summary:"
LOCK_TIMEOUT_SECONDS = 60.0
GC_EVERY = 20

_COUNT_LINE_RE = re.compile(r"^[ \t]*<!--[ \t]*entry count:[ \t]*(\d+)[ \t]*-->[ \t]*$", re.MULTILINE | re.IGNORECASE)
_WORK_CONTEXT_RE = re.compile(r"^[ \t]*work[_ ]context[ \t]*:[ \t]*(.*?)[ \t]*$", re.IGNORECASE)
_HEX_RE = re.compile(r"^[0-9a-fA-F]{4,64}$")
_BAD_CHARS_RE = re.compile(r"[\x00-\x1f\x7f\\#:*?\"<>|]")


# --------------------------------------------------------------------------- ids and text

def normalize_path(path: str) -> str:
    """Return the canonical section path of ``path`` (no ``.md``, no leading/trailing ``/``).

    Raises:
        InvalidArgumentError: empty, absolute, with ``..``/``.`` or hidden components,
            control or reserved characters (``\\ # : * ? " < > |``), or too long.
    """
    if not isinstance(path, str):
        raise InvalidArgumentError("a journal path must be a string")
    raw = path.strip()
    if not raw:
        raise InvalidArgumentError("the journal path is empty; give a section path such as 'project-alpha/api-design'")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw) or raw.startswith("~"):
        raise InvalidArgumentError(f"journal path {path!r} is absolute; give a path relative to the journal, "
                                   "such as 'project-alpha/api-design'")
    if _BAD_CHARS_RE.search(raw):
        raise InvalidArgumentError(f"journal path {path!r} contains a reserved character "
                                   "(control characters, \\ # : * ? \" < > | are not allowed)")
    if raw.endswith(SUFFIX):
        raw = raw[: -len(SUFFIX)]
    raw = raw.rstrip("/")
    parts = raw.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise InvalidArgumentError(f"journal path {path!r} has an empty, '.' or '..' component; "
                                       "sections live inside the journal")
        if part.startswith(".") or part != part.strip():
            raise InvalidArgumentError(f"journal path {path!r}: a component may not start with '.' "
                                       "or begin/end with spaces")
    if len(raw) > MAX_PATH_CHARS:
        raise InvalidArgumentError(f"journal path is longer than {MAX_PATH_CHARS} characters")
    return raw


def parse_id(journal_id: str) -> tuple[str, str | None]:
    """Split ``path#sha`` into ``(normalized path, sha prefix or None)``.

    Raises:
        InvalidArgumentError: a bad path, or a ``#`` not followed by 4-64 hex digits.
    """
    if not isinstance(journal_id, str):
        raise InvalidArgumentError("a journal id must be a string")
    text = journal_id.strip()
    if "#" in text:
        path, _, sha = text.partition("#")
        sha = sha.strip()
        if not _HEX_RE.match(sha):
            raise InvalidArgumentError(f"journal id {journal_id!r}: after '#' comes a commit sha "
                                       "(4 to 64 hex digits), e.g. 'project-alpha#abc123def456'")
        return normalize_path(path), sha.lower()
    return normalize_path(text), None


def entry_id(path: str, sha: str) -> str:
    """The id of the entry ``sha`` in section ``path``."""
    return f"{path}#{sha[:ID_SHA_LEN]}"


def strip_entry_count(text: str) -> str:
    """Return the overview text of a section file: the entry-count comment removed, trailing space trimmed."""
    return _COUNT_LINE_RE.sub("", text).rstrip()


def read_entry_count(text: str) -> int | None:
    """The N of ``<!-- entry count: N -->`` in a section file, or None."""
    match = _COUNT_LINE_RE.search(text)
    return int(match.group(1)) if match else None


def render_section(overview: str, count: int) -> str:
    """The file content for ``overview`` with the entry-count comment appended."""
    body = strip_entry_count(overview)
    comment = f"<!-- entry count: {count} -->\n"
    return f"{body}\n\n{comment}" if body else comment


def clean_text(text: str) -> str:
    """Normalise line endings to ``\\n`` and trim trailing whitespace on the whole text."""
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip()


def split_message(message: str) -> tuple[str, str | None]:
    """Split a commit message into ``(entry text, summary trailer or None)``."""
    text = clean_text(message)
    lines = text.split("\n")
    if lines and lines[-1].startswith(SUMMARY_TRAILER):
        summary = lines[-1][len(SUMMARY_TRAILER):].strip()
        return "\n".join(lines[:-1]).rstrip(), summary or None
    return text, None


def work_context_of(text: str) -> str | None:
    """The value of a ``work_context:`` line among the first lines of an entry, or None."""
    for line in text.split("\n")[:5]:
        match = _WORK_CONTEXT_RE.match(line)
        if match:
            return match.group(1) or None
    return None


def body_of(text: str) -> str:
    """The entry text without its ``work_context:`` line."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:5]):
        if _WORK_CONTEXT_RE.match(line):
            del lines[i]
            break
    return "\n".join(lines).strip()


def derive_summary(text: str, limit: int = 100) -> str:
    """A one-line summary of an entry: its first line of prose (markdown heading marks dropped)."""
    for line in body_of(text).split("\n"):
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return work_context_of(text) or ""


def iso(ts: int) -> str:
    """``ts`` (epoch seconds) as ISO 8601 UTC, e.g. ``2024-07-21T18:00:00Z``."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- records

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


# --------------------------------------------------------------------------- the store

class JournalStore:
    """One journal repository.

    Args:
        settings: resolved journal settings (the repository is ``settings.journal_data_path``).

    The repository is created on first use (:meth:`ensure`). Methods are safe to
    call from several threads and several processes.
    """

    def __init__(self, settings: JournalSettings) -> None:
        self.settings = settings
        self.root = Path(settings.journal_data_path)
        self.git_dir = self.root / ".git"
        self._git: Git | None = None
        self._ready = False
        self._thread_lock = threading.RLock()
        self._history = _HistoryCache()
        self._history_lock = threading.Lock()
        self._writes = 0

    # -- setup

    @property
    def git(self) -> Git:
        if self._git is None:
            check_git_version()
            self._git = Git(self.git_dir, self.root, isolated=True)
        return self._git

    def ensure(self) -> None:
        """Create the journal directory and its git repository when missing (idempotent).

        Raises:
            JournalError: the directory cannot be created or is not a usable repository.
        """
        if self._ready:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"cannot create the journal directory {self.root}: {exc}") from exc
        if not (self.git_dir / "HEAD").exists():
            if self.git_dir.exists() and not self.git_dir.is_dir():
                raise JournalError(f"{self.git_dir} is not a directory; the journal needs its own git repository")
            # init in a private directory and rename it into place: two processes creating
            # the same journal at once must not interleave inside one .git
            tmp = self.root / f".git-init-{os.getpid()}-{secrets.token_hex(4)}"
            try:
                tmp.mkdir()
                Git(tmp / ".git", tmp, isolated=True).run(["init", "-q", "--initial-branch=main", str(tmp)])
                try:
                    os.rename(tmp / ".git", self.git_dir)
                except OSError:
                    if not (self.git_dir / "HEAD").exists():
                        raise
            except (GitError, OSError) as exc:
                raise JournalError(f"cannot create the journal repository in {self.root}: {exc}") from exc
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        self._ready = True

    def lock(self):
        """The inter-process write lock (a context manager), held by every writer of this journal."""
        from filelock import FileLock

        self.ensure()
        return _CombinedLock(self._thread_lock, FileLock(str(self.git_dir / "code-trajectory-journal.lock"),
                                                         timeout=LOCK_TIMEOUT_SECONDS))

    def author_env(self) -> dict[str, str]:
        """Environment naming the configured author and committer."""
        name, email = self.settings.author
        return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}

    # -- refs and objects

    def head(self) -> str | None:
        """The commit HEAD points at, or None for an empty journal."""
        self.ensure()
        proc = self.git.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip()

    def branch(self) -> str:
        """The branch HEAD points to (``main`` unless changed)."""
        self.ensure()
        proc = self.git.run(["symbolic-ref", "-q", "--short", "HEAD"], check=False)
        name = proc.stdout.decode().strip()
        return name or "main"

    def blob_text(self, rev: str | None, file: str) -> str | None:
        """The text of ``file`` at ``rev``, or None when absent."""
        if rev is None:
            return None
        proc = self.git.run(["cat-file", "blob", f"{rev}:{file}"], check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode("utf-8", "replace")

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

    def resolve_commit(self, sha: str) -> str:
        """The full sha of the commit named by the prefix ``sha``.

        Raises:
            JournalError: unknown or ambiguous.
        """
        proc = self.git.run(["rev-parse", "-q", "--verify", "--end-of-options", f"{sha}^{{commit}}"], check=False)
        if proc.returncode != 0:
            raise JournalError(f"no journal entry with sha {sha!r} (unknown or ambiguous; "
                               "use the id from journal_list_entries or journal_search)")
        return proc.stdout.decode().strip()

    # -- history

    def history(self, head: str | None = None) -> list[Commit]:
        """All non-merge commits reachable from ``head`` (default HEAD), newest first, with the files each touched.

        Cached per head; a head that descends from the cached one is scanned incrementally.
        """
        head = self.head() if head is None else head
        if head is None:
            return []
        with self._history_lock:
            cache = self._history
            if cache.head == head:
                return cache.commits
            if cache.head is not None and self._is_ancestor(cache.head, head):
                new = self._scan(f"{cache.head}..{head}")
                commits = new + cache.commits
            else:
                commits = self._scan(head)
            self._history = _HistoryCache(head, commits)
            return commits

    def _is_ancestor(self, a: str, b: str) -> bool:
        return self.git.run(["merge-base", "--is-ancestor", a, b], check=False).returncode == 0

    def _scan(self, rev_range: str) -> list[Commit]:
        out = self.git.out(["log", "-z", "--no-merges", "--no-renames", "--format=%x1e%H%x1f%at",
                            "--name-only", rev_range, "--"])
        commits: list[Commit] = []
        sha, ts, files = None, 0, []
        for token in split_z(out):
            text = token.decode("utf-8", "replace")
            if text.startswith("\x1e"):
                if sha is not None:
                    commits.append(Commit(sha, ts, tuple(files)))
                sha_s, _, ts_s = text[1:].strip().partition("\x1f")
                sha, ts, files = sha_s, int(ts_s or 0), []
            else:
                name = text.lstrip("\n")
                if name:
                    files.append(name)
        if sha is not None:
            commits.append(Commit(sha, ts, tuple(files)))
        return commits

    def messages(self, shas: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``{sha: (raw message, author name)}`` for the given commits."""
        result: dict[str, tuple[str, str]] = {}
        for chunk in chunked(list(shas), 400):
            out = self.git.out(["show", "-s", "--no-notes", "--format=%x1e%H%x1f%an%x1f%B", *chunk, "--"])
            for record in out.decode("utf-8", "replace").split("\x1e"):
                if not record:
                    continue
                sha, _, rest = record.partition("\x1f")
                author, _, body = rest.partition("\x1f")
                result[sha.strip()] = (body, author)
        return result

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
        if start < 0:
            raise InvalidArgumentError("start must be >= 0 (0 is the most recent entry)")
        if length < 1 or length > 1000:
            raise InvalidArgumentError("length must be between 1 and 1000")
        head = self.head()
        total = self.count_entries(path, head)
        if total == 0:
            raise JournalError(f"no section {path!r} in the journal; journal_toc lists the sections")
        out = self.git.out(["log", "--no-merges", "--no-notes", f"--skip={start}", f"-n{length}",
                            "--format=%x1e%H%x1f%at%x1f%an%x1f%B", head, "--", path + SUFFIX])
        entries = []
        for record in out.decode("utf-8", "replace").split("\x1e"):
            if not record.strip():
                continue
            sha, ts, author, message = (record.split("\x1f", 3) + ["", "", ""])[:4]
            entries.append(make_entry(path, sha.strip(), int(ts or 0), message, author))
        return total, entries

    def toc(self, journal_id: str = "", depth: int = 1) -> dict:
        """The table of contents from ``journal_id`` (``""`` = root), ``depth`` levels deep.

        A node is ``{"id", "type", "last_updated", "entry_count", "subsections"?}``;
        ``type`` is ``"section"`` for a path with an overview file and ``"group"``
        for a directory that only holds sections. ``entry_count`` counts the
        node's own entries; ``last_updated`` is the newest entry in the node or
        below it. The starting section is the first level (the root is no
        section, so ``depth=1`` from the root lists the top-level sections).

        Raises:
            InvalidArgumentError: depth out of range or a bad id.
            JournalError: no such section.
        """
        if isinstance(depth, bool) or depth < 1 or depth > 50:
            raise InvalidArgumentError("depth must be between 1 and 50")
        depth = int(depth)
        prefix = ""
        if journal_id and journal_id.strip():
            prefix, sha = parse_id(journal_id)
            if sha is not None:
                raise InvalidArgumentError("journal_toc takes a section path, not an entry id (drop the '#...')")
        head = self.head()
        existing = set(self.sections(head))
        counts: dict[str, int] = {}
        latest: dict[str, int] = {}
        for commit in self.history(head):
            for section in commit.sections:
                counts[section] = counts.get(section, 0) + 1
                latest.setdefault(section, commit.timestamp)
        nodes = set(existing)
        for section in existing:  # groups: every directory above a section
            parts = section.split("/")
            for i in range(1, len(parts)):
                nodes.add("/".join(parts[:i]))

        children: dict[str, list[str]] = {}
        for node in nodes:
            parent = node.rsplit("/", 1)[0] if "/" in node else ""
            children.setdefault(parent, []).append(node)

        def subtree_latest(node: str) -> int | None:
            stamps = [latest[s] for s in existing if (s == node or s.startswith(node + "/")) and s in latest]
            return max(stamps) if stamps else None

        def build(node: str, levels_left: int) -> dict:
            ts = subtree_latest(node)
            item = {
                "id": node,
                "type": "section" if node in existing else "group",
                "last_updated": iso(ts) if ts else None,
                "entry_count": counts.get(node, 0) if node in existing else 0,
            }
            kids = sorted(children.get(node, []))
            if kids:
                item["subsection_count"] = len(kids)
                if levels_left > 1:
                    item["subsections"] = [build(k, levels_left - 1) for k in kids]
            return item

        if not prefix:
            top = sorted(children.get("", []))
            stamps = [latest[s] for s in existing if s in latest]
            return {"id": "", "type": "root", "last_updated": iso(max(stamps)) if stamps else None,
                    "entry_count": sum(counts.get(s, 0) for s in existing), "section_count": len(existing),
                    "subsections": [build(k, depth) for k in top]}
        if prefix not in nodes:
            raise JournalError(f"no section {prefix!r} in the journal; journal_toc('') lists the top-level sections")
        return build(prefix, depth)

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
            path: the section (created when missing).
            entry: the entry text (the commit message); must not be empty.
            overview: the new overview, or None (or blank) to keep the current one.
            summary: optional one-line summary, stored as a ``Journal-Summary:`` trailer.
            expected_version: the section version the caller read (``None`` = "the section
                did not exist"); the write fails with :class:`JournalConflictError` when the
                section moved since. :data:`UNCHECKED` skips the check.
            timestamp: the entry's time (epoch seconds); default now. For imports and tests.

        Raises:
            InvalidArgumentError: bad path, empty or oversized entry or overview.
            JournalConflictError: the section moved since ``expected_version``.
            JournalError: the lock could not be had, or git failed.
        """
        path = normalize_path(path)
        message = build_message(entry, summary)
        if overview is not None and not isinstance(overview, str):
            raise InvalidArgumentError("overview must be a string")
        if overview is not None and not overview.strip():
            overview = None
        if overview is not None:
            overview = strip_entry_count(clean_text(overview))
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

    def commit_files(self, parent: str | None, files: dict[str, str | None], message: str, *,
                     env: dict[str, str] | None = None, parents: Iterable[str] | None = None) -> str:
        """Create (but do not publish) a commit: ``parent``'s tree with ``files`` replaced (None deletes).

        Returns:
            The new commit's sha.
        """
        index = self.git_dir / f"ct-index-{os.getpid()}-{secrets.token_hex(4)}"
        index_env = {"GIT_INDEX_FILE": str(index)}
        try:
            if parent is not None:
                self.git.run(["read-tree", parent], env=index_env)
            else:
                self.git.run(["read-tree", "--empty"], env=index_env)
            for file, content in files.items():
                if content is None:
                    self.git.run(["update-index", "--force-remove", "--", file], env=index_env)
                    continue
                blob = self.git.text(["hash-object", "-w", "--stdin"], input=content.encode("utf-8"))
                self.git.run(["update-index", "--add", "--cacheinfo", f"100644,{blob},{file}"], env=index_env)
            tree = self.git.text(["write-tree"], env=index_env)
        finally:
            try:
                index.unlink()
            except FileNotFoundError:
                pass
        args = ["commit-tree", tree]
        for p in (parents if parents is not None else ([parent] if parent else [])):
            args += ["-p", p]
        args += ["-F", "-"]
        return self.git.text(args, input=message.encode("utf-8"), env=env)

    def cas_head(self, old: str | None, new: str, reason: str) -> bool:
        """Move HEAD (its branch) from ``old`` to ``new`` atomically; False when HEAD was not ``old``."""
        zero = "0" * len(new)
        for _ in range(100):
            proc = self.git.run(["update-ref", "-m", reason, "HEAD", new, old or zero], check=False)
            if proc.returncode == 0:
                return True
            err = proc.stderr.decode("utf-8", "replace")
            if ".lock': File exists" in err or "Unable to create" in err:
                time.sleep(0.02)
                continue
            if "but expected" in err or "already exists" in err or "is at" in err:
                return False
            raise JournalError(f"cannot update the journal's HEAD: {err.strip()}")
        return False

    def refresh_worktree(self, old: str | None, new: str) -> None:
        """Bring the work tree and index from ``old`` to ``new``; a local edit is kept (logged, not overwritten)."""
        args = ["read-tree", "-m", "-u", old, new] if old else ["read-tree", "-m", "-u", new]
        proc = self.git.run(args, check=False)
        if proc.returncode != 0:
            log.warning("journal work tree %s not refreshed (local edits?): %s", self.root,
                        proc.stderr.decode("utf-8", "replace").strip())

    def maybe_gc(self) -> None:
        """Run ``git gc --auto`` every :data:`GC_EVERY` writes of this process, when ``auto_gc`` is on."""
        self._writes += 1
        if self.settings.auto_gc and self._writes % GC_EVERY == 0:
            self.git.run(["-c", "gc.auto=6700", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"],
                         check=False)


class _CombinedLock:
    """A threading lock and a file lock taken together (threads of one process, then processes)."""

    def __init__(self, thread_lock: threading.RLock, file_lock) -> None:
        self._thread_lock = thread_lock
        self._file_lock = file_lock

    def __enter__(self):
        self._thread_lock.acquire()
        try:
            self._file_lock.acquire()
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._file_lock.release()
        finally:
            self._thread_lock.release()


def build_message(entry: str, summary: str | None) -> str:
    """The commit message for an entry (the entry text, then an optional summary trailer).

    Raises:
        InvalidArgumentError: empty or oversized entry, NUL characters, a multi-line summary.
    """
    if not isinstance(entry, str):
        raise InvalidArgumentError("entry must be a string")
    text = clean_text(entry).strip("\n")
    if not text.strip():
        raise InvalidArgumentError("the journal entry is empty; write what changed, what was learned and why")
    if len(text) > MAX_ENTRY_CHARS:
        raise InvalidArgumentError(f"the journal entry is longer than {MAX_ENTRY_CHARS} characters")
    if "\x00" in text:
        raise InvalidArgumentError("the journal entry contains a NUL character")
    if summary is not None and not isinstance(summary, str):
        raise InvalidArgumentError("summary must be a string")
    if summary and summary.strip():
        one_line = " ".join(summary.split())
        if len(one_line) > 300:
            raise InvalidArgumentError("summary must be at most 300 characters")
        return f"{text}\n\n{SUMMARY_TRAILER} {one_line}\n"
    return text + "\n"


def make_entry(path: str, sha: str, ts: int, message: str, author: str = "") -> Entry:
    """Build an :class:`Entry` from a raw commit message."""
    text, summary = split_message(message)
    return Entry(path=path, sha=sha, timestamp=ts, text=text, summary=summary or derive_summary(text),
                 work_context=work_context_of(text), author=author)


def conflict_message(path: str, expected: object, current: str | None) -> str:
    """The merge error a model gets when the section moved since it was read."""
    if expected is None:
        was = "did not exist yet"
    else:
        was = f"was at version {str(expected)[:ID_SHA_LEN]}"
    now = f"is now at version {current[:ID_SHA_LEN]}" if current else "no longer exists"
    return (f"merge conflict: section {path!r} {was} when you read it and {now} (another session wrote to it). "
            f"Call journal_read('{path}') again, merge your understanding with the new overview "
            f"(journal_list_entries('{path}') shows the new entries), then retry journal_write.")
