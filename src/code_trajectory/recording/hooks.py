"""Events recording declares for the capabilities above it, which handle them without recording importing them.

recording sits below ``testruns`` and ``share`` (see the README's architecture section and the import contract in
``pyproject.toml``), so it never imports them; instead it announces what happened here, and the composition layer
(:mod:`code_trajectory.wiring`) registers their handlers once per process, for the MCP server and every CLI command
alike. The built-in handlers are:

* :func:`on_consolidated`: ``testruns`` carries the last squashed snapshot's test runs to the ``[CONSOLIDATE]``
  commit (same tree), then ``share`` pushes the trajectory when ``[share] auto_push = true``;
* :func:`on_status`: ``share`` adds what is shared where to ``code-trajectory status``.

A process that registers nothing (a library user, a unit test) records and consolidates the same, without those
additions. Registering the same handler twice keeps one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from code_trajectory.core.registry import Registry

if TYPE_CHECKING:
    from code_trajectory.git.shadow import ShadowRepo


@dataclass(frozen=True)
class Consolidated:
    """A consolidation that wrote a commit.

    Attributes:
        root: the project directory (absolute).
        repo: its shadow repository.
        commit: the new ``[CONSOLIDATE]`` commit (full id); its tree is ``squashed[0]``'s.
        squashed: the squashed snapshots (full ids), newest first.
    """

    root: Path
    repo: ShadowRepo
    commit: str
    squashed: tuple[str, ...]


#: ``handler(event)``: called in registration order after a consolidation wrote its commit, on the calling
#: thread; what it raises reaches the caller of ``consolidate`` (the commit stays written).
ConsolidatedHandler = Callable[[Consolidated], None]
#: ``lines(root) -> markdown bullet lines`` appended to ``code-trajectory status`` (``root``: the project directory).
StatusLines = Callable[[Path], list[str]]

_consolidated: Registry[ConsolidatedHandler] = Registry()
_status: Registry[StatusLines] = Registry()

#: ``on_consolidated(handler)``: register a handler for every consolidation of this process; returns it (usable as
#: a decorator).
on_consolidated = _consolidated.register
#: ``on_status(lines)``: register lines for ``code-trajectory status``; returns it (usable as a decorator).
on_status = _status.register


def consolidated(event: Consolidated) -> None:
    """Tell every registered handler about ``event`` (see :data:`ConsolidatedHandler`)."""
    for handler in _consolidated:
        handler(event)


def status_lines(root: Path) -> list[str]:
    """The registered status lines for the project at ``root``, in registration order."""
    return [line for lines in _status for line in lines(root)]
