"""Times people and models give (``core/when.py``): calendar months and years as git's approxidate counts them,
beside the fixed units."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.when import parse_when, require_when

NOW = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("1 month ago", datetime(2026, 2, 28, 12, 0, tzinfo=UTC)),  # February is shorter: its last day
    ("2 months ago", datetime(2026, 1, 31, 12, 0, tzinfo=UTC)),
    ("14 months ago", datetime(2025, 1, 31, 12, 0, tzinfo=UTC)),
    ("1 year ago", datetime(2025, 3, 31, 12, 0, tzinfo=UTC)),
    ("2 yrs ago", datetime(2024, 3, 31, 12, 0, tzinfo=UTC)),
    ("1 mo ago", datetime(2026, 2, 28, 12, 0, tzinfo=UTC)),
    ("1.5 months ago", NOW - timedelta(days=1.5 * 30.44)),
    ("5 m ago", NOW - timedelta(minutes=5)),  # m stays minutes
    ("2 weeks ago", NOW - timedelta(weeks=2)),
])
def test_months_and_years_are_calendar_ones(text: str, expected: datetime) -> None:
    assert parse_when(text, now=NOW) == expected


def test_a_leap_day_a_year_back_is_the_last_day_of_february() -> None:
    leap = datetime(2028, 2, 29, 9, 30, tzinfo=UTC)
    assert parse_when("1 year ago", now=leap) == datetime(2027, 2, 28, 9, 30, tzinfo=UTC)


def test_an_unknown_unit_is_no_time_and_the_error_lists_the_units() -> None:
    assert parse_when("3 fortnights ago", now=NOW) is None
    with pytest.raises(InvalidArgumentError, match="months\\|years ago"):
        require_when("3 fortnights ago")
