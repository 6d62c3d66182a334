"""An index of the text each snapshot added or removed, so a text search reads a few snapshots instead of all.

``git log -S<text>`` (git's pickaxe) diffs every commit it walks: over 100,000 snapshots that is seconds, whatever
the limit, when the text is rare. This index keeps, per commit of a shadow branch, a 256-bit signature of the
character trigrams of its changed lines (the ``+``/``-`` lines of ``git log -p -U0``): bit
``crc32(trigram) % 256`` is set for each. A single-line text whose number of occurrences changed in a commit lies
in one of its changed lines (the lines git's diff keeps are the same on both sides), so every trigram of the text
has its bit set in that commit's signature; commits missing a bit cannot match and are skipped. The candidates
left are checked by git itself (the same ``git log -S``, given only those commits), so the answer is git's.

Stored bit-sliced, one bitmap over the commits per bit (``state/search-index/<sha1 of ref>.bin``): a query ANDs
the bitmaps of its trigrams' bits, whatever the history's length. Commits newer than the index (written since
the last maintenance) are searched by git directly; a commit whose diff is binary or has more than
:data:`SATURATED_TRIGRAMS` distinct trigrams (an import) is always a candidate. Texts shorter than 3 bytes, with
a line break, or regular expressions are not helped: the caller scans as before (:func:`plan` returns None).

The file is untrusted input like everything in ``.trajectory``: one that does not parse is ignored (and rebuilt
by the next maintenance); commit ids read from it are hex we format ourselves.
"""

from __future__ import annotations

import hashlib
import io
import logging
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.errors import GitError
from code_trajectory.git import branch_indexes
from code_trajectory.git.shadow import ShadowRepo

log = logging.getLogger(__name__)

BITS = 256
#: Distinct trigrams past which a commit's signature is all ones (an import, a generated file): always a candidate.
SATURATED_TRIGRAMS = 1500
MAGIC = b"CTSI1\n"
#: Largest index file read, bytes: 32 bytes of signature per commit, so ~8 million snapshots of one branch.
MAX_INDEX_BYTES = 256 * 1024 * 1024
_HEADER = struct.Struct("<20sI")  # the tip the index covers, the number of commits
_ALL = (1 << BITS) - 1


def _index_path(repo: ShadowRepo, ref: str) -> Path:
    return repo.state_dir / "search-index" / (hashlib.sha1(ref.encode("utf-8", "surrogateescape")).hexdigest()
                                              + ".bin")


def _bit(trigram: bytes) -> int:
    return zlib.crc32(trigram) % BITS


def signature(lines: list[bytes]) -> int:
    """The 256-bit signature of a commit's changed lines (without their ``+``/``-``): one bit per trigram."""
    trigrams = {line[i:i + 3] for line in lines for i in range(len(line) - 2)}
    if len(trigrams) > SATURATED_TRIGRAMS:
        return _ALL
    sig = 0
    for trigram in trigrams:
        sig |= 1 << _bit(trigram)
    return sig


def load(repo: ShadowRepo, ref: str) -> StoredIndex | None:
    """The stored index of ``ref``, or None (none yet, or a file that does not parse)."""
    return branch_indexes.load(_index_path(repo, ref), StoredIndex.parse, limit=MAX_INDEX_BYTES,
                               what=f"search index of {ref}")


class StoredIndex:
    """An index as stored: bit-sliced (a bitmap over the commits per signature bit), parsed lazily."""

    def __init__(self, tip: str, oids: list[bytes], bitmaps: list[int]) -> None:
        self.tip, self.oids, self.bitmaps = tip, oids, bitmaps

    @classmethod
    def parse(cls, data: bytes) -> StoredIndex:
        """Raises ValueError or struct.error on a file that is not an index."""
        if not data.startswith(MAGIC):
            raise ValueError("not a search index")
        pos = len(MAGIC)
        tip, count = _HEADER.unpack_from(data, pos)
        pos += _HEADER.size
        width = (count + 7) // 8
        if len(data) != pos + 20 * count + BITS * width:
            raise ValueError("truncated search index")
        oids = [data[p:p + 20] for p in range(pos, pos + 20 * count, 20)]
        pos += 20 * count
        bitmaps = [int.from_bytes(data[pos + b * width:pos + (b + 1) * width], "little") for b in range(BITS)]
        return cls(tip.hex(), oids, bitmaps)

    def serialize(self) -> bytes:
        width = (len(self.oids) + 7) // 8
        return b"".join([MAGIC, _HEADER.pack(bytes.fromhex(self.tip), len(self.oids)), *self.oids,
                         *(bitmap.to_bytes(width, "little") for bitmap in self.bitmaps)])

    def candidates(self, text: bytes) -> list[str]:
        """The commits (hex ids, newest first) that may have added or removed ``text`` (3 bytes or more)."""
        hits = (1 << len(self.oids)) - 1
        for bit in {_bit(text[i:i + 3]) for i in range(len(text) - 2)}:
            hits &= self.bitmaps[bit]
        found = []
        while hits > 0:
            position = hits.bit_length() - 1
            found.append(self.oids[position].hex())
            hits ^= 1 << position
        return found

    def extend(self, tip: str, commits: list[tuple[str, int]]) -> None:
        """Append ``commits`` (oldest first: ``(id, signature)``) and cover ``tip``."""
        base = len(self.oids)
        bitmaps = list(self.bitmaps)
        for n, (oid, sig) in enumerate(commits, base):
            self.oids.append(bytes.fromhex(oid))
            while sig:
                low = sig & -sig
                bitmaps[low.bit_length() - 1] |= 1 << n
                sig ^= low
        self.bitmaps, self.tip = bitmaps, tip


def _changed_lines(repo: ShadowRepo, revs: list[str]) -> list[tuple[str, int]]:
    """``(commit, signature)`` of every commit ``git log revs`` lists, oldest first (the patch is streamed: a
    whole history's is hundreds of megabytes).

    Raises:
        GitError: git failed.
    """
    proc = repo.git.popen(["log", "--reverse", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                           "--no-renames", "--format=%x00%H", "--end-of-options", *revs, "--"],
                          stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found: list[tuple[str, int]] = []
    oid: str | None = None
    lines: list[bytes] = []
    binary = header = False
    assert proc.stdout is not None
    with proc, io.BufferedReader(proc.stdout, 1 << 16) as reader:  # type: ignore[type-var]
        for line in reader:
            line = line.rstrip(b"\n")
            if line.startswith(b"\x00"):
                if oid is not None:
                    found.append((oid, _ALL if binary else signature(lines)))
                oid, lines, binary, header = line[1:].decode("ascii", "replace"), [], False, False
            elif line.startswith(b"diff --git "):
                header = True
            elif line.startswith(b"@@"):
                header = False
            elif header:
                binary = binary or line.startswith(b"Binary files ")
            elif line[:1] in (b"+", b"-"):
                lines.append(line[1:])
        if oid is not None:
            found.append((oid, _ALL if binary else signature(lines)))
    if proc.returncode != 0:
        raise GitError(f"git log -p failed ({proc.returncode}) while indexing the history for search")
    return found


def update(repo: ShadowRepo, ref: str) -> int:
    """Bring ``ref``'s index up to its tip (rebuilt whole when the ref no longer descends from the indexed tip,
    e.g. after ``consolidate``); returns the commits added.

    Raises:
        GitError: git failed.
    """
    tip = repo.resolve(ref)
    if tip is None:
        return 0
    index = load(repo, ref)
    if index is not None and index.tip == tip:
        return 0
    if index is not None and not branch_indexes.is_ancestor(repo, index.tip, tip):
        index = None
    if index is None:
        index = StoredIndex(tip, [], [0] * BITS)
        commits = _changed_lines(repo, [tip])
    else:
        commits = _changed_lines(repo, [tip, f"^{index.tip}"])
    index.extend(tip, commits)
    path = _index_path(repo, ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, index.serialize(), fsync=False)
    return len(commits)


def update_all(repo: ShadowRepo) -> None:
    """Bring the index of every shadow ref up to date and delete those of refs that are gone; a ref that cannot be
    indexed is logged and left to the plain scan (maintenance goes on: :func:`.branch_indexes.update_all`)."""
    branch_indexes.update_all(repo, what="search index", directory=repo.state_dir / "search-index", path_of=_index_path,
                              update=update)


@dataclass
class Plan:
    """How to search ``ref`` for a text with the index: git scans ``newer`` (a range: commits the index does not
    cover yet), then checks ``candidates`` (commit ids, newest first)."""

    newer: list[str]
    candidates: list[str]


def plan(repo: ShadowRepo, ref: str, tip: str, text: str) -> Plan | None:
    """A plan for searching ``tip`` (``ref``'s commit) for ``text`` (git's ``-S``), or None when the index cannot
    help (no index, a text under 3 bytes or with a line break, a tip that does not descend from the index's)."""
    try:
        data = text.encode("utf-8", "surrogateescape")  # as git gets it in its argv
    except UnicodeEncodeError:
        return None
    if len(data) < 3 or b"\n" in data:
        return None
    index = load(repo, ref)
    if index is None:
        return None
    if index.tip != tip:
        try:
            if not branch_indexes.is_ancestor(repo, index.tip, tip):
                return None
        except GitError:
            return None
    return Plan([] if index.tip == tip else [tip, f"^{index.tip}"], index.candidates(data))
