"""Paths counted by directory, the way ``git diff --dirstat`` names where a change is: a long list of files said
in a few groups (``src/click/ (12), tests/ (48)``), each the deepest directory its files share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

#: Groups :func:`group_by_directory` names at most unless told.
MAX_GROUPS = 8
#: The kind of a group of paths: a file, a directory (``dir/``) or a directory's own files (``dir/*``).
PATH = "path"
#: The kind of the group of the files at the root of the project when they are not the only ones (``path`` ``""``).
TOP_LEVEL = "top level"
#: The kind of the group of the smallest groups of a directory with too many (``path``: that directory, ``""`` the root).
ELSEWHERE = "elsewhere"


class Group(NamedTuple):
    """Where some of the paths are: ``path`` of kind :data:`PATH`, else a label that is no path (:data:`TOP_LEVEL`,
    :data:`ELSEWHERE`: a file may be named ``elsewhere``), and how many ``files`` are there."""

    path: str
    files: int
    kind: str = PATH


@dataclass
class _Dir:
    path: str  # "" for the root, else "a/b"
    files: list[str] = field(default_factory=list)
    dirs: dict[str, _Dir] = field(default_factory=dict)
    count: int = 0


def _tree(paths: list[str]) -> _Dir:
    root = _Dir("")
    for path in paths:
        node = root
        node.count += 1
        parts = path.split("/")
        for part in parts[:-1]:
            child = node.dirs.get(part)
            if child is None:
                child = node.dirs[part] = _Dir(f"{node.path}/{part}" if node.path else part)
            node = child
            node.count += 1
        node.files.append(path)
    return root


def _deepest(node: _Dir) -> _Dir:
    """``node`` or, while all its files are in one subdirectory, that subdirectory."""
    while not node.files and len(node.dirs) == 1:
        node = next(iter(node.dirs.values()))
    return node


def _label(node: _Dir) -> Group:
    """The group of every file under ``node``: its directory, the root's own files when it is the root."""
    return Group(f"{node.path}/", node.count) if node.path else Group("", node.count, TOP_LEVEL)


def _parts(node: _Dir) -> list[tuple[Group, _Dir | None]]:
    """What splitting ``node`` gives: its subdirectories (each at its deepest) and its own files as one group (a
    file alone by its path)."""
    parts: list[tuple[Group, _Dir | None]] = []
    for child in node.dirs.values():
        deep = _deepest(child)
        parts.append((Group(deep.files[0], 1), None) if deep.count == 1 else (_label(deep), deep))
    if len(node.files) == 1:
        parts.append((Group(node.files[0], 1), None))
    elif node.files:
        own = Group(f"{node.path}/*", len(node.files)) if node.path else Group("", len(node.files), TOP_LEVEL)
        parts.append((own, None))
    return parts


def group_by_directory(paths: list[str], max_groups: int = MAX_GROUPS) -> list[Group]:
    """Name where ``paths`` (relative, ``/``-separated) are in at most ``max_groups`` groups.

    Args:
        paths: the files, each once.
        max_groups: the most groups returned (at least 2).

    Returns:
        :class:`Group` objects, :data:`TOP_LEVEL` first, then the paths in order, :data:`ELSEWHERE` last: a path
        is a directory ending in ``/`` (every file under it), a directory's own files ``dir/*`` (not those of its
        subdirectories) or a single file's path; :data:`TOP_LEVEL` is the root's own files, :data:`ELSEWHERE` the
        smallest groups of a directory (its ``path``, ``""`` for the root) with more than ``max_groups`` of them.
        The groups are split largest first while their number stays within ``max_groups``, each at the deepest
        directory its files share. Empty for no paths.
    """
    if not paths:
        return []
    top = _deepest(_tree(paths))
    groups: list[tuple[Group, _Dir | None]] = [(Group(top.files[0], 1), None)] if top.count == 1 else [(_label(top), top)]
    while True:
        splittable = sorted((g for g in groups if g[1] is not None and g[1].dirs), key=lambda g: -g[0].files)
        for group in splittable:
            assert group[1] is not None
            parts = _parts(group[1])
            if len(groups) - 1 + len(parts) <= max_groups:
                groups.remove(group)
                groups += parts
                break
        else:
            if len(groups) == 1 and splittable:  # one group too wide to split whole: its largest parts, the rest
                parts = sorted(_parts(top), key=lambda p: -p[0].files)  # counted together
                groups = [(group, None) for group, _ in parts[:max_groups - 1]]
                rest = sum(group.files for group, _ in parts[max_groups - 1:])
                groups.append((Group(f"{top.path}/" if top.path else "", rest, ELSEWHERE), None))
            break
    order = {TOP_LEVEL: 0, PATH: 1, ELSEWHERE: 2}
    return sorted((group for group, _ in groups), key=lambda g: (order[g.kind], g.path))
