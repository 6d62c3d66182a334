"""Named points as markers of the timelines (issue 23.4): under the snapshot each names, in the answer's data, and
in a line that lists the user's names apart from the automatic ones.

A point named when nothing changed names an existing snapshot (:mod:`code_trajectory.git.points`): it shows under
that snapshot, at the time it was named. The narratives (``get_global_trajectory``, ``log``, the session summary)
and the timeline page call these functions; they render nothing else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from code_trajectory.git.log import CommitRecord
from code_trajectory.git.points import AUTO_RESTORE, AUTO_TURN, AUTO_UNNAMED, Point

#: User's names listed in a line before ``and N more``.
NAMES_LISTED = 12
#: What an automatic point is called in a line, by kind.
_AUTO_WORDS = {AUTO_TURN: "turn ended", AUTO_RESTORE: "before restore", AUTO_UNNAMED: "without a name"}


def on_commits(named: Iterable[Point], commits: Iterable[str]) -> list[Point]:
    """The points of ``named`` that name one of ``commits``, oldest first (timeline order)."""
    wanted = set(commits)
    return sorted((p for p in named if p.commit in wanted), key=lambda p: (p.time, p.ref))


def not_in_headings(named: list[Point], records: Iterable[CommitRecord]) -> list[Point]:
    """The points of ``named`` that the headings of ``records`` (their snapshots) do not say already: a checkpoint's
    name is in its snapshot's heading (``checkpoint: NAME``), and the name a checkpoint without a message gave its
    own snapshot (``checkpoint HH:MM:SS``, ``unnamed``: the first such point on a snapshot recorded as a
    checkpoint without a name) repeats the heading's time. Points named later on the same snapshot stay."""
    records = list(records)
    notes = {r.oid: r.checkpoint_note for r in records}
    unnamed = {r.oid for r in records if r.kind == "checkpoint" and not r.checkpoint_note}
    kept, own_taken = [], set()
    for point in named:
        if point.message == notes.get(point.commit):
            continue
        if point.automatic == AUTO_UNNAMED and point.commit in unnamed and point.commit not in own_taken:
            own_taken.add(point.commit)
            continue
        kept.append(point)
    return kept


def commit_marks(named: list[Point]) -> dict[str, str]:
    """``{commit: one line}`` for the commits ``named`` (oldest first) names: the user's names quoted with the time
    they were named, then the automatic ones counted: ``Named point "release" (17:20); 2 automatic points (2 turn
    ended; newest "turn ended 17:25:02")``."""
    by_commit: dict[str, list[Point]] = {}
    for point in named:
        by_commit.setdefault(point.commit, []).append(point)
    marks = {}
    for commit, found in by_commit.items():
        users = [p for p in found if p.automatic is None]
        parts = [f"Named point{'s' if len(users) > 1 else ''} "
                 + ", ".join(f"\"{p.message}\" ({_hm(p)})" for p in users)] if users else []
        auto = [p for p in found if p.automatic is not None]
        if len(auto) == 1:
            parts.append(f"automatic point \"{auto[0].message}\"")
        elif auto:
            parts.append(f"{len(auto)} automatic points ({_counted(auto)}; newest \"{auto[-1].message}\")")
        marks[commit] = "; ".join(parts)
    return marks


def with_marks(marks: dict[str, str], named: list[Point]) -> dict[str, str]:
    """``marks`` (``{commit: line}`` of other providers, e.g. test runs) with :func:`commit_marks` of ``named`` put
    first on their commits: where the user stood comes before what ran there."""
    merged = dict(marks)
    for commit, mark in commit_marks(named).items():
        merged[commit] = f"{mark}; {merged[commit]}" if commit in merged else mark
    return merged


def names_line(named: list[Point], *, in_headings: int = 0) -> str | None:
    """One line listing the user's names of ``named`` (oldest first) apart from the automatic ones (counted by kind),
    None when there are none: ``Named points: "release" 17:20 `1a2b3c4d5e6f`; automatic: 3 (2 turn ended, 1 before
    restore)``. ``in_headings``: how many more names of the user's the answer's headings say (not listed again: the
    line then says so rather than "none named by you on these snapshots": the names are those of the answer's
    snapshots, and the user's names on older ones exist all the same)."""
    if not named:
        return None
    users = [p for p in named if p.automatic is None]
    shown = _listed(named)
    elsewhere = f"{in_headings} in the headings above" if in_headings else "none named by you on these snapshots"
    text = "Named points: " + ("; ".join(f"\"{p.message}\" {_hm(p)} `{p.commit[:12]}`" for p in shown)
                               if shown else elsewhere)
    if len(users) > len(shown):
        text += f" (the newest {len(shown)} of {len(users)})"
    auto = [p for p in named if p.automatic is not None]
    if auto:
        text += f"; automatic: {len(auto)} ({_counted(auto)})"
    return text


def _listed(named: list[Point]) -> list[Point]:
    """The user's points of ``named`` that :func:`names_line` lists: the newest :data:`NAMES_LISTED`."""
    return [p for p in named if p.automatic is None][-NAMES_LISTED:]


def listed_names(named: list[Point]) -> set[str]:
    """The names :func:`names_line` lists of ``named`` (the user's newest ones), e.g. for a list that would say
    them again."""
    return {p.message for p in _listed(named)}


def data(named: list[Point]) -> list[dict[str, str | None]]:
    """The structured form of the user's names among ``named`` (oldest first, as :func:`names_line` says them):
    ``name``, ``on`` (the snapshot, 12 hex digits) and ``t`` (when it was named, ``HH:MM`` as the text shows it).
    Automatic points are left out: the text only counts them."""
    return [{"name": p.message, "on": p.commit[:12], "t": _hm(p)} for p in named if p.automatic is None]


def _hm(point: Point) -> str:
    return point.time.astimezone().strftime("%H:%M")


def _counted(auto: list[Point]) -> str:
    counts = Counter(_AUTO_WORDS.get(p.automatic or "", p.automatic or "") for p in auto)
    return ", ".join(f"{n} {word}" for word, n in counts.items())
