"""Opening a project's shadow repository in working order: refused where nothing may be recorded, created when
asked, a killed process's leftovers cleared, a damaged one moved aside for a new history, and kept safe from the
project's ``git clean``/``git stash`` (:mod:`code_trajectory.git.nested`, also for repositories made before). A
read-only command's opening does none of that: it changes nothing, and a damaged history is an error."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import filelock

from code_trajectory.core.errors import DamagedHistoryError, LockContentionError
from code_trajectory.git import health, nested, worktemp
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.project import check_recordable, nothing_recorded
from code_trajectory.recording.ignore import RecordingPolicy
from code_trajectory.recording.liveness import read_recorder_state, recording_now

log = logging.getLogger(__name__)

#: How long a writer waits for ``.trajectory/write.lock`` before giving up, seconds.
WRITE_LOCK_TIMEOUT = 10.0


def open_shadow_repository(root: Path, *, create: bool = True, project: ProjectRepo | None = None,
                           read_only: bool = False) -> tuple[ShadowRepo, list[str]]:
    """The shadow repository of the project at ``root``, ready to record (or to read), and what the user must hear
    about it.

    Args:
        root: the project root (absolute).
        create: create ``.trajectory`` when it does not exist (else refuse); a damaged one is then moved aside for a
            new history (else refused: see ``DamagedHistoryError``).
        project: the project's git repository (discovered when None).
        read_only: for a command that only reads (``log``, ``search``...): nothing is created, repaired, cleared or
            moved (only the vetting every opening does, :func:`code_trajectory.git.untrusted.vet`), and a damaged
            history is an error, left as it was, instead of being moved aside; implies ``create=False``.

    Returns:
        ``(repository, notices)``: notices say when a damaged repository was moved aside and a new history started
        (or, when another process records it now, that it looks damaged and was left in place: see
        :func:`_replace_damaged`), and which config keys the vetting removed.

    Raises:
        ProjectError: ``root`` must not be recorded (see :func:`code_trajectory.project.check_recordable`),
            or it has no shadow repository and ``create`` is False.
        UntrustedRepositoryError: the existing ``.trajectory`` is tracked by the project's git, another user's,
            or linked elsewhere (the message says how to re-create it).
        DamagedHistoryError: the history is damaged and ``read_only`` or not ``create`` (a command that needs this
            history, ``restore`` or ``consolidate``: it is left where it is, not moved aside for a new one); the
            message names the damage and what to do.
        StorageError, GitError, LockContentionError: the shadow repository cannot be created.
    """
    repo = ShadowRepo(root)
    exists = repo.exists()
    check_recordable(root, creating=not exists)
    if not exists and (read_only or not create):
        raise nothing_recorded(root)
    if read_only:
        problem = health.verify(repo)
        if problem is not None:
            repo.close()
            raise DamagedHistoryError(health.damaged_message(repo, problem))
        return repo, list(repo.notices) + worktemp.interrupted(repo.git_dir)  # said, not cleared: nothing changes
    health.clear_leftovers(repo.git_dir)  # locks and tmp_pack_* files of a killed process, when stale
    try:
        repo.ensure()
    except LockContentionError:  # the lock was too young to call stale before the retries: now it is not
        if not health.clear_stale_locks(repo.git_dir):
            raise
        repo.ensure()
    notices: list[str] = list(repo.notices)
    notices += worktemp.clear_leftovers(root, repo.git_dir)  # temporary files of a killed restore
    problem = health.verify(repo)
    if problem is not None and not create:  # restore, consolidate: they need this history, it is not replaced
        repo.close()
        raise DamagedHistoryError(health.damaged_message(repo, problem))
    if problem is not None:
        repo, notice = _replace_damaged(root, repo)
        if notice is not None:
            notices.append(notice)
    problem = protect_history(repo, project if project is not None else ProjectRepo.discover(root))
    if problem is not None:
        notices.append(problem)
    return repo, notices


def _replace_damaged(root: Path, repo: ShadowRepo) -> tuple[ShadowRepo, str | None]:
    """The history of ``root`` that a recording start found damaged (``repo``): moved aside for a new one, unless a
    second look shows it healthy or another process records it now.

    The second look is taken under ``.trajectory/write.lock`` (no snapshot is written meanwhile), with fresh
    ``cat-file`` processes: a first look may catch a write or a repack half done. A history another process records
    (it holds ``recorder.lock``: a running ``watch`` or server) is never moved from under it: it is left in place and
    the notice says so; that process moves it aside itself when one of its writes fails on the damage, and a start
    of recording once it stopped does. One moved aside and replaced by another opening meanwhile is taken as found.

    Args:
        root: the project root.
        repo: its shadow repository, in which :func:`health.verify` found a problem.

    Returns:
        ``(repository, notice)``: the repository to record in (a new one when the damaged one was moved aside), and
        what the user must hear (None: the history was healthy on the second look, or a new one replaced it).

    Raises:
        StorageError: the damaged repository cannot be moved aside, or the new one cannot be created.
        GitError, LockContentionError: the new repository cannot be created.
    """
    git_dir = repo.git_dir
    seen = identity(git_dir)
    lock = write_lock(git_dir)
    moved = None
    try:
        with lock:
            if identity(git_dir) == seen:
                repo.reset_caches()
                problem = health.verify(repo)
                if problem is None:
                    log.info("the shadow repository looked damaged and was healthy on a second look")
                    return repo, None
                if recording_now(git_dir):
                    return repo, _left_in_place(repo, problem)
                moved = health.move_aside(repo)  # under the lock: no writer is half way through it
    except filelock.Timeout:
        problem = health.verify(repo)
        return repo, None if problem is None else (
            f"the shadow repository looks damaged ({problem}), and another process held {lock.lock_file} for "
            f"{WRITE_LOCK_TIMEOUT:.0f} s: it was left in place; start recording again once that process is done")
    repo.close()
    repo = ShadowRepo(root)
    repo.ensure()
    if moved is None:  # another opening moved it aside and started a new history meanwhile
        return repo, None
    return repo, f"the shadow repository was damaged ({problem}); it was moved to {moved.name} and a new history started"


def _left_in_place(repo: ShadowRepo, problem: str) -> str:
    """What a recording start says of the damaged history ``repo`` (``problem``) that another process records now."""
    pid = read_recorder_state(repo.state_dir).get("pid")
    who = f"process {pid}" if isinstance(pid, int) else "another process"
    log.warning("the shadow repository looks damaged (%s); %s records it, so it is left in place", problem, who)
    return (f"the history of {repo.root} looks damaged ({problem}), but {who} records it now (a `code-trajectory "
            f"watch` or an MCP server): nothing was moved, so that process keeps its history. It moves the damaged "
            f"history aside itself if one of its writes fails on it; to start a new history now, stop that process "
            f"and start recording again, which moves {repo.git_dir.name} to {repo.git_dir.name}.corrupt-<time> "
            f"beside it, kept for repair")


def identity(path: Path | str) -> tuple[int, int] | None:
    """``(device, inode)`` of the directory at ``path`` (a symlink's target), None when it is missing: a directory
    deleted and made again by another process has another identity (unless the file system gives it the inode just
    freed: ext4 may, so the watcher's test of the project's ``.git`` looks at its ``info/exclude`` too)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def write_lock(git_dir: Path) -> filelock.FileLock:
    """``<git_dir>/write.lock``, held by every writer of a snapshot and by the second look at a damaged history
    (:func:`_replace_damaged`); acquiring it raises ``filelock.Timeout`` after :data:`WRITE_LOCK_TIMEOUT` seconds."""
    return filelock.FileLock(str(git_dir / "write.lock"), timeout=WRITE_LOCK_TIMEOUT, thread_local=False)


def attach_shadow_repository(root: Path) -> ShadowRepo:
    """The shadow repository of ``root`` as a helper process of the recorder that opened it sees it (a scan child,
    :mod:`.scanchild`): vetted as every opening is (:class:`~code_trajectory.git.shadow.ShadowRepo`), but none of
    the start-up steps of :func:`open_shadow_repository` (clearing leftovers, the health check that may move a
    damaged repository aside, the project's exclude file): the running recorder did them, and they must not run
    under it.

    Raises:
        ProjectError: ``root`` has no shadow repository.
    """
    repo = ShadowRepo(root)
    if not repo.exists():
        raise nothing_recorded(root)
    return repo


def policy_for(root: Path, deny_patterns: tuple[str, ...], project: ProjectRepo) -> RecordingPolicy:
    """What is recorded of the project at ``root`` whose git repository is ``project`` (its ignore files, its tracked
    set), with the secret deny list ``deny_patterns`` (``TrajectorySettings.all_deny_patterns``)."""
    return RecordingPolicy(root, deny_patterns=deny_patterns, project=project, info_exclude=project.info_exclude,
                           global_excludes=project.global_excludes())


def protect_history(repo: ShadowRepo, project: ProjectRepo) -> str | None:
    """Keep ``repo`` safe from the project's ``git clean -fdx``/``git stash --all`` (see
    :func:`code_trajectory.git.nested.protect`); None when done, else what the user must hear."""
    exclude = project.info_exclude if project.work_tree is not None else None
    problem = nested.protect(repo.git_dir, exclude, project.prefix)
    if problem is not None:
        log.warning(problem)
    return problem

