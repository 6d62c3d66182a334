"""The sessions of a branch's first-parent chain, for the timeline: which session each snapshot is in, how many.

Built from one ``git rev-list --first-parent --timestamp`` of the chain; when the chain grew from a tip already
indexed (new snapshots on top, the usual case while the page is open), only the new commits are read
(``rev-list <tip> ^<old tip>``) and added to a copy of the old index, so a page after each new snapshot does not
read the whole history again.
"""

from __future__ import annotations

from datetime import datetime

from code_trajectory.core.when import from_unix
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.ui.views import Session


def _time(stamp: int) -> datetime:
    return from_unix(stamp).astimezone()


class SessionIndex:
    """The sessions of one first-parent chain.

    Args:
        repo: the shadow repository.
        tip: the chain's newest commit.
        gap_seconds: a gap longer than this starts a new session.
        base: an index of an older tip of the same chain, extended instead of reading the chain again when
            ``tip`` descends from its tip along first parents (else ignored).

    Attributes:
        tip: the chain's newest commit.
        extended: True when the index was built from ``base`` (the new commits only were read).
    """

    def __init__(self, repo: ShadowRepo, tip: str, gap_seconds: float, base: SessionIndex | None = None) -> None:
        self.tip = tip
        self.gap = gap_seconds
        self.extended = False
        # sessions oldest first; each commit's session by its number from the oldest, so new ones never renumber
        self._sessions: list[Session] = []
        self._session_of: dict[str, int] = {}
        self._newest_stamp = 0  # commit time of the newest commit, unix seconds
        self._oldest_stamp = 0  # of the newest session's oldest commit
        if base is not None and base.tip != tip and self._extend(repo, base):
            return
        out = repo.git.out(["rev-list", "--first-parent", "--timestamp", "--end-of-options", tip, "--"])
        fields = out.split()
        self._add(list(zip(map(int, fields[-2::-2]), (f.decode("ascii") for f in fields[-1::-2]), strict=True)))

    def _extend(self, repo: ShadowRepo, base: SessionIndex) -> bool:
        out = repo.git.out(["rev-list", "--first-parent", "--timestamp", "--parents", "--end-of-options", self.tip,
                            f"^{base.tip}", "--"])
        lines = out.decode("ascii", "replace").splitlines()
        if not lines or lines[-1].split()[2:3] != [base.tip]:
            return False  # not on top of the old tip (a rewritten history)
        self._sessions = list(base._sessions)
        self._session_of = dict(base._session_of)
        self._newest_stamp, self._oldest_stamp = base._newest_stamp, base._oldest_stamp
        self._add([(int(line.split()[0]), line.split()[1]) for line in reversed(lines)])
        self.extended = True
        return True

    def _add(self, commits: list[tuple[int, str]]) -> None:
        """Add ``(commit time, commit id)`` pairs, oldest first, on top of the chain indexed so far."""
        sessions, session_of = self._sessions, self._session_of
        newest, oldest = self._newest_stamp, self._oldest_stamp
        count = sessions[-1].count if sessions else 0
        key = sessions[-1].key if sessions else ""
        if sessions:
            sessions.pop()  # the newest session is rebuilt: new commits may join it
        for stamp, oid in commits:
            if count and stamp - newest > self.gap:
                sessions.append(Session(key, _time(newest), _time(oldest), count))
                count = 0
            if not count:
                key, oldest = oid, stamp
            count += 1
            newest = stamp
            session_of[oid] = len(sessions)
        if count:
            sessions.append(Session(key, _time(newest), _time(oldest), count))
        self._newest_stamp, self._oldest_stamp = newest, oldest

    @property
    def sessions(self) -> list[Session]:
        """The sessions, oldest first."""
        return self._sessions

    def __len__(self) -> int:
        return len(self._session_of)

    def __contains__(self, oid: str) -> bool:
        return oid in self._session_of

    def session(self, oid: str) -> Session | None:
        """The session of commit ``oid`` (None when it is not on the chain)."""
        index = self._session_of.get(oid)
        return None if index is None else self._sessions[index]
