"""Reading what changed between trees, from ``git diff-tree -z --raw --numstat``.

git prints, per compared pair, the ``--raw`` records (modes, blob ids, status,
paths) followed by the ``--numstat`` records (added and deleted line counts,
``-`` for binary); with ``--stdin`` each pair is introduced by the commit id.
All of it is NUL-separated (``-z``), so any file name survives.
"""

from __future__ import annotations

import os
import re

from code_trajectory.git.gitcmd import split_z
from code_trajectory.git.messages import FileChange
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import EMPTY_TREE_OID

_HEX40 = re.compile(rb"^[0-9a-f]{40}$")
#: A unified diff's hunk header (``@@ -12,4 +12,5 @@ def f():``), one per line (``re.M``): groups old start, old
#: count (None: 1), new start, new count (None: 1), and the section git names after it ("" when none); a count of
#: ``0`` places the hunk after its start line (git-diff(1), "combined diff format" and diffutils' unified format).
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$", re.M)
#: More changed paths than this and line counts are not computed (each needs both blobs read).
MAX_COUNTED_FILES = 300


def _decode(path: bytes) -> str:
    return os.fsdecode(path)


def parse_records(tokens: list[bytes], pos: int = 0) -> tuple[list[FileChange], int]:
    """Parse raw+numstat records starting at ``tokens[pos]`` until the next commit id or the end.

    Returns:
        The changes (raw order, with counts merged in) and the index after the last record.
    """
    raw: list[FileChange] = []
    counts: dict[str, tuple[int | None, int | None]] = {}
    n = len(tokens)
    while pos < n:
        token = tokens[pos]
        if token.startswith(b":"):
            fields = token[1:].split(b" ")
            old_oid, new_oid, status = fields[2].decode(), fields[3].decode(), fields[4].decode()
            letter = status[:1]
            if letter in ("R", "C"):
                old_path, new_path = _decode(tokens[pos + 1]), _decode(tokens[pos + 2])
                pos += 3
                raw.append(FileChange(letter, new_path, old_path, old_oid=old_oid, new_oid=new_oid))
            else:
                raw.append(FileChange(letter, _decode(tokens[pos + 1]), old_oid=old_oid, new_oid=new_oid))
                pos += 2
            continue
        if b"\t" in token and re.match(rb"^(\d+|-)\t(\d+|-)\t", token):
            added_s, deleted_s, path = token.split(b"\t", 2)
            added = None if added_s == b"-" else int(added_s)
            deleted = None if deleted_s == b"-" else int(deleted_s)
            if path == b"":  # rename: old and new paths follow
                path = tokens[pos + 2]
                pos += 3
            else:
                pos += 1
            counts[_decode(path)] = (added, deleted)
            continue
        break  # a commit id (next pair) or something unexpected
    if counts:
        raw = [FileChange(c.status, c.path, c.old_path, *counts.get(c.path, (None, None)),
                          old_oid=c.old_oid, new_oid=c.new_oid, counted=c.path in counts) for c in raw]
    return raw, pos


def tree_changes(repo: ShadowRepo, old_tree: str | None, new_tree: str, *, counts: bool = True,
                 expected: int | None = None) -> list[FileChange]:
    """Return the file changes from ``old_tree`` (None: empty) to ``new_tree``, renames detected.

    Line counts are computed only when ``counts`` and at most :data:`MAX_COUNTED_FILES`
    paths changed; otherwise ``added``/``deleted`` stay None and the status alone is known.
    ``expected``, the number of paths the caller changed, lets a small change be read
    in one git call instead of two.
    """
    old = old_tree or EMPTY_TREE_OID
    if old == EMPTY_TREE_OID or new_tree == EMPTY_TREE_OID:
        repo.empty_tree()
    base_args = ["diff-tree", "-r", "-z", "--no-abbrev", "-M", "--raw"]
    if counts and expected is not None and expected <= MAX_COUNTED_FILES:
        changes, _ = parse_records(split_z(repo.git.out(base_args + ["--numstat", old, new_tree])))
        return changes
    out = repo.git.out(base_args + [old, new_tree])
    changes, _ = parse_records(split_z(out))
    if counts and 0 < len(changes) <= MAX_COUNTED_FILES:
        out = repo.git.out(base_args + ["--numstat", old, new_tree])
        changes, _ = parse_records(split_z(out))
    return changes


def is_commit_id(token: bytes) -> bool:
    """True for a 40-hex token (a commit id line of ``diff-tree --stdin``)."""
    return bool(_HEX40.match(token))
