"""Test runs stored as git notes on the shadow commit they ran on."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime

from code_trajectory.core.errors import InvalidArgumentError, LockContentionError, StorageError
from code_trajectory.git.messages import CONSOLIDATE_PREFIX, TRAILER_SQUASHED_RANGE
from code_trajectory.git.shadow import TEST_RUNS_LOCK, ShadowRepo, shadow_ref
from code_trajectory.recording.handover_tag import retagged
from code_trajectory.recording.hooks import Consolidated
from code_trajectory.share.data import pulled_test_runs
from code_trajectory.testruns.model import TestRun

log = logging.getLogger(__name__)

#: The notes ref holding the runs, in the shadow repository.
NOTES_REF = "refs/notes/trajectory-tests"
#: Lock file (in ``.trajectory/``) held while a note is read, extended and written.
LOCK_NAME = TEST_RUNS_LOCK
LOCK_TIMEOUT = 10.0
#: Runs kept per commit (the oldest are dropped).
MAX_RUNS_PER_COMMIT = 50


# -- storage ---------------------------------------------------------------------------------------------


def _lock(repo: ShadowRepo):
    import filelock

    return filelock.FileLock(str(repo.git_dir / LOCK_NAME), timeout=LOCK_TIMEOUT)


def _parse_note(data: bytes) -> list[TestRun]:
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        log.warning("ignoring a test-run note that is not JSON")
        return []
    items = value if isinstance(value, list) else [value]
    runs = []
    for item in items:
        try:
            runs.append(TestRun.from_dict(item))
        except ValueError:
            continue
    return runs


def _notes_listing(repo: ShadowRepo) -> dict[str, str]:
    """``{annotated commit: note blob}`` for every note under :data:`NOTES_REF`."""
    proc = repo.git.run(["notes", f"--ref={NOTES_REF}", "list"], check=False)
    if proc.returncode != 0:  # no notes yet
        return {}
    out = proc.stdout
    listing = {}
    for line in out.decode("ascii", "replace").splitlines():
        blob, _, commit = line.strip().partition(" ")
        if blob and commit:
            listing[commit] = blob
    return listing


def _read_note(repo: ShadowRepo, blob: str) -> list[TestRun]:
    data = repo.read_blob_or_none(blob)
    return [] if data is None else _parse_note(data)


#: Free-text fields of a run that may hold a secret a test printed or a command was given (``--token=...``):
#: :func:`redacted` before a run is stored (and again before ``push`` sends it, for runs stored before).
REDACTED_FIELDS = ("command", "output_tail", "message")


def redacted(run: TestRun) -> TestRun:
    """A copy of ``run`` with secrets redacted (:func:`code_trajectory.core.secrets.redact`) from its free text:
    :data:`REDACTED_FIELDS`, the failing tests' ids and reasons, and its scope's paths and filters (a parametrized
    test's id holds its parameters, ``test_auth[ghp_…]``, and so does the node id a rerun selects)."""
    from code_trajectory.core.secrets import redact

    scope = replace(run.scope, paths=tuple(redact(path) for path in run.scope.paths),
                    filters=tuple(redact(text) for text in run.scope.filters))
    clean = replace(run, failures=[(redact(test), redact(reason)) for test, reason in run.failures], scope=scope)
    for name in REDACTED_FIELDS:
        value = getattr(clean, name)
        if isinstance(value, str):
            setattr(clean, name, redact(value))
    return clean


def record_run(repo: ShadowRepo, run: TestRun) -> None:
    """Append ``run`` to the note of ``run.commit`` (keeping the runs already there), secrets redacted from its free
    text (:func:`redacted`). When a late hand-over added its origin to that snapshot while the run ran
    (:func:`~code_trajectory.recording.handover_tag.retagged`), the run goes on the copy ``run.branch`` holds, and
    ``run.commit`` names it.

    At most :data:`MAX_RUNS_PER_COMMIT` runs are kept per commit (the oldest go).

    Raises:
        InvalidArgumentError: ``run.commit`` is missing or not a commit of the shadow repository.
        LockContentionError: ``.trajectory/tests.lock`` stayed held for :data:`LOCK_TIMEOUT` seconds.
        StorageError, GitError: the note cannot be written.
    """
    import filelock

    if not run.commit:
        raise InvalidArgumentError("a test run can only be recorded on a shadow commit (run.commit is empty)")
    commit = repo.resolve(run.commit)
    if commit is None:
        raise InvalidArgumentError(f"{run.commit} is not a commit of the shadow repository")
    try:
        with _lock(repo):
            if run.branch:  # the snapshot a late hand-over tagged while the run ran: its copy is on the branch
                commit = retagged(repo, shadow_ref(run.branch), commit)
            run.commit = commit
            proc = repo.git.run(["notes", f"--ref={NOTES_REF}", "list", commit], check=False)
            existing = proc.stdout.decode("ascii", "replace").strip() if proc.returncode == 0 else ""
            runs = _read_note(repo, existing) if existing else []
            runs.append(redacted(run))
            runs = runs[-MAX_RUNS_PER_COMMIT:]
            data = json.dumps([r.to_dict() for r in runs], ensure_ascii=True, separators=(",", ":")) + "\n"
            blob = repo.hash_bytes(data.encode("ascii"))
            repo.git.run(["notes", f"--ref={NOTES_REF}", "add", "-f", "-C", blob, commit])
    except filelock.Timeout as exc:
        raise LockContentionError(f"another process held {repo.git_dir / LOCK_NAME} for {LOCK_TIMEOUT:.0f} s; "
                                  "the test run was not recorded") from exc
    except OSError as exc:
        raise StorageError(f"cannot record the test run: {exc}") from exc
    log.info("test run recorded commit=%s outcome=%s runner=%s", commit[:12], run.outcome, run.runner)


def copy_runs(repo: ShadowRepo, source: str, target: str) -> int:
    """Record the runs of ``source`` on ``target`` too (for a commit with the same tree, e.g. a
    consolidation of snapshots ending at ``source``); return how many were copied.

    The copies name ``target`` as their commit; runs already on ``target`` are kept.
    """
    runs = runs_for(repo, [source]).get(source, [])
    for run in runs:
        run.commit = target
        record_run(repo, run)
    return len(runs)


def carry_runs(event: Consolidated) -> None:
    """The handler of :func:`code_trajectory.recording.hooks.on_consolidated` (registered by
    :mod:`code_trajectory.wiring`): the ``[CONSOLIDATE]`` commit has the last squashed snapshot's tree, so that
    snapshot's test runs still describe it and are copied to it (see :func:`copy_runs`)."""
    copy_runs(event.repo, event.squashed[0], event.commit)


def runs_for(repo: ShadowRepo, commits: Iterable[str], *, pulled: bool = True) -> dict[str, list[TestRun]]:
    """The runs recorded on each of ``commits`` (full ids), oldest first; commits without runs are left out.

    One ``git notes list`` for all commits, then the notes through the shadow repository's
    ``cat-file --batch`` process; with ``pulled``, a commit of a pulled trajectory gets the runs its author
    shared (:func:`pulled_runs`).
    """
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    listing = _notes_listing(repo)
    result: dict[str, list[TestRun]] = {}
    if pulled:
        result.update(pulled_runs(repo, wanted))
    if not listing:
        return result
    for commit in wanted:
        blob = listing.get(commit)
        if blob is None and 4 <= len(commit) < 40:
            matches = [c for c in listing if c.startswith(commit)]
            if len(matches) == 1:
                blob = listing[matches[0]]
        if blob is None:
            continue
        runs = _read_note(repo, blob)
        if runs:
            result[commit] = runs
    return result


def marks_for(repo: ShadowRepo, commits: Iterable[str]) -> dict[str, str]:
    """``{commit: summary line}`` of the newest run on each of ``commits`` that has one.

    When a commit has several runs the line is the newest's, followed by ``(N runs)``
    when their verdicts differ (a flaky or environment-dependent suite).
    """
    marks = {}
    for commit, runs in runs_for(repo, commits).items():
        epoch = datetime.min.replace(tzinfo=UTC)
        newest = max(runs, key=lambda r: r.started or epoch)
        line = newest.summary_line()
        if len({r.outcome for r in runs}) > 1:
            line += f" ({len(runs)} runs, not all {newest.outcome})"
        marks[commit] = line
    return marks


def all_runs(repo: ShadowRepo) -> list[TestRun]:
    """Every recorded run, newest first (by ``started_at``; runs without a time last): ours (notes), and those
    pulled trajectories shared (on their own commits; a branch's lineage selects them only for that trajectory's
    tip)."""
    runs: list[TestRun] = [run for found in pulled_runs(repo).values() for run in found]
    for commit, blob in _notes_listing(repo).items():
        for run in _read_note(repo, blob):
            run.commit = run.commit or commit
            runs.append(run)
    epoch = datetime.min.replace(tzinfo=UTC)
    runs.sort(key=lambda r: r.started or epoch, reverse=True)
    return runs


def reachable_from(repo: ShadowRepo, tip: str) -> set[str]:
    """The commits reachable from ``tip`` (its own snapshots and its ancestors), from one ``git rev-list``.

    Raises:
        GitError: git failed.
    """
    return set(repo.git.text(["rev-list", "--end-of-options", tip, "--"]).split())


def lineage(repo: ShadowRepo, tip: str, runs: Iterable[TestRun] = ()) -> tuple[set[str], dict[str, str]]:
    """What counts as "on this branch" for test runs: the commits reachable from ``tip`` (its own snapshots and
    its ancestors, such as the branch it was started from), and ``{squashed commit: consolidation}`` for the
    snapshots that consolidations on that line replaced (read from their ``Trajectory-Squashed-Range``), looked
    for only when one of ``runs`` is on a commit not reachable, and only among the consolidations made since the
    oldest such run (``git log --first-parent --since --grep`` on the trailer: git reads every commit message it
    walks, ~2.5 s for 100,000 snapshots on a loaded 2-core machine, so the walk stops at that run's day).

    Raises:
        GitError: git failed.
    """
    reachable = reachable_from(repo, tip)
    squashed: dict[str, str] = {}
    away = [run.started for run in runs if run.commit not in reachable]
    if not away:
        return reachable, squashed
    oldest = min((started for started in away if started is not None), default=None)
    since = [f"--since=@{int(oldest.timestamp()) - 86400}"] if oldest is not None else []  # a day of clock skew
    found = repo.git.text(["log", "--first-parent", "--no-color", *since, f"--grep=^{TRAILER_SQUASHED_RANGE}: ",
                           f"--format=%H %P%x00%(trailers:key={TRAILER_SQUASHED_RANGE},valueonly,separator=%x20)"
                           "%x00%s", "--end-of-options", tip, "--"])
    for line in found.split("\n"):
        head, _, rest = line.partition("\0")
        span, _, subject = rest.partition("\0")
        oids = head.split()
        span = span.strip()
        if not oids or not subject.startswith(CONSOLIDATE_PREFIX) or ".." not in span:
            continue
        last = span.split("..", 1)[1]
        if repo.resolve(last) is None:
            continue
        before = [f"^{oids[1]}"] if len(oids) > 1 else []  # none: it squashed the history's first snapshots
        for oid in repo.git.text(["rev-list", "--end-of-options", last, *before, "--"]).split():
            squashed[oid] = oids[0]
    return reachable, squashed


def history(repo: ShadowRepo, limit: int = 10, *, branch: str | None = None, tip: str | None = None) -> list[TestRun]:
    """The last ``limit`` recorded runs, newest first.

    Args:
        repo: the shadow repository.
        limit: how many runs at most (>= 1).
        branch: only runs recorded on this project branch (``run.branch``).
        tip: only runs on snapshots reachable from this commit (a branch's line with its ancestors), or
            squashed into one of them; such a run's ``squashed_into`` names the consolidation.

    Raises:
        InvalidArgumentError: ``limit`` is not a positive integer.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgumentError(f"limit must be a positive integer, got {limit!r}")
    runs = all_runs(repo)
    if branch is not None:
        runs = [r for r in runs if r.branch == branch]
    if tip is not None:
        reachable, squashed = lineage(repo, tip, runs)
        kept = []
        # a consolidation's copy of a squashed snapshot's run (carry_runs) stands for it: listed once
        consolidations = set(squashed.values())
        copies = {(r.commit, r.started, r.command) for r in runs if r.commit in consolidations}
        for run in runs:
            if run.commit in reachable:
                kept.append(run)
            elif run.commit in squashed and (squashed[run.commit], run.started, run.command) not in copies:
                run.squashed_into = squashed[run.commit]
                kept.append(run)
        runs = kept
    return runs[:limit]


def last_run(repo: ShadowRepo, *, branch: str | None = None, tip: str | None = None) -> TestRun | None:
    """The newest recorded run (see :func:`history` for ``branch`` and ``tip``), or None."""
    runs = history(repo, 1, branch=branch, tip=tip)
    return runs[0] if runs else None


def pulled_runs(repo: ShadowRepo, commits: Iterable[str] | None = None) -> dict[str, list[TestRun]]:
    """``{commit: runs}`` (oldest first) that pulled sources recorded (:mod:`code_trajectory.share.data` checks their format) on ``commits`` (all when None)."""
    result: dict[str, list[TestRun]] = {}
    for commit, items in pulled_test_runs(repo, commits).items():
        runs = []
        for item in items:
            try:
                run = TestRun.from_dict(item)
            except ValueError:
                continue
            run.commit = commit
            runs.append(run)
        if runs:
            result[commit] = runs
    return result
