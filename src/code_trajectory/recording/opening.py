"""Opening a project's shadow repository in working order: refused where nothing may be recorded, created when
asked, a killed process's leftovers cleared, a damaged one moved aside for a new history, and kept safe from the
project's ``git clean``/``git stash`` (:mod:`code_trajectory.git.nested`, also for repositories made before). A
read-only command's opening does none of that: it changes nothing, and a damaged history is an error."""

from __future__ import annotations

import logging
from pathlib import Path

from code_trajectory.core.errors import DamagedHistoryError, LockContentionError, ProjectError
from code_trajectory.git import health, nested, worktemp
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.project import check_recordable
from code_trajectory.recording.ignore import RecordingPolicy

log = logging.getLogger(__name__)


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
        ``(repository, notices)``: notices say when a damaged repository was moved aside and a new history started,
        and which config keys the vetting removed.

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
        raise ProjectError(f"nothing is recorded for {root} yet (it has no .trajectory/): start recording with "
                           f"`code-trajectory watch {root}`, or an MCP client running `code-trajectory serve "
                           f"--project {root}` (see `code-trajectory install`)")
    if read_only:
        problem = health.verify(repo)
        if problem is not None:
            repo.close()
            raise DamagedHistoryError(health.damaged_message(repo, problem))
        return repo, list(repo.notices)
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
        moved = health.move_aside(repo)
        repo = ShadowRepo(root)
        repo.ensure()
        notices.append(f"the shadow repository was damaged ({problem}); it was moved to {moved.name} and a new "
                       "history started")
    problem = protect_history(repo, project if project is not None else ProjectRepo.discover(root))
    if problem is not None:
        notices.append(problem)
    return repo, notices


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
        raise ProjectError(f"nothing is recorded for {root} (it has no .trajectory/)")
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

