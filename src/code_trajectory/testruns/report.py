"""Test status as markdown: the test history, the tests section of the session summary, what changed since
green, and an agent's own report. Plain functions over a
:class:`~code_trajectory.recording.session.ProjectSession`, behind the MCP tools and the CLI."""

from __future__ import annotations

from code_trajectory.core.answer import Answer, message
from code_trajectory.git import log
from code_trajectory.history import compare, narrative, render_file, versions
from code_trajectory.project import check_range, confine
from code_trajectory.recording.session import ProjectSession
from code_trajectory.testruns import answers, service, store

MAX_LIMIT = 1000


def branch_and_tip(session: ProjectSession, branch: str | None) -> tuple[str, str | None]:
    """The branch asked for (default: the project's current one) and the snapshot its runs are read from: its
    shadow ref's tip, or for a branch with no snapshot yet the snapshot it starts from (the newest of any branch).

    Raises:
        InvalidArgumentError: ``branch`` is not a string naming a recorded branch (the message lists them).
    """
    from code_trajectory.history.service import resolve_branch

    name = resolve_branch(session, branch)
    return name, session.recorder.latest_commit(name)


def where(run, branch: str) -> str:
    """`` on `abc123` `` plus where that snapshot sits for ``branch``: an ancestor's, or squashed."""
    text = f"`{(run.commit or '?')[:12]}`"
    if run.squashed_into:
        text += f" (squashed into `{run.squashed_into[:12]}`)"
    elif run.branch and run.branch != branch:
        text += f" (on `{run.branch}`, an ancestor of `{branch}`)"
    return text


def tests_section(session: ProjectSession, branch: str | None = None) -> str | None:
    """``## Tests`` lines for the summary: last run and when tests were last green, on ``branch`` and its ancestors."""
    repo = session.recorder.repo
    branch, tip = branch_and_tip(session, branch)
    if tip is None:
        return None
    last = store.last_run(repo, tip=tip)
    if last is None:
        return None
    green = last if last.is_green else store.last_green(repo, tip=tip)
    lines = ["## Tests", f"- Last run: {narrative.fmt_time(last.started) if last.started else '?'} on "
             f"{where(last, branch)} — {last.summary_line()} (`{last.command}`)"]
    if green is None:
        lines.append(f"- Never green on `{branch}` in the recorded runs.")
    elif green is not last:
        lines.append(f"- Last green: {narrative.fmt_time(green.started) if green.started else '?'} on "
                     f"{where(green, branch)}; call `diff_since_green` to see what changed since.")
    else:
        lines.append("- The last run was green.")
    return "\n".join(lines)

def test_history(session: ProjectSession, limit: int = 10, branch: str | None = None) -> str:
    """Markdown list of recorded test runs on ``branch`` (default: the current one) and its ancestors, newest first."""
    check_range("limit", limit, 1, MAX_LIMIT)
    branch, tip = branch_and_tip(session, branch)
    runs = store.history(session.recorder.repo, limit, tip=tip) if tip else []
    if not runs:
        return message(f"# Test runs (shadow branch `{branch}`)\n\nNo test runs recorded yet. Run tests through "
                       "`code-trajectory test -- <command>`, the pytest plugin (`pytest --trajectory`), or report a "
                       "run with `record_test_result`.")
    parts = [f"# Test runs (shadow branch `{branch}`), newest first"]
    for run in runs:
        when = narrative.fmt_time(run.started) if run.started else "?"
        duration = f", {run.duration_seconds:.1f} s" if run.duration_seconds is not None else ""
        lines = [f"### {when} — {run.outcome} on {where(run, branch)}",
                 f"- Command: `{run.command}` ({run.runner}{duration})", f"- {run.summary_line()}"]
        if run.message:
            lines.append(f"- Note: {run.message}")
        for test, reason in run.failures[:10]:
            lines.append(f"  - `{test}`: {reason}")
        extra = max(0, len(run.failures) - 10) + run.more_failures
        if extra:
            lines.append(f"  - ... and {extra} more")
        parts.append("\n".join(lines))
    text = narrative.fit("\n\n".join(parts), session.settings.token_budget)
    return Answer(text, answers.history(text, branch, runs))

def diff_since_green(session: ProjectSession, filepath: str | None = None, branch: str | None = None) -> str:
    """What changed since the last snapshot whose tests passed (on ``branch`` or its ancestors), for one file or
    the project."""
    repo = session.recorder.repo
    rel = confine(session.root, filepath) if filepath is not None else None  # a bad path is an error first
    branch, tip = branch_and_tip(session, branch)
    green = store.last_green(repo, tip=tip) if tip else None
    if green is None or green.commit is None:
        return message(f"No green test run recorded on `{branch}`: nothing to compare with. Record runs with "
                       "`code-trajectory test -- <command>`, `pytest --trajectory` or `record_test_result`.")
    head = (f"Last green run: {narrative.fmt_time(green.started) if green.started else '?'} on "
            f"{where(green, branch)} — {green.summary_line()} (`{green.command}`).")
    if tip is None or tip == green.commit:
        return Answer(head + "\n\nNothing was recorded since: the latest snapshot is the green one.",
                      {"green": answers.run_fields(green, branch), "changed": False})
    if rel is not None:
        entries = log.file_history(repo, tip, rel)
        after = {r.oid for r in log.read_log(repo, [f"{green.commit}..{tip}"], with_changes=False)}
        entries = [e for e in entries if e.record.oid in after]
        if not entries:
            return Answer(head + f"\n\n`{rel}` has not changed since then.",
                          {"green": answers.run_fields(green, branch), "path": rel, "changed": False})
        shown = versions.build(repo, entries, len(entries), store.marks_for(repo, [e.record.oid for e in entries]))
        trajectory = render_file.render(repo, rel, branch, shown, len(entries), session.settings.token_budget,
                                        state_note=head)
        return Answer(trajectory, {"green": answers.run_fields(green, branch), **trajectory.data})
    records = log.read_log(repo, [f"{green.commit}..{tip}"], limit=MAX_LIMIT, first_parent=True)
    net = compare.render_net_change(repo, green.commit, repo.commit_tree_oid(tip),
                                    max(1000, session.settings.token_budget - 1200),
                                    heading=f"{head}\n\n# Net change since the green run (`{green.commit[:12]}` → "
                                            f"`{tip[:12]}`, {len(records)} snapshot(s))", new_label=tip[:12])
    marks = store.marks_for(repo, [r.oid for r in records[:30]])
    steps = [f"- {narrative.fmt_time(r.time)} `{r.oid[:12]}` {narrative.message_head(r)}"
             + (f" ({marks[r.oid]})" if r.oid in marks else "") for r in reversed(records[:30])]
    text = f"{net}\n\n## Snapshots since the green run, oldest first\n" + "\n".join(steps)
    text = narrative.fit(text, session.settings.token_budget)
    return Answer(text, answers.since_green(text, green, tip, net.data, records[:30], marks))


def record_test_result(session: ProjectSession, **fields) -> str:
    """Record a test run the agent performed itself on the current state; return a confirmation."""
    run = service.record_agent_result(session.root, recorder=session.recorder, settings=session.settings, **fields)
    return Answer(f"Recorded on snapshot `{(run.commit or '?')[:12]}` (shadow branch `{run.branch}`): "
                  f"{run.summary_line()}", answers.recorded(run))
