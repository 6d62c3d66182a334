"""The note stored as a blob in place of a file over the size cap: written by the recorder
(:func:`oversize_blob`), recognised by its exact form where content is shown or restored (:func:`oversize_size`).
"""

from __future__ import annotations

import re

#: First bytes of the blob stored in place of a file over the size cap (its size and mtime follow, so a change
#: of the file still changes the blob); narratives show ``not stored: 12.3 MiB`` instead of its text.
OVERSIZE_MARKER = b"code-trajectory: content not recorded"
_OVERSIZE_NOTE = re.compile(re.escape(OVERSIZE_MARKER) + rb" \(larger than the size cap of [^\n]{1,40}\)\n"
                            rb"size: (\d{1,20}) bytes\nmtime_ns: -?\d{1,25}\n")


def oversize_blob(cap_text: str, size: int, mtime_ns: int) -> bytes:
    """The blob stored in place of a file of ``size`` bytes over the size cap (``cap_text``: the cap as shown,
    ``5 MiB``); ``mtime_ns`` makes a change of the file change the blob."""
    return (OVERSIZE_MARKER + b" (larger than the size cap of " + cap_text.encode() + b")\n"
            + f"size: {size} bytes\nmtime_ns: {mtime_ns}\n".encode())


def oversize_size(data: bytes) -> int | None:
    """The size in bytes of the file a blob stands for when ``data`` is exactly a note of :func:`oversize_blob`
    (the file's content was not recorded), else None."""
    if not data.startswith(OVERSIZE_MARKER) or len(data) > 200:
        return None
    match = _OVERSIZE_NOTE.fullmatch(data)
    return int(match.group(1)) if match else None
