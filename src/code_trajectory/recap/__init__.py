"""Recap: the goal, decisions, insights, risks and assumptions of the current work.

Context that scrolls out of an agent's window — why we are here, what was decided
and why, what was learned, what could go wrong, what later had to be fixed — is
kept in one small JSON document per project, readable by the MCP tools
(:mod:`.tools`), the CLI (:mod:`.commands`)
and editors (``code-trajectory recap --json``).

This package is pure logic and deliberately light to import: it must not import
the MCP SDK, watchfiles or anything heavy, because the read-only CLI imports it
and has to start fast (``bench/recap_cli.py``). ``filelock``, ``uuid`` and
``datetime`` are imported only by the writing functions, ``typing`` only by type
checkers, and the hash comes from ``_blake2`` rather than ``hashlib`` (which
loads OpenSSL).

Storage
-------
One file per project: ``<CODE_TRAJECTORY_HOME>/recaps/<slug>-<hash>.json``.

*File name.* ``hash`` is the 128-bit BLAKE2b digest (32 hex digits) of the
project's normalized absolute path (see :func:`project_key`); ``slug`` is a short
readable ASCII rendering of the project's last path components, for people
browsing the directory. The name is therefore bounded (at most 86 bytes, far
below the usual 255-byte limit, whatever the path's length or alphabet),
filesystem-safe on every platform (``[a-z0-9._-]`` only) and distinct on
case-insensitive file systems (the hash differs whenever the paths differ).
Paths such as ``my project`` and ``my-project`` share a slug but not a hash.

*Lossless.* A hash alone is not reversible, so every file also stores the exact
project path (``projectPath``); :func:`project_path_of` recovers it, and every
load verifies it, so even a theoretical hash collision or a file copied by hand
is reported (:class:`RecapError`) instead of mixing two projects' recaps. A fully
reversible escaping in the file name was rejected: escaped paths grow up to three
times longer and cannot respect the 255-byte name limit (nor ``PATH_MAX``) for
long or non-ASCII paths.

*Document*::

    {
      "version": 1,
      "projectPath": "/home/me/proj",
      "goal": "The original problem statement" | null,
      "entries": [{"id": "<uuid4>", "timestamp": "2025-12-15T10:23:45Z",
                   "type": "decision", "content": "..."}],
      "updatedAt": "2025-12-15T10:25:12Z"
    }

*Writes* happen under a file lock (``<file>.lock``, ``filelock``) and are atomic:
the new document is written to a temporary file in the same directory, fsynced,
renamed over the old one with :func:`os.replace`, and the directory is fsynced
(:func:`code_trajectory.core.atomic.replace_file`).
*Reads* take no lock: a reader sees either the old or the new document.

*Corrupt files* (not JSON, not the schema) are never overwritten: the next write
moves them aside as ``<name>.corrupt-<timestamp>``, starts a new recap and
reports the move in a ``warning``; a read reports the problem and changes nothing.

*A new goal* archives the previous recap (when it had a goal or entries) to
``recaps/archived/<slug>-<hash>.<timestamp>.json`` with an ``archivedAt`` field,
so two pieces of work never mix.
"""
