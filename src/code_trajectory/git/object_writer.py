"""Writing objects into a git object directory: loose files, or one pack per batch.

A loose object is git's format (gitformat-loose(5)), written to a temporary file and linked into place, so a
reader never sees half an object. Inside :meth:`ObjectWriter.batch` objects are collected and written as one pack
(:func:`code_trajectory.git.packs.write_pack`) at the end of the block, or early past a size bound; a batch of a
handful of objects is written loose instead (many small packs slow every later lookup until maintenance rolls them
up). Used by :class:`~code_trajectory.git.shadow.ShadowRepo`, which reads what is written here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from code_trajectory.core.errors import StorageError
from code_trajectory.git import packs

__all__ = ["BATCH_FLUSH_BYTES", "BATCH_FLUSH_OBJECTS", "LOOSE_MAX_OBJECTS", "ObjectWriter"]

#: A batch of at most this many objects is written as loose objects rather than a pack.
LOOSE_MAX_OBJECTS = 12
#: A batch writes its pack early past this many bytes or objects, bounding memory (64 MiB, 20,000 objects).
BATCH_FLUSH_BYTES = 64 * 1024 * 1024
BATCH_FLUSH_OBJECTS = 20_000


class ObjectWriter:
    """Writes objects into one object directory (not thread-safe within a :meth:`batch`: one writer at a time,
    as the recorder's lock ensures).

    Args:
        objects_dir: the repository's ``objects`` directory.
    """

    def __init__(self, objects_dir: Path) -> None:
        self.objects_dir = Path(objects_dir)
        self._pending: list[tuple[bytes, bytes | packs.Deflated, str]] | None = None
        self._pending_bytes = 0

    @contextlib.contextmanager
    def loose(self) -> Iterator[None]:
        """Write loose objects inside the block, even within a :meth:`batch` (whose collected objects wait)."""
        pending, self._pending = self._pending, None
        try:
            yield
        finally:
            self._pending = pending

    def write_object(self, kind: bytes, body: bytes) -> str:
        """Write a loose object and return its id (idempotent).

        git's loose object format (see gitformat-loose(5) / ``git help objects``):
        ``zlib("<kind> <size>\\0" + body)`` at ``objects/<2 hex>/<38 hex>``, written to a
        temporary file in the same directory and linked into place, so a reader never
        sees a partial object and a killed writer leaves only a ``tmp_obj_*`` file that
        ``git prune`` removes. Used for trees and commits, which are small; blobs go
        through ``git hash-object`` or ``git fast-import``.

        Raises:
            StorageError: the object directory cannot be written (disk full, removed).
        """
        header = kind + b" " + str(len(body)).encode() + b"\0"
        oid = hashlib.sha1(header + body).hexdigest()
        pending = self._pending
        if pending is not None:  # inside batch(): collected, written as one pack at the end
            pending.append((kind, body, oid))
            self._pending_bytes += len(body)
            if self._pending_bytes > BATCH_FLUSH_BYTES or len(pending) > BATCH_FLUSH_OBJECTS:
                self._flush_pending()
            return oid
        directory = self.objects_dir / oid[:2]
        final = directory / oid[2:]
        if final.exists():
            return oid
        try:
            directory.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=directory)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(zlib.compress(header + body, 1))
                os.chmod(tmp, 0o444)
                try:
                    os.link(tmp, final)
                except FileExistsError:
                    pass
                except OSError:  # a file system without hard links
                    os.replace(tmp, final)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as exc:
            raise StorageError(f"cannot write an object into {self.objects_dir}: {exc}") from exc
        return oid

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Collect the objects written inside the block and write them as one pack at its end.

        Objects are readable from the tree cache meanwhile; nothing refers to them
        until the block ends and the caller moves a ref. Nested blocks join the outer one.

        Raises:
            StorageError: the pack cannot be written.
        """
        if self._pending is not None:
            yield
            return
        self._pending, self._pending_bytes = [], 0
        try:
            yield
            self._flush_pending()
        finally:
            self._pending = None

    def _flush_pending(self) -> None:
        objects, self._pending, self._pending_bytes = self._pending or [], [], 0
        if len(objects) <= LOOSE_MAX_OBJECTS:
            # a handful of objects: loose files cost little and, unlike many small packs, do not slow
            # down every later object lookup until maintenance rolls them up
            with self.loose():
                for kind, body, _oid in objects:
                    self.write_object(kind, body.inflate() if isinstance(body, packs.Deflated) else body)
            return
        try:
            packs.write_pack(self.objects_dir, objects)
        except OSError as exc:
            raise StorageError(f"cannot write a pack into {self.objects_dir}: {exc}") from exc

    def add_deflated(self, oid: str, body: packs.Deflated) -> str:
        """Add a blob compressed elsewhere (:func:`packs.deflate_blob`) to the current :meth:`batch`.

        Raises:
            RuntimeError: called outside a batch.
        """
        if self._pending is None:
            raise RuntimeError("add_deflated_blob needs a batch()")
        self._pending.append((b"blob", body, oid))
        self._pending_bytes += len(body.data)
        if self._pending_bytes > BATCH_FLUSH_BYTES or len(self._pending) > BATCH_FLUSH_OBJECTS:
            self._flush_pending()
        return oid
