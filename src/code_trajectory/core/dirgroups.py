"""Paths counted by directory, the way ``git diff --dirstat`` names where a change is: a long list of files said
in a few groups (``src/click/ (12), tests/ (48)``), each the deepest directory its files share."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Groups :func:`group_by_directory` names at most unless told.
MAX_GROUPS = 8
#: The label of the files at the root of the project when they are not the only ones.
TOP_LEVEL = "(top level)"


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


def _label(node: _Dir) -> str:
    return f"{node.path}/" if node.path else TOP_LEVEL


def _parts(node: _Dir) -> list[tuple[str, int, _Dir | None]]:
    """What splitting ``node`` gives: its subdirectories (each at its deepest) and its own files as one group (a
    file alone by its path)."""
    parts: list[tuple[str, int, _Dir | None]] = []
    for child in node.dirs.values():
        deep = _deepest(child)
        parts.append((deep.files[0], 1, None) if deep.count == 1 else (_label(deep), deep.count, deep))
    if len(node.files) == 1:
        parts.append((node.files[0], 1, None))
    elif node.files:
        parts.append((f"{node.path}/*" if node.path else TOP_LEVEL, len(node.files), None))
    return parts


def group_by_directory(paths: list[str], max_groups: int = MAX_GROUPS) -> list[tuple[str, int]]:
    """Name where ``paths`` (relative, ``/``-separated) are in at most ``max_groups`` groups.

    Args:
        paths: the files, each once.
        max_groups: the most groups returned (at least 2).

    Returns:
        ``(label, count)`` sorted by label: a label is a directory ending in ``/`` (every file under it), a
        directory's own files ``dir/*`` (not those of its subdirectories), :data:`TOP_LEVEL` (the root's own
        files), a single file's path, or ``elsewhere`` / ``elsewhere in dir/`` (the smallest groups of a directory with more than
        ``max_groups`` of them). The groups are split largest first while their number stays within
        ``max_groups``, each at the deepest directory its files share. Empty for no paths.
    """
    if not paths:
        return []
    top = _deepest(_tree(paths))
    groups: list[tuple[str, int, _Dir | None]] = (
        [(top.files[0], 1, None)] if top.count == 1 else [(_label(top), top.count, top)])
    while True:
        splittable = sorted((g for g in groups if g[2] is not None and g[2].dirs), key=lambda g: -g[1])
        for group in splittable:
            assert group[2] is not None
            parts = _parts(group[2])
            if len(groups) - 1 + len(parts) <= max_groups:
                groups.remove(group)
                groups += parts
                break
        else:
            if len(groups) == 1 and splittable:  # one group too wide to split whole: its largest parts, the rest
                parts = sorted(_parts(top), key=lambda p: -p[1])  # counted together
                keep = parts[:max_groups - 1]
                groups = [(label, count, None) for label, count, _ in keep]
                groups.append((f"elsewhere{' in ' + _label(top) if top.path else ''}", sum(p[1] for p in parts[max_groups - 1:]), None))
            break
    return sorted(((label, count) for label, count, _ in groups), key=lambda g: (g[0].startswith("elsewhere"), g[0]))
