"""A thread lock and a file lock taken as one (threads of one process first, then processes)."""

from __future__ import annotations

import threading
from typing import Protocol


class _Lock(Protocol):
    """What a file lock offers (``filelock.FileLock``, ``SoftFileLock``)."""

    def acquire(self) -> object: ...

    def release(self) -> None: ...


class CombinedLock:
    """A threading lock and a file lock taken together (threads of one process, then processes)."""

    def __init__(self, thread_lock: threading.RLock, file_lock: _Lock) -> None:
        self._thread_lock = thread_lock
        self._file_lock = file_lock

    def __enter__(self) -> CombinedLock:
        self._thread_lock.acquire()
        try:
            self._file_lock.acquire()
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._file_lock.release()
        finally:
            self._thread_lock.release()
