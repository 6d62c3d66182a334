"""What the capabilities above history add to its answers, without history importing them.

history sits below ``testruns`` (whose reports are built from history's narratives; see the README's architecture
section and the import contract in ``pyproject.toml``). The composition layer (:mod:`code_trajectory.wiring`)
registers the built-in providers once per process, for the MCP server and every CLI command alike:

* :func:`on_commit_marks`: ``testruns`` marks each listed snapshot with its newest test run
  (``get_file_trajectory``, ``get_global_trajectory``);
* :func:`on_summary_section`: ``testruns`` adds the ``## Tests`` section to the session summary;
* :func:`on_source_summary_section`: the same for the summary of a shared trajectory (``source``).

A process that registers nothing answers the same, without those additions. Registering the same provider twice
keeps one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from code_trajectory.core.registry import Registry

if TYPE_CHECKING:
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.recording.session import ProjectSession

#: ``marks(repo, commits) -> {commit: one line}`` for the commits (full ids) that have something to show.
CommitMarks = Callable[["ShadowRepo", list[str]], dict[str, str]]
#: ``section(session) -> markdown or None``: a section of the session summary, shown before the recap.
SummarySection = Callable[["ProjectSession"], "str | None"]
#: ``section(session, source) -> markdown or None``: a section of a shared trajectory's summary (``source`` as the
#: caller named it, e.g. ``alice@example.com/main``).
SourceSummarySection = Callable[["ProjectSession", str], "str | None"]

_marks: Registry[CommitMarks] = Registry()
_sections: Registry[SummarySection] = Registry()
_source_sections: Registry[SourceSummarySection] = Registry()

#: ``on_commit_marks(provider)``: register a provider of per-snapshot marks; returns it (usable as a decorator).
on_commit_marks = _marks.register
#: ``on_summary_section(section)``: register a section of the session summary; returns it (usable as a decorator).
on_summary_section = _sections.register
#: ``on_source_summary_section(section)``: register a section of a shared trajectory's summary; returns it.
on_source_summary_section = _source_sections.register


def commit_marks(repo: ShadowRepo, commits: Iterable[str]) -> dict[str, str]:
    """``{commit: mark}`` from every registered provider (several marks of one commit joined by ``; ``)."""
    wanted = list(commits)
    merged: dict[str, str] = {}
    for provider in _marks:
        for commit, mark in provider(repo, wanted).items():
            merged[commit] = f"{merged[commit]}; {mark}" if commit in merged else mark
    return merged


def summary_sections(session: ProjectSession) -> str | None:
    """The registered summary sections that have something to say, joined by a blank line; None when none has."""
    found = [text for section in _sections if (text := section(session))]
    return "\n\n".join(found) or None


def source_summary_sections(session: ProjectSession, source: str) -> str | None:
    """:func:`summary_sections` for the shared trajectory ``source``."""
    found = [text for section in _source_sections if (text := section(session, source))]
    return "\n\n".join(found) or None
