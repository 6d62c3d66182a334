"""Editing git trees: the next snapshot's tree from the previous one and a set of changes.

Only the trees on the paths of the changes are read and rewritten; every other
subtree is reused by id. This is what makes a snapshot's cost proportional to
what changed rather than to the size of the project.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from code_trajectory.git.log import literal
from code_trajectory.git.project import arg_batches
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import MODE_TREE, TreeEntry

#: Paths above which :func:`list_files` lists the whole tree and keeps what they name, rather than giving them to
#: ``git ls-tree`` as pathspecs: git matches each file with every pathspec (20,000 paths of a 20,000-file tree: 4.6 s
#: a call; the whole tree: 0.05 s; even at 100 paths the whole tree is the cheaper).
MAX_PATHSPECS = 64

#: A change: the new entry at a path, or None to delete the path (file or whole directory).
Changes = Mapping[str, TreeEntry | None]


class _Delete:
    __slots__ = ()


_DELETE = _Delete()


@dataclass(frozen=True)
class KnownTrees:
    """Trees the repository holds already for some directories of a new tree (an import: git's cache-tree).

    Attributes:
        trees: directory (relative to the root, ``""`` the root) -> ``(files below it at any depth, its direct
            subdirectories, the tree id)``: the directory's tree is that id exactly when it holds that many files
            and subdirectories, every file being one the tree holds.
        holds: ``holds(path, entry)``: True when the file at ``path`` with ``entry`` is the one the known trees hold
            for that path (where they hold it).
        all_held: the caller knows ``holds`` is True for every file of the new tree (each was taken from what the
            known trees describe): then a root holding as many files as its known tree is that tree, and no file is
            looked at (an import of a git project whose files all match its index: git's ``HEAD`` tree).
    """

    trees: Mapping[str, tuple[int, int, str]]
    holds: Callable[[str, TreeEntry], bool]
    all_held: bool = False


@dataclass
class _Node:
    reset: bool = False  # start from an empty tree instead of the base subtree
    children: dict[bytes, TreeEntry | _Delete | _Node] = field(default_factory=dict)


def apply_changes(repo: ShadowRepo, base_tree: str | None, changes: Changes, *,
                  known: KnownTrees | None = None) -> str:
    """Return the id of the tree ``base_tree`` with ``changes`` applied, in order.

    Args:
        repo: the shadow repository (trees are read from and written to it).
        base_tree: the tree to start from; None for the empty tree.
        changes: ``{path: entry or None}``, paths relative to the root, ``/``-separated,
            applied in iteration order. Deleting a directory path removes its whole
            subtree; entries added under it afterwards start a fresh subtree (this is
            how a rescanned directory replaces its old content).
        known: for a new tree (``base_tree`` None, no deletions): the directories whose tree the repository may
            hold already; such a tree is taken, not written, when the directory's files prove it (see
            :class:`KnownTrees`).

    Returns:
        The new root tree id (the empty tree's id when nothing is left).
    """
    if base_tree is None and (known is not None and known.all_held or all(e is not None for e in changes.values())):
        return _build(repo, changes, known)  # an initial import: every directory is new
    root = _Node()
    for path, entry in changes.items():
        parts = [os.fsencode(p) for p in path.split("/") if p]
        if not parts:
            continue
        node = root
        for part in parts[:-1]:
            child = node.children.get(part)
            if not isinstance(child, _Node):
                if entry is None and child is not None:
                    break  # deleting under a path already deleted or now a file: nothing to do
                # absent: edit the base subtree; deleted or replaced by a file: start afresh
                child = _Node(reset=child is not None)
                node.children[part] = child
            node = child
        else:
            node.children[parts[-1]] = _DELETE if entry is None else entry
    return _edit(repo, base_tree, root)


def _build(repo: ShadowRepo, files: Mapping[str, TreeEntry | None], known: KnownTrees | None = None) -> str:
    """The tree of ``files`` alone (no base, no deletions): grouped by directory, written deepest first.

    Half the cost of the general edit for an import of 100,000s of files (no node per path component). A directory
    of ``known`` whose files are all held by its known tree, with as many files below it and as many direct
    subdirectories (each of them proven so) as that tree, is that tree: it is not written (an import of a git
    project whose index is fresh: git's own trees, 25,000 of them at 500,000 files)."""
    top = known.trees.get("") if known is not None and known.all_held else None
    if top is not None and top[0] == len(files):
        return top[2]  # each file one of the known root's, as many as it holds: those very files
    fsencode = os.fsencode
    dirs: dict[str, dict[bytes, TreeEntry]] = {"": {}}
    holds = known.holds if known is not None else None
    foreign: set[str] = set()  # directories with a file the known trees do not hold
    for path, entry in files.items():
        assert entry is not None
        parent, _, name = path.strip("/").rpartition("/")
        if holds is not None and not holds(path, entry):
            foreign.add(parent)
        children = dirs.get(parent)
        if children is None:
            children = dirs[parent] = {}
            up = parent
            while up:  # its parents, up to the first one known
                up = up.rpartition("/")[0]
                if up in dirs:
                    break
                dirs[up] = {}
        if name:
            children[fsencode(name)] = entry
    below: dict[str, int] = {}  # files below each directory, at any depth
    proven: dict[str, int] = {}  # direct subdirectories whose tree is the known one
    oid = ""  # the root's, once the loop ends (the root is always there, and last)
    for directory in sorted(dirs, key=lambda d: d.count("/") + 1 if d else 0, reverse=True):
        children = dirs[directory]
        subdirs = sum(1 for entry in children.values() if entry.mode == MODE_TREE)
        count = below.get(directory, 0) + len(children) - subdirs
        tree = known.trees.get(directory) if known is not None and directory not in foreign else None
        same = tree is not None and tree[:2] == (count, subdirs) and proven.get(directory, 0) == subdirs
        oid = tree[2] if same and tree is not None else repo.write_tree(children)
        if directory:
            parent, _, name = directory.rpartition("/")
            dirs[parent][fsencode(name)] = TreeEntry(MODE_TREE, oid)
            below[parent] = below.get(parent, 0) + count
            if same:
                proven[parent] = proven.get(parent, 0) + 1
    return oid


def _edit(repo: ShadowRepo, tree: str | None, node: _Node) -> str:
    entries = {} if node.reset else dict(repo.read_tree(tree))
    for name, change in node.children.items():
        if change is _DELETE:
            entries.pop(name, None)
        elif isinstance(change, TreeEntry):
            entries[name] = change
        else:
            assert isinstance(change, _Node)
            existing = entries.get(name)
            start = existing.oid if existing is not None and existing.is_tree else None
            sub = _edit(repo, start, change)
            if sub == repo.empty_tree():
                if existing is None or existing.is_tree or change.reset:
                    entries.pop(name, None)
                # else: only deletions below a path that is a file: the file stays
            else:
                entries[name] = TreeEntry(MODE_TREE, sub)
    return repo.write_tree(entries)


def list_files(repo: ShadowRepo, tree: str | None, paths: list[str] | None = None) -> dict[str, TreeEntry]:
    """Every file of ``tree`` (path relative to the project root -> entry), from one ``git ls-tree -r`` (one per
    batch of ``paths`` a command line holds; the whole tree, filtered here, for more than :data:`MAX_PATHSPECS`).

    Args:
        repo: the shadow repository holding ``tree``.
        tree: a tree id; None gives ``{}``.
        paths: only the files at or under these paths (relative to the root, read literally: a name like
            ``:x.py`` or ``:!odd.py`` is that file, never pathspec magic), when given.

    Raises:
        GitError: ``tree`` cannot be read.
    """
    if tree is None:
        return {}
    wanted = {path.rstrip("/") for path in paths} if paths and len(paths) > MAX_PATHSPECS else None
    out = (repo.git.out(["ls-tree", "-r", "-z", "--full-tree", tree]) if not paths or wanted is not None else
           b"\0".join(repo.git.out(["ls-tree", "-r", "-z", "--full-tree", tree, "--", *batch])  # past ARG_MAX
                       for batch in arg_batches(literal(paths))))
    found = {}
    for record in out.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        if tab:
            mode, _kind, oid = meta.decode("ascii").split(" ")
            name = os.fsdecode(path)
            if wanted is None or _named(name, wanted):
                found[name] = TreeEntry(mode, oid)
    return found


def _named(path: str, wanted: set[str]) -> bool:
    """True when ``path`` or a directory above it is in ``wanted`` (what a literal pathspec matches)."""
    if path in wanted:
        return True
    at = path.find("/")
    while at != -1:
        if path[:at] in wanted:
            return True
        at = path.find("/", at + 1)
    return False
