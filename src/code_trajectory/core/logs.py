"""Logging set-up shared by the long-running front ends (``serve``, ``watch``): one line per record, on stderr.

stdout belongs to JSON-RPC when serving over stdio, so nothing here ever writes to it.
"""

from __future__ import annotations

import logging
import sys


def configure_logging(level: int = logging.INFO) -> None:
    """Send log records to stderr, one line each; idempotent (a second call only changes the level)."""
    root = logging.getLogger()
    if not any(getattr(h, "_code_trajectory", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._code_trajectory = True  # type: ignore[attr-defined]  # our mark: installed once
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs every batch at INFO
