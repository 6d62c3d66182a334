"""git's tree objects as bytes: the entry modes, :class:`TreeEntry`, a tree's body read and written, the empty
tree's id, and the mode git records for a file from its ``lstat``.

A tree's body is git's: ``<mode> <name>\\0<20-byte id>`` per entry, sorted as git sorts them. The shadow
repository (:class:`~code_trajectory.git.shadow.ShadowRepo`) reads and writes its trees with these; every caller
imports the names from here.
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

EMPTY_TREE_OID = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

MODE_FILE = "100644"
MODE_EXECUTABLE = "100755"
MODE_SYMLINK = "120000"
MODE_TREE = "40000"


class TreeEntry(NamedTuple):
    """One entry of a git tree: ``mode`` as git writes it (``100644``, ``40000``...) and the object id.

    A named tuple (made in C, a third of a frozen dataclass's cost): an import makes one per file, 500,000 of them.
    """

    mode: str
    oid: str

    @property
    def is_tree(self) -> bool:
        return self.mode == MODE_TREE


def parse_tree(data: bytes) -> dict[bytes, TreeEntry]:
    """The entries of a tree's body by name (bytes).

    Raises:
        ValueError: the body is truncated or malformed.
    """
    entries: dict[bytes, TreeEntry] = {}
    pos = 0
    size = len(data)
    while pos < size:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode = data[pos:space].decode("ascii")
        name = data[space + 1:nul]
        if nul + 21 > size:
            raise ValueError(f"truncated tree entry {name!r}")
        oid = data[nul + 1:nul + 21].hex()
        entries[name] = TreeEntry(mode, oid)
        pos = nul + 21
    return entries


def tree_body(entries: dict[bytes, TreeEntry]) -> bytes:
    """The body of a tree object holding ``{name: entry}``.

    Entries are sorted as git sorts them (byte order, a tree's name compared as if
    it ended in ``/``).
    """
    ordered = sorted(entries.items(), key=lambda item: item[0] + b"/" if item[1].is_tree else item[0])
    return b"".join(entry.mode.encode() + b" " + name + b"\0" + bytes.fromhex(entry.oid) for name, entry in ordered)


def git_mode(st: os.stat_result) -> str | None:
    """Return the git mode of a file from its ``lstat``, or None for what git cannot store.

    Regular files are ``100755`` when the owner may execute them, else ``100644``;
    symlinks are ``120000``; FIFOs, sockets and devices give None (not recorded).
    """
    if stat.S_ISREG(st.st_mode):
        return MODE_EXECUTABLE if st.st_mode & stat.S_IXUSR else MODE_FILE
    if stat.S_ISLNK(st.st_mode):
        return MODE_SYMLINK
    return None
