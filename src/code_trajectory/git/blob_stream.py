"""Streaming many blobs of the shadow repository from one ``git cat-file --batch`` of their own, fed by a thread
(:func:`stream_blobs`): a restore reads them whole, the push's secret scan in chunks."""

from __future__ import annotations

import contextlib
import io
import subprocess
import threading
from collections.abc import Iterator, Sequence
from typing import IO

from code_trajectory.core.errors import StorageError
from code_trajectory.git.shadow import ShadowRepo

#: Object ids written to ``cat-file``'s stdin at once by :func:`stream_blobs`' feeding thread.
FEED_BATCH = 512


@contextlib.contextmanager
def stream_blobs(repo: ShadowRepo, oids: Sequence[str], kinds: tuple[bytes, ...] = (b"blob",)
                 ) -> Iterator[Iterator[tuple[str, int, IO[bytes]]]]:
    """The blobs ``oids`` of ``repo`` (objects of one of ``kinds``: the push's secret scan reads trees and commits
    too), in order, from one ``git cat-file --batch`` fed by a thread (no round trip per
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
            if len(header) != 3 or header[1] not in kinds:
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
