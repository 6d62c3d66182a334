"""Reading work-tree files into blobs: in parallel for large batches, never following a swapped-in symlink."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from code_trajectory.core.secrets import secret_content
from code_trajectory.core.text import format_size
from code_trajectory.git import packs
from code_trajectory.git.oversize import oversize_blob
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, TreeEntry
from code_trajectory.recording.worktree import FileInfo

log = logging.getLogger(__name__)

#: Threads reading and compressing files for large batches (I/O and zlib release the GIL).
BLOB_WORKERS = min(4, os.cpu_count() or 1)
#: Files from which a batch is read on worker threads.
PARALLEL_FROM = 64

ProgressFn = Callable[[str, int, int | None], None]


def write_blobs(repo: ShadowRepo, root: Path, infos: list[FileInfo], cap: int, progress: ProgressFn | None = None,
                secrets: dict[str, str] | None = None) -> tuple[dict[str, TreeEntry | None], dict[str, int]]:
    """Write blobs for ``infos`` (files under ``root``, paths relative to it) into ``repo``'s current pack batch.

    Files over ``cap`` bytes are stored as a size note (:data:`~code_trajectory.git.oversize.OVERSIZE_MARKER`), not
    their content. A file whose content is a secret (:func:`code_trajectory.core.secrets.secret_content`: a private
    key block, an npm token), checked on the bytes read for hashing, is not recorded: its entry is None, as for a
    file that vanished.

    Args:
        secrets: when given, each file left out as a secret is added (path -> why).

    Returns:
        ``({path: entry, or None when the file vanished or is a secret}, {oversize path: size})``.
        A file that cannot be read (permissions) gets no entry: its last recorded
        content is kept.
    """
    entries: dict[str, TreeEntry | None] = {}
    oversize: dict[str, int] = {}
    root_dir = str(root)
    regular = [i for i in infos if i.mode != MODE_SYMLINK and i.size <= cap]
    for info in infos:
        if info.mode == MODE_SYMLINK:
            try:
                entries[info.rel] = TreeEntry(MODE_SYMLINK, repo.write_blob(
                    os.readlink(os.fsencode(os.path.join(root_dir, info.rel)))))
            except (FileNotFoundError, NotADirectoryError):
                entries[info.rel] = None
            except OSError as exc:
                log.warning("cannot read the symlink %s: %s", info.rel, exc)
        elif info.size > cap:
            note = oversize_blob(format_size(cap), info.size, info.mtime_ns)
            entries[info.rel] = TreeEntry(MODE_FILE, repo.write_blob(note))
            oversize[info.rel] = info.size

    def load(info: FileInfo):
        """Read, hash and compress one file (on a worker thread: I/O and zlib release the GIL)."""
        try:
            data = _read_regular(os.path.join(root_dir, info.rel), cap)
        except (FileNotFoundError, NotADirectoryError):
            return info, "gone"
        except OSError as exc:
            return info, exc
        if data is None:
            return info, None
        why = secret_content(data)
        return (info, ("secret", why)) if why else (info, packs.deflate_blob(data))

    def load_chunk(chunk: list[FileInfo]) -> list:
        return [load(info) for info in chunk]

    chunks = [regular[i:i + 256] for i in range(0, len(regular), 256)]  # one task per 256 files, not per file
    done = 0
    with ThreadPoolExecutor(max_workers=BLOB_WORKERS) if len(regular) > PARALLEL_FROM else _Inline() as pool:
        for results in pool.map(load_chunk, chunks):
            for info, result in results:
                if result == "gone":
                    entries[info.rel] = None
                elif isinstance(result, tuple) and result[0] == "secret":
                    entries[info.rel] = None
                    log.info("not recorded: %s (%s)", info.rel, result[1])
                    if secrets is not None:
                        secrets[info.rel] = result[1]
                elif isinstance(result, OSError):
                    log.warning("cannot read %s, keeping its last recorded content: %s", info.rel, result)
                elif result is not None:  # None: grew past the cap since it was looked at; noted next time
                    oid, body = result
                    entries[info.rel] = TreeEntry(info.mode, repo.add_deflated_blob(oid, body))
            done += len(results)
            if progress is not None and (done % 4096 < 256 or done == len(regular)):
                progress("hash", done, len(regular))
    return entries, oversize


def write_pinned(repo: ShadowRepo, contents: dict[str, tuple[bool, bytes]],
                 secrets: dict[str, str] | None = None) -> dict[str, TreeEntry | None]:
    """Write blobs for content read earlier (an edit hook's, see :mod:`~code_trajectory.recording.handoff`):
    ``{path relative to the root: (executable, bytes)}``, each within the size cap, into ``repo``'s current pack
    batch; a secret (as in :func:`write_blobs`) gets the entry None and is added to ``secrets``.

    Returns:
        ``{path: entry, or None for a secret}``.
    """
    entries: dict[str, TreeEntry | None] = {}
    for rel, (executable, data) in contents.items():
        if why := secret_content(data):
            entries[rel] = None
            log.info("not recorded: %s (%s)", rel, why)
            if secrets is not None:
                secrets[rel] = why
        else:
            oid, body = packs.deflate_blob(data)
            entries[rel] = TreeEntry(MODE_EXECUTABLE if executable else MODE_FILE, repo.add_deflated_blob(oid, body))
    return entries


class _Inline:
    """A stand-in for a thread pool that maps in the calling thread (small batches)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def map(fn, items):
        return map(fn, items)


def _read_regular(path: Path | str, limit: int) -> bytes | None:
    """Read a regular file without following a symlink swapped in meanwhile; None when over ``limit`` bytes."""
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced by a FIFO or device: never block on it
            raise FileNotFoundError(f"{path} is no longer a regular file")
        data = os.read(fd, min(st.st_size, limit) + 1)
        if len(data) <= min(st.st_size, limit):  # short read, or the file grew: read the rest
            chunks = [data]
            while (chunk := os.read(fd, 1 << 20)) and sum(map(len, chunks)) <= limit:
                chunks.append(chunk)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    return None if len(data) > limit else data


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
