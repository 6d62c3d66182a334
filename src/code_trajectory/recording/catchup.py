"""What git did to the project while nothing recorded, for the start-up scan's snapshot (issue 23.2).

While ``watch`` or the server is stopped, the user may ``git stash``, ``stash pop``, ``checkout``, ``reset --hard``,
pull or commit. The start-up scan then finds the changed files; the project's reflogs say why. Their entries newer
than the last recorded snapshot (and than the last recorder's stop) are folded into one git operation
(:func:`code_trajectory.git.reflog.combine`): the catch-up snapshot is labelled ``[CHECKOUT][STASH] while not
recording: …`` with every reflog message in its body, never an intent; changes the operations do not explain are
"changed while not recording" (:data:`code_trajectory.git.messages.UNRECORDED`), split off as the live recorder
splits them (:func:`code_trajectory.recording.commit_message.compose`).

The recording process notes where the reflogs stood (:class:`code_trajectory.git.reflog.ReflogMark`) in
``.trajectory/state/reflog-mark.json`` at the start-up scan, after a git operation, and when it stops: the entries
written after it are the ones made while nothing recorded (reflog times are whole seconds, too coarse alone), and a
stash id gone since was popped or dropped (git leaves no reflog entry for ``stash pop``/``drop``).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object
from code_trajectory.core.when import parse_stored_time
from code_trajectory.git import reflog
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.reflog import GitOperation

#: Where the project's reflogs stood when the recording process last looked, in the state directory.
MARK_FILE = "reflog-mark.json"
#: Longest reflog line kept in the mark, characters (a longer one in the file makes the mark unknown).
MAX_LINE_CHARS = 8192
#: Stash ids kept (git keeps every stash; more than this many is not a working set).
MAX_STASH_IDS = 1000
#: What the label says of the operations' time.
CONTEXT = "while not recording"

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class CatchUp:
    """The start-up scan of a recorder: the changes it finds were made while nothing recorded.

    Attributes:
        stopped_at: when the previous recording process stopped (epoch seconds, ``recorder.json``'s
            ``stopped_at``), None when unknown (it crashed, or never ran).
    """

    stopped_at: float | None = None

    @classmethod
    def from_state(cls, state: dict[str, object]) -> CatchUp:
        """From the recorder state read before this process wrote its own (see
        :func:`code_trajectory.recording.liveness.read_recorder_state`): its stop, when it came after its start."""
        stopped, started = parse_stored_time(state.get("stopped_at")), parse_stored_time(state.get("started_at"))
        if stopped is None or (started is not None and started > stopped):
            return cls(None)
        return cls(stopped.timestamp())


def note_mark(state_dir: Path, project: ProjectRepo) -> None:
    """Note where the project's reflogs stand now (:func:`code_trajectory.git.reflog.mark`) in ``state_dir``; best
    effort (a failure is ignored)."""
    if not project.is_git:
        return
    now = reflog.mark(project)
    data = {"head_size": now.head_size, "head_last": now.head_last, "stash": list(now.stash[-MAX_STASH_IDS:])}
    with contextlib.suppress(OSError):
        replace_file(state_dir / MARK_FILE, json.dumps(data))


def last_mark(state_dir: Path) -> reflog.ReflogMark | None:
    """The mark noted by :func:`note_mark`, None when none was (an older history) or the file is not one (it is
    untrusted: anything but a size, a line and a list of commit ids counts as unknown)."""
    data = read_json_object(state_dir / MARK_FILE)
    if data is None:
        return None
    size, last, ids = data.get("head_size"), data.get("head_last"), data.get("stash")
    if (not isinstance(size, int) or isinstance(size, bool) or size < 0 or not isinstance(last, str)
            or len(last) > MAX_LINE_CHARS or not isinstance(ids, list)
            or not all(isinstance(i, str) and _OID.fullmatch(i) for i in ids)):
        return None
    return reflog.ReflogMark(size, last, tuple(ids))


def unrecorded_operation(project: ProjectRepo, state_dir: Path, catch_up: CatchUp,
                         last_snapshot: float | None) -> GitOperation | None:
    """The git operations made while nothing recorded, as one (see the module docstring), or None.

    Args:
        project: the project's repository.
        state_dir: the shadow repository's state directory (the noted reflog mark).
        catch_up: when the previous recorder stopped.
        last_snapshot: the newest recorded snapshot's time (epoch seconds); None when nothing is recorded yet (the
            first import: what git did before is not a change of the recorded history).
    """
    if last_snapshot is None or not project.is_git:
        return None
    since = max(last_snapshot, catch_up.stopped_at or 0.0)
    return reflog.combine(reflog.operations_since(project, since, last_mark(state_dir)), CONTEXT)
