"""An ordered set of registered callables: the extension points a lower layer offers the layers above it.

:mod:`code_trajectory.recording.hooks` and :mod:`code_trajectory.history.hooks` keep one :class:`Registry` per
event; the composition layer (:mod:`code_trajectory.wiring`) registers the handlers once per process.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Items (handlers, providers) in registration order; registering one that is already there keeps one."""

    def __init__(self) -> None:
        self._items: list[T] = []

    def register(self, item: T) -> T:
        """Add ``item`` unless it is registered already (compared with ``==``); returns it (usable as a decorator)."""
        if item not in self._items:
            self._items.append(item)
        return item

    def __iter__(self) -> Iterator[T]:
        """The registered items in order, from a copy: a handler may register another while they are called."""
        return iter(list(self._items))
