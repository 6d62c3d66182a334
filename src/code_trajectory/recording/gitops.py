"""Telling a git operation's changes from the agent's when both land in one snapshot window.

A checkout, reset, merge, rebase or stash rewrites files to what the project's index now holds; an edit
made in the same debounce window (``git checkout -b x`` then an edit) does not match the index. So the
changed paths whose new content equals their index entry (or that are gone from both) are the git
operation's; the rest are the agent's. When both kinds are present the snapshot is written as two
commits: the git operation's first, then the edits on top. A stash is the exception: what ``stash pop``
puts back is unstaged by nature, so every change of its window is the stash's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from code_trajectory.git import trees
from code_trajectory.git.log import literal
from code_trajectory.git.messages import FileChange
from code_trajectory.git.project import ProjectRepo, arg_batches
from code_trajectory.git.shadow import ZERO_OID, ShadowRepo
from code_trajectory.git.tree_format import TreeEntry


def operation_paths(project: ProjectRepo, changes: Sequence[FileChange]) -> set[str]:
    """The paths of ``changes`` that the project's git put there (their content equals the index entry).

    A deleted path counts when the index no longer has it either; a rename counts when both its sides do.
    """
    paths = sorted({p for c in changes for p in (c.path, c.old_path) if p})
    index = project.index_blobs(paths)

    def from_git(path: str, oid: str) -> bool:
        return index.get(path) == oid if oid != ZERO_OID else path not in index

    found = set()
    for change in changes:
        if change.old_path:
            if from_git(change.path, change.new_oid) and from_git(change.old_path, ZERO_OID):
                found |= {change.path, change.old_path}
        elif from_git(change.path, change.new_oid if change.status != "D" else ZERO_OID):
            found.add(change.path)
    return found


def operation_tree(repo: ShadowRepo, parent_tree: str | None, tree: str, paths: set[str],
                   kept: Mapping[str, str] | None = None) -> str:
    """The tree ``parent_tree`` with only ``paths`` taken from ``tree`` (the git operation's share of a snapshot),
    and each path of ``kept`` given its blob id there (a file the user resolved, as last recorded: its mode is
    ``tree``'s, a regular file's when ``tree`` has none; the zero id or none: absent)."""
    kept = kept or {}
    entries: dict[str, TreeEntry | None] = {p: None for p in {*paths, *kept}}
    out = b"".join(repo.git.out(["ls-tree", "-z", "--full-tree", tree, "--", *batch])  # `:!x` is a name
                   for batch in arg_batches(literal(sorted(entries))))  # 50,000 paths: beyond one command line
    if out:
        for record in out.split(b"\0"):
            meta, tab, path = record.partition(b"\t")
            if tab:
                mode, _kind, oid = meta.decode("ascii").split(" ")
                entries[path.decode("utf-8", "surrogateescape")] = TreeEntry(mode, oid)
    for rel, oid in kept.items():
        now = entries[rel]
        entries[rel] = TreeEntry(now.mode if now is not None else "100644", oid) if oid and oid != ZERO_OID else None
    return trees.apply_changes(repo, parent_tree, entries)
