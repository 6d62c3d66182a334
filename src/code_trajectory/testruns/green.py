"""When a snapshot is green, per scope.

A snapshot is **green for a scope** when

1. a run on it passed over a scope that covers the one asked (:meth:`Scope.covers`: the full suite covers every
   selection; a partial run covers only selections within it; a run of unknown scope covers none), and
2. no run on it is red (:attr:`TestRun.is_red`) over a scope that overlaps the one asked (:meth:`Scope.overlaps`:
   the full suite and unknown scopes overlap everything; a failing run whose failing test ids are all listed and
   all outside the scope asked does not count), unless a later run on the same snapshot passed over a scope that
   covers the red run's own scope (the same command run again and passing, or a wider one: a flaky or
   environment-fixed rerun).

So a full suite that failed on a snapshot keeps it red for the full suite whatever subset passes there later.
"Last green" is asked for the full suite unless a scope is given. Legacy runs (stored before scopes were kept) have
an unknown scope: they can make a snapshot red but never prove it green.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import UTC, datetime

from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.testruns import store
from code_trajectory.testruns.model import TestRun
from code_trajectory.testruns.scope import Scope

_EPOCH = datetime.min.replace(tzinfo=UTC)


def _blocks(red: TestRun, query: Scope) -> bool:
    """True when the red run ``red`` says something failed within ``query``."""
    if not red.scope.overlaps(query):
        return False
    listed = len(red.failures)
    complete = listed > 0 and not red.more_failures and listed >= (red.failed or 0) + (red.errors or 0)
    return not complete or any(query.holds_test(test) for test, _ in red.failures)


def green_proof(runs: Sequence[TestRun], query: Scope) -> TestRun | None:
    """The newest passing run that makes the snapshot holding ``runs`` (all its runs) green for ``query``, or None
    when it is not green for it (see the module docstring)."""
    ordered = sorted(runs, key=lambda r: r.started or _EPOCH)
    proofs = [r for r in ordered if r.is_green and r.scope.covers(query)]
    if not proofs:
        return None
    for i, run in enumerate(ordered):
        cleared = any(later.is_green and later.scope.covers(run.scope) for later in ordered[i + 1:])
        if run.is_red and _blocks(run, query) and not cleared:
            return None
    return proofs[-1]


def _line_runs(repo: ShadowRepo, tip: str) -> tuple[list[TestRun], dict[str, list[TestRun]]]:
    """The runs on snapshots reachable from ``tip`` or squashed into a consolidation there (a full suite passed on
    a snapshot a consolidation replaced still proves that snapshot's tree green), newest first, and the same
    grouped by snapshot."""
    every = store.all_runs(repo)
    reachable, squashed = store.lineage(repo, tip, every)
    runs = [r for r in every if r.commit in reachable or r.commit in squashed]
    for run in runs:  # said where the run is named: "on `abc` (squashed into `def`)"
        if run.commit in squashed:
            run.squashed_into = squashed[run.commit]
    by_commit: dict[str, list[TestRun]] = {}
    for run in runs:
        by_commit.setdefault(run.commit or "", []).append(run)
    return runs, by_commit


def last_green(repo: ShadowRepo, tip: str, query: Scope | None = None) -> TestRun | None:
    """The run proving the newest green snapshot for ``query`` (default: the full suite) on ``tip``'s line (its
    snapshots and ancestors), or None when no snapshot there is green for it."""
    query = query or Scope.full()
    runs, by_commit = _line_runs(repo, tip)
    seen: set[str] = set()
    for run in runs:
        if run.commit in seen or not (run.is_green and run.scope.covers(query)):
            continue
        seen.add(run.commit or "")
        proof = green_proof(by_commit[run.commit or ""], query)
        if proof is not None:
            return proof
    return None


def blocked_pass(repo: ShadowRepo, tip: str, query: Scope) -> tuple[TestRun, TestRun] | None:
    """When no snapshot is green for ``query``: the newest passing run that covers it and the failing run on the
    same snapshot that keeps that snapshot from being green (see :func:`green_proof`), or None."""
    runs, by_commit = _line_runs(repo, tip)
    for run in runs:
        if run.is_green and run.scope.covers(query):
            blocker = next((r for r in by_commit[run.commit or ""] if r.is_red and _blocks(r, query)), None)
            if blocker is not None:
                return run, blocker
    return None


def newest_other_pass(repo: ShadowRepo, tip: str, query: Scope) -> TestRun | None:
    """The newest passing run on ``tip``'s line whose scope does not cover ``query`` (a partial or unknown run): a
    hint when nothing is green for ``query``."""
    runs, _ = _line_runs(repo, tip)
    return next((r for r in runs if r.is_green and not r.scope.covers(query)), None)


def query_text(query: Scope) -> str:
    """How to ask for ``query`` again (the ``scope`` argument): ``full`` or the paths (shell-quoted, as the filters
    are recorded, so that ``tests/test a.py`` is asked for as one path) and filters."""
    return "full" if query.is_full else " ".join([*(shlex.quote(p) for p in query.paths), *query.filters])


def scope_phrase(query: Scope) -> str:
    """``the full suite`` or ``scope `tests/a.py -k login``` (for sentences)."""
    return "the full suite" if query.is_full else f"scope `{query_text(query)}`"
