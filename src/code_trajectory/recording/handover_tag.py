"""A hand-over whose edit another snapshot already recorded: its origin is added to that snapshot.

An edit hook hands its edit over after the agent's tool saved the file (:mod:`~code_trajectory.recording.handoff`).
When the recording process snapshots the file before the hand-over arrives (it stops, on SIGINT or the end of stdin,
and records what is pending at once; or the hook was slower than the debounce), the snapshot holds the edit without
its ``Trajectory-Origin``, and the hand-over's own snapshot finds nothing changed: the file history would say
"edited outside the agent". :func:`tag_recorded_edit` then writes the branch's tip again with the origin added, when
that tip is that very edit: a plain snapshot (an ordinary or a rescan's, no origin, no checkpoint), at most
:data:`MAX_AGE_SECONDS` old, with one parent, whose changed paths are the hand-over's (all, or some: a path the
hand-over names and the tip left unchanged holds the content its hook read, e.g. a link the tool wrote through to
its target), named by no other ref (a named point, a tag) and carrying no note (a test run). Same tree, parent, time
and message, plus the trailer; the ref moves by compare-and-swap under ``write.lock``, the old commit stays in the
reflog. Anything else is left as recorded. The test runs' lock is held from the check for a note to the ref's move,
so a run that ran on the tip meanwhile is recorded on the copy (:func:`retagged`), never on the commit it replaced.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import filelock

from code_trajectory.git import messages
from code_trajectory.git.shadow import TEST_RUNS_LOCK, ShadowRepo, shadow_ref

if TYPE_CHECKING:
    from code_trajectory.recording.recorder import Recorder

log = logging.getLogger(__name__)

#: Oldest tip, seconds, a late hand-over may still tag (a hook runs within a second of its tool's save).
MAX_AGE_SECONDS = 60
#: The snapshot kinds a hand-over may tag: what the watcher, a stop and a rescan record.
_TAGGABLE = (messages.KIND_SNAPSHOT, messages.KIND_RECONCILE)
#: The reason the shadow ref's reflog gives for a tip written again with a hand-over's origin.
REFLOG_REASON = "code-trajectory origin of a handed-over edit"
#: Seconds a tag waits for the test runs' lock (a run's note is written in milliseconds) before leaving the tip.
TEST_RUNS_LOCK_TIMEOUT = 10.0
#: Newest entries of a shadow ref's reflog :func:`retagged` reads.
REFLOG_ENTRIES = 50


def tag_recorded_edit(recorder: Recorder, rels: list[str], origin: str) -> str | None:
    """Add ``origin`` to the branch's tip when it is the recorded edit of ``rels`` (see the module docstring); the
    new tip, or None when the tip is not that edit or the test runs' lock stayed held (nothing is written).

    Raises:
        LockContentionError: another process held ``write.lock`` too long.
        GitError: git failed.
    """
    repo = recorder.repo
    ref = shadow_ref(recorder.project.current_branch())
    with recorder.writing():
        tip = repo.resolve_ref(ref)
        found = repo.read_object(tip) if tip is not None else None
        if tip is None or found is None or found[0] != "commit":
            return None
        header, _, body = found[1].decode("utf-8", "surrogateescape").partition("\n\n")
        fields = [line.split(" ", 1) for line in header.split("\n") if " " in line]  # a planted one may hold any
        parents = [value for key, value in fields if key == "parent"]
        tree = next((value for key, value in fields if key == "tree"), None)
        committer = next((value for key, value in fields if key == "committer"), "").rsplit(" ", 2)
        trailers = messages.parse_trailers(body.rstrip("\n").rsplit("\n\n", 1)[-1], "\n")  # the last paragraph
        if (tree is None or len(parents) != 1 or len(committer) != 3 or not committer[1].isdigit()
                or trailers.get(messages.TRAILER_KIND) not in _TAGGABLE
                or messages.TRAILER_ORIGIN in trailers or messages.TRAILER_CHECKPOINT in trailers
                or time.time() - int(committer[1]) > MAX_AGE_SECONDS):
            return None
        changed = repo.git.text(["diff-tree", "-r", "--no-renames", "--name-only", "-z", parents[0], tip])
        paths = set(filter(None, changed.split("\0")))
        if not paths or not paths <= set(rels):
            return None
        try:
            with filelock.FileLock(str(repo.git_dir / TEST_RUNS_LOCK), timeout=TEST_RUNS_LOCK_TIMEOUT):
                if _named_elsewhere(recorder, tip, ref):
                    return None
                message = body.rstrip("\n") + f"\n{messages.TRAILER_ORIGIN}: {messages.one_line(origin, 300)}\n"
                new = repo.commit_tree(tree, parents, message, when=(int(committer[1]), committer[2]))
                repo.update_ref(ref, new, tip, REFLOG_REASON)
        except filelock.Timeout:
            log.warning("snapshot %s left without a late hand-over's origin: %s stayed held", tip[:12],
                        TEST_RUNS_LOCK)
            return None
    log.info("tagged snapshot %s with the origin of a late hand-over (now %s)", tip[:12], new[:12])
    return new


def _named_elsewhere(recorder: Recorder, tip: str, ref: str) -> bool:
    """True when a ref other than ``ref`` points at ``tip`` (a named point's tag included) or a note is on it."""
    git = recorder.repo.git
    named = git.text(["for-each-ref", "--format=%(refname)", f"--points-at={tip}"]).split()
    if any(name != ref for name in named):
        return True
    notes = git.text(["for-each-ref", "--format=%(refname)", "refs/notes/"]).split()
    return any(git.run(["notes", f"--ref={name}", "list", tip], check=False).returncode == 0 for name in notes)


def retagged(repo: ShadowRepo, ref: str, commit: str) -> str:
    """The commit that took ``commit``'s place as ``ref``'s tip when :func:`tag_recorded_edit` added a hand-over's
    origin to it (read from the newest :data:`REFLOG_ENTRIES` entries of ``ref``'s reflog), else ``commit`` itself;
    the caller holds the test runs' lock (:data:`~code_trajectory.git.shadow.TEST_RUNS_LOCK`), so no tag is under way.
    A reflog git cannot read (none, damaged) names no copy.

    Raises:
        GitError: git could not be started.
    """
    proc = repo.git.run(["log", "-g", f"-n{REFLOG_ENTRIES}", "--format=%H %gs", "--end-of-options", ref, "--"],
                        check=False)
    if proc.returncode != 0:
        return commit
    rows = [line.partition(" ")[::2] for line in proc.stdout.decode("utf-8", "replace").splitlines()]
    for (new, reason), (old, _) in reversed(list(zip(rows, rows[1:]))):  # oldest first: each entry's old is the next's
        if reason == REFLOG_REASON and old == commit:
            commit = new
    return commit
