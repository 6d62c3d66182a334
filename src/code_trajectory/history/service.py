"""The read-only narratives of the trajectory: how a file evolved, what changed across the project,
what the last session was about. Plain functions over a :class:`~code_trajectory.recording.session.ProjectSession`;
the MCP tools (:mod:`.tools`) and the CLI (:mod:`.commands`) call them."""

from __future__ import annotations

import functools
import json
import shlex
from pathlib import Path

from code_trajectory.core.answer import Answer, message, short
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.text import cli_operands
from code_trajectory.core.when import require_when
from code_trajectory.git import file_versions, indexed_log, log, points
from code_trajectory.git.branch_indexes import is_ancestor
from code_trajectory.git.messages import display_path, how_named
from code_trajectory.git.shadow import ShadowRepo, branch_of_ref, shadow_ref
from code_trajectory.git.snapshots import resolve_snapshot
from code_trajectory.git.trees import list_files
from code_trajectory.history import (
    change_lines,
    constant_history,
    headings,
    hooks,
    markers,
    narrative,
    recent,
    render_file,
    render_symbol,
    search,
    symbol_history,
    versions,
)
from code_trajectory.history import compare as compare_mod
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
        return message(narrative.never_recorded(rel, session.recorder.explain(rel),
                                                path_exists(session.root / rel), []))
    # the newest versions, one more than LOOKBACK: whether there are more (then not counted: issue 29), the reverts
    entries = file_versions.file_history(repo, ref, rel, limit=versions.LOOKBACK + 1, counted=depth,
                               lister=indexed_log.open_log(repo, shadow_ref(branch), ref) if source is None else None)
    complete = len(entries) <= versions.LOOKBACK
    if not entries:
        candidates = list(list_files(repo, ref))  # a tree that cannot be read is a GitError, not "no suggestions"
        return message(narrative.never_recorded(rel, session.recorder.explain(rel),
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
        note = (f"The file was renamed to `{display_path(went)}` at {narrative.fmt_time(last.record.time)} "
                f"(its later history: "
                f"get_file_trajectory(filepath={json.dumps(went)}), CLI `code-trajectory file {cli_operands([went])}`)."
                if went else
                f"The file was deleted at {narrative.fmt_time(last.record.time)} and not recorded since.")
    elif last.path != rel:
        note = f"Followed across renames: earlier recorded as `{display_path(last.path)}`."
    deeper = min(len(entries), MAX_DEPTH)  # the depth that shows every version read, at most the largest
    return render_file.render(repo, rel, branch, shown_versions, len(entries), session.settings.token_budget,
                              complete=complete, deeper=deeper if deeper > shown else None,
                              state_note=note, symbols_available=language_for(rel) is not None)


def global_trajectory(session: ProjectSession, limit: int = 20, since_consolidate: bool = False,
                      branch: str | None = None, source: str | None = None, before: str | None = None) -> str:
    """What changed across the project: recent snapshots of ``branch`` (default: the current one), oldest to newest,
    each with its files, +/- counts and the symbols that changed in them.

    Args:
        before: page back: the snapshots older than this one (a commit id, a checkpoint's name, ``~N`` or a time,
            as ``compare`` takes them), following its first parents; None: from the newest. An answer that leaves
            older snapshots out names the ``before`` that shows them.

    Returns:
        An :class:`~code_trajectory.core.answer.Answer` (markdown; data: every snapshot's fields, and the named
        points on them, oldest first: :func:`code_trajectory.history.markers.data`).

    Raises:
        InvalidArgumentError: a bad limit, flag, branch or ``before`` (or ``before`` with ``since_consolidate``).
    """
    session.check_alive()
    check_range("limit", limit, *LIMIT_RANGE)
    if not isinstance(since_consolidate, bool):
        raise InvalidArgumentError("since_consolidate must be true or false")
    if before is not None and since_consolidate:
        raise InvalidArgumentError("give before or since_consolidate, not both")
    repo = session.recorder.repo
    if source is not None:
        branch, ref = read_point(session, branch, source)
    else:
        branch = resolve_branch(session, branch)
        ref = shadow_ref(branch)
    if ref is None or repo.resolve(ref) is None:
        return message(recent.render([], branch, session.settings.token_budget, since_consolidate=since_consolidate,
                                     reached_consolidation=False, more_available=False))
    start: str | None = ref
    if before is not None:
        tip = repo.resolve(ref)
        if source is not None:  # the names of that trajectory's points, never our own (as compare resolves them)
            from code_trajectory.share.service import resolve_in_source

            older_than = resolve_in_source(repo, source, before).commit
        else:
            older_than = resolve_snapshot(repo, before, tip).commit
        if tip is not None and not is_ancestor(repo, older_than, tip):  # another branch's: not this line's page
            raise InvalidArgumentError(f"{before!r} ({older_than[:12]}) is no snapshot of the shadow branch "
                                       f"`{branch}`: give one of its snapshots, or the branch it was recorded on")
        start = repo.resolve(f"{older_than}~1")  # None: it is the first snapshot
        before = older_than[:12]
    if start is None:
        return message(recent.render([], branch, session.settings.token_budget, since_consolidate=False,
                                     reached_consolidation=False, more_available=False, before=before))
    read = MAX_LIMIT if since_consolidate else limit + 1
    # a root commit's changes (the start of recording: every file of the project) are read only when few
    records = log.read_log(repo, [start], limit=read, first_parent=True, root_changes=False)
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
    symbols = change_lines.symbols_of(repo, records, lean=True)
    trees = headings.operation_trees(repo, records)
    text = recent.render(records, branch, session.settings.token_budget, since_consolidate=since_consolidate,
                         reached_consolidation=reached, more_available=more, marks=marks,
                         symbols=symbols, trees=trees, before=before)
    in_headings = sum(1 for p in every if p.automatic is None) - sum(1 for p in named if p.automatic is None)
    line = markers.names_line(named, in_headings=in_headings)
    text = f"{text}\n\n{line}" if line else text
    return Answer(text, recent.within_text(text, {**recent.data(text, branch, records, marks, more),
                                                  "named_points": markers.data(named) or None}))


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
    index_ref = shadow_ref(branch) if source is None else None
    try:
        name, found, more = symbol_history.trace(repo, tip, rel, symbol.strip(), depth, show_baseline=show_baseline,
                                                 index_ref=index_ref)
    except symbol_history.NeverRecordedError as exc:
        elsewhere = file_versions.branches_holding(repo, rel, branch) if source is None else []
        if not elsewhere:
            raise
        raise InvalidArgumentError(f"{rel!r} was never recorded on branch {branch!r}; it is recorded on branch "
                                   f"{', '.join(repr(b) for b in elsewhere)}: pass branch={json.dumps(elsewhere[0])} "
                                   f"(CLI --branch {shlex.quote(elsewhere[0])})") from exc
    except InvalidArgumentError:  # no such symbol: a module constant's history, when the file has one so named
        constant = constant_history.trace(repo, tip, rel, symbol.strip(), depth, show_baseline, index_ref)
        if constant is None:
            raise
        name, found, more = constant
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
        new_tree, new_label, new_how = repo.commit_tree_oid(new.commit), new.commit[:12], f"`{new.commit[:12]}`{how_named(new.commit, new.how)}"
    heading = (f"# Compare `{old.commit[:12]}`{how_named(old.commit, old.how)} → {new_how}" + (f", `{display_path(rel)}` only" if rel else ""))
    whys = {"from_why": _point_why(repo, old.commit), "to_why": None if new_label == "now" else _point_why(repo, new.commit)}
    heading += f"\n- From: {whys['from_why']}\n- To: {whys['to_why'] or 'the work tree as it is now'}"
    answer = compare_mod.render_net_change(repo, old.commit, new_tree, session.settings.compare_token_budget,
                                           heading=heading, new_label=new_label, only=rel)
    if not answer.data:  # no difference: a message
        if rel is not None and not any(list_files(repo, tree, [rel])
                                       for tree in (repo.commit_tree_oid(old.commit), new_tree)):
            # not "identical": there is nothing to compare (ignored, a secret, a typo), as get_file_trajectory says
            reason = session.recorder.explain(rel)
            return message(f"{heading}\n\n`{display_path(rel)}` is in neither state, so there is nothing to compare: "
                           + (f"it is not recorded ({reason})." if reason else
                              "neither holds a file or directory at that path (relative to the project root; "
                              "get_file_trajectory, CLI `code-trajectory file PATH`, tells when a file was recorded)."))
        return answer
    return Answer(answer, {"from": short(old.commit), "to": new_label, **{k: v for k, v in whys.items() if v},
                           **answer.data})


def _point_why(repo: ShadowRepo, commit: str) -> str:
    """``2026-11-25 14:02:11 · Intent: Fix login``: when a snapshot was taken and why (:func:`headings.why`)."""
    found = log.read_log(repo, [commit], limit=1, with_changes=False)
    return f"{narrative.fmt_time(found[0].time)} · {headings.why(found[0], import_files=False)}" if found else commit[:12]
