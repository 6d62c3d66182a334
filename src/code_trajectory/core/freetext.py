"""Free text written into the history (intents, checkpoint names, notes): one line, bounded, secrets redacted.

Standard library and :mod:`code_trajectory.core.secrets` only: a hook's ``prompt`` writes the intent through
:func:`free_text` without importing the commit-message module (:mod:`code_trajectory.git.messages`, which re-exports
these names).
"""

from __future__ import annotations

import re

from code_trajectory.core.secrets import redact

#: Longest intent kept, characters.
MAX_INTENT_CHARS = 200
#: What free text never keeps: control characters (C0 but whitespace, DEL, C1), which would drive a terminal that
#: shows the history, and lone surrogates (a JSON ``"\ud800"``, a shell argument's undecodable byte), which no
#: commit message can hold as UTF-8. Each becomes U+FFFD.
_UNWRITABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def one_line(text: str, limit: int = MAX_INTENT_CHARS) -> str:
    """Collapse whitespace (newlines included) and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())  # str.split's whitespace is re's \s: Py_UNICODE_ISSPACE
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def free_text(text: str, limit: int = MAX_INTENT_CHARS) -> str:
    """``text`` with control characters and lone surrogates replaced (U+FFFD), secrets redacted
    (:func:`code_trajectory.core.secrets.redact`), then :func:`one_line`."""
    return one_line(redact(_UNWRITABLE.sub("\ufffd", text)), limit)
