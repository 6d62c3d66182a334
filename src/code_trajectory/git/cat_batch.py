"""Reading many answers of ``git cat-file --batch`` from one request (:meth:`ShadowRepo.each_object`), and streaming
many blobs from a process of their own (:func:`stream_blobs`).

The process's stdout is an unbuffered pipe (answers must not be read ahead into a buffer another request would
not see), so a ``readline`` there is one read per byte: reading a few hundred answers that way cost more than
git took to give them. Here the answers to one request are read 64 KiB at a time, never past the last one.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING

from code_trajectory.core.errors import StorageError

if TYPE_CHECKING:
    from code_trajectory.git.shadow import ShadowRepo


class TooLarge(EOFError):
    """An answer's object is larger than the reader takes into memory: raised from inside the reader, so that the
    process is killed and restarted (its pipe still holds the object); the caller raises
    :class:`~code_trajectory.core.errors.ObjectTooLargeError` instead."""


def check_size(oid: str, size: int, max_size: int | None) -> None:
    """Raise :class:`TooLarge` when ``size`` (bytes, from a ``cat-file`` header) is over ``max_size`` (None: no
    bound)."""
    if max_size is not None and size > max_size:
        raise TooLarge(f"object {oid} is {size:,} bytes, more than the {max_size:,} read at most (a damaged or "
                       "planted .trajectory?)")


def read_answers(stream: IO[bytes], *, count: int, visit: Callable[[tuple[str, bytes] | None], None],
                 max_size: int | None = None) -> Exception | None:
    """Read ``count`` answers of ``cat-file --batch`` from ``stream``, calling ``visit`` with each one's
    ``(type, content)`` (None for ``missing``), in order.

    Returns:
        ``visit``'s first error (the answers after it are still read, not visited), or None.

    Raises:
        TooLarge: an object is larger than ``max_size`` bytes (not read).
        EOFError: the stream ended, an answer is not one of ``cat-file``'s, or more came than was asked (the
            caller kills the process: the stream is out of step).
    """
    buf, pos, failed = bytearray(), 0, None

    def need(size: int) -> None:
        while len(buf) < size:
            data = stream.read(1 << 16)
            if not data:
                raise EOFError("git process ended unexpectedly")
            buf.extend(data)

    for _ in range(count):
        while (end := buf.find(b"\n", pos)) < 0:
            need(len(buf) + 1)
        parts = bytes(buf[pos:end]).decode("utf-8", "replace").split()
        pos = end + 1
        found: tuple[str, bytes] | None
        if len(parts) == 2 and parts[1] == "missing":
            found = None
        elif len(parts) == 3 and parts[2].isdigit():
            size = int(parts[2])
            check_size(parts[0], size, max_size)
            need(pos + size + 1)
            found = parts[1], bytes(buf[pos:pos + size])
            pos += size + 1
        else:
            raise EOFError(f"unexpected cat-file header {' '.join(parts)!r}")
        if failed is None:
            try:
                visit(found)
            except Exception as exc:  # noqa: BLE001 - returned: the caller raises it once the stream is in step
                failed = exc
        del buf[:pos]
        pos = 0
    if buf:
        raise EOFError("cat-file answered more than it was asked")
    return failed


#: Object ids written to ``cat-file``'s stdin at once by :func:`stream_blobs`' feeding thread.
FEED_BATCH = 512


@contextlib.contextmanager
def stream_blobs(repo: ShadowRepo, oids: Sequence[str]) -> Iterator[Iterator[tuple[str, int, IO[bytes]]]]:
    """The blobs ``oids`` of ``repo``, in order, from one ``git cat-file --batch`` fed by a thread (no round trip per
    blob): yields an iterator of ``(oid, size in bytes, stream)``; read exactly ``size`` bytes from ``stream`` before
    the next (a restore reads a blob whole, the push's secret scan in chunks). Leaving the ``with`` early stops git.

    Raises:
        StorageError: (from the iterator) a blob is missing or its content is cut short (a damaged shadow
            repository).
    """
    proc = repo.git.popen(["cat-file", "--batch"], stderr=subprocess.DEVNULL)
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None  # popen pipes both

    def feed() -> None:
        try:
            for start in range(0, len(oids), FEED_BATCH):
                chunk = memoryview("".join(f"{oid}\n" for oid in oids[start:start + FEED_BATCH]).encode("ascii"))
                while chunk:
                    chunk = chunk[stdin.write(chunk):]
        except (BrokenPipeError, ValueError):
            pass  # the reader stopped early
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    feeder = threading.Thread(target=feed, name="cat-file-feed", daemon=True)
    feeder.start()
    # Popen gives a BufferedReader (it has readinto); typeshed types Popen.stdout as IO[bytes], which lacks it
    stream = io.BufferedReader(stdout, 1 << 16)  # type: ignore[type-var]

    def entries() -> Iterator[tuple[str, int, IO[bytes]]]:
        for oid in oids:
            header = stream.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise StorageError(f"blob {oid} is missing from the shadow repository")
            yield oid, int(header[2]), stream
            if stream.read(1) != b"\n":
                raise StorageError(f"blob {oid} could not be read from the shadow repository")

    try:
        yield entries()
    finally:
        if proc.poll() is None:
            proc.kill()  # stopped early (or done: then it was exiting anyway)
        feeder.join()
        stream.close()
        proc.wait()
