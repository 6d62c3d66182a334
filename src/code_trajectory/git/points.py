"""Named points: every ``checkpoint`` leaves an annotated tag on the snapshot it names, even when nothing changed.

A checkpoint whose work tree matches the last snapshot writes no commit (no empty snapshots), so its name
lives in a tag object instead: ``refs/tags/checkpoints/<YYYYmmddTHHMMSS.ffffff>`` in the shadow repository,
pointing at the snapshot, with the checkpoint's message as the tag message and the branch in a
``Trajectory-Branch`` line. Tags keep their snapshots reachable (maintenance's size cap never drops them),
consolidation never squashes a named snapshot, and :mod:`code_trajectory.git.refs` resolves a reference by
the message (exact, newest wins).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from code_trajectory.git import messages
from code_trajectory.git.shadow import ShadowRepo

POINTS_PREFIX = "refs/tags/checkpoints/"
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
    """

    ref: str
    commit: str
    message: str
    branch: str | None
    time: datetime


def name_point(repo: ShadowRepo, commit: str, message: str, branch: str) -> Point:
    """Tag ``commit`` with ``message`` (secrets redacted, collapsed to one line) as a named point; return it.

    Raises:
        GitError: the tag cannot be written.
    """
    now = datetime.now(UTC)
    clean = messages.free_text(message, 500) or f"checkpoint {now.astimezone().strftime('%H:%M:%S')}"
    ref = POINTS_PREFIX + now.strftime("%Y%m%dT%H%M%S.%f")
    body = f"{clean}\n\n{messages.TRAILER_BRANCH}: {branch}\n"
    tag = repo.git.text(["mktag"], input=(f"object {commit}\ntype commit\ntag {ref[len('refs/tags/'):]}\n"
                                          f"tagger {_identity(now)}\n\n{body}").encode())
    repo.update_ref(ref, tag, None, f"code-trajectory checkpoint: {clean[:80]}")
    return Point(ref, commit, clean, branch, now)


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
            when = datetime.fromtimestamp(int(stamp), UTC)
        except ValueError:
            continue
        found.append(Point(ref, commit, subject.strip(), trailers.get(messages.TRAILER_BRANCH), when))
    found.sort(key=lambda p: (p.time, p.ref), reverse=True)
    return found


def named_commits(repo: ShadowRepo) -> set[str]:
    """The snapshots that carry a name (consolidation keeps them and everything before them)."""
    return {p.commit for p in points(repo)}
