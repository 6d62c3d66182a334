"""The recap as markdown: the whole recap, and the short section of the session summary."""

from __future__ import annotations

import os

from code_trajectory.core.errors import TrajectoryError
from code_trajectory.recap.store import ENTRY_TYPES, get_recap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _bullet(entry: dict[str, Any], *, with_type: bool, limit: int | None = None, ids: bool = False) -> str:
    content = entry["content"]
    if limit is not None and len(content) > limit:
        content = content[: limit - 1].rstrip() + "…"
    content = content.replace("\n", "\n  ")
    prefix = f"**{entry['type']}**: " if with_type else ""
    return f"- {prefix}{content} _({entry['timestamp']}{', id ' + entry['id'] if ids else ''})_"


def in_text_order(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` in the order :func:`render_markdown` shows them: grouped by type in the order of
    :data:`ENTRY_TYPES`, oldest first within a type (the order they were given in)."""
    rank = {kind: i for i, kind in enumerate(ENTRY_TYPES)}
    return sorted(entries, key=lambda e: rank.get(e["type"], len(rank)))


_GROUP_TITLES: dict[str, str] = {"decision": "Decisions", "insight": "Insights", "risk": "Risks",
                 "assumption": "Assumptions", "fix": "Fixes", "other": "Other"}


def render_markdown(recap: dict[str, Any], *, ids: bool = False) -> str:
    """Render a :func:`get_recap` answer as markdown: goal, then entries grouped by type.

    Groups follow the order of :data:`ENTRY_TYPES`; entries within a group are
    chronological (:func:`in_text_order`). Ends with the file path; a ``warning`` is shown first.
    With ``ids``, each entry's id follows its time (``get_recap``: its structured content has them).
    """
    lines = [f"# Recap of {recap['projectPath']}", ""]
    if recap.get("warning"):
        lines += [f"> Warning: {recap['warning']}", ""]
    lines += [f"**Goal:** {recap['goal']}" if recap["goal"] else "**Goal:** _(not set; use set_goal, CLI `code-trajectory recap goal TEXT`)_", ""]
    entries = recap["entries"]
    if not entries:
        lines += ["_No entries yet._", ""]
    for kind in ENTRY_TYPES:
        group = [e for e in entries if e["type"] == kind]
        if group:
            title = _GROUP_TITLES.get(kind, kind.capitalize())
            lines += [f"## {title} ({len(group)})", *(_bullet(e, with_type=False, ids=ids) for e in group), ""]
    lines.append(f"_File: {recap['filePath']}_")
    return "\n".join(lines) + "\n"


def recap_for_summary(project_root: str | os.PathLike[str], latest: int = 5) -> str | None:
    """Return a short markdown section for the session summary, or ``None`` when there is no recap.

    The section holds the goal and the ``latest`` most recent entries (each cut to
    300 characters). Never raises for a broken recap: it returns a one-line note
    saying why the recap is unavailable instead, so the summary still renders.
    """
    try:
        recap = get_recap(project_root)
    except TrajectoryError as exc:
        return f"### Recap\n_Recap unavailable: {exc}_\n"
    if not recap["goal"] and not recap["entries"]:
        return f"### Recap\n_Recap unavailable: {recap['warning']}_\n" if recap.get("warning") else None
    lines = ["### Recap", f"**Goal:** {recap['goal'] or '_(not set)_'}"]
    entries = recap["entries"]
    shown = entries[-latest:] if latest > 0 else []
    if shown:
        lines.append(f"Latest entries ({len(shown)} of {len(entries)}, oldest first; get_recap shows all):")
        lines += [_bullet(e, with_type=True, limit=300) for e in shown]
    return "\n".join(lines) + "\n"

