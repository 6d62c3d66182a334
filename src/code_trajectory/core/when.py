"""Points in time given by people and models: ISO 8601 or ``10 minutes ago``. Standard library only."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

from code_trajectory.core.errors import InvalidArgumentError

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
          "d": 86400, "day": 86400, "w": 604800, "week": 604800}
#: Calendar units, in months: ``N months ago`` is the same day N months back (the month's last day when it is
#: shorter), as git's approxidate counts them; a fraction of one counts 30.44 days a month (365.25 / 12).
_MONTHS = {"mo": 1, "mon": 1, "month": 1, "y": 12, "yr": 12, "year": 12}
_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s+ago\s*$", re.IGNORECASE)


def parse_when(text: str, *, now: datetime | None = None) -> datetime | None:
    """The moment ``text`` names, aware, or None when it is not a time.

    Accepted: ISO 8601 (``2026-11-23``, ``2026-11-23T14:02``, ``2026-11-23 14:02:11+01:00``; a time without a
    zone is local) and ``N <unit> ago`` with seconds, minutes, hours, days, weeks, months or years (``10 minutes
    ago``, ``2h ago``, ``1 month ago``), also ``yesterday`` and ``now``.
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
        count, name = float(match.group(1)), match.group(2)
        months = _MONTHS.get(name)
        if months is not None:
            return _months_back(now, count * months)
        unit = _UNITS.get(name)
        if unit is None:
            return None
        return now - timedelta(seconds=count * unit)
    try:
        moment = datetime.fromisoformat(cleaned.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()


def _months_back(now: datetime, months: float) -> datetime:
    """``now`` moved back ``months`` calendar months (see :data:`_MONTHS`)."""
    if months != int(months):
        return now - timedelta(days=months * 30.44)
    year, month = divmod(now.year * 12 + now.month - 1 - int(months), 12)
    if year < 1:
        return datetime.min.replace(tzinfo=now.tzinfo)
    day = min(now.day, calendar.monthrange(year, month + 1)[1])
    return now.replace(year=year, month=month + 1, day=day)


#: The latest commit time read as it is (a year short of the last ``datetime`` holds, so a local zone and a few days
#: added still fit): a commit planted in ``.trajectory`` or pulled from a teammate may carry any time git accepts.
LATEST_COMMIT_TIME = datetime(9999, 1, 1, tzinfo=UTC)


def from_unix(stamp: int) -> datetime:
    """git's time ``stamp`` (seconds since 1970, as ``%ct`` prints it) as an aware UTC datetime, held between 1970
    and :data:`LATEST_COMMIT_TIME` (a commit of year 33658, which ``git fsck`` accepts, made every answer on its
    history fail: ``datetime`` ends at year 9999)."""
    return datetime.fromtimestamp(min(max(stamp, 0), int(LATEST_COMMIT_TIME.timestamp())), UTC)


def parse_stored_time(value: object) -> datetime | None:
    """An ISO 8601 time this package wrote into one of its files, as an aware datetime (a naive one is UTC, as it
    was written); None when ``value`` is not a string holding one (a missing or damaged field)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


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
                                   "'N minutes|hours|days|weeks|months|years ago'")
    return moment.astimezone(UTC)
