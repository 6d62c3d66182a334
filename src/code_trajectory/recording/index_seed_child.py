"""The preparation of a large index (:func:`.index_prepare.prepare`) in a child process, beside the walk.

Why a process: an import is Python work on one interpreter lock. On the import's thread, reading a 500,000-entry
index and taking git's verdict cost ~3.5 s of CPU that the walk of the work tree waited for, the lock being held
by one thread at a time; in a child process they run on the other core. What comes back is columns, not objects
(paths joined, blob ids joined, the numbers packed), so that the import makes each file's objects once, in C.

Protocol: ``python -m code_trajectory.recording.index_seed_child ARGUMENTS PARENT_PID``, ``ARGUMENTS`` a JSON
object (the project's repository, the size cap, the stat cache's file or null); the child writes :func:`encode`'s
bytes to its stdout, which the parent gives as an unlinked temporary file (no pipe read while the walk holds the
interpreter lock, no name another process could open), and exits 0; logs go to stderr. The child never outlives
the parent (:func:`code_trajectory.core.shutdown.die_with_parent`: its stdin is a pipe the parent holds). What the
parent reads back was written by its own child into a file only the two of them hold; it is still checked
(:func:`decode`: lengths and counts), and a failed child or a bad answer only means that nothing is reused.
"""

from __future__ import annotations

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
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import IO

from code_trajectory.git.index_file import IndexRow
from code_trajectory.git.project import ProjectRepo
from code_trajectory.recording.index_prepare import Prepared

__all__ = ["Columns", "SeedChild", "decode", "encode", "main"]

log = logging.getLogger(__name__)

_MAGIC = b"code-trajectory index seed 1\n"
_LENGTH = struct.Struct("<Q")
_FACTS = itemgetter(2, 3, 4, 5)  # an index row's size, mtime, ctime, inode
#: ``(paths, modes, blob ids, sizes, mtimes, ctimes, inodes)`` of files, each a sequence in one order
Columns = tuple[list[str], list[str], list[str], Sequence[int], Sequence[int], Sequence[int], Sequence[int]]


def encode(prepared: Prepared) -> bytes:
    """``prepared`` as bytes: a JSON header (the index's mtime, its trees, the private index kept, the modes), then
    for the files git vouched for and for the other candidates: paths joined by NUL (UTF-8, undecodable bytes as
    :func:`os.fsencode` gives them), a mode code a byte, the blob ids joined, and size, mtime, ctime and inode as
    64-bit integers. Raises OverflowError for a number that does not fit (the caller reuses nothing)."""
    candidate_paths = list(prepared.candidates)
    groups = [(prepared.paths, prepared.rows), (candidate_paths, list(prepared.candidates.values()))]
    modes = sorted({row[0] for _paths, rows in groups for row in rows})
    code = {mode: at for at, mode in enumerate(modes)}
    header = {"index_mtime_ns": prepared.index_mtime_ns, "modes": modes,
              "trees": {path: list(tree) for path, tree in prepared.trees.items()},
              "written": [str(prepared.written[0]), *prepared.written[1:]] if prepared.written else None,
              "counts": [len(paths) for paths, _rows in groups]}
    sections = [json.dumps(header).encode()]
    for paths, rows in groups:
        sections += ["\0".join(paths).encode("utf-8", "surrogateescape"), bytes(code[row[0]] for row in rows),
                     "".join(map(itemgetter(1), rows)).encode("ascii"),
                     array("q", chain.from_iterable(map(_FACTS, rows))).tobytes()]
    return _MAGIC + b"".join(_LENGTH.pack(len(section)) + section for section in sections)


def decode(data: bytes) -> tuple[Prepared, Columns]:
    """What :func:`encode` wrote: the :class:`Prepared` without its vouched files (``paths`` and ``rows`` empty),
    and those files as :data:`Columns` (in the index's order).

    Raises:
        ValueError: not what :func:`encode` writes (a length or a count that does not match, a mode code out of
            range, a blob id of another length).
    """
    if not data.startswith(_MAGIC):
        raise ValueError("not an index seed's answer")
    sections: list[bytes] = []
    at = len(_MAGIC)
    while at < len(data):
        (length,) = _LENGTH.unpack_from(data, at)
        sections.append(data[at + _LENGTH.size:at + _LENGTH.size + length])
        at += _LENGTH.size + length
    if at != len(data) or len(sections) != 9:
        raise ValueError("an index seed's answer of the wrong length")
    header = json.loads(sections[0])
    modes, (vouched_count, candidate_count) = [str(mode) for mode in header["modes"]], header["counts"]
    groups: list[Columns] = []
    for count, (paths_bytes, codes, oids_bytes, facts_bytes) in zip(
            (vouched_count, candidate_count), (sections[1:5], sections[5:9])):
        paths = paths_bytes.decode("utf-8", "surrogateescape").split("\0") if count else []
        facts = array("q")
        facts.frombytes(facts_bytes)
        if not count:
            groups.append(([], [], [], [], [], [], []))
            continue
        oid_length = len(oids_bytes) // count
        if (len(paths) != count or len(codes) != count or len(facts) != 4 * count or oid_length * count != len(oids_bytes)
                or max(codes) >= len(modes) or oid_length not in (40, 64)):
            raise ValueError("an index seed's answer with counts that do not match")
        text = oids_bytes.decode("ascii")
        groups.append((paths, list(map(modes.__getitem__, codes)),
                       [text[i:i + oid_length] for i in range(0, len(text), oid_length)],
                       facts[0::4], facts[1::4], facts[2::4], facts[3::4]))
    candidates: dict[str, IndexRow] = dict(zip(groups[1][0], zip(*groups[1][1:])))
    trees = {str(path): (int(tree[0]), int(tree[1]), str(tree[2])) for path, tree in header["trees"].items()}
    written = header["written"]
    prepared = Prepared(candidates=candidates, trees=trees, index_mtime_ns=int(header["index_mtime_ns"]),
                        written=(Path(written[0]), str(written[1]), str(written[2])) if written else None)
    return prepared, groups[0]


class SeedChild:
    """:func:`.index_prepare.prepare` running in a child process (see the module docstring).

    Args:
        project: the project's repository; root: the project root (its shadow repository is ``.trajectory`` there).
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
        # held open until the answer is read: unlinked at once, closed by result() or close()
        self._output: IO[bytes] = tempfile.TemporaryFile(prefix="ct-seed-")  # noqa: SIM115
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-m", __name__, json.dumps(arguments), str(os.getpid())], cwd=project.root,
                stdin=subprocess.PIPE, stdout=self._output)
        except OSError:
            self._output.close()
            raise

    def result(self) -> tuple[Prepared, Columns] | None:
        """Wait for the child; its answer (see :func:`decode`), or None when it failed (logged)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            code = proc.wait()
            assert proc.stdin is not None
            proc.stdin.close()
            if code != 0:
                log.warning("not reusing the project's index for the import: its reader exited with %s", code)
                return None
            self._output.seek(0)
            return decode(self._output.read())
        except (OSError, ValueError) as exc:
            log.warning("not reusing the project's index for the import: %s", exc)
            return None
        finally:
            self._output.close()

    def close(self) -> None:
        """Stop the child if it still runs (its answer is not wanted)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            assert proc.stdin is not None
            proc.stdin.close()
            self._output.close()


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def main(argv: list[str]) -> int:
    """The child's side: ``ARGUMENTS PARENT_PID`` (see the module docstring); 0 when the answer was written."""
    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import die_with_parent
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.recording import gitvouch
    from code_trajectory.recording.index_prepare import prepare

    die_with_parent(int(argv[1]))
    gc.disable()  # as the import's process (see importer.main): millions of tuples, little cyclic garbage
    configure_logging()
    arguments = json.loads(argv[0])
    root = Path(arguments["root"])
    paths = {key: Path(arguments[key]) if arguments[key] is not None else None
             for key in ("git_dir", "common_dir", "work_tree")}
    project = ProjectRepo(root, paths["git_dir"], paths["common_dir"], paths["work_tree"], str(arguments["prefix"]))
    cache = arguments["stat_cache"]
    try:
        prepared = prepare(project, ShadowRepo(root), max_file_bytes=int(arguments["max_file_bytes"]),
                           sentinel_of=(lambda name: gitvouch.sentinel_at(root, Path(cache), name)) if cache else None)
        answer = encode(prepared)
    except Exception as exc:  # noqa: BLE001 - an optimisation: without it every file is hashed
        log.warning("not reusing the project's index for the import: %s", exc)
        return 1
    sys.stdout.buffer.write(answer)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    logging.shutdown()
    os._exit(code)  # no teardown of the 500,000 rows' objects one by one (~0.5 s): the parent waits for the exit
