"""The preparation of a large index (:func:`.index_prepare.prepare`) in a child process, beside the walk.

Why a process: an import is Python work on one interpreter lock. On the import's thread, reading a 500,000-entry
index and taking git's verdict cost ~3.5 s of CPU that the walk of the work tree waited for, the lock being held
by one thread at a time; in a child process they run on the other core. What comes back is columns, not objects
(paths joined, blob ids joined, the numbers packed), so that the import makes each file's objects once, in C.

Protocol: ``python -m code_trajectory.recording.index_seed_child ARGUMENTS PARENT_PID TOLD_FD``, ``ARGUMENTS`` a
JSON object (the project's repository, the size cap, the stat cache's file or null). The child writes two frames
to its stdout, which the parent gives as an unlinked temporary file (no pipe read while the walk holds the
interpreter lock, no name another process could open): first the files git is asked about (:func:`encode_asked`),
after which it writes a byte to the pipe ``TOLD_FD`` (the parent then makes its objects from them while git
compares), then git's verdict (:func:`encode_heard`), and exits 0; logs go to stderr. The child never outlives the
parent (:func:`code_trajectory.core.shutdown.die_with_parent`: its stdin is a pipe the parent holds). What the
parent reads back was written by its own child into a file only the two of them hold; it is still checked (lengths
and counts), and a failed child or a bad answer only means that nothing is reused.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import struct
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from code_trajectory.git.index_entries import IndexEntries, IndexRow, mode_texts, oid_texts
from code_trajectory.git.project import ProjectRepo
from code_trajectory.recording.index_prepare import Asked, Heard

__all__ = ["Columns", "SeedChild", "columns_of", "decode_asked", "decode_heard", "encode_asked", "encode_heard", "main",
           "rows_by_path"]

log = logging.getLogger(__name__)

_MAGIC = b"code-trajectory index seed 2\n"
#: How much nicer (``nice(2)``) the child becomes once it has told the files git is asked about, with the git
#: processes it starts then (``git diff-files``, ~20 threads of ``lstat``, and ``git cat-file``): the import's walk,
#: which takes those files meanwhile, needs git's verdict only once it has placed them, so git runs on the CPU the
#: walk leaves. Measured at 500,000 files on this 2-core machine, alternating 6 times: 5.84 -> 5.61 s (medians);
#: the walk's wait for the first answer and its taking 1.25-1.33 -> 0.69-0.94 s, git's verdict still 0.8-1.1 s
#: before the walk asks for it.
NICER_AFTER_TOLD = 10
_LENGTH = struct.Struct("<Q")
#: ``(paths, modes, blob ids, sizes, mtimes, ctimes, inodes)`` of files, each a sequence in one order
Columns = tuple[list[str], list[str], list[str], Sequence[int], Sequence[int], Sequence[int], Sequence[int]]


def encode_asked(asked: Asked) -> bytes:
    """``asked`` as bytes: a JSON header (the index's mtime, the object id length, the counts), then for the files git
    is asked about and for the others: paths joined by NUL (as the index holds them: what :func:`os.fsencode`
    gives), the raw blob ids joined, the modes, sizes and inodes as a column of 32-bit integers each (git keeps 32
    bits of each), and mtimes and ctimes as a column of 64-bit integers each. Raises OverflowError for a number that
    does not fit (the caller reuses nothing)."""
    groups = (asked.files, asked.others)
    header = {"index_mtime_ns": asked.index_mtime_ns, "oid_bytes": asked.files.oid_bytes,
              "counts": [len(files) for files in groups]}
    sections = [json.dumps(header).encode()]
    for files in groups:
        sections += [b"\0".join(files.names), files.oids,
                     b"".join(_packed(column, "I") for column in (files.modes, files.sizes, files.inos)),
                     b"".join(_packed(column, "q") for column in (files.mtimes_ns, files.ctimes_ns))]
    return _frame(sections)


def _packed(column: Sequence[int], typecode: str) -> bytes:
    """``column`` as the bytes of an array of ``typecode`` (no copy made of one that is such an array already)."""
    if not isinstance(column, array) or column.typecode != typecode:
        column = array(typecode, column)
    return column.tobytes()


def encode_heard(heard: Heard) -> bytes:
    """``heard`` as bytes (one JSON section: paths as JSON strings keep their undecodable bytes' surrogates)."""
    return _frame([json.dumps({
        "changed": sorted(heard.changed) if heard.changed is not None else None, "missing": sorted(heard.missing),
        "trees": {path: list(tree) for path, tree in heard.trees.items()},
        "written": [str(heard.written[0]), *heard.written[1:]] if heard.written else None}).encode()])


def _frame(sections: list[bytes]) -> bytes:
    parts = [_MAGIC, b""]
    for section in sections:
        parts += (_LENGTH.pack(len(section)), section)
    parts[1] = _LENGTH.pack(sum(map(len, parts)) - len(_MAGIC))
    return b"".join(parts)  # one copy of the sections (tens of MB at an import)


def _sections(data: bytes, at: int, count: int) -> tuple[list[bytes], int]:
    """The ``count`` sections of the frame at offset ``at`` of ``data``, and the offset after it.

    Raises:
        ValueError: not a frame of that many sections.
    """
    if data[at:at + len(_MAGIC)] != _MAGIC or len(data) < at + len(_MAGIC) + _LENGTH.size:
        raise ValueError("not an index seed's answer")
    (length,) = _LENGTH.unpack_from(data, at + len(_MAGIC))
    at += len(_MAGIC) + _LENGTH.size
    end = at + length
    sections: list[bytes] = []
    while at + _LENGTH.size <= end:
        (size,) = _LENGTH.unpack_from(data, at)
        sections.append(data[at + _LENGTH.size:at + _LENGTH.size + size])
        at += _LENGTH.size + size
    if at != end or end > len(data) or len(sections) != count:
        raise ValueError("an index seed's answer of the wrong length")
    return sections, end


def decode_asked(data: bytes) -> tuple[Columns, int, dict[str, IndexRow], int]:
    """What :func:`encode_asked` wrote at the start of ``data``: ``(the files git is asked about as columns in the
    index's order, the index's mtime in ns, the others by path, the offset after the frame)``.

    Raises:
        ValueError: not what :func:`encode_asked` writes (a length or a count that does not match, a mode that is
            not a number git writes, an object id length other than SHA-1's or SHA-256's).
    """
    sections, end = _sections(data, 0, 9)
    header = json.loads(sections[0])
    oid_bytes = int(header["oid_bytes"])
    if oid_bytes not in (20, 32):
        raise ValueError("an index seed's answer with an unknown object id length")
    groups: list[Columns] = []
    for count, (paths_bytes, oids, words_bytes, times_bytes) in zip(header["counts"], (sections[1:5], sections[5:9])):
        words, times = array("I"), array("q")
        words.frombytes(words_bytes)
        times.frombytes(times_bytes)
        paths = paths_bytes.decode("utf-8", "surrogateescape").split("\0") if count else []
        if len(paths) != count or len(words) != 3 * count or len(times) != 2 * count or len(oids) != oid_bytes * count:
            raise ValueError("an index seed's answer with counts that do not match")
        modes, sizes, inos = (words[at * count:(at + 1) * count] for at in range(3))
        if any(mode > 0o177777 for mode in set(modes)):
            raise ValueError("an index seed's answer with a mode out of range")
        groups.append((paths, mode_texts(modes), oid_texts(oids, oid_bytes), sizes, times[:count], times[count:], inos))
    return groups[0], int(header["index_mtime_ns"]), rows_by_path(groups[1]), end


def rows_by_path(columns: Columns) -> dict[str, IndexRow]:
    """``columns`` as ``{path: (mode, blob id, size, mtime ns, ctime ns, inode)}``, in their order (the files git is
    not asked about, as the seed keeps them)."""
    return dict(zip(columns[0], zip(*columns[1:])))


def columns_of(files: IndexEntries) -> Columns:
    """``files`` as :data:`Columns` (paths decoded as :func:`os.fsdecode` does, modes and blob ids as text): what
    :func:`decode_asked` gives for them, for the preparation made on the import's own thread."""
    return (list(map(os.fsdecode, files.names)), files.mode_texts(), files.oid_texts(), files.sizes, files.mtimes_ns,
            files.ctimes_ns, files.inos)


def decode_heard(data: bytes, at: int) -> Heard:
    """What :func:`encode_heard` wrote at offset ``at`` of ``data``.

    Raises:
        ValueError: not what :func:`encode_heard` writes.
    """
    sections, _end = _sections(data, at, 1)
    found = json.loads(sections[0])
    written = found["written"]
    return Heard(changed={str(path) for path in found["changed"]} if found["changed"] is not None else None,
                 missing={str(path) for path in found["missing"]},
                 trees={str(path): (int(tree[0]), int(tree[1]), str(tree[2])) for path, tree in found["trees"].items()},
                 written=(Path(written[0]), str(written[1]), str(written[2])) if written else None)


class SeedChild:
    """:func:`.index_prepare.prepare` running in a child process (see the module docstring).

    Args:
        project: the project's repository (its root holds the shadow repository, ``.trajectory``).
        max_file_bytes: the size cap of recorded files.
        stat_cache_path: the stat cache's database file, or None (the private index is then not kept).

    Raises:
        OSError: the child could not be started.
    """

    def __init__(self, project: ProjectRepo, *, max_file_bytes: int, stat_cache_path: Path | None) -> None:
        arguments = {"root": str(project.root), "git_dir": _text(project.git_dir),
                     "common_dir": _text(project.common_dir), "work_tree": _text(project.work_tree),
                     "prefix": project.prefix, "max_file_bytes": max_file_bytes,
                     "stat_cache": _text(stat_cache_path)}
        # held open until the answer is read: unlinked at once, closed by heard() or close()
        self._output: IO[bytes] = tempfile.TemporaryFile(prefix="ct-seed-")  # noqa: SIM115
        self._data = b""
        self._heard_at = 0
        reader, writer = os.pipe()  # the child writes a byte to it when its first frame is out
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-P", "-m", __name__, json.dumps(arguments), str(os.getpid()), str(writer)],
                cwd=project.root, stdin=subprocess.PIPE, stdout=self._output, pass_fds=(writer,))
        except OSError:
            self._output.close()
            os.close(reader)
            raise
        finally:
            os.close(writer)
        self._told = reader

    def asked(self) -> tuple[Columns, int, dict[str, IndexRow]] | None:
        """Wait for the child's first frame (:func:`decode_asked`); None when it failed (logged; :meth:`heard` then
        gives None too)."""
        if self._proc is None:
            return None
        try:
            told = os.read(self._told, 1)  # b"" when the child ended first
            if not told:
                self._proc.wait()
            self._output.seek(0)
            self._data = self._output.read()
            columns, index_mtime_ns, others, self._heard_at = decode_asked(self._data)
            return columns, index_mtime_ns, others
        except (OSError, ValueError) as exc:
            log.warning("not reusing the project's index for the import: %s", exc if self._proc.poll() is None
                        else f"its reader exited with {self._proc.returncode}")
            self.close()
            return None

    def heard(self) -> Heard | None:
        """Wait for the child's end; its last frame (:func:`decode_heard`), or None when it failed (logged)."""
        proc = self._proc
        if proc is None:
            return None
        try:
            code = proc.wait()
            if code != 0:
                log.warning("not reusing the project's index for the import: its reader exited with %s", code)
                return None
            self._output.seek(self._heard_at)
            return decode_heard(self._output.read(), 0)
        except (OSError, ValueError) as exc:
            log.warning("not reusing the project's index for the import: %s", exc)
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child if it still runs; close its files (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            assert proc.stdin is not None
            proc.stdin.close()
            self._output.close()
            os.close(self._told)


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def main(argv: list[str]) -> int:
    """The child's side: ``ARGUMENTS PARENT_PID TOLD_FD`` (see the module docstring); 0 when the answer was
    written."""
    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import die_with_parent
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.recording.index_prepare import prepare
    from code_trajectory.recording.stat_sentinel import sentinel_at  # not gitvouch: the stat cache's imports

    die_with_parent(int(argv[1]))
    gc.disable()  # as the import's process (see importer.main): millions of tuples, little cyclic garbage
    configure_logging()
    arguments = json.loads(argv[0])
    root = Path(arguments["root"])
    paths = {key: Path(arguments[key]) if arguments[key] is not None else None
             for key in ("git_dir", "common_dir", "work_tree")}
    project = ProjectRepo(root, paths["git_dir"], paths["common_dir"], paths["work_tree"], str(arguments["prefix"]))
    cache = arguments["stat_cache"]
    told = int(argv[2])
    out = sys.stdout.buffer

    def tell(asked: Asked) -> None:
        out.write(encode_asked(asked))
        out.flush()
        os.write(told, b"1")  # the parent reads the first frame now, while git compares after it
        with contextlib.suppress(OSError):
            os.nice(NICER_AFTER_TOLD)  # for this process and the git processes it starts from now on

    try:
        heard = prepare(project, ShadowRepo(root), max_file_bytes=int(arguments["max_file_bytes"]),
                        sentinel_of=(lambda name: sentinel_at(root, Path(cache), name)) if cache else None,
                        on_asked=tell)
        out.write(encode_heard(heard))
        out.flush()
    except Exception as exc:  # noqa: BLE001 - an optimisation: without it every file is hashed
        log.warning("not reusing the project's index for the import: %s", exc)
        return 1
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    logging.shutdown()
    os._exit(code)  # no teardown of the 500,000 rows' objects one by one (~0.5 s): the parent waits for the exit
