"""Reading many answers of ``git cat-file --batch`` from one request (:meth:`ShadowRepo.each_object`).

The process's stdout is an unbuffered pipe (answers must not be read ahead into a buffer another request would
not see), so a ``readline`` there is one read per byte: reading a few hundred answers that way cost more than
git took to give them. Here the answers to one request are read 64 KiB at a time, never past the last one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO


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
