"""The files kept out of the history as secrets, as the last scan and the snapshots since found them.

Stored in ``.trajectory/state/secret-files.json`` (``{"files": {path: why}, "scanned_at": ISO 8601 UTC}``; paths
relative to the project root, a directory with a trailing ``/``) for ``status``: a full scan replaces the list (the
deny list's names, :meth:`RecordingPolicy.denied`, and the contents :func:`~code_trajectory.core.secrets.secret_content`
refused); a snapshot of some paths updates those paths only. Never pushed (``state/`` is no ref).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object

FILE_NAME = "secret-files.json"


def load(state_dir: Path) -> dict[str, str]:
    """``{path: why}`` of the files last found to be secrets; empty when none (or the file is unreadable)."""
    try:
        files = (read_json_object(state_dir / FILE_NAME) or {})["files"]
    except KeyError:
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(files, dict) \
        else {}


def reason(state_dir: Path, rel: str) -> str | None:
    """Why ``rel`` was last found to be a secret (``it holds a private key``), or None."""
    return load(state_dir).get(rel)


def _save(state_dir: Path, files: dict[str, str]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / FILE_NAME
    replace_file(path, json.dumps({"files": dict(sorted(files.items())),
                                   "scanned_at": datetime.now(UTC).isoformat()}))


def save_scan(state_dir: Path, denied: Iterable[str], contents: dict[str, str]) -> None:
    """Replace the list after a full scan: ``denied`` paths (by name) and ``contents`` (path -> why)."""
    files = {rel: "secret deny list (by name)" for rel in denied}
    files.update(contents)
    if files or (state_dir / FILE_NAME).exists():
        _save(state_dir, files)


def note_snapshot(state_dir: Path, looked: Iterable[str], contents: dict[str, str]) -> None:
    """Update the list for the paths a snapshot read (``looked``): those in ``contents`` are secrets, the others
    are not (any more)."""
    current = load(state_dir)
    if not current and not contents:
        return
    read = set(looked)
    updated = {k: v for k, v in current.items() if k not in read or k.endswith("/")}
    updated.update(contents)
    if updated != current:
        _save(state_dir, updated)
