"""The page's one write: restoring a snapshot (or files of it), through the restore package's service.

The service is imported when a restore is asked for (the page's start-up does not pay for it). What is used of it::

    code_trajectory.restore.service.restore(root: Path, snapshot: str, paths: list[str] | None = None, *,
                                            dry_run: bool = False, force: bool = False) -> RestoreResult
    RestoreResult.safety_snapshot: str | None   # restoring it undoes the restore
    RestoreResult.commit: str | None            # the [RESTORE] snapshot
    RestoreResult.written, .removed: list[str]  # paths relative to the project root
    RestoreResult.not_recorded: list[str]       # left as they are: content over the size cap, not recorded
    RestoreResult.kept_unrecorded: list[str]    # left as they are: what is there now is in no snapshot
    RestoreResult.diff: str                     # unified diff of what changes (or changed)
    RestoreResult.text: str                     # a human summary
"""

from __future__ import annotations

import importlib
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from code_trajectory.core.errors import InvalidArgumentError

logger = logging.getLogger(__name__)

SERVICE_MODULE = "code_trajectory.restore.service"
#: Files one restore request may name.
MAX_PATHS = 1000
_OID = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class RestoreOutcome:
    """What a restore did (or, for a dry run, would do), as the page shows it.

    Attributes:
        snapshot: the commit restored from; ``paths`` the files restored (None: the whole snapshot).
        dry_run: True when nothing was written.
        safety_snapshot: the commit holding the state before the restore (restore it to undo), or None.
        commit: the ``[RESTORE]`` snapshot written, or None.
        written, removed: paths written and removed, relative to the project root.
        not_recorded: paths left as they are because their content was not recorded (over the size cap).
        kept_unrecorded: paths left as they are because what is there now is in no snapshot (ignored or a secret
            now, unreadable, saved again during the restore).
        diff: unified diff of the change; text: the service's summary.
    """

    snapshot: str
    paths: list[str] | None
    dry_run: bool
    safety_snapshot: str | None = None
    commit: str | None = None
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    not_recorded: list[str] = field(default_factory=list)
    kept_unrecorded: list[str] = field(default_factory=list)
    diff: str = ""
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        """The outcome as a JSON-ready dict (same keys as the attributes)."""
        return {"snapshot": self.snapshot, "paths": self.paths, "dry_run": self.dry_run,
                "safety_snapshot": self.safety_snapshot, "commit": self.commit, "written": list(self.written),
                "removed": list(self.removed),
                "not_recorded": list(self.not_recorded), "kept_unrecorded": list(self.kept_unrecorded),
                "diff": self.diff, "text": self.text}


def check_request(snapshot: Any, paths: Any) -> tuple[str, list[str] | None]:
    """Validate a restore request's fields as they came from the page.

    Args:
        snapshot: a full commit id (40 lowercase hex digits).
        paths: None (the whole snapshot) or a non-empty list of paths relative to the project root.

    Returns:
        ``(snapshot, paths)``.

    Raises:
        InvalidArgumentError: a field is malformed, a path is absolute, climbs out with ``..`` or holds a NUL byte.
    """
    if not isinstance(snapshot, str) or not _OID.match(snapshot):
        raise InvalidArgumentError("snapshot must be a full snapshot id (40 hexadecimal digits)")
    if paths is None:
        return snapshot, None
    if not isinstance(paths, list) or not paths or len(paths) > MAX_PATHS:
        raise InvalidArgumentError(f"paths must be null (the whole snapshot) or a list of 1 to {MAX_PATHS} paths")
    for path in paths:
        if (not isinstance(path, str) or not path or "\0" in path or path.startswith("/")
                or ".." in path.split("/")):
            raise InvalidArgumentError(f"{path!r} is not a path relative to the project root")
    return snapshot, list(paths)


def restore(root: Path, snapshot: str, paths: list[str] | None, *, dry_run: bool) -> RestoreOutcome:
    """Restore ``paths`` of ``snapshot`` (all of it when None) into the project at ``root`` (or preview it).

    Args:
        root: the project root.
        snapshot: the commit to restore from (validated by :func:`check_request`).
        paths: files relative to the root, or None for the whole snapshot.
        dry_run: True to compute what would change without writing anything.

    Raises:
        TrajectoryError: whatever the service refuses (its message is shown on the page).
    """
    service = importlib.import_module(SERVICE_MODULE)
    result = service.restore(Path(root), snapshot, paths, dry_run=dry_run, force=False)
    outcome = RestoreOutcome(snapshot, paths, dry_run, safety_snapshot=result.safety_snapshot, commit=result.commit,
                             written=list(result.written), removed=list(result.removed),
                             not_recorded=list(result.not_recorded),
                             kept_unrecorded=list(result.kept_unrecorded), diff=result.diff,
                             text=result.text)
    if not dry_run:
        logger.info("restored %s from %s: %d written, %d removed, safety snapshot %s", paths or "everything",
                    snapshot[:12], len(outcome.written), len(outcome.removed), (outcome.safety_snapshot or "-")[:12])
    return outcome
