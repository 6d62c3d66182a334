"""What the capabilities above share add to a push, without share importing them.

share sits below ``testruns`` (see the README's architecture section and the import contract in ``pyproject.toml``);
the composition layer (:mod:`code_trajectory.wiring`) registers testruns' exporter once per process:

* :func:`on_export_test_runs`: the test runs recorded on the pushed snapshots, sent beside each branch
  (:mod:`code_trajectory.share.data`).

A process that registers nothing pushes the same, without test runs. Registering the same exporter twice keeps one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from code_trajectory.core.registry import Registry

if TYPE_CHECKING:
    from code_trajectory.git.shadow import ShadowRepo

#: ``export(repo, commits) -> [run as a JSON object]``: the test runs recorded on ``commits`` (full ids).
TestRunExporter = Callable[["ShadowRepo", set[str]], list[dict]]

_exporters: Registry[TestRunExporter] = Registry()

#: ``on_export_test_runs(exporter)``: register where pushed test runs come from; returns it (usable as a decorator).
on_export_test_runs = _exporters.register


def exported_test_runs(repo: ShadowRepo, commits: set[str]) -> list[dict]:
    """The runs every registered exporter gives for ``commits`` (JSON objects only)."""
    return [run for exporter in _exporters for run in exporter(repo, commits) if isinstance(run, dict)]
