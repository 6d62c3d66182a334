"""Index entries as columns (:class:`IndexEntries`): what :mod:`code_trajectory.git.index_file` reads of an index's
entries, and what the initial import's index seed hands from its child process to the import
(:mod:`code_trajectory.recording.index_seed_child`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import methodcaller, not_

__all__ = ["IndexEntries", "IndexRow", "mode_texts", "oid_texts"]

#: ``(mode, oid hex, size, mtime ns, ctime ns, inode)`` of an index entry (git keeps the low 32 bits of seconds,
#: size and inode).
IndexRow = tuple[str, str, int, int, int, int]


@dataclass
class IndexEntries:
    """Index entries as columns: one place per entry, in the index's order (git's: by path, bytewise).

    Why columns: the initial import of a 500,000-file project reads them in a child process and hands them to its
    parent (:mod:`code_trajectory.recording.index_seed_child`); made as one tuple and one dictionary item per entry,
    reading them cost ~1 s of CPU and turning them into columns again for the hand-over ~0.45 s (measured
    2026-11-26 on this 2-core machine); read as columns, both are a pass over the file and a few joins.

    Attributes:
        names: the paths, as bytes, relative to the top of the work tree (or to the root: :meth:`under`).
        modes: the modes as numbers (``0o100644``...).
        oids: the raw object ids joined, ``oid_bytes`` each.
        sizes: the sizes in bytes (git's low 32 bits).
        mtimes_ns, ctimes_ns: mtime and ctime in nanoseconds (git's low 32 bits of seconds).
        inos: the inode numbers (git's low 32 bits).
        oid_bytes: the length of one object id: 20 (SHA-1) or 32 (SHA-256).
    """

    names: list[bytes]
    modes: Sequence[int]
    oids: bytes
    sizes: Sequence[int]
    mtimes_ns: Sequence[int]
    ctimes_ns: Sequence[int]
    inos: Sequence[int]
    oid_bytes: int = 20

    @classmethod
    def empty(cls, oid_bytes: int = 20) -> IndexEntries:
        """No entries."""
        return cls([], [], b"", [], [], [], [], oid_bytes)

    @classmethod
    def from_rows(cls, rows: Mapping[bytes, IndexRow], oid_bytes: int = 20) -> IndexEntries:
        """The entries of ``rows`` (``{path: (mode text, oid hex, size, mtime ns, ctime ns, inode)}``, in its order)
        whose object id has ``oid_bytes`` bytes (the others are left out).

        Raises:
            ValueError: a mode or an object id that is not hexadecimal or octal text.
        """
        kept = [row for row in rows.items() if len(row[1][1]) == 2 * oid_bytes]
        return cls([name for name, _ in kept], [int(row[0], 8) for _, row in kept],
                   bytes.fromhex("".join(row[1] for _, row in kept)), [row[2] for _, row in kept],
                   [row[3] for _, row in kept], [row[4] for _, row in kept], [row[5] for _, row in kept], oid_bytes)

    def __len__(self) -> int:
        return len(self.names)

    def oid_texts(self) -> list[str]:
        """The object ids in hex, in order."""
        return oid_texts(self.oids, self.oid_bytes)

    def mode_texts(self) -> list[str]:
        """The modes as the octal text git writes (``100644``...), in order."""
        return mode_texts(self.modes)

    def rows(self) -> dict[bytes, IndexRow]:
        """``{path: (mode text, oid hex, size, mtime ns, ctime ns, inode)}`` in order."""
        return dict(zip(self.names, zip(self.mode_texts(), self.oid_texts(), self.sizes, self.mtimes_ns,
                                        self.ctimes_ns, self.inos)))

    def select(self, chosen: Iterable[object]) -> IndexEntries:
        """The entries at the places where ``chosen`` (one flag per entry, in order) is true."""
        places = list(compress(range(len(self.names)), chosen))
        if len(places) == len(self.names):
            return self
        step, oids = self.oid_bytes, self.oids
        columns = (self.modes, self.sizes, self.mtimes_ns, self.ctimes_ns, self.inos)
        modes, sizes, mtimes, ctimes, inos = ([column[at] for at in places] for column in columns)
        return IndexEntries([self.names[at] for at in places], modes,
                            b"".join(oids[at * step:(at + 1) * step] for at in places), sizes, mtimes, ctimes, inos,
                            step)

    def without(self, names: Collection[bytes]) -> IndexEntries:
        """These entries but those named in ``names`` (itself when none is)."""
        if not names:
            return self
        return self.select(map(not_, map(names.__contains__, self.names)))

    def under(self, prefix: bytes) -> IndexEntries:
        """The entries whose name starts with ``prefix`` (a directory's path ending in ``/``), named relative to it."""
        chosen = self.select(map(methodcaller("startswith", prefix), self.names))
        cut = len(prefix)
        return replace(chosen, names=[name[cut:] for name in chosen.names])


def oid_texts(oids: bytes, oid_bytes: int) -> list[str]:
    """The raw object ids ``oids`` (``oid_bytes`` each, joined) in hex, in order."""
    text, step = oids.hex(), 2 * oid_bytes
    return [text[at:at + step] for at in range(0, len(text), step)]


def mode_texts(modes: Iterable[int]) -> list[str]:
    """The modes ``modes`` as the octal text git writes (``100644``...), in order."""
    modes = list(modes)
    text = {mode: f"{mode:06o}" for mode in set(modes)}
    return list(map(text.__getitem__, modes))
