"""Fields shared by the structured content of the history's answers (see :mod:`code_trajectory.core.answer`):
file rows under a column list, and a snapshot's message without what other fields say."""

from __future__ import annotations

import re

from code_trajectory.core.answer import prune, room, rows_to_leave_out, size
from code_trajectory.core.text import path_field
from code_trajectory.git import log
from code_trajectory.git.messages import FileChange
from code_trajectory.history import narrative

#: Columns of a file row in structured content: status letter, path, lines added, lines deleted, changed symbols,
#: old path of a rename.
FILE_COLUMNS = ["status", "path", "+", "-", "symbols", "from"]


def file_rows(changes: list[FileChange], symbols: dict[str, str] | None = None,
              limit: int = log.FILES_PER_COMMIT) -> list:
    """The first ``limit`` file changes as rows of :data:`FILE_COLUMNS` (as ``describe_files`` lists them; paths
    as :func:`~code_trajectory.core.text.path_field` gives them)."""
    return [[c.status, path_field(c.path), c.added, c.deleted, (symbols or {}).get(c.path),
             c.old_path and path_field(c.old_path)] for c in changes[:limit]]


def file_columns(rows: list) -> list[str]:
    """The columns of file ``rows`` (of :data:`FILE_COLUMNS`) as far as the longest reaches once its trailing empty
    values are pruned: ``from`` only when a row is a rename, ``symbols`` only when a row names some; none without
    rows."""
    return FILE_COLUMNS[:max((len(prune(row)) for row in rows), default=0)]


#: The automatic tag and the time that open a snapshot's message (``[AUTO-TRJ] 14:02:11 - ``): ``t`` says the time.
_MESSAGE_PREFIX = re.compile(r"^(?:\[AUTO-TRJ\] )?(\[[A-Z-]+\] )?\d\d:\d\d:\d\d - ")


def message_of(record: log.CommitRecord) -> str:
    """A snapshot's message as the text shows it (:func:`narrative.message_head`) without the ``[AUTO-TRJ]`` tag
    and the time (``t`` says it); another tag (``[CONSOLIDATE]``, ``[RESTORE]``...) stays."""
    return _MESSAGE_PREFIX.sub(lambda m: m.group(1) or "", narrative.message_head(record))




def rows_within_text(text: str, data: dict, key: str, count_key: str, *, newest_first: bool = False) -> dict:
    """``data`` held to the size of ``text`` (:func:`~code_trajectory.core.answer.size` of its pruned form): the
    oldest rows of ``data[key]`` (rows under ``cols``, each starting with its time ``t``; oldest first, or with
    ``newest_first`` newest first, a search's) are left out, counted in ``data[count_key]``, never the last one left;
    a row that said the day for those after it hands it on (the next row's ``t`` gets it). Rows are measured once
    (:func:`~code_trajectory.core.answer.rows_to_leave_out`), then left out one at a time while still over. Returns
    ``data``, changed in place."""
    rows = data[key]

    def leave_out_oldest() -> None:
        if newest_first:  # the oldest is the last: no row after it took its day from it
            rows.pop()
            data[count_key] = (data.get(count_key) or 0) + 1
        else:
            _leave_out_first(data, rows, count_key)

    for _ in range(rows_to_leave_out(room(text), data, rows, from_end=newest_first)):
        leave_out_oldest()
    while len(rows) > 1 and size(prune(data)) > room(text):
        leave_out_oldest()
    return data


def _leave_out_first(data: dict, rows: list, count_key: str) -> None:
    """Leave out the oldest row of ``rows``, counted in ``data[count_key]``, its day said by the next if it was the
    one that said it."""
    dropped = rows.pop(0)
    data[count_key] = (data.get(count_key) or 0) + 1
    day = str(dropped[0]).split(" ", 1)[0] if " " in str(dropped[0]) else None
    if day and " " not in str(rows[0][0]):  # the heading that said the day is gone: the next row says it
        rows[0][0] = f"{day} {rows[0][0]}"
