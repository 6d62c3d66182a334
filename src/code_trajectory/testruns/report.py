"""Test status as markdown: the test history, the tests section of the session summary, what changed since
green, and an agent's own report. Plain functions over a
:class:`~code_trajectory.recording.session.ProjectSession`, behind the MCP tools and the CLI."""

from __future__ import annotations

import json
from typing import Any

from code_trajectory.core.answer import Answer, message, short
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.text import cli_operands, cli_option
from code_trajectory.git import file_versions, indexed_log, log
from code_trajectory.git.messages import display_path
from code_trajectory.git.shadow import shadow_ref
from code_trajectory.history import compare, narrative, render_file, versions
from code_trajectory.project import check_range, confine, path_exists
from code_trajectory.recording.session import ProjectSession
from code_trajectory.testruns import LIMIT_RANGE, MAX_LIMIT, answers, service, store
from code_trajectory.testruns import green as greens
from code_trajectory.testruns.model import COUNT_NAMES, TestRun
from code_trajectory.testruns.scope import Scope
from code_trajectory.testruns.selection import parse_query

#: Failing tests listed per run in the test history.
LISTED_FAILURES = 10
#: Snapshots since the green run listed under the project's net change (the newest; the answer says the rest).
STEPS_LISTED = 30


def run_data(run: TestRun, *, failures: bool = False) -> dict[str, Any]:
    """A run as structured content, no larger than its text: ``commit`` (its id as the text shows it, 12 hex
    digits), ``outcome``, ``command``,
    ``scope`` (its label: ``full suite``, ``partial: …``, ``unknown scope …``), ``passed`` and the non-zero other
    counts (see :class:`TestRun`), and with ``failures`` the ids of the failing tests the text lists."""
    data: dict[str, Any] = {"commit": short(run.commit) if run.commit else None, "outcome": run.outcome,
                            "command": run.command,
                            "scope": run.scope.label()}
    data.update({name: getattr(run, name) for name in COUNT_NAMES
                 if getattr(run, name) or (name == "passed" and run.passed is not None)})
    if failures and run.failures:
        data["failures"] = [test for test, _ in run.shown_failures()[:LISTED_FAILURES]]
    return data


def _when(run: TestRun) -> str:
    return narrative.fmt_time(run.started) if run.started else "?"


def _query(scope: str | None) -> Scope:
    try:
        return parse_query(scope)
    except ValueError as exc:
        raise InvalidArgumentError(f"{exc}; give 'full' (the default) or pytest selection arguments relative to "
                                   "the project root, e.g. 'tests/test_api.py' or 'tests -k login'") from None


def branch_and_tip(session: ProjectSession, branch: str | None,
                   source: str | None = None) -> tuple[str, str | None]:
    """The branch asked for (default: the project's current one) and the snapshot its runs are read from: its
    shadow ref's tip, or for a branch with no snapshot yet the snapshot it starts from (the newest of any branch).
    With ``source``, the shared trajectory of that name and its newest snapshot (its runs are those its author
    pushed beside it).

    Raises:
        InvalidArgumentError: ``branch`` is not a string naming a recorded branch, or ``source`` names no
            trajectory (the message lists them), or both are given.
    """
    from code_trajectory.history.service import read_point, resolve_branch

    if source is not None:
        return read_point(session, branch, source)
    name = resolve_branch(session, branch)
    return name, session.recorder.latest_commit(name)


def where(run, branch: str, source: str | None = None) -> str:
    """`` on `abc123` `` plus where that snapshot sits for ``branch``: an ancestor's, or squashed."""
    text = f"`{(run.commit or '?')[:12]}`"
    if run.squashed_into:
        text += f" (squashed into `{run.squashed_into[:12]}`)"
    elif run.branch and run.branch != (branch.partition("/")[2] if source else branch):  # a source: author/branch
        text += f" (on `{run.branch}`, an ancestor of `{branch}`)"
    return text


def tests_section(session: ProjectSession, branch: str | None = None, source: str | None = None) -> str | None:
    """``## Tests`` lines for the summary: the last run (with its scope) and when the full suite was last green, on
    ``branch`` (or the shared trajectory ``source``) and its ancestors (see :mod:`code_trajectory.testruns.green`)."""
    repo = session.recorder.repo
    branch, tip = branch_and_tip(session, branch, source)
    if tip is None:
        return None
    last = store.last_run(repo, tip=tip)
    if last is None:
        return None
    full = Scope.full()
    green = greens.last_green(repo, tip, full)
    # a partial run's summary line says its scope (``tests (partial: tests/test_a.py)``): not said again before it
    kind = {"full": " (full suite)", "partial": ""}.get(last.scope.kind, " (unknown scope)")
    lines = ["## Tests", f"- Last run{kind}: {_when(last)} on {where(last, branch, source)} — {last.summary_line()} "
             f"(`{last.command}`)"]
    if green is None:
        line = f"- The full suite was never green on `{branch}` in the recorded runs"
        other = greens.newest_other_pass(repo, tip, full)
        if other == last:  # the run of the line above: said once, its scope's why said here (the line says its kind)
            why = "partial" if other.scope.kind == "partial" else other.scope.label()  # a partial one: said above
            line += f"; the last run passed but is {why}, which does not prove the full suite"
        elif other is not None:
            line += (f"; the newest passing run is {other.scope.label()} on {where(other, branch, source)}, which does not "
                     "prove the full suite")
        lines.append(line + ".")
    elif green == last:
        lines.append("- The last run was green (full suite).")
    else:
        lines.append(f"- Last green (full suite): {_when(green)} on {where(green, branch, source)}; call `diff_since_green` "
                     "to see what changed since.")
    return "\n".join(lines)

def test_history(session: ProjectSession, limit: int = 10, branch: str | None = None,
                 source: str | None = None) -> str:
    """Markdown list of recorded test runs on ``branch`` (default: the current one; or the shared trajectory
    ``source``) and its ancestors, newest first, each with its scope (partial runs marked); an :class:`Answer`
    whose data lists the runs shown."""
    check_range("limit", limit, *LIMIT_RANGE)
    branch, tip = branch_and_tip(session, branch, source)
    runs = store.history(session.recorder.repo, limit, tip=tip) if tip else []
    if not runs:
        return message(f"# Test runs (shadow branch `{branch}`)\n\nNo test runs recorded yet. Run tests through "
                       "`code-trajectory test -- <command>`, the pytest plugin (`pytest --trajectory`), or report a "
                       "run with `record_test_result`.")
    parts = [f"# Test runs (shadow branch `{branch}`), newest first"]
    for run in runs:
        duration = f", {run.duration_seconds:.1f} s" if run.duration_seconds is not None else ""
        partial = " (partial)" if run.scope.kind == "partial" else ""
        lines = [f"### {_when(run)} — {run.outcome}{partial} on {where(run, branch, source)}",
                 f"- Command: `{run.command}` ({run.runner}{duration})", f"- Scope: {run.scope.label()}",
                 f"- {run.summary_line()}"]
        if run.message:
            lines.append(f"- Note: {run.message}")
        for test, reason in run.shown_failures()[:LISTED_FAILURES]:
            lines.append(f"  - `{test}`: {reason}")
        extra = max(0, len(run.failures) - LISTED_FAILURES) + run.more_failures
        if extra:
            lines.append(f"  - ... and {extra} more")
        parts.append("\n".join(lines))
    text = narrative.fit("\n\n".join(parts), session.settings.token_budget)
    return Answer(text, answers.history(text, branch, runs))

def _check_known(session: ProjectSession, rel: str, tip: str | None) -> None:
    """Refuse a path that no snapshot of any branch holds and that is not in the project either.

    Raises:
        InvalidArgumentError: such a path (the message names recorded paths with similar names).
    """
    repo = session.recorder.repo
    if path_exists(session.root / rel):
        return
    if tip is not None and file_versions.file_history(repo, tip, rel, limit=1):
        return
    if repo.git.text(["log", "--all", "-1", "--format=%H", "--", rel]).strip():
        return
    from code_trajectory.git.trees import list_files

    close = narrative.similar_paths(rel, list(list_files(repo, repo.commit_tree_oid(tip)))) if tip else []
    hint = f" Recorded paths with similar names: {', '.join(close)}." if close else ""
    raise InvalidArgumentError(f"{rel!r} is in no snapshot and not in the project: give a file path relative to the "
                               f"project root, or omit filepath for the whole project.{hint}")


def _since_green_call(scope: str, rel: str | None, branch: str | None, source: str | None) -> str:
    """The ``code-trajectory since-green`` command that asks what a call with ``rel``, ``branch`` and ``source``
    asked, for ``scope``: the CLI's spelling of ``scope=...`` (a shell-quoted option, the path after them)."""
    words = ["code-trajectory since-green", cli_option("--scope", scope)]
    words += [cli_option("--branch", branch)] if branch else []
    words += [cli_option("--source", source)] if source else []
    words += [cli_operands([rel])] if rel is not None else []
    return " ".join(words)


def _older_steps(left: int, oldest: str, branch: str | None, source: str | None) -> str:
    """The line that stands for the ``left`` snapshots since the green run older than ``oldest`` (the oldest one
    listed), with the ``get_global_trajectory`` call and the ``log`` command that list them."""
    args = [f'before="{oldest}"', f"limit={left}"] + ([f"branch={json.dumps(branch)}"] if branch else []) \
        + ([f"source={json.dumps(source)}"] if source else [])
    options = [f"--before {oldest}", f"--limit {left}"] + ([cli_option("--branch", branch)] if branch else []) \
        + ([cli_option("--source", source)] if source else [])
    return (f"- ... {left} older snapshot(s) since the green run, not listed: get_global_trajectory({', '.join(args)}) "
            f"(CLI `code-trajectory log {' '.join(options)}`)")


def diff_since_green(session: ProjectSession, filepath: str | None = None, branch: str | None = None,
                     scope: str | None = None, source: str | None = None) -> str:
    """What changed since the last snapshot green for ``scope`` (default: the full suite; see
    :mod:`code_trajectory.testruns.green`) on ``branch`` or its ancestors, for one file or the project.

    Args:
        session: the project.
        filepath: one file relative to the project root; None for the whole project.
        branch: a recorded branch; None for the current one.
        scope: ``full`` (default) or pytest selection arguments relative to the project root (``tests/test_a.py``,
            ``tests -k login``).
        source: a shared trajectory (``author/branch``) to answer from instead of our own history.

    Returns:
        An :class:`Answer`: markdown naming the scope answered for; data with ``scope``, ``green_run`` (None when
        nothing is green for the scope) and, for the project, the net change. A file's answer is its trajectory
        since the green run, capped like ``get_file_trajectory`` (``token_budget``); the project's is the net change
        as ``compare`` gives it, capped by ``compare_token_budget``.

    Raises:
        InvalidArgumentError, PathOutsideProjectError: a bad path (one in no snapshot and not in the project
            included), scope or branch.
    """
    repo = session.recorder.repo
    query = _query(scope)
    rel = confine(session.root, filepath) if filepath is not None else None  # a bad path is an error first
    asked_branch = branch
    branch, tip = branch_and_tip(session, branch, source)
    if rel is not None:
        _check_known(session, rel, tip)
    green = greens.last_green(repo, tip, query) if tip else None
    phrase = greens.scope_phrase(query)
    data: dict[str, Any] = {"scope": greens.query_text(query), "green_run": run_data(green) if green else None}
    if green is None or green.commit is None:
        text = f"No snapshot on `{branch}` is green for {phrase}: nothing to compare with."
        blocked = greens.blocked_pass(repo, tip, query) if tip else None
        if blocked is not None:
            passed, failed = blocked
            text += (f" The newest pass of {phrase}, on {where(passed, branch, source)}, does not make that snapshot "
                     f"green: `{failed.command}` ({failed.scope.label(60)}) failed on it too, and nothing passed "
                     "since covers what it ran; run it again, or record a pass that covers it.")
        other = greens.newest_other_pass(repo, tip, query) if tip else None
        askable = other is not None and all(f.startswith("-") for f in other.scope.filters)  # not "2 deselected"
        if other is not None and other.scope.kind == "partial":
            text += f" The newest passing run is {other.scope.label()} on {where(other, branch, source)}"
            scoped = greens.query_text(other.scope)
            text += (f": call with scope={scoped!r} (CLI `{_since_green_call(scoped, rel, asked_branch, source)}`) "
                     "to compare with it." if askable else
                     "; its selection (tests a plugin deselected) cannot be asked for.")
        elif other is not None:
            text += (f" The newest passing run, on {where(other, branch, source)}, has an {other.scope.label()}, which "
                     "proves no scope.")
            if "--full-suite" not in text:  # recorded before the label said how to declare it
                text += (" A command that runs the whole suite is declared so: CLI `code-trajectory test --full-suite "
                         "-- <command>`, or `record_test_result` with full_suite=true.")
        if other is None and blocked is None:  # no passing run at all: how to record one (else said above)
            text += (" Record runs with `code-trajectory test -- <command>`, `pytest --trajectory` or "
                     "`record_test_result`.")
        return message(text)  # nothing to list: the text is the answer (structured content would repeat it)
    head = (f"Last green run for {phrase}: {_when(green)} on {where(green, branch, source)} — {green.summary_line()} "
            f"(`{green.command}`).")
    if tip is None or tip == green.commit:
        # saves nothing recorded yet are not in the history: said as the session summary says it (no watcher, a
        # start-up scan still running), so that "green" is not read as the work tree's state
        notices = session.status_notices() if source is None else []
        if notices:
            data["notices"] = notices
        return Answer(head + f"\n\nNothing was recorded since: the latest snapshot is green for {phrase}."
                      + "".join(f"\n\n**Notice:** {notice}" for notice in notices), data)
    if rel is not None:
        # the file's newest LOOKBACK + 1 versions, as get_file_trajectory reads them (issue 29: every version, and
        # every commit since the green run, were read); those since the green run are the ones git's walk from the
        # tip, down to it, lists for the file's paths
        read = file_versions.file_history(repo, tip, rel, limit=versions.LOOKBACK + 1,
                                lister=indexed_log.open_log(repo, shadow_ref(branch), tip) if source is None else None)
        paths = sorted({e.path for e in read} | {e.change.old_path for e in read if e.change.old_path})
        after = set(repo.git.text(["rev-list", "--end-of-options", tip, f"^{green.commit}", "--", *log.literal(paths)]).split()
                    if read else [])
        entries = [e for e in read if e.record.oid in after]
        if not entries:
            return Answer(head + f"\n\n`{display_path(rel)}` has not changed since then.", data)
        complete = len(entries) < len(read) or len(read) <= versions.LOOKBACK  # else more since then than read
        count = len(entries) if complete else versions.LOOKBACK
        shown = versions.build(repo, entries, count, store.marks_for(repo, [e.record.oid for e in entries[:count]]),
                               complete=complete)
        rendered = render_file.render(repo, rel, branch, shown, len(entries), session.settings.token_budget,
                                      state_note=head, complete=complete, since="the green run")
        return Answer(rendered, {**rendered.data, **data})
    records = log.read_log(repo, [f"{green.commit}..{tip}"], limit=MAX_LIMIT, first_parent=True)
    # the net change is compare's answer: it has compare's cap (every changed line up to 20,000 tokens by default,
    # within Claude Code's MAX_MCP_OUTPUT_TOKENS), less room for the list of snapshots below it
    budget = session.settings.compare_token_budget
    net = compare.render_net_change(repo, green.commit, repo.commit_tree_oid(tip), max(1000, budget - 1200),
                                    heading=f"{head}\n\n# Net change since the green run (`{green.commit[:12]}` → "
                                            f"`{tip[:12]}`, {len(records)} snapshot(s))", new_label=tip[:12])
    listed = records[:STEPS_LISTED]
    marks = store.marks_for(repo, [r.oid for r in listed])
    oldest_first = list(reversed(listed))
    steps = [f"- {narrative.fmt_time(r.time)} `{r.oid[:12]}` {msg}" + (f" ({marks[r.oid]})" if r.oid in marks else "")
             for r, msg in zip(oldest_first, answers.step_messages(oldest_first), strict=True)]
    if len(records) > len(listed):  # the oldest ones: said, with the call that lists them
        steps.insert(0, _older_steps(len(records) - len(listed), listed[-1].oid[:12], asked_branch, source))
    text = f"{net}\n\n## Snapshots since the green run, oldest first\n" + "\n".join(steps)
    text = narrative.fit(text, budget, ask_less="one file with filepath")
    return Answer(text, {"scope": data["scope"], **answers.since_green(text, green, tip, net.data, listed, marks)})


def record_test_result(session: ProjectSession, **fields) -> str:
    """Record a test run the agent performed itself on the current state; return a confirmation."""
    run = service.record_agent_result(session.root, recorder=session.recorder, settings=session.settings, **fields)
    scope = "" if run.scope.kind == "partial" else f", {run.scope.label()}"  # a partial scope is in the line
    return Answer(f"Recorded on snapshot `{(run.commit or '?')[:12]}` (shadow branch `{run.branch}`{scope}): "
                  f"{run.summary_line()}", answers.recorded(run))
