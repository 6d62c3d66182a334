"""The initial import with edit hand-overs waiting: their files are recorded as they were before the edit.

The first session of an agent in a project with no history yet races the import: the prompt hook sets the intent,
the server starts its import (:mod:`~code_trajectory.recording.importer`), and the agent's first edits land while the
import reads the work tree. Their hand-overs (:mod:`~code_trajectory.recording.handoff`) wait meanwhile (the server
claims none before its start-up scan ends), so the import's snapshot held the edits without their origin and intent,
and the hand-overs recorded after it found nothing changed (an import is no plain snapshot a late hand-over may tag,
:mod:`~code_trajectory.recording.handover_tag`).

A hand-over of Claude Code's Edit or Write pins the file's content before the tool call (``before``, as the tool
said it, checked against the content after). :func:`import_tree` gives each path the waiting hand-overs name the
content before the oldest one's edit, in the import's tree, when that hand-over pinned it; the hand-overs then record
each edit on top, with its origin and intent, as it happened. A path whose oldest hand-over pinned nothing (another
client, a file over the bound, another encoding) is left as the scan read it. The hand-overs are listed after the
scan: one written meanwhile is applied too; one whose hook is still running when the import commits is not (its
edit stays in the import, as before).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from typing import TYPE_CHECKING, Protocol

from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError
from code_trajectory.git import trees
from code_trajectory.git.tree_format import TreeEntry
from code_trajectory.project import confine
from code_trajectory.recording.blobs import write_pinned
from code_trajectory.recording.handoff import EDIT_KIND, MAX_HANDOVER_BYTES, REQUEST_DIR, Pinned, parse_edit

if TYPE_CHECKING:
    from pathlib import Path

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.recording.ignore import RecordingPolicy
    from code_trajectory.recording.statcache import StatCache

log = logging.getLogger(__name__)

#: Hand-overs read at most (a burst of edits during an import is a few dozen).
MAX_HANDOVERS = 1000


class _Recorder(Protocol):
    """What :func:`import_tree` uses of the :class:`~code_trajectory.recording.recorder.Recorder` importing."""

    root: Path
    settings: TrajectorySettings
    repo: ShadowRepo
    policy: RecordingPolicy
    stat_cache: StatCache


def before_edits(root: Path, state_dir: Path) -> dict[str, Pinned]:
    """``{path relative to root: its content before the edit}`` for each path the unclaimed hand-overs in
    ``state_dir`` name, from the oldest hand-over naming it, when that one pinned it (None: the edit created the
    file). An unreadable or invalid hand-over is skipped here (its drain logs it)."""
    try:
        with os.scandir(state_dir / REQUEST_DIR) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(f".{EDIT_KIND}"))[:MAX_HANDOVERS]
    except OSError:
        return {}
    seen: set[str] = set()
    found: dict[str, Pinned] = {}
    for name in names:
        data = read_bounded(state_dir / REQUEST_DIR / name, MAX_HANDOVER_BYTES)
        try:
            if data is None:
                continue
            edit = parse_edit(data)
        except ValueError:
            continue
        for path in edit.paths:
            with contextlib.suppress(PathOutsideProjectError, InvalidArgumentError):
                rel = confine(root, path)
                if rel not in seen and path in edit.before:
                    found[rel] = edit.before[path]
                seen.add(rel)
    return found


def import_tree(recorder: _Recorder, tree: str) -> str:
    """``tree``, an import's scan of ``recorder``'s work tree, with the paths waiting hand-overs edited at their
    content before the edit (see the module docstring; the recording policy, size cap and secrets apply as to any
    content); ``tree`` itself when there is none. The stat cache's rows of those paths are dropped (they describe
    the work tree's content, the tree now holds another).

    Raises:
        GitError: a blob or tree could not be written.
    """
    before = before_edits(recorder.root, recorder.repo.state_dir)
    if not before:
        return tree
    looked_ns = time.time_ns()
    changes: dict[str, TreeEntry | None] = {}
    to_write: dict[str, tuple[bool, bytes]] = {}
    for rel, content in before.items():
        if content is None:
            changes[rel] = None
        elif len(content[1]) <= recorder.settings.max_file_bytes and recorder.policy.is_recorded(rel, is_dir=False):
            to_write[rel] = content
    with recorder.repo.batch():
        changes.update(write_pinned(recorder.repo, to_write))
        new = trees.apply_changes(recorder.repo, tree, changes)
    if new != tree:
        recorder.stat_cache.note_recorded(hashed=[], removed=[rel for rel, entry in changes.items() if entry is None],
                                          base=tree, tree=new, scanned_ns=looked_ns,
                                          pinned={rel: entry for rel, entry in changes.items() if entry is not None})
        log.info("import: %d file(s) recorded as before the edits handed over meanwhile", len(changes))
    return new
