"""Reading a git index file directly: its entries with their stat data.

The initial import of a git project takes the blob ids the project's index vouches for
(:mod:`code_trajectory.recording.index_seed`). At 500,000 files, ``git ls-files --stage --debug`` prints some
150 bytes of text per entry that then have to be parsed again; the index file itself holds the same facts in
fixed binary fields and is read here in one pass (gitformat-index(5), versions 2, 3 and 4). Nothing is written.

What is not understood is not guessed: a split index (the ``link`` extension), an unknown version, a checksum
that does not match (a torn or foreign file, or an object format other than the one asked for) raise
:class:`IndexFormatError`, and the caller asks git instead (``git ls-files``).
"""

from __future__ import annotations

import hashlib
import os
import struct
from array import array
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["IndexCopy", "IndexFile", "IndexFormatError", "IndexRow", "IndexTree", "read_index"]

#: ``ctime sec, ctime nsec, mtime sec, mtime nsec, dev, ino, mode, uid, gid, size`` (gitformat-index(5)).
_STAT = struct.Struct(">10I")
_FLAGS = struct.Struct(">H")
_HEADER = struct.Struct(">4sII")
_NAME_MASK = 0x0FFF
_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_STAGE_SHIFT = 12
#: Extended flags (version 3 and later): the entry is outside a sparse checkout / only intended to be added.
_SKIP_WORKTREE = 0x4000
_INTENT_TO_ADD = 0x2000
_NS = 1_000_000_000


#: ``(mode, oid hex, size, mtime ns, ctime ns, inode)`` of an index entry (git keeps the low 32 bits of seconds,
#: size and inode).
IndexRow = tuple[str, str, int, int, int, int]
#: ``(entries below it, direct subdirectories, tree id hex)`` of a directory in git's cache-tree.
IndexTree = tuple[int, int, str]


class IndexFormatError(ValueError):
    """The index file is not one this reader understands (the caller asks git instead)."""


@dataclass
class IndexFile:
    """What :func:`read_index` found.

    Attributes:
        entries: ``{path: (mode, oid hex, size, mtime ns, ctime ns, inode)}`` of the stage-0 entries that are
            neither intended-to-add nor sparse directories; paths are relative to the top of the work tree, as
            bytes; mode is the octal text git uses (``100644``...); seconds, size and inode are git's low 32 bits.
        unmerged: paths that have entries of stage 1 to 3 (a conflict).
        mtime_ns: the index file's mtime when it was read (git's racy-clean rule compares file mtimes with it).
        trees: git's cache-tree (the ``TREE`` extension), its valid directories only: ``{directory: (entries, subtrees,
            tree id hex)}``, the directory relative to the top of the work tree as bytes (``b""`` the top), entries
            the number of index entries below it (at any depth), subtrees the number of its direct subdirectories,
            the id the tree of those entries has (written by git when it wrote a tree or commit). Empty without the
            extension.
    """

    entries: dict[bytes, IndexRow]
    unmerged: set[bytes]
    mtime_ns: int
    trees: dict[bytes, IndexTree] = field(default_factory=dict)
    #: the entries as they can be copied into a private index (:class:`IndexCopy`), or None: not a version 2 index
    copy: IndexCopy | None = None


@dataclass
class IndexCopy:
    """Where the entries of a version 2 index lie in its bytes, to copy them into another index as they are.

    Attributes:
        data: the index file's bytes.
        starts: the offset in ``data`` of each entry of :attr:`IndexFile.entries`, in the same order (git's, by path).
        end: the offset just past the last entry.
        skipped: ``(start, end)`` offsets of the entries a private index must not hold, in order: those not in
            :attr:`IndexFile.entries` (a conflict's stages, an intent to add, a sparse directory), a gitlink, an entry
            marked assume-unchanged (git would not look at its file), and a racy one: its mtime or ctime in the
            second the index file was written, or later.
        left_out: the paths of the entries of :attr:`IndexFile.entries` among those skipped (racy, assume-unchanged,
            a gitlink): a private index copied so holds no entry for them.
        count: the number of entries in the index file (those skipped included).
        names: the paths of :attr:`IndexFile.entries` in their order (as :attr:`starts`), relative to the top of the
            work tree.
    """

    data: bytes
    starts: array[int]
    end: int
    skipped: list[tuple[int, int]]
    left_out: set[bytes]
    count: int = 0
    names: list[bytes] = field(default_factory=list)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset varint (``read-cache.c`` ``decode_varint``) at ``pos``: ``(value, position after it)``."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def read_index(path: Path, *, oid_bytes: int = 20) -> IndexFile:
    """Read the index file at ``path``.

    Args:
        path: the index file (``<git dir>/index``).
        oid_bytes: the length of an object id of the repository: 20 (SHA-1) or 32 (SHA-256).

    Raises:
        OSError: the file cannot be read.
        IndexFormatError: not a version 2-4 index with this object id length, a split index, or damaged.
    """
    with open(path, "rb") as f:
        mtime_ns = os.fstat(f.fileno()).st_mtime_ns
        data = f.read()
    hash_fn = {20: hashlib.sha1, 32: hashlib.sha256}.get(oid_bytes)
    if hash_fn is None or len(data) < _HEADER.size + oid_bytes:
        raise IndexFormatError("not an index file")
    trailer = data[-oid_bytes:]
    if trailer != bytes(oid_bytes) and hash_fn(memoryview(data)[:-oid_bytes]).digest() != trailer:
        raise IndexFormatError("the index's checksum does not match (torn, or another object format)")
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise IndexFormatError(f"index version {version} is not read here")
    entries: dict[bytes, IndexRow] = {}
    unmerged: set[bytes] = set()
    copy = IndexCopy(data, array("Q"), 0, [], set(), count) if version == 2 else None
    starts, skipped, left_out = ((copy.starts, copy.skipped, copy.left_out) if copy is not None
                                 else (array("Q"), [], set()))
    written_s = (mtime_ns // _NS) & 0xFFFFFFFF  # git's racy-clean rule, in whole seconds (see index_seed)
    pos = _HEADER.size
    end = len(data) - oid_bytes
    fixed = _STAT.size + oid_bytes  # the stat fields and the object id, then the flags
    previous = b""
    unpack_entry = struct.Struct(f">10I{oid_bytes}sH").unpack_from
    unpack_flags, find = _FLAGS.unpack_from, data.find
    modes: dict[int, str] = {}
    for _ in range(count):
        start = pos
        cs, cn, ms, mn, _dev, ino, mode, _uid, _gid, size, oid, flags = unpack_entry(data, pos)
        pos += fixed + 2
        extended = 0
        if flags & _EXTENDED:
            if version < 3:
                raise IndexFormatError("an extended flag in a version 2 index")
            (extended,) = unpack_flags(data, pos)
            pos += 2
        if version == 4:
            strip, pos = _varint(data, pos)
            nul = find(b"\0", pos)
            if nul < 0 or strip > len(previous):
                raise IndexFormatError("a damaged path in a version 4 index")
            name = previous[:len(previous) - strip] + data[pos:nul]
            pos = nul + 1
            previous = name
        else:
            length = flags & _NAME_MASK
            nul = pos + length if length < _NAME_MASK else find(b"\0", pos + _NAME_MASK)
            if nul >= end or data[nul] != 0:
                raise IndexFormatError("a damaged path in the index")
            name = data[pos:nul]
            pos = start + ((nul - start) // 8 + 1) * 8  # 1 to 8 NUL bytes pad the entry to a multiple of 8
        if pos > end:
            raise IndexFormatError("the index's entries run past its end")
        stage = (flags >> _STAGE_SHIFT) & 3
        if stage:
            unmerged.add(name)
            skipped.append((start, pos))
            continue
        if extended & (_INTENT_TO_ADD | _SKIP_WORKTREE) or mode & 0o170000 == 0o040000:
            skipped.append((start, pos))
            continue  # not content the user committed here (intent to add), or not in the work tree (sparse)
        text = modes.get(mode)
        if text is None:
            text = modes[mode] = f"{mode:06o}"
        entries[name] = (text, oid.hex(), size, ms * _NS + mn, cs * _NS + cn, ino)
        starts.append(start)
        if ms >= written_s or cs >= written_s or flags & _ASSUME_VALID or mode & 0o170000 == 0o160000:
            left_out.add(name)
            skipped.append((start, pos))
    trees = _extensions(data, pos, end, oid_bytes)
    if copy is not None:
        copy.end, copy.names = pos, list(entries)
    return IndexFile(entries, unmerged, mtime_ns, trees, copy)


def _extensions(data: bytes, pos: int, end: int, oid_bytes: int) -> dict[bytes, IndexTree]:
    """Refuse a split index (its ``link`` extension names another file holding most entries); return the valid
    directories of the ``TREE`` extension (see :attr:`IndexFile.trees`; a damaged one gives none)."""
    trees: dict[bytes, IndexTree] = {}
    while pos + 8 <= end:
        signature = data[pos:pos + 4]
        (size,) = struct.unpack_from(">I", data, pos + 4)
        if signature == b"link":
            raise IndexFormatError("a split index (its shared part is another file)")
        if signature == b"TREE":
            try:
                _cache_tree(data[pos + 8:min(pos + 8 + size, end)], oid_bytes, trees)
            except (ValueError, IndexError):
                trees.clear()
        pos += 8 + size
    return trees


#: The longest directory path a cache-tree node may name, bytes (Linux's ``PATH_MAX``); and the bytes of all its
#: directory paths together (a real 500,000-file tree in 25,000 directories names ~1 MiB). Past either, the
#: cache-tree is not used (every tree is written instead).
MAX_TREE_PATH = 4096
MAX_TREE_NAMES_BYTES = 64 << 20


def _cache_tree(data: bytes, oid_bytes: int, trees: dict[bytes, IndexTree]) -> None:
    """Parse git's cache-tree (gitformat-index(5), ``cache-tree.c`` ``read_one``) into ``trees``: each node is its
    name (``NUL``-ended; empty for the top), ``<entries> <subtrees>\\n`` in ASCII, the tree id when entries is not
    -1 (an invalid node), then its subtrees, depth first. ValueError when it does not parse."""
    stack: list[tuple[bytes, int]] = []  # (directory, subtrees of it still to read)
    pos, find, top = 0, data.find, True
    named = 0  # bytes of the directory names kept: bounded, since a chain of nested one-letter names in a small
    # planted extension would make the names' total length grow with the square of its depth
    while True:
        nul = find(b"\0", pos)
        newline = find(b"\n", nul)
        if nul < 0 or newline < 0:
            raise ValueError("a damaged cache-tree")
        name = data[pos:nul]
        count_text, _, subtrees_text = data[nul + 1:newline].partition(b" ")
        count, subtrees = int(count_text), int(subtrees_text)
        pos = newline + 1
        if top:
            if name:
                raise ValueError("a damaged cache-tree")
            directory, top = b"", False
        else:
            parent, left = stack[-1]
            stack[-1] = (parent, left - 1)
            if b"/" in name or name in (b"", b".", b".."):
                raise ValueError("a damaged cache-tree")
            directory = parent + b"/" + name if parent else name
            named += len(directory)
            if len(directory) > MAX_TREE_PATH or named > MAX_TREE_NAMES_BYTES:
                raise ValueError("a cache-tree past its bounds")
        if subtrees < 0 or (count >= 0 and pos + oid_bytes > len(data)):
            raise ValueError("a damaged cache-tree")
        if count >= 0:
            trees[directory] = (count, subtrees, data[pos:pos + oid_bytes].hex())
            pos += oid_bytes
        if subtrees:
            stack.append((directory, subtrees))
        while stack and stack[-1][1] == 0:
            stack.pop()
        if not stack:
            return

