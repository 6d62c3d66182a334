"""The sizes of the objects a fetch brought, read from their headers: what a check of untrusted history needs before
anything reads a message or a file.
"""

from __future__ import annotations

from collections.abc import Iterable

from code_trajectory.git.gitcmd import Git


def new_object_sizes(git: Git, wants: Iterable[str], haves: Iterable[str] = (), *,
                     commits_only: bool = False) -> list[tuple[str, str, int]]:
    """``[(object id, type, size in bytes)]`` of the objects reachable from ``wants`` and not from ``haves``.

    One ``git rev-list --stdin`` (``--objects`` unless ``commits_only``) and one ``git cat-file --batch-check``:
    nothing is read but the objects' headers.

    Args:
        git: the repository.
        wants, haves: object ids (commits) to list from and to stop at.
        commits_only: list commits only (not their trees and blobs).

    Raises:
        GitError: git failed (e.g. a ``want`` that is not a commit).
    """
    feed = "".join(f"{oid}\n" for oid in wants)
    if not feed:
        return []
    feed += "".join(f"^{oid}\n" for oid in haves)
    args = ["rev-list", "--stdin"] + ([] if commits_only else ["--objects", "--no-object-names"])
    listed = git.out(args, input=feed.encode("ascii")).split()
    if not listed:
        return []
    checked = git.out(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                      input=b"\n".join(listed) + b"\n")
    found = []
    for line in checked.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            found.append((parts[0], parts[1], int(parts[2])))
    return found
