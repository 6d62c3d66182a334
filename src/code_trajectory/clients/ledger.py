"""What ``install`` wrote, so that ``uninstall`` undoes it byte for byte.

For every client file install creates or rewrites, the ledger keeps (in ``<home>/installs.json``,
:func:`code_trajectory.core.paths.home_dir`, a per-user file that is never committed):

- ``before``: the file's bytes before install first touched it (base64), or null when install created it;
- ``after``: the SHA-256 of the bytes install last wrote;
- ``dirs``: the directories install created for it (``.cursor/``, ``.claude/``), deepest first;
- ``backups``: the backups install made of it (a JSONC file's comments...), removed when the exact bytes are
  back (:func:`remove_backups`).

Uninstall removes code-trajectory's entries, then compares (:func:`code_trajectory.clients.jsonfile.edit`,
``previous``): when what is left is what ``before`` held, the previous bytes come back exactly
(formatting, key order, comments and all); when install created the file and nothing else is left in it,
the file goes away with the directories it needed (:func:`remove_dirs`). Otherwise (the file changed
since: the user, a teammate or another project's entry) only code-trajectory's entries are removed and
the rest is kept.

The ledger is keyed by the file's absolute path, and it only ever supplies content for the path uninstall
is working on: what the ledger holds never names a place to write. Files over :data:`MAX_BYTES` are not
kept.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_trajectory.clients import jsonfile, jsontext
from code_trajectory.core.bounded_read import read_bounded

#: The ledger's file name in code-trajectory's home directory.
FILE_NAME = "installs.json"
#: Largest previous content kept for an exact undo, bytes (client config files are a few KiB).
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Entry:
    """The ledger's record of one file: ``before`` (None: install created it), ``after`` (SHA-256 hex of what
    install wrote), ``dirs`` (directories install created, deepest first), ``backups`` (copies install made)."""

    before: bytes | None
    after: str
    dirs: tuple[str, ...]
    backups: tuple[str, ...] = ()


def ledger_path() -> Path:
    """``<home>/installs.json`` (:func:`code_trajectory.core.paths.home_dir`)."""
    from code_trajectory.core.paths import home_dir

    return home_dir() / FILE_NAME


def _load() -> dict[str, dict]:
    try:
        data = json.loads(ledger_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def _save(files: dict[str, dict]) -> None:
    jsonfile.atomic_write(ledger_path(), json.dumps({"version": 1, "files": files}, indent=1) + "\n")


def _key(path: Path) -> str:
    return os.path.abspath(path)


def digest(data: bytes) -> str:
    """SHA-256 of ``data``, hex."""
    return hashlib.sha256(data).hexdigest()


def as_installed(path: Path, entry: Entry | None) -> bool:
    """Whether ``path`` holds exactly the bytes install last wrote to it (``entry``, its record: its ``after``)."""
    current = read_bytes(path) if entry is not None else None
    return entry is not None and current is not None and digest(current) == entry.after


def read_bytes(path: Path) -> bytes | None:
    """The bytes of ``path`` (a symlink followed), or None when it does not exist, cannot be read, is not a regular
    file (a FIFO, a device) or is larger than :data:`~.jsonfile.MAX_CONFIG_BYTES`."""
    return read_bounded(path, jsonfile.MAX_CONFIG_BYTES, follow_symlinks=True)


def missing_dirs(path: Path) -> list[Path]:
    """The ancestors of ``path`` that do not exist yet, deepest first (what a write would create)."""
    out: list[Path] = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        out.append(parent)
        parent = parent.parent
    return out


def get(path: Path) -> Entry | None:
    """The ledger's record of ``path``, or None."""
    raw = _load().get(_key(path))
    if not isinstance(raw, dict) or not isinstance(raw.get("after"), str):
        return None
    before = raw.get("before")
    try:
        content = None if before is None else base64.b64decode(before, validate=True)
    except (ValueError, TypeError):
        return None
    dirs = tuple(d for d in raw.get("dirs", []) if isinstance(d, str))
    saved = tuple(b for b in raw.get("backups", []) if isinstance(b, str))
    return Entry(content, raw["after"], dirs, saved)


def document_before(path: Path) -> dict[str, Any] | None:
    """The JSON (or JSONC) object ``path`` held before install first touched it, per the ledger; None when install
    created it, the ledger has no record, or those bytes are not such an object."""
    entry = get(path)
    if entry is None or entry.before is None:
        return None
    try:
        data, _ = jsontext.loads(entry.before.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def note_write(path: Path, before: bytes | None, after: bytes, made: list[Path], backup: Path | None = None) -> None:
    """Record that install turned ``before`` (None: absent) into ``after`` at ``path``, creating ``made`` (and
    the copy ``backup`` of the previous content, if any).

    A file install already wrote and nobody changed since keeps its first ``before``: a second install is
    undone back to the state before the first. Errors writing the ledger are ignored (uninstall then removes
    the entry instead of restoring bytes).
    """
    files = _load()
    key = _key(path)
    old = get(path)
    saved = [str(backup)] if backup is not None else []
    if old is not None and before is not None and digest(before) == old.after:
        before, made, saved = old.before, [Path(d) for d in old.dirs] + made, [*old.backups, *saved]
    if before is not None and len(before) > MAX_BYTES:
        files.pop(key, None)
    else:
        files[key] = {"before": None if before is None else base64.b64encode(before).decode("ascii"),
                      "after": digest(after), "dirs": [str(d) for d in made], "backups": saved}
    with contextlib.suppress(Exception):  # the ledger only makes uninstall more exact
        _save(files)


def forget(path: Path) -> None:
    """Drop the ledger's record of ``path`` (after an uninstall)."""
    files = _load()
    if files.pop(_key(path), None) is not None:
        with contextlib.suppress(Exception):  # as in note_write
            _save(files)


def remove_dirs(path: Path, entry: Entry | None) -> None:
    """After ``path`` was deleted: remove the directories install created for it, deepest first, while they are
    empty (only ancestors of ``path``: the ledger never names a place to change)."""
    for directory in entry.dirs if entry is not None else ():
        if Path(directory) not in path.parents:
            break
        try:
            Path(directory).rmdir()  # only when empty
        except OSError:
            break


def remove_backups(path: Path, entry: Entry | None) -> None:
    """After ``path`` got its previous bytes back: delete the backups install made of it that hold exactly
    those bytes (only ``<name>.bak-*`` files beside ``path``)."""
    if entry is None or entry.before is None:
        return
    for name in entry.backups:
        backup = Path(name)
        if backup.parent != path.parent or not backup.name.startswith(f"{path.name}.bak-"):
            continue
        if read_bytes(backup) == entry.before:
            with contextlib.suppress(OSError):
                backup.unlink()
