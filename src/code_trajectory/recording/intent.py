"""The current intent: why the next snapshots are made, shared by every process working on the project."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git import messages


class IntentStore:
    """The current intent, shared by every process working on the project.

    Stored in ``.trajectory/state/intent.json`` (``intent``, ``set_at`` ISO 8601 UTC), so the server,
    the CLI and the hooks all see and set the same intent, and it survives a restart of the server;
    :meth:`age_seconds` says how old it is, since an old intent may no longer describe the work.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "intent.json"

    def get(self) -> str | None:
        """Return the intent, or None when none is set."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return None
        intent = data.get("intent") if isinstance(data, dict) else None
        return intent if isinstance(intent, str) and intent.strip() else None

    def age_seconds(self) -> float | None:
        """Seconds since the current intent was set, or None when none is set (or its time is unreadable)."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
            set_at = datetime.fromisoformat(data["set_at"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return max(0.0, (datetime.now(timezone.utc) - set_at).total_seconds())

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

    def set(self, intent: str) -> str:
        """Store ``intent`` (secrets redacted, whitespace collapsed, at most 200 characters) and return it.

        Raises:
            InvalidArgumentError: the intent is empty.
        """
        clean = messages.free_text(intent or "")
        if not clean:
            raise InvalidArgumentError("intent must be a non-empty sentence, e.g. 'Fix login retry'")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"intent": clean, "set_at": datetime.now(timezone.utc).isoformat()}), "utf-8")
        os.replace(tmp, self.path)
        return clean

    def clear(self) -> None:
        """Forget the intent."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
