"""The scope of a test run: which tests it ran, and how two scopes relate.

A :class:`Scope` is one of

* ``full``: the whole suite (the runner given no selection);
* ``partial``: some ``paths`` (files, directories or pytest node ids such as ``tests/test_a.py::test_x``,
  ``/``-separated and relative to the project root) and/or ``filters`` (selection options as typed:
  ``-k login``, ``-m 'not slow'``, ``--deselect …``, ``--lf``, ``3 deselected``);
* ``unknown``: the selection could not be read (another runner's arguments, a command we do not understand,
  or a run stored before scopes were recorded: ``note`` says which).

Rules (used by :mod:`code_trajectory.testruns.green`):

* :meth:`Scope.overlaps` is conservative: ``full`` and ``unknown`` overlap everything; two partial scopes overlap
  unless both name paths and no path of one is at, under or above a path of the other (filters such as ``-k`` are
  not evaluated, so they never make scopes disjoint).
* :meth:`Scope.covers` is strict: a passing run proves a scope only when its own scope contains it: ``full``
  contains everything, ``unknown`` nothing, a partial scope another partial scope whose every path lies under one
  of its paths and whose filters include all of its filters.

Pure functions; no I/O, no git.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FULL, PARTIAL, UNKNOWN = "full", "partial", "unknown"
KINDS = (FULL, PARTIAL, UNKNOWN)
#: Why a stored run has an unknown scope when it was recorded before scopes were (no ``scope`` key in its JSON).
LEGACY_NOTE = "recorded before scopes were kept"
#: Paths and filters kept per scope; characters of a label.
MAX_ITEMS = 50
MAX_ITEM_CHARS = 300
LABEL_CHARS = 120


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _parts(path: str) -> tuple[str, ...]:
    """``tests/a.py::C::t[x]`` → ``("tests", "a.py", "::C", "::t", "[x]")``: path components, then node parts."""
    file_part, _, node = path.partition("::")
    parts = [p for p in file_part.split("/") if p not in ("", ".")]
    for name in node.split("::") if node else ():
        base, bracket, param = name.partition("[")
        parts.append("::" + base)
        if bracket:
            parts.append("[" + param)
    return tuple(parts)


def path_overlaps(a: str, b: str) -> bool:
    """True when the tests under path/node id ``a`` and ``b`` can meet: one is at or under the other."""
    pa, pb = _parts(a), _parts(b)
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


def path_covers(outer: str, inner: str) -> bool:
    """True when path/node id ``inner`` is ``outer`` or lies under it (``tests`` covers ``tests/a.py::t``)."""
    po, pi = _parts(outer), _parts(inner)
    return pi[: len(po)] == po


def looks_like_test_path(test_id: str) -> bool:
    """True when a failing test's id names where it lives (``tests/a.py::t``, ``tests/a.py``), so it can be
    placed relative to a scope's paths; ids such as ``test_login`` or ``suite › adds`` cannot."""
    file_part = test_id.partition("::")[0]
    return "::" in test_id or "/" in file_part or file_part.endswith(".py")


@dataclass(frozen=True)
class Scope:
    """Which tests a run ran (see the module docstring for the kinds and rules).

    Attributes:
        kind: ``full``, ``partial`` or ``unknown``.
        paths: partial: files, directories or node ids relative to the project root (``/``-separated); empty
            means every path (the selection is by ``filters`` alone).
        filters: partial: the selection options as typed (``-k login``).
        note: unknown: why the selection could not be read.
    """

    kind: str = UNKNOWN
    paths: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()
    note: str | None = None

    @classmethod
    def full(cls) -> Scope:
        return cls(FULL)

    @classmethod
    def unknown(cls, note: str | None = None) -> Scope:
        return cls(UNKNOWN, note=note)

    @classmethod
    def partial(cls, paths: Iterable[str] = (), filters: Iterable[str] = ()) -> Scope:
        """A selection of ``paths`` and ``filters``; the full suite when it selects nothing less than everything
        (no filter, and no path or a path that is the project root)."""
        cleaned: list[str] = []
        for path in paths:
            norm = posixpath.normpath(path.replace("\\", "/")) if "::" not in path else path
            if _parts(norm) == ():
                cleaned = []  # the project root: every path
                break
            if norm not in cleaned:
                cleaned.append(norm)
        kept_filters = tuple(dict.fromkeys(filters))
        if not cleaned and not kept_filters:
            return cls(FULL)
        return cls(PARTIAL, tuple(cleaned), kept_filters)

    # -- reading -------------------------------------------------------------------------------------------

    @property
    def is_full(self) -> bool:
        return self.kind == FULL

    def label(self, limit: int = LABEL_CHARS) -> str:
        """``full suite``, ``partial: tests/test_a.py -k login``, ``unknown scope (why)``; at most ``limit``
        characters (paths beyond the first three as ``+N more``)."""
        if self.kind == FULL:
            return "full suite"
        if self.kind == UNKNOWN:
            return _clip("unknown scope" + (f" ({self.note})" if self.note else ""), limit)
        shown = list(self.paths[:3]) + ([f"+{len(self.paths) - 3} more"] if len(self.paths) > 3 else [])
        return _clip("partial: " + " ".join(shown + list(self.filters)), limit)

    def overlaps(self, other: Scope) -> bool:
        """True when a test could be in both scopes (conservative: see the module docstring)."""
        if self.kind != PARTIAL or other.kind != PARTIAL:
            return True
        if not self.paths or not other.paths:
            return True
        return any(path_overlaps(a, b) for a in self.paths for b in other.paths)

    def covers(self, other: Scope) -> bool:
        """True when every test of ``other`` is in this scope, so a pass over this scope proves ``other``."""
        if self.kind == FULL:
            return other.kind != UNKNOWN
        if self.kind == UNKNOWN or other.kind != PARTIAL:
            return False
        if not set(self.filters) <= set(other.filters):
            return False
        if not self.paths:
            return True
        return bool(other.paths) and all(any(path_covers(o, p) for o in self.paths) for p in other.paths)

    def holds_test(self, test_id: str) -> bool:
        """True when the failing test ``test_id`` may belong to this scope (always, unless it is a path-like id
        outside every path of a partial scope)."""
        if self.kind != PARTIAL or not self.paths or not looks_like_test_path(test_id):
            return True
        return any(path_overlaps(p, test_id) for p in self.paths)

    # -- JSON ----------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.paths:
            data["paths"] = list(self.paths)
        if self.filters:
            data["filters"] = list(self.filters)
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Scope:
        """Inverse of :meth:`to_dict`; anything unreadable (stored data is untrusted) is an unknown scope."""
        if not isinstance(data, Mapping) or data.get("kind") not in KINDS:
            return cls.unknown("the stored scope is unreadable")
        kind = data["kind"]
        if kind == FULL:
            return cls.full()
        if kind == UNKNOWN:
            note = data.get("note")
            return cls.unknown(_clip(note, MAX_ITEM_CHARS) if isinstance(note, str) else None)
        lists = []
        for key in ("paths", "filters"):
            value = data.get(key)
            items = value if isinstance(value, list) else []
            lists.append([_clip(v, MAX_ITEM_CHARS) for v in items[:MAX_ITEMS] if isinstance(v, str) and v])
        return cls.partial(lists[0], lists[1])


def join_filters(option: str, values: Sequence[str]) -> list[str]:
    """``["-k login"]`` from ``("-k", ["login"])``: each value shell-quoted after its option."""
    return [f"{option} {shlex.quote(v)}" for v in values]
