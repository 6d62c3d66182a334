"""Free text written into the history (intents, checkpoint names, notes): one line, bounded, secrets redacted.

Standard library and :mod:`code_trajectory.core.secrets` only: a hook's ``prompt`` writes the intent through
:func:`free_text` without importing the commit-message module (:mod:`code_trajectory.git.messages`, which re-exports
these names).
"""

from __future__ import annotations

from code_trajectory.core.secrets import redact

#: Longest intent kept, characters.
MAX_INTENT_CHARS = 200


def one_line(text: str, limit: int = MAX_INTENT_CHARS) -> str:
    """Collapse whitespace (newlines included) and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())  # str.split's whitespace is re's \s: Py_UNICODE_ISSPACE
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def free_text(text: str, limit: int = MAX_INTENT_CHARS) -> str:
    """``text`` with secrets redacted (:func:`code_trajectory.core.secrets.redact`), then :func:`one_line`."""
    return one_line(redact(text), limit)
