"""Fields shared by the structured content of the history's answers (see :mod:`code_trajectory.core.answer`):
file rows under a column list, and a snapshot's message without what other fields say."""

from __future__ import annotations

import re

from code_trajectory.git import log
from code_trajectory.git.messages import FileChange
from code_trajectory.history import narrative

#: Columns of a file row in structured content: status letter, path, lines added, lines deleted, changed symbols,
#: old path of a rename.
FILE_COLUMNS = ["status", "path", "+", "-", "symbols", "from"]


def file_rows(changes: list[FileChange], symbols: dict[str, str] | None = None,
              limit: int = log.FILES_PER_COMMIT) -> list:
    """The first ``limit`` file changes as rows of :data:`FILE_COLUMNS` (as ``describe_files`` lists them)."""
    return [[c.status, c.path, c.added, c.deleted, (symbols or {}).get(c.path), c.old_path] for c in changes[:limit]]


#: The automatic tag and the time that open a snapshot's message (``[AUTO-TRJ] 14:02:11 - ``): ``t`` says the time.
_MESSAGE_PREFIX = re.compile(r"^(?:\[AUTO-TRJ\] )?(\[[A-Z-]+\] )?\d\d:\d\d:\d\d - ")


def message_of(record: log.CommitRecord) -> str:
    """A snapshot's message as the text shows it (:func:`narrative.message_head`) without the ``[AUTO-TRJ]`` tag
    and the time (``t`` says it); another tag (``[CONSOLIDATE]``, ``[RESTORE]``...) stays."""
    return _MESSAGE_PREFIX.sub(lambda m: m.group(1) or "", narrative.message_head(record))


