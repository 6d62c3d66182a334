"""The current intent: why the next snapshots are made, shared by every process working on the project."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object
from code_trajectory.core.errors import InvalidArgumentError, StorageError
from code_trajectory.core.freetext import free_text
from code_trajectory.core.when import parse_stored_time
from code_trajectory.recording.liveness import read_recorder_state

#: How long before a recorder's start an intent may have been set and still belong to the session that starts,
#: when the previous recorder did not stop cleanly, seconds: a prompt reaches Claude Code's hook while its
#: server starts (about a second; ten for a loaded machine).
START_GRACE_SECONDS = 10.0
#: Other agent sessions whose intents are kept beside the current one (two Claude Code sessions in one project).
MAX_SESSIONS = 8



def checked_intent(intent: str | None) -> str:
    """``intent`` as it is stored (secrets redacted, whitespace collapsed, at most 200 characters).

    Raises:
        InvalidArgumentError: it is empty once cleaned (checked before anything is opened or written).
    """
    clean = free_text(intent or "")
    if not clean:
        raise InvalidArgumentError("intent must be a non-empty sentence, e.g. 'Fix login retry'")
    return clean

class IntentStore:
    """The current intent, shared by every process working on the project.

    Stored in ``.trajectory/state/intent.json`` (``intent``, ``set_at`` ISO 8601 UTC, and ``session``: the agent
    session that set it, a Claude Code hook's ``session_id``, or null), so the server, the CLI and the hooks all
    see and set the same intent; :meth:`age_seconds` says how old it is. ``sessions`` keeps the intents of up to
    :data:`MAX_SESSIONS` other agent sessions (``{session: {"intent", "set_at"}}``): the prompt of one session
    does not take the intent of another session that is still working on the project. ``previous`` keeps the intent
    the current one replaced (``intent``, ``set_at``, ``session``): a save made before a new intent was set by
    another process (``code-trajectory intent``, a prompt's hook), while the recording process held it back for the
    debounce, is recorded with the intent it was made under (:meth:`get`'s ``as_of``).

    An intent belongs to the recording session it was set in (issue 22): a recorder that starts ends an intent
    left by an earlier one (:meth:`end_stale`), the start-up scan's snapshot carries none, and a hook of one agent
    session does not carry another session's intent (:meth:`get`).
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "intent.json"

    def _read(self) -> dict:
        return read_json_object(self.path) or {}

    def get(self, *, session: str | None = None, as_of: float | None = None) -> str | None:
        """Return the intent, or None when none is set or it belongs to another session.

        An intent set by an agent session (a hook's ``session_id``) is not returned to a different one; one set
        before the last recorder stopped (``recorder.json``'s ``stopped_at``, present only while nothing records)
        belonged to that recording session and is not returned either, unless ``session`` set it.

        Args:
            session: the agent session asking (a hook's ``session_id``); None: the server, ``watch``, the CLI.
            as_of: when the changes to be labelled were last made (epoch seconds), or None (now). An intent set
                after that time was not theirs: the one it replaced is returned (the same rules applied to it), or
                None when it replaced none.
        """
        data = self._read()
        if as_of is not None:
            set_at = parse_stored_time(data.get("set_at"))
            if set_at is not None and set_at.timestamp() > as_of:
                before = data.get("previous")
                data = before if isinstance(before, dict) else {}
                older = parse_stored_time(data.get("set_at"))
                if older is None or older.timestamp() > as_of:
                    return None
        intent = data.get("intent")
        if not isinstance(intent, str) or not intent.strip():
            return None
        intent = free_text(intent)  # as set() stores it: a file written by hand, or planted, is text like any other
        owner = data.get("session")
        if session and isinstance(owner, str) and owner:
            if owner == session:
                return intent
            kept = data.get("sessions")
            entry = kept.get(session) if isinstance(kept, dict) else None
            own = entry.get("intent") if isinstance(entry, dict) else None
            return free_text(own) if isinstance(own, str) and own.strip() else None
        stopped = parse_stored_time(read_recorder_state(self.path.parent).get("stopped_at"))
        set_at = parse_stored_time(data.get("set_at"))
        if stopped is not None and set_at is not None and set_at <= stopped:
            return None
        return intent

    def set_at(self) -> datetime | None:
        """When the current intent was set (UTC), or None when none is set or its time is unreadable."""
        return parse_stored_time(self._read().get("set_at"))

    def end_stale(self, previous: dict, *, alive_since: datetime | None = None) -> bool:
        """At the start of a recording process: forget an intent that belongs to an earlier recording session.

        The intent is stale when it was set before the previous recorder stopped (``previous["stopped_at"]``),
        or, when that recorder did not stop cleanly (no ``stopped_at``), more than :data:`START_GRACE_SECONDS`
        before now. Kept: an intent set after the previous stop (a prompt may reach the hook just before its
        session's server starts, ``claude -p``), one set while this process was alive (``alive_since``: a server
        that answered queries while another one recorded, and now takes over), and any when no recorder ran before.

        Args:
            previous: the previous recorder's state (``recording.liveness.read_recorder_state``), read before this
                process writes its own.
            alive_since: when this process started (UTC); None: now.

        Returns:
            True when an intent was forgotten.
        """
        set_at = self.set_at()
        now = datetime.now(UTC)
        if set_at is None or not previous or set_at >= (alive_since or now):
            return False
        stopped = parse_stored_time(previous.get("stopped_at"))
        stale = set_at <= stopped if stopped is not None else (now - set_at).total_seconds() > START_GRACE_SECONDS
        if stale:
            self.clear()
        return stale

    def age_seconds(self) -> float | None:
        """Seconds since the current intent was set, or None when none is set (or its time is unreadable)."""
        set_at = self.set_at()
        if set_at is None:
            return None
        return max(0.0, (datetime.now(UTC) - set_at).total_seconds())

    def describe(self) -> str | None:
        """The intent with its age, e.g. ``"Fix login retry" (set 12 min ago)``, or None when none is set."""
        intent = self.get()
        if intent is None:
            return None
        age = self.age_seconds()
        if age is None:
            return f"\"{intent}\""
        minutes = int(age // 60)
        when = "just now" if minutes < 1 else f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"
        return f"\"{intent}\" (set {when})"

    def set(self, intent: str, *, session: str | None = None) -> str:
        """Store ``intent`` (secrets redacted, whitespace collapsed, at most 200 characters) and return it.

        Args:
            intent: the task, one sentence.
            session: the agent session that sets it (a Claude Code hook's ``session_id``), or None.

        Raises:
            InvalidArgumentError: the intent is empty.
            StorageError: it cannot be written (a full disk, a read-only ``.trajectory``).
        """
        clean = checked_intent(intent)
        try:
            self._write(clean, session)
        except OSError as exc:
            raise StorageError(f"cannot write the intent to {self.path}: {exc}") from exc
        return clean

    def _write(self, clean: str, session: str | None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        stored: dict = {"intent": clean, "set_at": datetime.now(UTC).isoformat(), "session": session or None}
        before = self._read()
        if isinstance(before.get("intent"), str) and isinstance(before.get("set_at"), str):  # see get's as_of
            stored["previous"] = {key: before.get(key) for key in ("intent", "set_at", "session")}
        if session:  # the intents of the other agent sessions stay theirs (an intent without a session ends them)
            kept = before.get("sessions")
            others = {k: v for k, v in kept.items() if isinstance(k, str) and k != session
                      and isinstance(v, dict)} if isinstance(kept, dict) else {}
            owner = before.get("session")
            if isinstance(owner, str) and owner and owner != session and isinstance(before.get("intent"), str):
                others.pop(owner, None)  # the newest last
                others[owner] = {"intent": before["intent"], "set_at": before.get("set_at")}
            if others:
                stored["sessions"] = dict(list(others.items())[-MAX_SESSIONS:])
        # no fsync (the rename stays atomic): an intent a power loss takes is set again by the next prompt, and a
        # hook's prompt should not wait for the disk (issue 29)
        replace_file(self.path, json.dumps(stored), fsync=False)

    def clear(self) -> None:
        """Forget the intent."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
