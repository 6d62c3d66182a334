"""One SQLite write transaction: ``BEGIN IMMEDIATE``, then ``COMMIT``, or ``ROLLBACK`` on any exception.

sqlite3 is not imported here: the callers that import it lazily (the stat cache) stay lazy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3


@contextmanager
def immediate_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run the ``with`` body in one write transaction taken at once (``BEGIN IMMEDIATE``).

    Args:
        conn: a connection in autocommit mode (``isolation_level=None``), no transaction open.

    Yields:
        ``conn``.

    Raises:
        sqlite3.Error: from ``BEGIN IMMEDIATE`` (e.g. the database is locked past the timeout) or ``COMMIT``.
        Whatever the body raises (``BaseException`` included), after ``ROLLBACK``.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
