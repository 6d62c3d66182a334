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
import sys
from array import array
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, islice, repeat
from operator import and_, eq, ge, lt
from pathlib import Path
from typing import NamedTuple

from code_trajectory.git.index_entries import IndexEntries

__all__ = ["IndexCopy", "IndexFile", "IndexFormatError", "IndexTree", "read_index"]

#: ``ctime sec, ctime nsec, mtime sec, mtime nsec, dev, ino, mode, uid, gid, size`` (gitformat-index(5)).
_STAT = struct.Struct(">10I")
_FLAGS = struct.Struct(">H")
_HEADER = struct.Struct(">4sII")
_NAME_MASK = 0x0FFF
_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_STAGE_MASK = 0x3000
#: Extended flags (version 3 and later): the entry is outside a sparse checkout / only intended to be added.
_SKIP_WORKTREE = 0x4000
_INTENT_TO_ADD = 0x2000
_NS = 1_000_000_000


#: ``(entries below it, direct subdirectories, tree id hex)`` of a directory in git's cache-tree.
IndexTree = tuple[int, int, str]


class IndexFormatError(ValueError):
    """The index file is not one this reader understands (the caller asks git instead)."""


@dataclass
class IndexFile:
    """What :func:`read_index` found.

    Attributes:
        entries: the stage-0 entries that are neither intended-to-add nor sparse directories; paths relative to the
            top of the work tree.
        unmerged: paths that have entries of stage 1 to 3 (a conflict).
        mtime_ns: the index file's mtime when it was read (git's racy-clean rule compares file mtimes with it).
        copy: the entries as they can be copied into a private index (:class:`IndexCopy`), or None: not a version 2
            index.
        tree_data: the bytes of git's cache-tree (the ``TREE`` extension), read by :attr:`trees` when asked for.
        oid_bytes: the length of one object id.
    """

    entries: IndexEntries
    unmerged: set[bytes]
    mtime_ns: int
    copy: IndexCopy | None = None
    tree_data: bytes = b""
    oid_bytes: int = 20

    @cached_property
    def trees(self) -> dict[bytes, IndexTree]:
        """git's cache-tree, its valid directories only: ``{directory: (entries, subtrees, tree id hex)}``, the
        directory relative to the top of the work tree as bytes (``b""`` the top), entries the number of index
        entries below it (at any depth), subtrees the number of its direct subdirectories, the id the tree of those
        entries has (written by git when it wrote a tree or commit). Empty without the extension, or when it does not
        parse (a damaged one gives none). Parsed when first asked for (~0.1 s at 25,000 directories), so that a
        caller that needs it later does not wait for it first."""
        trees: dict[bytes, IndexTree] = {}
        if self.tree_data:
            try:
                _cache_tree(self.tree_data, self.oid_bytes, trees)
            except (ValueError, IndexError):
                trees.clear()
        return trees


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
    starts: list[int]
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
        IndexFormatError: not a version 2-4 index with this object id length, a split index, entries out of git's
            order (git refuses such an index too), or damaged.
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
    end = len(data) - oid_bytes
    starts, names, blocks, extended, pos = _walk_entries(data, count, version, oid_bytes, end)
    fields = _fields(blocks, count, oid_bytes)
    del blocks
    unmerged_at: list[int] = []
    dropped: set[int] = set()  # not content the user committed here: a conflict's stages, an intent to add, a
    # sparse directory (not in the work tree)
    odd: set[int] = set()  # racy, assume-unchanged, gitlinks: entries a private index copied from this one leaves out
    if max(fields.flags_high, default=0) >> 4:  # a stage, assume-unchanged or extended flags (none in a usual index)
        unmerged_at = list(compress(range(count), map(and_, fields.flags_high, repeat(_STAGE_MASK >> 8))))
        dropped.update(unmerged_at, (at for at, bits in extended.items() if bits & (_INTENT_TO_ADD | _SKIP_WORKTREE)))
        odd.update(compress(range(count), map(and_, fields.flags_high, repeat(_ASSUME_VALID >> 8))))
    if {mode & 0o170000 for mode in set(fields.modes)} & {0o040000, 0o160000}:
        types = list(map(and_, fields.modes, repeat(0o170000)))
        dropped.update(compress(range(count), map(eq, types, repeat(0o040000))))
        odd.update(compress(range(count), map(eq, types, repeat(0o160000))))
    written_s = (mtime_ns // _NS) & 0xFFFFFFFF  # git's racy-clean rule, in whole seconds (see index_seed)
    for column in (fields.mtime_s, fields.ctime_s):
        if max(column, default=0) >= written_s:
            odd.update(compress(range(count), map(ge, column, repeat(written_s))))
    odd -= dropped
    kept = [at not in dropped for at in range(count)] if dropped else None
    entries = IndexEntries(names, fields.modes, fields.oids, fields.sizes, fields.mtimes_ns, fields.ctimes_ns,
                           fields.inos, oid_bytes)
    if kept is not None:
        entries = entries.select(kept)
    if not all(map(lt, entries.names, islice(entries.names, 1, None))):
        raise IndexFormatError("the index's entries are not in git's order")
    tree_data = _extensions(data, pos, end)
    copy = None
    if version == 2:
        ends = [*islice(starts, 1, None), pos]
        copy = IndexCopy(data, starts if kept is None else list(compress(starts, kept)), pos,
                         [(starts[at], ends[at]) for at in sorted(dropped | odd)], {names[at] for at in odd}, count,
                         entries.names)
    return IndexFile(entries, {names[at] for at in unmerged_at}, mtime_ns, copy, tree_data, oid_bytes)


def _walk_entries(data: bytes, count: int, version: int, oid_bytes: int, end: int,
                  ) -> tuple[list[int], list[bytes], list[bytes], dict[int, int], int]:
    """Walk the ``count`` entries of an index: ``(their offsets, their paths, the first bytes of each: stat data, object
    id, flags and two more bytes, their extended flags by place when they have some, the offset after the last)``.

    One Python step an entry with one test in the usual case (version 2 or 3, no extended flags, a path shorter than
    0xFFF bytes); the others are read by :func:`_entry_path`.

    Raises:
        IndexFormatError: an entry that does not parse, or entries that run past the end.
    """
    fixed = _STAT.size + oid_bytes  # the stat fields and the object id, then the flags
    block = fixed + 4  # every entry is at least this long: flags, a path of one byte or more, its NUL
    starts: list[int] = []
    names: list[bytes] = []
    blocks: list[bytes] = []
    start_at, name_is, block_is = starts.append, names.append, blocks.append
    extended: dict[int, int] = {}
    previous = b""
    general = version == 4
    pos = _HEADER.size
    try:
        for place in range(count):
            high = data[pos + fixed]
            length = (high << 8 | data[pos + fixed + 1]) & _NAME_MASK
            start_at(pos)
            block_is(data[pos:pos + block])
            if general or high << 8 & _EXTENDED or length == _NAME_MASK:  # a long path; a version 4 path
                name, after, bits = _entry_path(data, pos, fixed, version, end, previous)
                if bits:
                    extended[place] = bits
                name_is(name)
                previous, pos = name, after
                continue
            nul = pos + fixed + 2 + length
            if data[nul]:
                raise IndexFormatError("a damaged path in the index")
            name_is(data[pos + fixed + 2:nul])
            pos += ((nul - pos) >> 3 << 3) + 8  # 1 to 8 NUL bytes pad the entry to a multiple of 8
    except IndexError as exc:
        raise IndexFormatError("the index's entries run past its end") from exc
    if pos > end:
        raise IndexFormatError("the index's entries run past its end")
    return starts, names, blocks, extended, pos


def _entry_path(data: bytes, pos: int, fixed: int, version: int, end: int, previous: bytes,
                ) -> tuple[bytes, int, int]:
    """The path of the entry at ``pos`` read the general way (extended flags, a path of 0xFFF bytes or more, a version
    4 path compressed against ``previous``): ``(path, offset after the entry, extended flags or 0)``."""
    (flags,) = _FLAGS.unpack_from(data, pos + fixed)
    at, bits = pos + fixed + 2, 0
    if flags & _EXTENDED:
        if version < 3:
            raise IndexFormatError("an extended flag in a version 2 index")
        (bits,) = _FLAGS.unpack_from(data, at)
        at += 2
    if version == 4:
        strip, at = _varint(data, at)
        nul = data.find(b"\0", at)
        if nul < 0 or strip > len(previous):
            raise IndexFormatError("a damaged path in a version 4 index")
        return previous[:len(previous) - strip] + data[at:nul], nul + 1, bits
    length = flags & _NAME_MASK
    nul = at + length if length < _NAME_MASK else data.find(b"\0", at + _NAME_MASK)
    if nul < 0 or nul >= end or data[nul] != 0:
        raise IndexFormatError("a damaged path in the index")
    return data[at:nul], pos + ((nul - pos) // 8 + 1) * 8, bits


class _Fields(NamedTuple):
    modes: array[int]
    flags_high: bytes  # the high byte of each entry's flags: assume-unchanged, extended, the stage, the length
    mtime_s: array[int]
    ctime_s: array[int]
    sizes: array[int]
    mtimes_ns: list[int]
    ctimes_ns: list[int]
    inos: array[int]
    oids: bytes


def _fields(blocks: list[bytes], count: int, oid_bytes: int) -> _Fields:
    """The fields of the entries' first bytes (:func:`_walk_entries`) as columns, made in C.

    Raises:
        IndexFormatError: not ``count`` blocks of the length :func:`_walk_entries` takes.
    """
    per = (_STAT.size + oid_bytes + 4) // 4  # 32-bit words a block
    joined = b"".join(blocks)
    words = array("I")
    words.frombytes(joined)
    if len(words) != per * count or words.itemsize != 4:
        raise IndexFormatError("the index's entries run past its end")
    swap = sys.byteorder == "little"
    if swap:
        words.byteswap()  # the index's fields are big-endian
    ctime_s, ctime_n, mtime_s, mtime_n, inos, modes, sizes = (words[at::per] for at in (0, 1, 2, 3, 5, 6, 9))
    flags_high = joined[_STAT.size + oid_bytes::4 * per]  # the flags (big-endian), then two bytes of the path
    oid_words = oid_bytes // 4
    oids = array("I", bytes(4 * oid_words * count))
    for at in range(oid_words):
        oids[at::oid_words] = words[_STAT.size // 4 + at::per]
    if swap:
        oids.byteswap()
    return _Fields(modes, flags_high, mtime_s, ctime_s, sizes, [s * _NS + n for s, n in zip(mtime_s, mtime_n)],
                   [s * _NS + n for s, n in zip(ctime_s, ctime_n)], inos, oids.tobytes())


def _extensions(data: bytes, pos: int, end: int) -> bytes:
    """Refuse a split index (its ``link`` extension names another file holding most entries); return the ``TREE``
    extension's bytes (``b""`` when there is none)."""
    found = b""
    while pos + 8 <= end:
        signature = data[pos:pos + 4]
        (size,) = struct.unpack_from(">I", data, pos + 4)
        if signature == b"link":
            raise IndexFormatError("a split index (its shared part is another file)")
        if signature == b"TREE":
            found = data[pos + 8:min(pos + 8 + size, end)]
        pos += 8 + size
    return found


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

