"""Checkpoints of a :class:`~code_trajectory.recording.session.ProjectSession`: taking them, and asking for them.

A checkpoint holds every save made before it was asked for. The process that records the project takes it here:
the watcher's pending paths when the watcher vouches for them, else a scan of the whole work tree, then a named
point on the snapshot (:mod:`code_trajectory.git.points`). Any other process (a one-shot command, a follower) asks
the recording one through :mod:`~code_trajectory.recording.checkpoint_requests`, and scans here only when no
answer comes in time; the recording process answers those requests here too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import messages
from code_trajectory.git.log import describe_files
from code_trajectory.git.points import AUTO_TURN, name_point
from code_trajectory.recording import checkpoint_requests
from code_trajectory.recording.checkpoint_requests import CheckpointAnswer, CheckpointRequest
from code_trajectory.recording.liveness import recording_now
from code_trajectory.recording.recorder import Recorder, Snapshot

if TYPE_CHECKING:
    from code_trajectory.recording.watcher import Watcher

log = logging.getLogger(__name__)


class _Session(Protocol):
    """What :class:`CheckpointMixin` uses of the :class:`~code_trajectory.recording.session.ProjectSession` it is
    mixed into (the type of ``self`` in its methods)."""

    recorder: Recorder
    watcher: Watcher | None
    import_error: Exception | None
    _started: threading.Event
    _on_snapshot: Callable[[Snapshot], None] | None

    @property
    def branch(self) -> str: ...

    @property
    def importing(self) -> bool: ...

    @property
    def records_here(self) -> bool: ...

    def check_alive(self) -> None: ...

    def take_checkpoint(self, message: str | None = None, *, name_only: bool = False) -> CheckpointAnswer: ...

    def record_checkpoint(self, note: str | None = None, *,
                          kind: str = messages.KIND_CHECKPOINT) -> Snapshot | None: ...

    def _checkpoint_here(self, message: str | None, *, name_only: bool) -> CheckpointAnswer: ...


class CheckpointMixin:
    """The checkpoints of :class:`~code_trajectory.recording.session.ProjectSession` (see the module docstring; the
    session's recorder, watcher and start-up state are used: see :class:`_Session`)."""

    def checkpoint(self: _Session, message: str | None = None) -> str:
        """Snapshot the project's exact current state now and name it; return what was recorded (markdown).

        See :meth:`take_checkpoint`.
        """
        return self.take_checkpoint(message).text

    def take_checkpoint(self: _Session, message: str | None = None, *, name_only: bool = False) -> CheckpointAnswer:
        """Snapshot the project's exact current state now and name a point on it; what was done.

        The snapshot (when anything changed) and the named point (always, also when nothing changed: see
        :mod:`code_trajectory.git.points`) let ``restore``/``compare`` refer to it by ``message``. Every save made
        before the call is in it: when another process records the project (this one is a one-shot command or a
        follower), that process is asked to take the checkpoint (its watcher may still hold back a save of the
        last seconds, see :mod:`~code_trajectory.recording.checkpoint_requests`); when it does not answer in time,
        this process scans the work tree itself.

        Args:
            message: the checkpoint's message (None or empty: a point named after the time).
            name_only: the message names the point but is not stored in the snapshot's message (the ``Stop``
                hook's ``turn ended ...``); the point is marked automatic (``turn``), not a name the user chose.

        Returns:
            ``ok`` True, ``text`` the answer (markdown), ``commit`` the named snapshot (None when nothing is
            recorded yet, an empty project: no point can be named).

        Raises:
            InvalidArgumentError: ``message`` is not a string.
            ProjectError: the project directory is gone.
            TrajectoryError: the snapshot could not be written.
        """
        self.check_alive()
        if message is not None and not isinstance(message, str):
            raise InvalidArgumentError("message must be a string or omitted")
        if not self.records_here and recording_now(self.recorder.repo.git_dir):
            answer = checkpoint_requests.ask(self.recorder.repo.state_dir, message or None, name_only=name_only)
            if answer is not None and answer.ok:
                return answer
            log.info("the recording process did not take the checkpoint (%s); scanning here",
                     answer.text if answer is not None else "no answer in time")
        return self._checkpoint_here(message or None, name_only=name_only)

    def _checkpoint_here(self: _Session, message: str | None, *, name_only: bool) -> CheckpointAnswer:
        snapshot = self.record_checkpoint(None if name_only else message)
        if snapshot is not None and self._on_snapshot is not None:  # ``watch`` prints every snapshot it writes
            self._on_snapshot(snapshot)
        tip = snapshot.commit if snapshot is not None else self.recorder.latest_commit(self.branch)
        if tip is None:
            return CheckpointAnswer(True, "Nothing is recorded yet (an empty project): no checkpoint could be named.")
        point = name_point(self.recorder.repo, tip, message or "", self.branch,
                           automatic=AUTO_TURN if name_only else None)
        name = f"Named point \"{point.message}\" on `{tip[:12]}` (refer to it by this name in restore and compare)."
        if snapshot is None:
            return CheckpointAnswer(True, f"Nothing changed since the last snapshot, so no new snapshot was needed. "
                                          f"{name}", tip)
        files = "\n".join(describe_files(snapshot.changes, 30))
        return CheckpointAnswer(True, f"Checkpoint recorded on shadow branch `{snapshot.branch}` as "
                                      f"`{snapshot.commit[:12]}`:\n{snapshot.subject}\n{name}\n\nFiles:\n{files}", tip)

    def _answer_request(self: _Session, request: CheckpointRequest) -> CheckpointAnswer:
        """Take the checkpoint another process asked for (see :mod:`~code_trajectory.recording.checkpoint_requests`)."""
        if not self._started.is_set() or self.import_error is not None:
            return CheckpointAnswer(False, "the start-up scan has not completed")
        return self._checkpoint_here(request.message, name_only=request.name_only)

    def record_waiting_handovers(self: _Session) -> None:
        """Record the edits hooks handed over that no process has recorded yet, waiting for one that records them
        now (:meth:`Recorder.record_handovers`): an answer then holds every edit whose hook returned before the
        question was asked. Nothing while the start-up scan runs (it records them first) or when none waits."""
        if not self.importing and checkpoint_requests.handovers_waiting(self.recorder.repo.state_dir):
            self.recorder.record_handovers()

    def record_checkpoint(self: _Session, note: str | None = None, *,
                          kind: str = messages.KIND_CHECKPOINT) -> Snapshot | None:
        """Snapshot the exact current state now (see :meth:`Recorder.checkpoint`); the snapshot, or None when
        nothing changed since the last one.

        When this process's watcher vouches for its pending paths (:meth:`Watcher.vouch`: every event the OS
        delivered before the call handed over, no rescan due) and the start-up scan is done, just those paths are
        recorded (the cost grows with what changed); otherwise the whole work tree is scanned.

        Raises:
            TrajectoryError: the snapshot could not be written (its changes stay pending).
        """
        watcher = self.watcher
        why: str | None
        if watcher is None:
            why = "no watcher in this process"
        elif not self._started.is_set() or self.import_error is not None:
            why = "the start-up scan has not completed"
        else:
            why = watcher.vouch()
        if why is not None:
            log.debug("checkpoint scans the work tree: %s", why)
            # with no watcher here (a one-shot command), no one saw git's stash or checkout: the reflogs tell
            return self.recorder.checkpoint(note, kind=kind, reflogs=watcher is None)
        return self.recorder.flush(kind=kind, note=messages.one_line(note) if note else None)
