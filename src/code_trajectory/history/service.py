"""The read-only narratives of the trajectory: how a file evolved, what changed across the project,
what the last session was about. Plain functions over a :class:`~code_trajectory.recording.session.ProjectSession`;
the MCP tools (:mod:`.tools`) and the CLI (:mod:`.commands`) call them."""

from __future__ import annotations

import functools
import json
import logging
import shlex
from datetime import datetime
from pathlib import Path

from code_trajectory.core.answer import Answer, message, short
from code_trajectory.core.errors import InvalidArgumentError, StorageError
from code_trajectory.core.when import require_when
from code_trajectory.git import file_versions, indexed_log, log, points
from code_trajectory.git.diffs import tree_changes
from code_trajectory.git.shadow import SHADOW_REF_PREFIX, ShadowRepo, branch_of_ref, shadow_ref
from code_trajectory.git.snapshots import resolve_snapshot
from code_trajectory.git.trees import list_files
from code_trajectory.history import compare as compare_mod
from code_trajectory.history import (
    headings,
    hooks,
    markers,
    narrative,
    recent,
    render_file,
    render_symbol,
    search,
    summary,
    summary_data,
    symbol_history,
    versions,
)
from code_trajectory.project import check_range, confine, path_exists
from code_trajectory.recording.session import ProjectSession
from code_trajectory.symbols import language_for

MAX_DEPTH = 200
MAX_LIMIT = 1000
#: What ``depth``, ``diffs`` and ``limit`` accept, ``(low, high)``: checked here (:func:`check_range`) and declared
#: as ``minimum``/``maximum`` in the tools' input schemas (:func:`~code_trajectory.core.mcp_util.bounded`).
DEPTH_RANGE = (1, MAX_DEPTH)
DIFFS_RANGE = (0, MAX_DEPTH)
LIMIT_RANGE = (1, MAX_LIMIT)
#: Commits read when looking for the last session's boundary.
SESSION_SCAN_LIMIT = 5000


def resolve_branch(session: ProjectSession, branch: str | None) -> str:
    """The project branch a read is about: ``branch`` when it names a recorded shadow branch (or the current
    branch), else the current branch when ``branch`` is None.

    Raises:
        InvalidArgumentError: ``branch`` is not a string, or no shadow branch has that name (the message lists them).
    """
    current = session.branch
    if branch is None or branch == current:
        return current
    if not isinstance(branch, str) or not branch.strip() or "\0" in branch:
        raise InvalidArgumentError("branch must be the name of a project branch, e.g. 'main'")
    known = sorted(branch_of_ref(ref) for ref in session.recorder.repo.shadow_refs())
    if branch not in known:
        raise InvalidArgumentError(f"no snapshots on branch {branch!r}; recorded branches: "
                                   f"{', '.join(f'`{b}`' for b in known) or '(none yet)'}")
    return branch


def _is_dir(path: Path) -> bool:
    """``path.is_dir()`` that answers False for names the OS refuses (too long, invalid)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def read_point(session: ProjectSession, branch: str | None, source: str | None) -> tuple[str, str | None]:
    """What a read is about: ``(label, tip)`` for our ``branch`` (default: the current one) or, with ``source``,
    a shared trajectory (``alice@example.com/feature-x``, see :mod:`code_trajectory.share`). ``tip`` is None when
    nothing is recorded.

    Raises:
        InvalidArgumentError: both given, or an unknown branch or source (the message lists what exists).
    """
    if source is not None:
        if branch is not None:
            raise InvalidArgumentError("give either branch (ours) or source (a shared trajectory), not both")
        from code_trajectory.share.service import resolve_source

        ref = resolve_source(session.recorder.repo, source)
        return source, session.recorder.repo.resolve(ref)
    name = resolve_branch(session, branch)
    return name, session.recorder.latest_commit(name)


def file_trajectory(session: ProjectSession, filepath: str, depth: int = 5, branch: str | None = None,
                    source: str | None = None) -> str:
    """How one file evolved: its last ``depth`` recorded versions on ``branch`` (default: the current one), oldest to
    newest, each with the symbols and every line that changed (the token budget is a cap: see
    :mod:`code_trajectory.history.render_file`).

    Args:
        session: the project.
        filepath: the file, relative to the project root (or absolute inside it).
        depth: versions shown, 1 to :data:`MAX_DEPTH`.
        branch: a recorded branch; None for the current one.
        source: a shared trajectory to read instead (``alice@example.com/main``; see ``list_trajectories``).

    Returns:
        An :class:`~code_trajectory.core.answer.Answer` (markdown and data).

    Raises:
        InvalidArgumentError, PathOutsideProjectError: a bad path, depth or branch.
    """
    session.check_alive()
    check_range("depth", depth, *DEPTH_RANGE)
    rel = confine(session.root, filepath)
    branch, ref = read_point(session, branch, source)  # a new branch starts from the last snapshot
    repo = session.recorder.repo
    if ref is None:
        return message(narrative.never_recorded(rel, session.recorder.policy.explain(rel),
                                                path_exists(session.root / rel), []))
    # the newest versions, one more than LOOKBACK: whether there are more (then not counted: issue 29), the reverts
    entries = file_versions.file_history(repo, ref, rel, limit=versions.LOOKBACK + 1, counted=depth,
                               lister=indexed_log.open_log(repo, shadow_ref(branch), ref) if source is None else None)
    complete = len(entries) <= versions.LOOKBACK
    if not entries:
        candidates = list(list_files(repo, ref))  # a tree that cannot be read is a GitError, not "no suggestions"
        return message(narrative.never_recorded(rel, session.recorder.policy.explain(rel),
                                                path_exists(session.root / rel), candidates,
                                                is_directory=_is_dir(session.root / rel),
                                                elsewhere=file_versions.branches_holding(repo, rel, branch) if source is None else []))
    shown = min(depth, len(entries))
    marks = hooks.commit_marks(repo, [e.record.oid for e in entries[:shown]])
    shown_versions = versions.build(repo, entries, shown, marks, complete=complete)
    names = render_symbol.named_points(repo)  # a checkpoint that found nothing new named the snapshot before it
    for version in shown_versions:
        version.named = tuple(names.get(version.record.oid, ()))
    note = None
    last = entries[0]
    if last.change.status == "D":
        # read alone, a rename's old path is a deletion: the snapshot's own changes say where it went
        whole = log.read_log(repo, [last.record.oid], limit=1)
        went = next((c.path for c in whole[0].changes if c.old_path == rel), None) if whole else None
        note = (f"The file was renamed to `{went}` at {narrative.fmt_time(last.record.time)} (its later history: "
                f"get_file_trajectory(filepath={json.dumps(went)}))." if went else
                f"The file was deleted at {narrative.fmt_time(last.record.time)} and not recorded since.")
    elif last.path != rel:
        note = f"Followed across renames: earlier recorded as `{last.path}`."
    return render_file.render(repo, rel, branch, shown_versions, len(entries), session.settings.token_budget,
                              complete=complete,
                              state_note=note, symbols_available=language_for(rel) is not None)


def global_trajectory(session: ProjectSession, limit: int = 20, since_consolidate: bool = False,
                      branch: str | None = None, source: str | None = None) -> str:
    """What changed across the project: recent snapshots of ``branch`` (default: the current one), oldest to newest,
    each with its files, +/- counts and the symbols that changed in them.

    Returns:
        An :class:`~code_trajectory.core.answer.Answer` (markdown; data: every snapshot's fields, and the named
        points on them, oldest first: :func:`code_trajectory.history.markers.data`).

    Raises:
        InvalidArgumentError: a bad limit, flag or branch.
    """
    session.check_alive()
    check_range("limit", limit, *LIMIT_RANGE)
    if not isinstance(since_consolidate, bool):
        raise InvalidArgumentError("since_consolidate must be true or false")
    repo = session.recorder.repo
    if source is not None:
        branch, ref = read_point(session, branch, source)
    else:
        branch = resolve_branch(session, branch)
        ref = shadow_ref(branch)
    if ref is None or repo.resolve(ref) is None:
        return message(recent.render([], branch, session.settings.token_budget, since_consolidate=since_consolidate,
                                     reached_consolidation=False, more_available=False))
    read = MAX_LIMIT if since_consolidate else limit + 1
    # a root commit's changes (the start of recording: every file of the project) are read only when few
    records = log.read_log(repo, [ref], limit=read, first_parent=True, root_changes=False)
    log.read_root_changes(repo, records)
    reached = False
    if since_consolidate:
        cut = next((i for i, r in enumerate(records) if r.is_consolidation), None)
        if cut is not None:
            records, reached = records[:cut], True
        more = False
    else:
        more = len(records) > limit
        records = records[:limit]
    log.add_line_counts(repo, records)
    every = markers.on_commits(points.points(repo), [r.oid for r in records])
    named = markers.not_in_headings(every, records)  # a name the heading says is not repeated
    marks = markers.with_marks(hooks.commit_marks(repo, [r.oid for r in records]), named)
    symbols = versions.symbols_of(repo, records, lean=True)
    trees = operation_trees(repo, records)
    text = recent.render(records, branch, session.settings.token_budget, since_consolidate=since_consolidate,
                         reached_consolidation=reached, more_available=more, marks=marks,
                         symbols=symbols, trees=trees)
    in_headings = sum(1 for p in every if p.automatic is None) - sum(1 for p in named if p.automatic is None)
    line = markers.names_line(named, in_headings=in_headings)
    text = f"{text}\n\n{line}" if line else text
    return Answer(text, recent.within_text(text, {**recent.data(text, branch, records, marks, more),
                                                  "named_points": markers.data(named) or None}))


def operation_trees(repo: ShadowRepo, records: list[log.CommitRecord]) -> dict[str, str]:
    """``{commit: tree id}`` of the git operations and restores among ``records`` and of their first parents: what
    :func:`code_trajectory.history.headings.net_zero_spans` compares to find operations that cancel out."""
    trees: dict[str, str] = {}
    for record in records:
        if record.is_git_operation or record.kind == "restore":
            for oid in [record.oid, *record.parents[:1]]:
                try:
                    trees.setdefault(oid, repo.commit_tree_oid(oid))
                except StorageError:  # a parent not fetched with a shared trajectory: nothing to compare
                    continue
    return trees


def session_summary(session: ProjectSession, recap: str | None = None, notices: list[str] | None = None,
                    tests: str | None = None, source: str | None = None) -> str:
    """Markdown summary of the last session and whether a new one starts now; an
    :class:`~code_trajectory.core.answer.Answer` whose data holds the points named on the last session's snapshots
    (``named_points``, oldest first, see :func:`code_trajectory.history.markers.data`).

    Args:
        session: the project.
        recap: the recap's section (markdown), shown at the end.
        notices: extra notices to show first.
        tests: the test status section (markdown).
        source: summarise a shared trajectory (``alice@example.com/main``) instead of our own branches.
    """
    session.check_alive()
    repo = session.recorder.repo
    current_intent = session.recorder.intent.describe()
    foreign = False
    if source is not None:
        from code_trajectory.share.service import resolve_source, source_intent

        refs = [resolve_source(repo, source)]
        foreign = not refs[0].startswith(SHADOW_REF_PREFIX)
        if foreign:  # another author's: their intent, never ours
            notices = [f"this is the shared trajectory `{source}`, read-only"] + list(notices or [])
            current_intent = source_intent(repo, refs[0]) or "(none shared)"
    else:
        refs = list(repo.shadow_refs())
    # the import's changes are every file of the project and the summary counts none of them
    records = log.read_log(repo, refs, limit=SESSION_SCAN_LIMIT, date_order=True, root_changes=False)
    gap = session.settings.session_gap_seconds
    sessions = log.sessions(records, gap)
    net_by_branch = {}
    net_symbols: dict[str, dict[str, str]] = {}  # by branch, then path
    if sessions:
        last = sessions[0]
        if len(last) <= 500:
            log.add_line_counts(repo, last)
        for work in summary.split_by_branch(last):
            first = work.records[-1]
            # the import of the existing tree is where the session starts, not work done in it
            # (a history begun by a checkpoint, no import, begins with a root snapshot: the same baseline)
            start = first.oid if headings.began_recording(first) else first.parents[0]
            start_tree = repo.commit_tree_oid(start) if start else None
            net_by_branch[work.branch] = tree_changes(repo, start_tree, repo.commit_tree_oid(work.records[0].oid))
        net_symbols = {branch: {change.path: line for change in summary.net_order(changes)[:summary.NET_FILES_LISTED]
                                if (line := versions.symbol_line_of(repo, change))}
                       for branch, changes in net_by_branch.items()}
    all_notices = ([] if foreign else session.status_notices()) + list(notices or [])
    # the points named in the last session, also on a snapshot it did not change (named when nothing changed)
    named = markers.on_commits(points.points(repo), [r.oid for r in sessions[0]]) if sessions else []
    # saves seen, waiting for the debounce; not the rescan a watcher's start asks for (it usually finds nothing)
    now = datetime.now().astimezone()
    pending = not foreign and session.recorder.has_pending(wait=False, rescan=False)
    text = summary.render(now=now, gap_seconds=gap, sessions=sessions, current_intent=current_intent,
                          current_branch=session.branch, net_by_branch=net_by_branch, net_symbols=net_symbols,
                          pending=pending, recap=recap, budget_tokens=session.settings.token_budget,
                          notices=all_notices, tests=tests, points_line=markers.names_line(named),
                          trees=operation_trees(repo, sessions[0]) if sessions else None)
    fields_ = summary_data.summary_data(
        now=now, gap_seconds=gap, sessions=sessions, current_intent=current_intent, current_branch=session.branch,
        net_by_branch=net_by_branch, net_symbols=net_symbols, pending=pending, notices=all_notices,
        sections=[tests, recap])
    points_data = markers.data(named)
    if points_data:  # said before the final state, as the text says them
        at = list(fields_).index("final") if "final" in fields_ else len(fields_)
        items = list(fields_.items())
        fields_ = dict([*items[:at], ("named_points", points_data), *items[at:]])
    return Answer(text, fields_)


def symbol_trajectory(session: ProjectSession, filepath: str, symbol: str, depth: int = 10,
                      branch: str | None = None, source: str | None = None, show_baseline: bool = False,
                      diffs: int = render_symbol.DEFAULT_DIFFS) -> str:
    """The versions in which one function, class or method changed, each with only its own diff.

    Args:
        session: the project.
        filepath: the file, relative to the project root.
        symbol: the qualified name (``Serializer.loads``) or an unambiguous short one (``loads``).
        depth: changes shown at most, 1 to :data:`MAX_DEPTH`.
        branch: a recorded branch; None for the current one.
        show_baseline: show the symbol's body as first recorded instead of one line (its size, first line).
        diffs: the newest changes shown with their lines, 0 to :data:`MAX_DEPTH` (default
            :data:`~code_trajectory.history.render_symbol.DEFAULT_DIFFS`); each older one is one line (its why, when,
            ``+3 -1, lines 41-52``) and the answer ends with the call that shows their lines.
        source: a shared trajectory to read instead (``alice@example.com/main``; see ``list_trajectories``).

    Raises:
        InvalidArgumentError: a bad path, depth, branch or source; no such symbol (the closest names are listed).
    """
    session.check_alive()
    check_range("depth", depth, *DEPTH_RANGE)
    check_range("diffs", diffs, *DIFFS_RANGE)
    rel = confine(session.root, filepath)
    if not isinstance(symbol, str) or not symbol.strip() or "\0" in symbol:
        raise InvalidArgumentError("symbol must be a function, class or method name, e.g. 'Serializer.loads'")
    branch, tip = read_point(session, branch, source)
    if tip is None:
        raise InvalidArgumentError("nothing is recorded yet: there is no symbol history to show")
    repo = session.recorder.repo
    try:
        name, found, more = symbol_history.trace(repo, tip, rel, symbol.strip(), depth, show_baseline=show_baseline,
                                                 index_ref=shadow_ref(branch) if source is None else None)
    except symbol_history.NeverRecordedError as exc:
        elsewhere = file_versions.branches_holding(repo, rel, branch) if source is None else []
        if not elsewhere:
            raise
        raise InvalidArgumentError(f"{rel!r} was never recorded on branch {branch!r}; it is recorded on branch "
                                   f"{', '.join(repr(b) for b in elsewhere)}: pass branch={json.dumps(elsewhere[0])} "
                                   f"(CLI --branch {shlex.quote(elsewhere[0])})") from exc
    return render_symbol.render(rel, branch, name, found, session.settings.token_budget,
                                render_symbol.named_points(repo), diffs,
                                others=symbol_history.other_definitions(repo, tip, rel, name),
                                older_depth=min(depth * 2, MAX_DEPTH) if more and depth < MAX_DEPTH else None)


def search_trajectory(session: ProjectSession, query: str, regex: bool = False, path: str | None = None,
                      since: str | None = None, limit: int = 20, branch: str | None = None,
                      source: str | None = None) -> str:
    """The snapshots that added or removed text matching ``query`` (git's pickaxe), newest first, with the lines.

    Args:
        session: the project.
        query: the text, or with ``regex`` a regular expression (Python/POSIX syntax).
        regex: treat ``query`` as a regular expression (``git log -G``) rather than text (``git log -S``).
        path: only this file or directory, relative to the project root.
        since: only snapshots after this time (ISO 8601 or ``10 minutes ago``).
        limit: snapshots at most, 1 to :data:`MAX_LIMIT`.
        branch: a recorded branch; None for the current one.
        source: a shared trajectory to search instead (see ``list_trajectories``).

    Raises:
        InvalidArgumentError: an empty query, an invalid regex, a bad path, time, limit, branch or source.
    """
    session.check_alive()
    check_range("limit", limit, *LIMIT_RANGE)
    if not isinstance(regex, bool):
        raise InvalidArgumentError("regex must be true or false")
    rel = confine(session.root, path) if path is not None else None
    moment = require_when(since) if since is not None else None
    branch, tip = read_point(session, branch, source)
    if tip is None:
        return message("Nothing is recorded yet: no snapshot to search.")
    hits = search.search(session.recorder.repo, tip, query, regex=regex, path=rel, since=moment, limit=limit + 1,
                         index_ref=shadow_ref(branch) if source is None else None)
    # one more than asked for: whether the answer holds them all
    return search.render(query, branch, hits[:limit], session.settings.token_budget, regex=regex,
                         more=len(hits) > limit)


def compare(session: ProjectSession, from_snapshot: str, to_snapshot: str = "now",
            filepath: str | None = None, source: str | None = None) -> str:
    """The change between two snapshots, or a snapshot and the work tree (``to_snapshot="now"``), per file: counts,
    changed symbols and the diffs within ``compare_token_budget`` (20,000 tokens by default: see
    :class:`~code_trajectory.core.config.TrajectorySettings`).

    Args:
        session: the project.
        from_snapshot, to_snapshot: snapshot references (commit id, checkpoint message, ``~N``, a time); ``now`` for
            the work tree as it is (scanned, nothing recorded).
        filepath: one file relative to the project root; None for the whole project.
        source: a shared trajectory whose snapshots the references name (``~N`` counts back from its newest, a
            name is one of its named points first); ``now`` is still our work tree.

    Returns:
        The answer; its structured content: ``from``, ``to`` (ids, or ``now``), ``from_why``, ``to_why`` (when and
        why each side was recorded, as the heading says) and the files (:func:`compare.net_change_data`).

    Raises:
        InvalidArgumentError: a bad reference, path or source.
    """
    session.check_alive()
    rel = confine(session.root, filepath) if filepath is not None else None
    repo, recorder = session.recorder.repo, session.recorder
    if source is None:
        resolve = functools.partial(resolve_snapshot, repo, tip=recorder.latest_commit(session.branch))
    else:
        from code_trajectory.share.service import resolve_in_source

        resolve = functools.partial(resolve_in_source, repo, source)
    old = resolve(from_snapshot)
    if isinstance(to_snapshot, str) and to_snapshot.strip().lower() == "now":
        new_tree, new_label, new_how = recorder.work_tree_tree(), "now", "the work tree now"
    else:
        new = resolve(to_snapshot)
        new_tree, new_label, new_how = repo.commit_tree_oid(new.commit), new.commit[:12], f"`{new.commit[:12]}` ({new.how})"
    heading = (f"# Compare `{old.commit[:12]}` ({old.how}) → {new_how}" + (f", `{rel}` only" if rel else ""))
    whys = {"from_why": _point_why(repo, old.commit), "to_why": None if new_label == "now" else _point_why(repo, new.commit)}
    heading += f"\n- From: {whys['from_why']}\n- To: {whys['to_why'] or 'the work tree as it is now'}"
    answer = compare_mod.render_net_change(repo, old.commit, new_tree, session.settings.compare_token_budget,
                                           heading=heading, new_label=new_label, only=rel)
    if not answer.data:  # no difference: a message
        if rel is not None and not any(list_files(repo, tree, [f":(literal){rel}"])
                                       for tree in (repo.commit_tree_oid(old.commit), new_tree)):
            # not "identical": there is nothing to compare (ignored, a secret, a typo), as get_file_trajectory says
            reason = session.recorder.policy.explain(rel)
            return message(f"{heading}\n\n`{rel}` is in neither state, so there is nothing to compare: "
                           + (f"it is not recorded ({reason})." if reason else
                              "neither holds a file or directory at that path (relative to the project root; "
                              "get_file_trajectory tells when a file was recorded)."))
        return answer
    return Answer(answer, {"from": short(old.commit), "to": new_label, **{k: v for k, v in whys.items() if v},
                           **answer.data})


def _point_why(repo: ShadowRepo, commit: str) -> str:
    """``2026-11-25 14:02:11 · Intent: Fix login``: when a snapshot was taken and why (:func:`headings.why`)."""
    found = log.read_log(repo, [commit], limit=1, with_changes=False)
    return f"{narrative.fmt_time(found[0].time)} · {headings.why(found[0], import_files=False)}" if found else commit[:12]


def full_session_summary(session: ProjectSession, source: str | None = None) -> str:
    """The session summary with the test status and the recap: what ``get_session_summary`` and ``session`` show.

    The test status comes from the sections registered with :func:`code_trajectory.history.hooks.on_summary_section`
    (``testruns``' ``## Tests``, registered by :mod:`code_trajectory.wiring`), the recap from
    :mod:`code_trajectory.recap.render`; a recap that cannot be read is left out with a log line, never failing
    the summary.
    """
    from code_trajectory.recap.render import recap_for_summary

    recap_text = None
    try:
        recap_text = recap_for_summary(session.root)
    except Exception as exc:  # noqa: BLE001 - the summary still answers without the recap
        logging.getLogger(__name__).warning("recap unavailable for the summary: %s", exc)
    if source is not None:  # another author's trajectory: our recap and test runs are not about it
        from code_trajectory.share.service import points_text

        sections = [hooks.source_summary_sections(session, source), points_text(session.recorder.repo, source)]
        return session_summary(session, source=source, tests="\n\n".join(filter(None, sections)) or None)
    return session_summary(session, recap=recap_text, tests=hooks.summary_sections(session))
