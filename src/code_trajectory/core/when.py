"""Points in time given by people and models: ISO 8601 or ``10 minutes ago``. Standard library only."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from code_trajectory.core.errors import InvalidArgumentError

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
          "d": 86400, "day": 86400, "w": 604800, "week": 604800}
_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s+ago\s*$", re.IGNORECASE)


def parse_when(text: str, *, now: datetime | None = None) -> datetime | None:
    """The moment ``text`` names, aware, or None when it is not a time.

    Accepted: ISO 8601 (``2026-11-23``, ``2026-11-23T14:02``, ``2026-11-23 14:02:11+01:00``; a time without a
    zone is local) and ``N <unit> ago`` with seconds, minutes, hours, days or weeks (``10 minutes ago``,
    ``2h ago``), also ``yesterday`` and ``now``.
    """
    now = now or datetime.now().astimezone()
    cleaned = text.strip()
    lowered = cleaned.lower()
    if lowered == "now":
        return now
    if lowered == "yesterday":
        return now - timedelta(days=1)
    match = _AGO.match(lowered)
    if match:
        unit = _UNITS.get(match.group(2))
        if unit is None:
            return None
        return now - timedelta(seconds=float(match.group(1)) * unit)
    try:
        moment = datetime.fromisoformat(cleaned.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()


def require_when(text: str, what: str = "since") -> datetime:
    """:func:`parse_when`, raising a clear error for anything else.

    Raises:
        InvalidArgumentError: ``text`` names no time.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"{what} must be a time, e.g. '2026-11-23T14:00' or '10 minutes ago'")
    moment = parse_when(text)
    if moment is None:
        raise InvalidArgumentError(f"{what} {text!r} is not a time: give ISO 8601 ('2026-11-23T14:00') or "
                                   "'N minutes|hours|days ago'")
    return moment.astimezone(UTC)
