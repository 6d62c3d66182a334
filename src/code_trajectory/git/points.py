"""Named points: every ``checkpoint`` leaves an annotated tag on the snapshot it names, even when nothing changed.

A checkpoint whose work tree matches the last snapshot writes no commit (no empty snapshots), so its name
lives in a tag object instead: ``refs/tags/checkpoints/<YYYYmmddTHHMMSS.ffffff>`` in the shadow repository,
pointing at the snapshot, with the checkpoint's message as the tag message and the branch in a
``Trajectory-Branch`` line. Tags keep their snapshots reachable (maintenance's size cap never drops them),
consolidation never squashes a named snapshot (but the end of an agent's turn), and :func:`code_trajectory.git.snapshots.resolve_snapshot`
resolves a reference by the message (exact, newest wins).

Some names are made by the tools, not chosen by the user: the safety point of a restore (``before restore of
<commit> (...)``), the end of an agent's turn (``turn ended HH:MM:SS[: intent]``, Claude Code's ``Stop`` hook) and a
checkpoint without a message (``checkpoint HH:MM:SS``). They are marked when named (a ``Trajectory-Automatic``
line saying which: ``restore``, ``turn``, ``unnamed``); points named before that mark existed are recognised by
those patterns (:func:`automatic_kind`), so every answer can list the user's names apart from them.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from code_trajectory.core.when import from_unix
from code_trajectory.git import messages
from code_trajectory.git.shadow import ShadowRepo

POINTS_PREFIX = "refs/tags/checkpoints/"
#: The tag line that marks a name made by the tools, and its values.
TRAILER_AUTOMATIC = "Trajectory-Automatic"
AUTO_RESTORE = "restore"
AUTO_TURN = "turn"
AUTO_UNNAMED = "unnamed"
#: How each automatic name reads, for the points named before they were marked (the formats of ``restore``'s safety
#: point, Claude Code's ``Stop`` hook and :func:`name_point` without a message).
_AUTOMATIC_PATTERNS = (
    (re.compile(r"before restore of [0-9a-f]{7,40}\b"), AUTO_RESTORE),
    (re.compile(r"safety snapshot before restoring [0-9a-f]{7,40}\b"), AUTO_RESTORE),  # a restore of named paths
    (re.compile(r"turn ended \d\d:\d\d:\d\d\b"), AUTO_TURN),
    (re.compile(r"checkpoint \d\d:\d\d:\d\d( \(\d+\))?$"), AUTO_UNNAMED),
)
#: Fields of one ``for-each-ref`` line, separated by US (0x1f), records by RS (0x1e).
_FORMAT = "%(refname)%1f%(*objectname)%1f%(taggerdate:unix)%1f%(contents)%1e"


@dataclass(frozen=True)
class Point:
    """A named point.

    Attributes:
        ref: the tag's ref, ``refs/tags/checkpoints/...``.
        commit: the snapshot it names.
        message: the checkpoint's message (one line).
        branch: the project branch the snapshot was on.
        time: when the point was named (aware, UTC).
        automatic: None for a name the user chose; else which tool made it (``restore``, ``turn``, ``unnamed``).
    """

    ref: str
    commit: str
    message: str
    branch: str | None
    time: datetime
    automatic: str | None = None


def name_point(repo: ShadowRepo, commit: str, message: str, branch: str, *, automatic: str | None = None) -> Point:
    """Tag ``commit`` with ``message`` (secrets redacted, collapsed to one line) as a named point; return it.

    Args:
        automatic: which tool made the name (``restore``, ``turn``); None for the user's. An empty ``message``
            gives the automatic name ``checkpoint HH:MM:SS`` (``unnamed``), ``checkpoint HH:MM:SS (2)`` when a point
            has that name already. The user's name that already names ``commit`` as the newest point of that name
            is that point, returned as it is (a checkpoint asked for twice while nothing changed names it once).

    Raises:
        GitError: the tag cannot be written.
    """
    now = datetime.now(UTC)
    clean = messages.free_text(message, 500)
    if not clean:  # unique: two checkpoints within a second are two names, not one name for the newer
        clean, automatic = f"checkpoint {now.astimezone().strftime('%H:%M:%S')}", automatic or AUTO_UNNAMED
        taken = {p.message for p in points(repo) if p.message.startswith(clean)}
        clean = next(name for n in itertools.count(1) if (name := clean if n == 1 else f"{clean} ({n})") not in taken)
    elif not automatic:
        newest = next((p for p in points(repo) if p.message == clean), None)  # the one restore and compare find
        if newest is not None and (newest.commit, newest.branch, newest.automatic) == (commit, branch, None):
            return newest
    ref = POINTS_PREFIX + now.strftime("%Y%m%dT%H%M%S.%f")
    body = f"{clean}\n\n{messages.TRAILER_BRANCH}: {branch}\n"
    if automatic:
        body += f"{TRAILER_AUTOMATIC}: {messages.one_line(automatic, 40)}\n"
    tag = repo.git.text(["mktag"], input=(f"object {commit}\ntype commit\ntag {ref[len('refs/tags/'):]}\n"
                                          f"tagger {_identity(now)}\n\n{body}").encode())
    repo.update_ref(ref, tag, None, f"code-trajectory checkpoint: {clean[:80]}")
    return Point(ref, commit, clean, branch, now, automatic)


def _identity(now: datetime) -> str:
    from code_trajectory.git.gitcmd import IDENTITY_EMAIL, IDENTITY_NAME

    return f"{IDENTITY_NAME} <{IDENTITY_EMAIL}> {int(now.timestamp())} +0000"


def points(repo: ShadowRepo) -> list[Point]:
    """Every named point, newest first."""
    out = repo.git.out(["for-each-ref", f"--format={_FORMAT}", POINTS_PREFIX])
    found = []
    for record in out.decode("utf-8", "replace").split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != 4 or not fields[1]:
            continue
        ref, commit, stamp, contents = fields
        subject, _, rest = contents.partition("\n")
        trailers = messages.parse_trailers(rest.strip(), separator="\n")
        try:
            when = from_unix(int(stamp))
        except ValueError:
            continue
        name = subject.strip()
        found.append(Point(ref, commit, name, trailers.get(messages.TRAILER_BRANCH), when,
                           _automatic(trailers.get(TRAILER_AUTOMATIC), name)))
    found.sort(key=lambda p: (p.time, p.ref), reverse=True)
    return found


def _automatic(marked: str | None, name: str) -> str | None:
    if marked:  # untrusted text: only a known value is kept as such
        return marked if marked in (AUTO_RESTORE, AUTO_TURN, AUTO_UNNAMED) else "automatic"
    return automatic_kind(name)


def automatic_kind(name: str) -> str | None:
    """Which tool made the point name ``name`` by its pattern (``restore``, ``turn``, ``unnamed``), None when it reads
    as the user's: for points named before automatic names were marked."""
    return next((kind for pattern, kind in _AUTOMATIC_PATTERNS if pattern.match(name)), None)


def named_commits(repo: ShadowRepo) -> set[str]:
    """The snapshots that carry a name, but the end of an agent's turn (``turn ended ...``, :data:`AUTO_TURN`):
    consolidation keeps them and everything before them. A turn's point does not end the work a consolidation
    squashes (with Claude Code's hooks every turn ends with one, so the task of the turn before could never be
    consolidated); its tag keeps naming the snapshot it was made on, squashed or not."""
    return {p.commit for p in points(repo) if p.automatic != AUTO_TURN}
