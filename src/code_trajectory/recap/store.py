"""The recap document of a project: read, validated, written atomically under a lock (see the package docstring)."""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.errors import InvalidArgumentError, ProjectError, RecapError
from code_trajectory.recap.location import (  # noqa: F401
    ARCHIVE_DIRNAME,
    name_for_key,
    normalize_project,
    project_key,
    recap_file_name,
    recap_path,
    recaps_dir,
)

TYPE_CHECKING = False  # avoids importing typing at run time (start-up of the CLI); type checkers treat it as True
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any, TypedDict

    class Entry(TypedDict):
        """One recap entry as stored and returned."""

        id: str
        timestamp: str
        type: str
        content: str

    class _Document(TypedDict):
        version: int
        projectPath: str
        goal: str | None
        entries: list[Entry]
        updatedAt: str | None


# The kinds of recap entries, declared once: the MCP schemas and the CLI derive from it.
# ``fix`` records what later had to be corrected, so the next session learns from it.
# (The docstring is published in the tools' JSON schema.)
class EntryType(StrEnum):
    """The kind of a recap entry: decision, insight, risk, assumption, fix (a later correction) or other."""

    DECISION = "decision"
    INSIGHT = "insight"
    RISK = "risk"
    ASSUMPTION = "assumption"
    FIX = "fix"
    OTHER = "other"


#: The entry type names, in display order.
ENTRY_TYPES: tuple[str, ...] = tuple(t.value for t in EntryType)

#: What each entry type is for (shown in tool descriptions and CLI help).
ENTRY_TYPE_HELP: dict[str, str] = {
    EntryType.DECISION: "a choice made, with its reason",
    EntryType.INSIGHT: "a finding, constraint or gotcha discovered",
    EntryType.RISK: "something that could go wrong",
    EntryType.ASSUMPTION: "something taken as true without proof",
    EntryType.FIX: "something that had to be corrected later, and why",
    EntryType.OTHER: "anything else worth keeping",
}

SCHEMA_VERSION = 1
MAX_GOAL_CHARS = 2000
MAX_CONTENT_CHARS = 4000
LOCK_TIMEOUT_SECONDS = 15.0


def project_path_of(recap_file: str | os.PathLike[str]) -> str:
    """Decode a recap file name back to its project path (the path stored inside and verified).

    Raises:
        RecapError: the file cannot be read or parsed, or its stored path does not
            hash to its name.
    """
    file = Path(recap_file)
    try:
        doc = _parse(_read_bytes(file), file)
    except _CorruptRecap as exc:
        raise RecapError(f"recap file {file} is corrupt ({exc})") from exc
    if doc is None:
        raise RecapError(f"recap file {file} does not exist")
    if name_for_key(os.path.normcase(doc["projectPath"])) != file.name:
        raise RecapError(f"recap file {file} stores project {doc['projectPath']!r}, "
                         "which does not match its file name")
    return doc["projectPath"]


# --------------------------------------------------------------------------- time, text


def _now() -> datetime:
    from datetime import UTC, datetime  # lazy: only writers need the clock

    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    """ISO-8601 UTC with seconds precision and a ``Z`` suffix, e.g. ``2025-12-15T10:23:45Z``."""
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _compact(moment: datetime) -> str:
    """A file-name-safe timestamp, e.g. ``20251215T102345.123456Z``."""
    return moment.strftime("%Y%m%dT%H%M%S.%fZ")


def _clean_text(value: object, what: str, limit: int) -> str:
    """``value`` stripped and checked, secrets redacted (:func:`code_trajectory.core.secrets.redact`): the recap is
    kept for later sessions and shown in every session summary, as intents are."""
    from code_trajectory.core.secrets import redact  # no RE2 import unless a rule may match (the CLI's start-up)

    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidArgumentError(f"{what} is empty; give one or two sentences")
    if len(text) > limit:
        raise InvalidArgumentError(f"{what} is {len(text)} characters; the limit is {limit}. "
                                   "Keep it to the point (the details belong in the code or the journal)")
    return redact(text)


def _dedupe_key(entry_type: str, content: str) -> tuple[str, str]:
    """Entries are duplicates when type and content match ignoring case and runs of whitespace."""
    return entry_type, " ".join(content.split()).casefold()


def check_entry_type(value: object) -> str:
    """Return ``value`` as one of :data:`ENTRY_TYPES` (case and surrounding spaces ignored).

    Raises:
        InvalidArgumentError: not a known entry type; the message lists the valid ones.
    """
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in ENTRY_TYPES:
        raise InvalidArgumentError(f"unknown entry type {value!r}; use one of: {', '.join(ENTRY_TYPES)}")
    return str(text)


# --------------------------------------------------------------------------- reading


def _read_bytes(file: Path) -> bytes | None:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RecapError(f"cannot read recap file {file}: {exc.strerror or exc}") from exc


class _CorruptRecap(Exception):
    """The file exists but is not a recap document (internal; turned into a warning)."""


def _validate_entry(raw: object, index: int) -> Entry:
    if not isinstance(raw, dict):
        raise _CorruptRecap(f"entry {index} is not an object")
    for field in ("id", "timestamp", "type", "content"):
        if not isinstance(raw.get(field), str):
            raise _CorruptRecap(f"entry {index} has no string {field!r}")
    if raw["type"] not in ENTRY_TYPES:
        raise _CorruptRecap(f"entry {index} has unknown type {raw['type']!r}")
    return {"id": raw["id"], "timestamp": raw["timestamp"], "type": raw["type"], "content": raw["content"]}


def _validate(raw: object, file: Path) -> _Document:
    if not isinstance(raw, dict):
        raise _CorruptRecap("the top level is not a JSON object")
    version = raw.get("version", SCHEMA_VERSION)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise RecapError(f"recap file {file} has format version {version}, newer than this "
                         f"code-trajectory understands ({SCHEMA_VERSION}); upgrade code-trajectory")
    if not isinstance(raw.get("projectPath"), str):
        raise _CorruptRecap("'projectPath' is missing")
    goal = raw.get("goal")
    if goal is not None and not isinstance(goal, str):
        raise _CorruptRecap("'goal' is not a string")
    entries = raw.get("entries", [])
    if not isinstance(entries, list):
        raise _CorruptRecap("'entries' is not a list")
    updated = raw.get("updatedAt")
    return {"version": SCHEMA_VERSION, "projectPath": raw["projectPath"], "goal": goal or None,
            "entries": [_validate_entry(e, i) for i, e in enumerate(entries)],
            "updatedAt": updated if isinstance(updated, str) else None}


def _parse(data: bytes | None, file: Path) -> _Document | None:
    """Parse a recap file's bytes; ``None`` when absent. Raises _CorruptRecap or RecapError."""
    if data is None:
        return None
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise _CorruptRecap(f"not valid JSON ({exc})") from exc
    return _validate(raw, file)


def _empty(project: str) -> _Document:
    return {"version": SCHEMA_VERSION, "projectPath": project, "goal": None, "entries": [], "updatedAt": None}


def _check_owner(doc: _Document, project: str, file: Path) -> None:
    if os.path.normcase(doc["projectPath"]) != os.path.normcase(project):
        raise RecapError(f"recap file {file} belongs to project {doc['projectPath']!r}, not {project!r} "
                         "(a copied or hand-edited file); move it away to start a recap for this project")


def _view(doc: _Document, file: Path, warning: str | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "goal": doc["goal"],
        "entries": [dict(e) for e in doc["entries"]],
        "filePath": str(file),
        "projectPath": doc["projectPath"],
    }
    if warning:
        view["warning"] = warning
    return view


def get_recap(project_root: str | os.PathLike[str]) -> dict[str, Any]:
    """Return the project's recap; read-only, takes no lock, creates nothing.

    Output: ``{"goal": str | None, "entries": [{"id", "timestamp", "type", "content"}],
    "filePath": str, "projectPath": str}`` in insertion (chronological) order, plus
    ``"warning"`` when the file is corrupt (then ``goal`` is ``None`` and ``entries``
    empty; the next write moves the file aside). A project without a recap yields an
    empty one.

    Raises:
        RecapError: the file cannot be read, belongs to another project, or was written
            by a newer version.
    """
    project = normalize_project(project_root)
    file = recap_path(project)
    try:
        doc = _parse(_read_bytes(file), file)
    except _CorruptRecap as exc:
        return _view(_empty(project), file, f"recap file {file} is corrupt ({exc}); it is left untouched "
                     "and will be moved aside when the next goal or entry is written")
    if doc is None:
        return _view(_empty(project), file)
    _check_owner(doc, project, file)
    return _view(doc, file)


# --------------------------------------------------------------------------- writing


def _encode(doc: dict[str, Any]) -> bytes:
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (undecodable path bytes): escape them, still valid JSON
        return (json.dumps(doc, ensure_ascii=True, indent=2) + "\n").encode("ascii")


def _atomic_write(file: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``file`` atomically (:func:`code_trajectory.core.atomic.replace_file`), mode 0600."""
    try:
        replace_file(file, _encode(doc), mode=0o600)
    except OSError as exc:
        raise RecapError(f"cannot write recap file {file}: {exc.strerror or exc}") from exc


def _free_name(directory: Path, base: str, suffix: str = "") -> Path:
    """``directory/base+suffix``, or with ``-2``, ``-3``... appended before the suffix if taken."""
    candidate = directory / f"{base}{suffix}"
    n = 2
    while candidate.exists():
        candidate = directory / f"{base}-{n}{suffix}"
        n += 1
    return candidate


def _move_aside(file: Path, reason: str) -> str:
    """Rename a corrupt recap file to ``<name>.corrupt-<timestamp>``; return the warning text."""
    target = _free_name(file.parent, f"{file.name}.corrupt-{_compact(_now())}")
    try:
        os.rename(file, target)
    except OSError as exc:
        raise RecapError(f"recap file {file} is corrupt ({reason}) and cannot be moved aside: "
                         f"{exc.strerror or exc}; move or delete it by hand") from exc
    return f"recap file {file} was corrupt ({reason}); it was moved to {target} and a new recap was started"


class _Locked:
    """Context manager: hold the project's recap lock, create the directory, load the document."""

    def __init__(self, project_root: str | os.PathLike[str]) -> None:
        self.project = normalize_project(project_root)
        if not os.path.isdir(self.project):
            raise ProjectError(f"project directory {self.project} does not exist; "
                               "check the path (or --project) and try again")
        self.file = recap_path(self.project)
        self.warning: str | None = None
        self._lock: Any = None

    def __enter__(self) -> _Locked:
        import filelock  # lazy: only writers pay for it

        try:
            self.file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as the recap files are
            self._lock = filelock.FileLock(f"{self.file}.lock", timeout=LOCK_TIMEOUT_SECONDS)
            self._lock.acquire()
        except filelock.Timeout as exc:
            raise RecapError(f"the recap of {self.project} stayed locked by another process for "
                             f"{LOCK_TIMEOUT_SECONDS:.0f} s ({self.file}.lock); retry shortly") from exc
        except OSError as exc:
            raise RecapError(f"cannot prepare recap storage {self.file.parent}: {exc.strerror or exc}") from exc
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()

    def load(self) -> _Document:
        """The current document (an empty one if absent; a corrupt file is moved aside first)."""
        try:
            doc = _parse(_read_bytes(self.file), self.file)
        except _CorruptRecap as exc:
            self.warning = _move_aside(self.file, str(exc))
            return _empty(self.project)
        if doc is None:
            return _empty(self.project)
        _check_owner(doc, self.project, self.file)
        return doc

    def save(self, doc: _Document) -> None:
        doc["updatedAt"] = _iso(_now())
        _atomic_write(self.file, dict(doc))

    def with_warning(self, answer: dict[str, Any]) -> dict[str, Any]:
        if self.warning:
            answer["warning"] = self.warning
        return answer


def _archive(doc: _Document, file: Path) -> Path:
    """Copy a finished recap to ``recaps/archived/`` with ``archivedAt``; return the archive path."""
    moment = _now()
    directory = file.parent / ARCHIVE_DIRNAME
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise RecapError(f"cannot create the recap archive {directory}: {exc.strerror or exc}") from exc
    target = _free_name(directory, f"{file.stem}.{_compact(moment)}", ".json")
    _atomic_write(target, {**doc, "archivedAt": _iso(moment)})
    return target


def set_goal(project_root: str | os.PathLike[str], goal: str) -> dict[str, Any]:
    """Set the goal of the current work.

    If the recap already has a different goal, or entries, it is archived first
    (``recaps/archived/``, with ``archivedAt``) and a fresh recap holds the new goal.
    Setting the goal it already has (ignoring case and whitespace) changes nothing.

    Output: ``{"success": True, "archivedTo": str | None, "unchanged": bool}`` plus
    ``"warning"`` when a corrupt file was moved aside.

    Raises:
        InvalidArgumentError: empty goal or longer than ``MAX_GOAL_CHARS``.
        ProjectError: the project directory does not exist.
        RecapError: storage cannot be read, locked or written.
    """
    text = _clean_text(goal, "goal", MAX_GOAL_CHARS)
    with _Locked(project_root) as store:
        doc = store.load()
        if doc["goal"] is not None and _dedupe_key("", doc["goal"]) == _dedupe_key("", text):
            return store.with_warning({"success": True, "archivedTo": None, "unchanged": True})
        archived = _archive(doc, store.file) if doc["goal"] or doc["entries"] else None
        new = _empty(store.project)
        new["goal"] = text
        store.save(new)
        return store.with_warning({"success": True, "archivedTo": str(archived) if archived else None,
                                   "unchanged": False})


def add_entry(project_root: str | os.PathLike[str], entry_type: str, content: str) -> dict[str, Any]:
    """Append an entry to the project's recap, unless the same one is already there.

    Input: ``entry_type`` one of :data:`ENTRY_TYPES`; ``content`` one or two sentences.
    Output: ``{"id": uuid4, "timestamp": ISO-8601 UTC}``; when an entry with the same
    type and content (ignoring case and whitespace) exists, nothing is written and the
    answer is ``{"id": <existing id>, "timestamp": <its timestamp>, "skipped": True}``.
    ``"warning"`` is added when a corrupt file was moved aside.

    Raises:
        InvalidArgumentError: unknown type, empty or over-long content.
        ProjectError: the project directory does not exist.
        RecapError: storage cannot be read, locked or written.
    """
    kind = check_entry_type(entry_type)
    text = _clean_text(content, "content", MAX_CONTENT_CHARS)
    key = _dedupe_key(kind, text)
    with _Locked(project_root) as store:
        doc = store.load()
        for existing in doc["entries"]:
            if _dedupe_key(existing["type"], existing["content"]) == key:
                return store.with_warning({"id": existing["id"], "timestamp": existing["timestamp"],
                                           "skipped": True})
        import uuid  # lazy: only writers pay for it

        entry: Entry = {"id": str(uuid.uuid4()), "timestamp": _iso(_now()), "type": kind, "content": text}
        doc["entries"].append(entry)
        store.save(doc)
        return store.with_warning({"id": entry["id"], "timestamp": entry["timestamp"], "skipped": False})


