"""Structured content of the session summary (``get_session_summary``): the facts :mod:`.summary` renders, as
fields, under the rule of :mod:`code_trajectory.core.answer` (in the text's order, at most its size, no empty
fields). Built from the same inputs as the text, beside it, so the text's wording can change freely."""

from __future__ import annotations

from datetime import datetime

from code_trajectory.core.answer import short, when
from code_trajectory.core.dirgroups import ELSEWHERE, PATH, TOP_LEVEL, Group, group_by_directory
from code_trajectory.core.text import path_field
from code_trajectory.git.log import CommitRecord
from code_trajectory.git.messages import FileChange
from code_trajectory.history import fields
from code_trajectory.history.headings import operation_label
from code_trajectory.history.summary import (
    FILES_LISTED,
    NET_FILES_LISTED,
    BranchWork,
    net_order,
    restore_line,
    split_by_branch,
)

#: Net changed files listed per branch (as the text lists them).
NET_FILES = NET_FILES_LISTED
#: The columns of a branch's ``files`` rows (the files most changed).
FILES_COLUMNS = ["path", "snapshots", "+", "-"]
#: Intents, git operations, restores and consolidations listed per branch (as the text lists them).
INTENTS, OPERATIONS, RESTORES, CONSOLIDATIONS = 12, 8, 5, 5


def section_lines(markdown: str | None) -> tuple[str, list[str]] | None:
    """A markdown section another package renders (``## Tests``, ``### Recap``) as ``(title, lines)``: its heading
    without the ``#`` and its lines without list bullets, as shown."""
    if not markdown or not markdown.strip():
        return None
    lines = [line for line in markdown.strip().split("\n") if line.strip()]
    title = lines[0].lstrip("#").strip() if lines[0].startswith("#") else ""
    body = lines[1:] if title else lines
    return title or "section", [line.strip().removeprefix("- ") for line in body]


def _branch(work: BranchWork, net: list[FileChange] | None, symbols: dict[str, str]) -> dict:
    edits = work.edits()
    intents: list[list[str]] = []
    for record in reversed(edits):
        if record.intent:
            if intents and intents[-1][0] == record.intent:
                intents[-1][2] = record.time.strftime("%H:%M")
            else:
                intents.append([record.intent, record.time.strftime("%H:%M"), record.time.strftime("%H:%M")])
    for row in intents:  # the times as the text says them, one when they are one ("06:23–06:23"): two full
        if row[2] == row[1]:  # ISO times a row made the fields longer than the text, and the size rule's last
            del row[2]  # resort then left out the user's named points
    files = work.ranked_files()
    ranked = net_order(net or [])
    return {"branch": work.branch, "edits": len(edits), "intents": intents[-INTENTS:],  # the newest, as the text
            "earlier_intents": max(0, len(intents) - INTENTS) or None,
            "files": [[path_field(path), *rest] for path, *rest in files[:FILES_LISTED]],
            "more_files": max(0, len(files) - FILES_LISTED) or None,
            "git": [[when(r.time), fields.message_of(r)]
                    for r in reversed([r for r in work.records if r.is_git_operation][:OPERATIONS])],
            "restores": [[when(r.time), restore_line(r)] for r in reversed(work.restores()[:RESTORES])],
            "consolidations": [[when(r.time), r.subject]
                               for r in [r for r in work.records if r.is_consolidation][:CONSOLIDATIONS]],
            "net": fields.file_rows(ranked, symbols, NET_FILES) if net is not None else None,
            "net_files": len(net) if net and len(net) > NET_FILES else None,
            **_net_more(group_by_directory([c.path for c in ranked[NET_FILES:]]))}


def _net_more(groups: list[Group]) -> dict:
    """Where the net change's files past those listed are, as the text groups them: ``net_more``, ``[path,
    files]`` rows, paths only; the root's own files counted in ``net_more_top_level``, the smallest groups in
    ``net_more_elsewhere`` (labels that are no path, so that a file named ``elsewhere`` is not taken for them).
    None when there are none."""
    return {"net_more": [[path_field(g.path), g.files] for g in groups if g.kind == PATH] or None,
            "net_more_top_level": next((g.files for g in groups if g.kind == TOP_LEVEL), None),
            "net_more_elsewhere": next((g.files for g in groups if g.kind == ELSEWHERE), None)}


def summary_data(*, now: datetime, gap_seconds: float, sessions: list[list[CommitRecord]],
                 current_intent: str | None, current_branch: str, net_by_branch: dict[str, list[FileChange]],
                 pending: bool, notices: list[str], sections: list[str | None],
                 net_symbols: dict[str, dict[str, str]] | None = None) -> dict:
    """The summary's fields, from the arguments of :func:`code_trajectory.history.summary.render`:

    ``now``, ``branch``, ``intent`` (with its age, as said), ``notices``; ``new_session`` (the last snapshot is
    older than the session gap), ``idle_s`` (seconds since it), ``pending``; ``last``: the last session's ``from``
    and ``to`` times, ``snapshots`` and per branch (``branches``, the branch worked on last first) its ``edits``,
    ``intents`` (``[intent, from, to]`` as the text says the times, ``HH:MM``, and ``[intent, from]`` when they
    are one, in order: the newest :data:`INTENTS`, ``earlier_intents`` counting those
    before them, as the text says them), ``files`` most changed (``[path, snapshots, +, -]``, most
    relevant first; their columns in ``files_cols``), ``git`` operations, ``restores`` and ``consolidations`` (``[time, message]``, as the text lists them: without
    ids), and the ``net`` change (rows of ``cols``; past :data:`NET_FILES`, ``net_files`` counts them all and
    ``net_more`` says where the rest are, ``[directory, files]`` as the text groups them, with
    ``net_more_top_level`` and ``net_more_elsewhere`` the files of the groups that are no path);
    ``final``: the last snapshot, ``id`` and ``msg`` (a restore's message without where from, which its ``restores`` row says; its time is ``last``'s ``to``, its branch the first of ``branches``); the other ``sections`` (tests, recap: ``{title: lines}``, as shown); ``earlier``:
    how many older sessions and the previous one's span."""
    data: dict = {"now": when(now), "branch": current_branch, "intent": current_intent, "notices": notices}
    if sessions:
        last = sessions[0]
        newest, oldest = last[0], last[-1]
        idle = (now - newest.time).total_seconds()
        data.update(new_session=idle > gap_seconds, idle_s=int(idle), pending=pending or None)
        branches = [_branch(work, net_by_branch.get(work.branch), (net_symbols or {}).get(work.branch, {}))
                    for work in split_by_branch(last)]
        data["last"] = {"from": when(oldest.time), "to": when(newest.time), "snapshots": len(last),
                        # the columns of the net rows, when there are any (the start of recording has none)
                        "cols": fields.file_columns([row for branch in branches for row in branch["net"] or ()]),
                        "files_cols": FILES_COLUMNS if any(branch["files"] for branch in branches) else None,
                        "branches": branches}
        msg = fields.message_of(newest)
        if newest.kind == "restore":  # where from is in its branch's ``restores`` (at ``last``'s ``to``): said once
            msg = msg.removesuffix(" - " + operation_label(newest).partition("] ")[2])
        # its time is ``last``'s ``to`` and its branch the first of ``branches``: not said twice
        data["final"] = {"id": short(newest.oid), "msg": msg}
    for section in sections:
        found = section_lines(section)
        if found:
            data.setdefault("sections", {})[found[0]] = found[1]
    if len(sessions) > 1:
        prev = sessions[1]
        data["earlier"] = {"sessions": len(sessions) - 1, "from": when(prev[-1].time), "to": when(prev[0].time),
                           "snapshots": len(prev)}
    return data

