"""The journal's table of contents: sections and groups with entry counts and last update."""

from __future__ import annotations

from typing import Any

from code_trajectory.core.errors import InvalidArgumentError, JournalError
from code_trajectory.journal import TOC_DEPTH_RANGE
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.text import iso, parse_id


def table_of_contents(store: JournalStore, journal_id: str = "", depth: int = 1) -> dict:
    """The table of contents from ``journal_id`` (``""`` = root), ``depth`` levels deep.

    A node is ``{"id", "type", "last_updated", "entry_count", "subsections"?}``;
    ``type`` is ``"section"`` for a path with an overview file and ``"group"``
    for a directory that only holds sections. ``entry_count`` counts the
    node's own entries; ``last_updated`` is the newest entry in the node or
    below it. The starting section is the first level (the root is no
    section, so ``depth=1`` from the root lists the top-level sections).

    Raises:
        InvalidArgumentError: depth out of range or a bad id.
        JournalError: no such section.
    """
    if isinstance(depth, bool) or not TOC_DEPTH_RANGE[0] <= depth <= TOC_DEPTH_RANGE[1]:
        raise InvalidArgumentError(f"depth must be between {TOC_DEPTH_RANGE[0]} and {TOC_DEPTH_RANGE[1]}, got {depth}")
    depth = int(depth)
    prefix = ""
    if journal_id and journal_id.strip():
        prefix, sha = parse_id(journal_id)
        if sha is not None:
            raise InvalidArgumentError("journal_toc takes a section path, not an entry id (drop the '#...')")
    head = store.head()
    existing = set(store.sections(head))
    counts: dict[str, int] = {}
    latest: dict[str, int] = {}
    for commit in store.history(head):
        for section in commit.sections:
            counts[section] = counts.get(section, 0) + 1
            latest.setdefault(section, commit.timestamp)
    nodes = set(existing)
    for section in existing:  # groups: every directory above a section
        parts = section.split("/")
        for i in range(1, len(parts)):
            nodes.add("/".join(parts[:i]))

    children: dict[str, list[str]] = {}
    for node in nodes:
        parent = node.rsplit("/", 1)[0] if "/" in node else ""
        children.setdefault(parent, []).append(node)

    def subtree_latest(node: str) -> int | None:
        stamps = [latest[s] for s in existing if (s == node or s.startswith(node + "/")) and s in latest]
        return max(stamps) if stamps else None

    def build(node: str, levels_left: int) -> dict[str, Any]:
        ts = subtree_latest(node)
        item: dict[str, Any] = {
            "id": node,
            "type": "section" if node in existing else "group",
            "last_updated": iso(ts) if ts else None,
            "entry_count": counts.get(node, 0) if node in existing else 0,
        }
        kids = sorted(children.get(node, []))
        if kids:
            item["subsection_count"] = len(kids)
            if levels_left > 1:
                item["subsections"] = [build(k, levels_left - 1) for k in kids]
        return item

    if not prefix:
        top = sorted(children.get("", []))
        stamps = [latest[s] for s in existing if s in latest]
        return {"id": "", "type": "root", "last_updated": iso(max(stamps)) if stamps else None,
                "entry_count": sum(counts.get(s, 0) for s in existing), "section_count": len(existing),
                "subsections": [build(k, depth) for k in top]}
    if prefix not in nodes:
        raise JournalError(f"no section {prefix!r} in the journal; journal_toc('') lists the top-level sections")
    return build(prefix, depth)
