"""The last session's summary (``get_session_summary``, the ``session`` command, the catch-up resource): what the
last session did, per branch, with the test status and the recap; plain functions over a
:class:`~code_trajectory.recording.session.ProjectSession`."""

from __future__ import annotations

import logging
from datetime import datetime

from code_trajectory.core.answer import Answer
from code_trajectory.git import log, points
from code_trajectory.git.diffs import tree_changes
from code_trajectory.git.shadow import SHADOW_REF_PREFIX
from code_trajectory.history import change_lines, headings, hooks, markers, summary, summary_data
from code_trajectory.recording.session import ProjectSession

#: Commits read when looking for the last session's boundary.
SESSION_SCAN_LIMIT = 5000


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
        net_symbols = {branch: change_lines.change_set_lines(
                           repo, changes, lean=True, listed=summary.net_order(changes)[:summary.NET_FILES_LISTED])
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
                          points_listed=markers.listed_names(named),
                          trees=headings.operation_trees(repo, sessions[0]) if sessions else None)
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
