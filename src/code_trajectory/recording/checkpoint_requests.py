"""Checkpoint requests: another process asks the one recording a project to snapshot now, through files.

Only the holder of ``.trajectory/recorder.lock`` records (see :mod:`code_trajectory.recording.session`). A save
made a moment ago may still be pending in its watcher (the 2 s debounce), invisible to every other process. So
a process that must name a checkpoint holding every save made before it asked (the Claude Code ``Stop`` hook,
``code-trajectory checkpoint``, a server that only follows) asks the recording process instead of scanning on
its own:

1. it writes ``.trajectory/state/requests/<id>.request`` (``<id>``: 32 random hex digits; JSON
   ``{"message": str | null, "name_only": bool}``; created under a temporary name and renamed, so it is read
   whole);
2. the recording process lists that directory every :data:`POLL_SECONDS`, claims a request by renaming it to
   ``<id>.taken`` (one ``rename(2)``: a request is handled at most once), takes the checkpoint
   (``ProjectSession.record_checkpoint``: its watcher's pending paths after it proved that every event the OS
   delivered before the request was handed over, else a full scan) and names the point;
3. it answers in ``<id>.answer`` (JSON ``{"ok": bool, "text": str, "commit": str | null}``), which the asker
   reads and removes.

The asker waits :data:`PICKUP_TIMEOUT` for the claim; a request nobody claimed by then is withdrawn (removed:
``unlink`` and the claim's ``rename`` cannot both succeed) and the asker records on its own, as it does when
nothing records the project. A claimed request is waited for up to :data:`ANSWER_TIMEOUT` (the recording process
is taking that very snapshot). Answers nobody collected are removed after :data:`STALE_SECONDS`.

The files are untrusted input (anything running as the user can write there): names must match exactly, files
must be regular files of at most :data:`MAX_REQUEST_BYTES` / :data:`MAX_ANSWER_BYTES` (opened without following
symlinks), fields are type-checked and bounded, and nothing in them is ever run.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from code_trajectory.core.atomic import is_temp_name, replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.recording.handoff import EDIT_KIND, MAX_HANDOVER_BYTES, REQUEST_DIR, HandedOverEdit, parse_edit

if TYPE_CHECKING:
    from code_trajectory.recording.recorder import Recorder

log = logging.getLogger(__name__)

#: How often the recording process lists the request directory, seconds (a listing of a near-empty directory;
#: measured: 0.3 % of a core at 20 listings a second, 0.15 % at 10).
POLL_SECONDS = 0.1
#: How long an asker waits for the recording process to claim its request, seconds.
PICKUP_TIMEOUT = 1.0
#: How long an asker waits for the answer to a claimed request, seconds (a snapshot waits up to 10 s for
#: ``write.lock``, see ``opening.WRITE_LOCK_TIMEOUT``).
ANSWER_TIMEOUT = 15.0
#: How often an asker looks for the claim and the answer, seconds.
ASK_POLL_SECONDS = 0.01
#: Largest request and answer files read, bytes.
MAX_REQUEST_BYTES = 4096
MAX_ANSWER_BYTES = 256 * 1024
#: Longest checkpoint message accepted in a request, characters.
MAX_MESSAGE_CHARS = 1000
#: Requests handled per listing (the rest wait for the next one); entries looked at per listing.
MAX_REQUESTS_PER_POLL = 8
MAX_ENTRIES_PER_POLL = 256
#: Age past which a claimed request, an answer or a temporary file of ours is removed, seconds.
STALE_SECONDS = 60.0
#: After a drain of waiting hand-overs recorded none (their snapshot failed), seconds before a listing tries again.
EDIT_RETRY_SECONDS = 2.0

#: A file of the requests directory: a request, a claim or an answer. A temporary file of
#: :func:`code_trajectory.core.atomic.replace_file` (:func:`~code_trajectory.core.atomic.is_temp_name`) is listed
#: too, with no kind: removed when stale, as a kill may leave it.
_NAME = re.compile(r"^(?P<id>[0-9a-f]{32})\.(?P<kind>request|taken|answer|edit|claimed)$")
#: The suffix of an edit hand-over while the process that claimed it records it.
CLAIMED_EDIT = "claimed"
_COMMIT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class CheckpointRequest:
    """One request read from disk.

    Attributes:
        id: its 32 hex digits.
        message: the checkpoint's message (None: none given).
        name_only: True when the message only names the point (the ``Stop`` hook's ``turn ended ...``); False
            when the snapshot carries it too (``checkpoint -m``, the ``checkpoint`` tool).
    """

    id: str
    message: str | None
    name_only: bool


@dataclass(frozen=True)
class CheckpointAnswer:
    """What the recording process did.

    Attributes:
        ok: True when the checkpoint was taken (or nothing was recorded yet and nothing could be named).
        text: the checkpoint's answer (markdown), or why it failed.
        commit: the snapshot the point names (None: nothing recorded yet, or failed).
    """

    ok: bool
    text: str
    commit: str | None = None


def request_dir(state_dir: Path) -> Path:
    """``<state_dir>/requests``."""
    return state_dir / REQUEST_DIR


def _write_atomically(directory: Path, name: str, payload: dict) -> None:
    replace_file(directory / name, json.dumps(payload), mode=0o600, fsync=False)  # lost in a crash: re-asked


def parse_request(request_id: str, data: bytes) -> CheckpointRequest:
    """Validate a request file's bytes.

    Raises:
        ValueError: not a JSON object of exactly ``message`` (a string of at most :data:`MAX_MESSAGE_CHARS`
            characters without NUL, or null) and ``name_only`` (a boolean).
    """
    payload = json.loads(data.decode("utf-8"))
    if not isinstance(payload, dict) or set(payload) != {"message", "name_only"}:
        raise ValueError("a request is an object with exactly the keys message and name_only")
    message, name_only = payload["message"], payload["name_only"]
    if message is not None and (not isinstance(message, str) or len(message) > MAX_MESSAGE_CHARS
                                or "\0" in message):
        raise ValueError(f"message must be null or a string of at most {MAX_MESSAGE_CHARS} characters")
    if not isinstance(name_only, bool):
        raise ValueError("name_only must be a boolean")
    return CheckpointRequest(request_id, message, name_only)


def parse_answer(data: bytes) -> CheckpointAnswer:
    """Validate an answer file's bytes.

    Raises:
        ValueError: not a JSON object with ``ok`` (boolean), ``text`` (string) and ``commit`` (a full commit id
            or null).
    """
    payload = json.loads(data.decode("utf-8"))
    if not isinstance(payload, dict):
        raise ValueError("an answer is a JSON object")
    ok, text, commit = payload.get("ok"), payload.get("text"), payload.get("commit")
    if not isinstance(ok, bool) or not isinstance(text, str):
        raise ValueError("an answer has a boolean ok and a string text")
    if commit is not None and (not isinstance(commit, str) or not _COMMIT.match(commit)):
        raise ValueError("an answer's commit is a full commit id or null")
    return CheckpointAnswer(ok, text, commit)


def ask(state_dir: Path, message: str | None, *, name_only: bool, pickup_timeout: float = PICKUP_TIMEOUT,
        answer_timeout: float = ANSWER_TIMEOUT) -> CheckpointAnswer | None:
    """Ask the process recording the project to take a checkpoint now; its answer, or None when it did not
    claim the request within ``pickup_timeout`` seconds or answer within ``answer_timeout`` seconds (the caller
    then records on its own).

    Args:
        state_dir: the shadow repository's ``state`` directory (``.trajectory/state``).
        message: the checkpoint's message (see :class:`CheckpointRequest`); longer ones are cut.
        name_only: the message only names the point (see :class:`CheckpointRequest`).
    """
    directory = request_dir(state_dir)
    request_id = secrets.token_hex(16)
    request = directory / f"{request_id}.request"
    answer = directory / f"{request_id}.answer"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        _write_atomically(directory, request.name, {
            "message": message[:MAX_MESSAGE_CHARS].replace("\0", "") if message is not None else None,
            "name_only": name_only})
    except OSError as exc:
        log.debug("cannot write a checkpoint request: %s", exc)
        return None
    started = time.monotonic()
    claimed = False
    while True:
        data = read_bounded(answer, MAX_ANSWER_BYTES)
        if data is not None:
            _unlink(answer)
            try:
                return parse_answer(data)
            except ValueError as exc:
                log.warning("the recording process's answer was unreadable (%s); recording here", exc)
                return None
        waited = time.monotonic() - started
        if not claimed:
            claimed = not request.exists()
            if not claimed and waited >= pickup_timeout:
                try:
                    os.unlink(request)  # withdrawn: the recording process can no longer claim it
                    return None
                except FileNotFoundError:
                    claimed = True  # claimed just now
                except OSError:
                    return None
        if claimed and waited >= answer_timeout:
            return None
        time.sleep(ASK_POLL_SECONDS)


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def record_handed_over(recorder: Recorder, edit: HandedOverEdit) -> None:
    """Snapshot the files of one hand-over together, tagged with its origin and carrying its agent session's
    intent (what the recording process and the edit worker do with a claimed hand-over), or tag the snapshot that
    recorded them before their hook ran (:mod:`~code_trajectory.recording.handover_tag`); a path outside the
    project is ignored with a warning.

    Raises:
        TrajectoryError: the snapshot could not be written.
    """
    import logging

    from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError
    from code_trajectory.project import confine

    rels, pinned = [], {}
    for path in edit.paths:
        try:
            rel = confine(recorder.root, path)
        except (PathOutsideProjectError, InvalidArgumentError):
            logging.getLogger(__name__).warning("ignored a handed-over edit outside the project: %r", path)
            continue
        rels.append(rel)
        if path in edit.contents:
            pinned[rel] = edit.contents[path]
    if rels:
        with recorder.acting_for(edit.session or None):
            if recorder.record_paths(rels, origin=edit.origin, pinned=pinned) is None:
                from code_trajectory.recording.handover_tag import tag_recorded_edit

                tag_recorded_edit(recorder, rels, edit.origin)  # a stop's snapshot took the edit before its hook


def drain_edits(state_dir: Path, record: Callable[[HandedOverEdit], None]) -> int:
    """Claim the edit hand-overs in ``state_dir``'s requests directory oldest first (their names sort in the order
    their hooks ran, see :mod:`~code_trajectory.recording.handoff`) and ``record`` each; how many were claimed.

    The caller holds what keeps every other recorder from recording meanwhile (:meth:`Recorder.record_handovers`:
    the recorder's lock and ``write.lock``). An invalid hand-over is logged and removed. One whose snapshot could
    not be written (a full disk, a read-only ``.trajectory``, a held lock) is put back and the drain stops there, so
    that it and the later ones are recorded in order by the next snapshot: the work tree may hold a newer state of
    its files by then. One whose snapshot failed otherwise is removed (its file's content is in the work tree for
    the next snapshot).

    Raises:
        StorageError, GitError: a hand-over's snapshot could not be written; it waits for the next drain.
    """
    from code_trajectory.core.errors import GitError, StorageError

    directory = request_dir(state_dir)
    claimed = 0
    while True:
        try:
            with os.scandir(directory) as entries:
                names = sorted(e.name for e in entries if e.name.endswith(f".{EDIT_KIND}") and _NAME.match(e.name))
        except OSError:
            return claimed
        if not names:
            return claimed
        for name in names[:MAX_ENTRIES_PER_POLL]:
            taken = directory / f"{name[:32]}.{CLAIMED_EDIT}"
            try:
                os.rename(directory / name, taken)
            except OSError:
                continue  # claimed by another process meanwhile
            claimed += 1
            data = read_bounded(taken, MAX_HANDOVER_BYTES)
            try:
                if data is None:
                    raise ValueError(f"not a regular file of at most {MAX_HANDOVER_BYTES} bytes")
                record(parse_edit(data))
            except ValueError as exc:
                log.warning("ignored an invalid edit hand-over %s: %s", taken.name, exc)
            except (StorageError, GitError):
                with contextlib.suppress(OSError):  # kept for the next drain, in its place among the others
                    os.rename(taken, directory / name)
                raise
            except Exception as exc:  # noqa: BLE001 - the edit is still recorded by the watcher or the next scan
                log.warning("recording a handed-over edit failed: %s", exc)
            _unlink(taken)


def handovers_waiting(state_dir: Path) -> bool:
    """True when ``state_dir``'s requests directory holds an edit hand-over not yet recorded: waiting, or claimed
    and being recorded (or left by a process killed meanwhile, until it is removed as stale)."""
    try:
        with os.scandir(request_dir(state_dir)) as entries:
            return any(e.name.endswith((f".{EDIT_KIND}", f".{CLAIMED_EDIT}")) for e in entries)
    except OSError:
        return False


def attach_handovers(recorder: Recorder) -> None:
    """Make ``recorder`` record the edits hooks handed over before each of its snapshots
    (:meth:`~code_trajectory.recording.recorder.Recorder.record_handovers`): when any waits (or is being recorded
    by another process), under ``.trajectory/write.lock``, which every recorder holds to draw its claims and
    snapshots, so that the hand-overs land in their hooks' order whichever process records them.

    Raises (from the drain):
        LockContentionError: another process held ``write.lock`` too long.
    """
    state_dir = recorder.repo.state_dir

    def drain() -> int:
        if not handovers_waiting(state_dir):
            return 0
        with recorder.writing():
            return drain_edits(state_dir, lambda edit: record_handed_over(recorder, edit))

    recorder.handover_drain = drain


class RequestServer:
    """The recording process's side: a thread that claims requests and answers them with ``handle``.

    Args:
        state_dir: the shadow repository's ``state`` directory (``.trajectory/state``).
        handle: takes the checkpoint a request asks for; called on this server's thread, one at a time. An
            exception it raises is answered as a failure (the asker then records on its own).
        drain_edits: records every edit hand-over present, oldest first, and returns how many
            (:meth:`Recorder.record_handovers`); None: they are left to go stale.
        ready: False while hand-overs must wait (the start-up scan runs).
    """

    def __init__(self, state_dir: Path, handle: Callable[[CheckpointRequest], CheckpointAnswer],
                 drain_edits: Callable[[], int] | None = None,
                 ready: Callable[[], bool] = lambda: True) -> None:
        self.directory = request_dir(state_dir)
        self.handle = handle
        #: records the edits hooks handed over (:mod:`code_trajectory.recording.handoff`); None: left to go stale
        self.drain_edits = drain_edits
        #: False while hand-overs must wait (the start-up scan runs): they are claimed on a later listing
        self.ready = ready
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="trajectory-requests", daemon=True)
        self._edits_retry_at = 0.0  # monotonic time before which waiting hand-overs are left to the snapshots

    def start(self) -> None:
        """Start answering (a missing directory is created, also again after ``.trajectory`` was recreated)."""
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop answering; a checkpoint being taken is finished first (up to ``timeout`` seconds)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                self.poll()
            except Exception:  # never let the thread die
                log.exception("answering checkpoint requests failed")

    def poll(self) -> int:
        """Claim and answer the requests present now (at most :data:`MAX_REQUESTS_PER_POLL`); how many."""
        try:
            names = self._names()
        except FileNotFoundError:
            if self.directory.parent.is_dir():  # .trajectory was recreated: so is the directory
                with contextlib.suppress(OSError):
                    self.directory.mkdir(mode=0o700, exist_ok=True)
            return 0
        except OSError as exc:
            log.debug("cannot list %s: %s", self.directory, exc)
            return 0
        handled = answered = 0
        now = time.time()
        edits = [name for name, request_id, kind in names if kind == EDIT_KIND and request_id is not None]
        if edits and self.drain_edits is not None and self.ready():
            if time.monotonic() >= self._edits_retry_at:
                # before the checkpoint requests: a checkpoint asked after an edit's hook ran holds that edit's
                # snapshot
                drained = self.drain_edits()
                handled += drained
                # none recorded: their snapshot failed (a full disk...) and they wait; the watcher's retries and
                # the next snapshots drain them too, this listing tries again later rather than ten times a second
                self._edits_retry_at = 0.0 if drained else time.monotonic() + EDIT_RETRY_SECONDS
            edits = []
        for name, request_id, kind in names:
            if kind != "request" or request_id is None:
                if kind != EDIT_KIND or name in edits:
                    self._remove_if_stale(name, now)
                continue
            if answered >= MAX_REQUESTS_PER_POLL or self._stop.is_set():
                break
            taken = self.directory / f"{request_id}.taken"
            try:
                os.rename(self.directory / name, taken)
            except OSError:
                continue  # withdrawn by its asker meanwhile
            handled += 1
            answered += 1
            self._answer(request_id, taken)
        return handled

    def _names(self) -> list[tuple[str, str | None, str | None]]:
        """``(name, request id, kind)`` of our files in the directory; id and kind None for a temporary file."""
        found: list[tuple[str, str | None, str | None]] = []
        with os.scandir(self.directory) as entries:
            for i, entry in enumerate(entries):
                if i >= MAX_ENTRIES_PER_POLL:
                    break
                match = _NAME.match(entry.name)
                if match is not None:
                    found.append((entry.name, match.group("id"), match.group("kind")))
                elif is_temp_name(entry.name):
                    found.append((entry.name, None, None))
        return found

    def _answer(self, request_id: str, taken: Path) -> None:
        data = read_bounded(taken, MAX_REQUEST_BYTES)
        try:
            if data is None:
                raise ValueError("not a regular file of at most 4 KiB")
            request = parse_request(request_id, data)
        except ValueError as exc:
            log.warning("ignored an invalid checkpoint request %s: %s", taken.name, exc)
            answer = CheckpointAnswer(False, f"invalid checkpoint request: {exc}")
        else:
            try:
                answer = self.handle(request)
            except Exception as exc:  # noqa: BLE001 - answered: the asker records on its own
                log.warning("a requested checkpoint failed: %s", exc)
                answer = CheckpointAnswer(False, f"the recording process could not take the checkpoint: {exc}")
        try:
            _write_atomically(self.directory, f"{request_id}.answer",
                              {"ok": answer.ok, "text": answer.text, "commit": answer.commit})
        except OSError as exc:
            log.warning("cannot answer the checkpoint request %s: %s", request_id, exc)
        _unlink(taken)

    def _remove_if_stale(self, name: str, now: float) -> None:
        path = self.directory / name
        try:
            if now - path.lstat().st_mtime > STALE_SECONDS:
                path.unlink()
        except OSError:
            pass
