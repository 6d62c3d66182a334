"""Journal ids and texts: section paths, entry ids, overviews with their entry count, commit messages.

Pure functions; see :mod:`code_trajectory.journal.store` for the layout they describe.
"""

from __future__ import annotations

import re

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.secrets import redact
from code_trajectory.core.when import from_unix

SUFFIX = ".md"
ID_SHA_LEN = 12
MAX_ENTRY_CHARS = 200_000
MAX_OVERVIEW_CHARS = 1_000_000
MAX_PATH_CHARS = 200
SUMMARY_TRAILER = "Journal-Summary:"

_COUNT_LINE_RE = re.compile(r"^[ \t]*<!--[ \t]*entry count:[ \t]*(\d+)[ \t]*-->[ \t]*$", re.MULTILINE | re.IGNORECASE)
_WORK_CONTEXT_RE = re.compile(r"^[ \t]*work[_ ]context[ \t]*:[ \t]*(.*?)[ \t]*$", re.IGNORECASE)
_HEX_RE = re.compile(r"^[0-9a-fA-F]{4,64}$")
_BAD_CHARS_RE = re.compile(r"[\x00-\x1f\x7f\\#:*?\"<>|]")



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
    return from_unix(ts).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_message(entry: str, summary: str | None) -> str:
    """The commit message for an entry (the entry text, then an optional summary trailer), secrets redacted
    (:func:`code_trajectory.core.secrets.redact`: ``journal sync`` shares the messages through a git remote).

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
        return f"{redact(text)}\n\n{SUMMARY_TRAILER} {redact(one_line)}\n"
    return redact(text) + "\n"



def conflict_message(path: str, expected: object, current: str | None) -> str:
    """The merge error a model gets when the section moved since it was read."""
    was = "did not exist yet" if expected is None else f"was at version {str(expected)[:ID_SHA_LEN]}"
    now = f"is now at version {current[:ID_SHA_LEN]}" if current else "no longer exists"
    return (f"merge conflict: section {path!r} {was} when you read it and {now} (another session wrote to it). "
            f"Call journal_read('{path}') again, merge your understanding with the new overview "
            f"(journal_list_entries('{path}') shows the new entries), then retry journal_write.")

