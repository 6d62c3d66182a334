"""Snapshot references: the one resolver every tool and command uses to name a point of the shadow history.

A reference is, in the order tried:

1. ``~N``: N snapshots before the newest one of the branch (first parents);
2. a commit id, full or at least 7 hex digits (any snapshot of the shadow repository);
3. a checkpoint's message, exact: the named points (:mod:`code_trajectory.git.points`) and the checkpoint
   snapshots' ``Trajectory-Checkpoint`` notes; the newest wins;
4. ``start of recording`` (any case), as the narratives head it: the branch's newest snapshot of kind ``import``
   (the project as recording began), among its first parents;
5. a time, ISO 8601 or ``10 minutes ago``: the last snapshot of the branch at or before it.

An unknown reference is an error that says what was tried and lists the nearest checkpoints.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import datetime

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.core.when import parse_when
from code_trajectory.git import log, points
from code_trajectory.git.messages import KIND_IMPORT, TRAILER_KIND
from code_trajectory.git.shadow import ShadowRepo

_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")
_BACK = re.compile(r"^~(\d{1,6})$")
#: A snapshot counted back from another, as git writes it: ``abc1234~2`` (``abc1234~`` and ``abc1234^`` are ``~1``).
_ID_BACK = re.compile(r"^([0-9a-fA-F]{7,40})(?:~(\d{1,6})?|\^)$")
#: Checkpoint notes read back from the tip when resolving by message.
SCAN_LIMIT = 5000
#: The name of the snapshot the narratives head ``start of recording`` (see :func:`resolve_snapshot`).
START_OF_RECORDING = "start of recording"
#: Snapshots read at a time looking for the start of recording (:func:`_start_of_recording`).
_PAGE = 16


@dataclass(frozen=True)
class Resolved:
    """A resolved reference: the snapshot and how it was found (``commit id``, ``~2``, ``checkpoint "x"``...)."""

    commit: str
    how: str


def resolve_snapshot(repo: ShadowRepo, text: str, tip: str | None) -> Resolved:
    """The snapshot ``text`` names, for a branch whose newest snapshot is ``tip``.

    Raises:
        InvalidArgumentError: the reference names no snapshot (the message says what was tried and lists the
            nearest checkpoints).
    """
    if not isinstance(text, str) or not text.strip() or "\0" in text or len(text) > 500:
        raise InvalidArgumentError("give a snapshot: a commit id, a checkpoint's message, '~N' (N snapshots back) "
                                   "or a time ('10 minutes ago', '2026-11-23T14:00')")
    ref = text.strip()
    back = _BACK.match(ref)
    if back:
        if tip is None:
            raise InvalidArgumentError("nothing is recorded on this branch yet: there is no snapshot to count back from")
        commit = repo.resolve(f"{tip}~{int(back.group(1))}")
        if commit is None:
            total = repo.git.text(["rev-list", "--first-parent", "--count", tip])
            raise InvalidArgumentError(f"{ref}: the branch has only {total} snapshot(s); use '~0' to '~{int(total) - 1}'")
        return Resolved(commit, ref)
    if _HEX.match(ref):
        commit = repo.resolve(ref.lower())
        if commit is not None:
            return Resolved(commit, f"commit {commit[:12]}")
    id_back = _ID_BACK.match(ref)
    if id_back:
        base = repo.resolve(id_back.group(1).lower())
        steps = int(id_back.group(2)) if id_back.group(2) is not None else 1
        if base is not None:
            commit = repo.resolve(f"{base}~{steps}")
            if commit is None:
                raise InvalidArgumentError(f"{ref}: {base[:12]} has fewer than {steps} snapshot(s) before it")
            return Resolved(commit, f"{steps} before {base[:12]}" if steps else f"commit {commit[:12]}")
    named = points.points(repo)
    match = next((p for p in named if p.message == ref), None)
    if match is not None:
        return Resolved(match.commit, f"checkpoint \"{ref}\"")
    notes = _checkpoint_notes(repo, tip)
    match_note = next((c for c, note in notes if note == ref), None)
    if match_note is not None:
        return Resolved(match_note, f"checkpoint \"{ref}\"")
    if ref.casefold() == START_OF_RECORDING:
        commit = _start_of_recording(repo, tip) if tip is not None else None
        if commit is None:
            raise InvalidArgumentError("this branch's history has no start of recording (it began on another branch, "
                                       "or was shared): name a snapshot by '~N', its commit id or a time")
        return Resolved(commit, START_OF_RECORDING)
    moment = parse_when(ref)
    if moment is not None:
        if tip is None:
            raise InvalidArgumentError("nothing is recorded on this branch yet: no snapshot before that time")
        commit = repo.git.text(["rev-list", "-1", "--first-parent", f"--before={int(moment.timestamp())}", tip])
        if not commit:
            raise InvalidArgumentError(f"no snapshot of this branch at or before {_fmt(moment)} (the first one is "
                                       f"later); try a later time or '~N'")
        return Resolved(commit, f"the last snapshot at or before {_fmt(moment)}")
    shell = (" It looks like a directory: a shell turns an unquoted ~N into one (~0 is the working directory, ~1 and on"
             " the directory stack), so quote it: '~3'." if ref.startswith("/") else "")
    raise InvalidArgumentError(f"no snapshot named {ref!r}: it is not '~N', a commit id of the shadow repository, "
                               f"a checkpoint's message, '{START_OF_RECORDING}' or a time.{shell} "
                               f"{_nearest(ref, named, notes)}")


def _start_of_recording(repo: ShadowRepo, tip: str) -> str | None:
    """The newest snapshot among ``tip``'s first parents whose kind (its ``Trajectory-Kind`` trailer) is ``import``;
    None when there is none. git's ``--grep`` only narrows the walk: a body line may read so too (a file renamed to
    ``a\nTrajectory-Kind: import`` is listed so), the trailer block is the message's last paragraph."""
    skip = 0
    while True:  # a page at a time: the walk stops at the first import, as rev-list -1 would
        out = repo.git.text(["log", "--first-parent", f"--grep=^{TRAILER_KIND}: {KIND_IMPORT}$", f"--skip={skip}",
                             f"-n{_PAGE}", f"--format=%x00%H%n%(trailers:key={TRAILER_KIND},valueonly)", tip, "--"])
        records = [r for r in out.split("\0") if r]
        for record in records:
            commit, _, kinds = record.partition("\n")
            values = kinds.split()
            if values and values[-1] == KIND_IMPORT:  # the last one wins, as parse_trailers reads them
                return commit.strip()
        if len(records) < _PAGE:
            return None
        skip += _PAGE


def _nearest(ref: str, named: list[points.Point], notes: list[tuple[str, str]]) -> str:
    """The checkpoint names nearest ``ref``: the user's first (closest, then newest), then a few automatic ones
    (``turn ended ...``, ``before restore of ...``: see :func:`code_trajectory.git.points.automatic_kind`)."""
    users = list(dict.fromkeys([p.message for p in named if p.automatic is None]
                               + [note for _, note in notes if points.automatic_kind(note) is None]))
    auto = list(dict.fromkeys([p.message for p in named if p.automatic is not None]
                              + [note for _, note in notes if points.automatic_kind(note) is not None]))
    close = difflib.get_close_matches(ref, users, n=8, cutoff=0.4)
    close += [n for n in users if n not in close][:8 - len(close)]  # then the newest
    text = ("Nearest checkpoints: " + "; ".join(f'"{n}"' for n in close)
            + (f" (named by you; {len(users)} in all)" if len(users) > len(close) else " (named by you)")
            if close else "Nearest checkpoints: none named by you yet (checkpoint(message) names one)")
    if auto:
        near = difflib.get_close_matches(ref, auto, n=3, cutoff=0.6) or auto[:2]
        text += f". Automatic ones ({len(auto)}): " + "; ".join(f'"{n}"' for n in near) + (
            ", ..." if len(auto) > len(near) else "")
    return text


def _checkpoint_notes(repo: ShadowRepo, tip: str | None) -> list[tuple[str, str]]:
    """``(commit, note)`` of checkpoint snapshots on the branch, newest first."""
    if tip is None:
        return []
    records = log.read_log(repo, [tip], limit=SCAN_LIMIT, first_parent=True, with_changes=False)
    return [(r.oid, r.checkpoint_note) for r in records if r.checkpoint_note]


def _fmt(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")
