"""The one exception hierarchy of code-trajectory.

Every error the package raises on purpose is a :class:`TrajectoryError`; foreign
exceptions (``OSError``, ``subprocess`` failures, ``sqlite3`` errors) are
translated into one of these at the boundary of the module that meets them.
The message of each error is written for the reader who has to act on it: a
model calling an MCP tool or a person at the CLI. The MCP layer turns a
``TrajectoryError`` into a tool error (``isError``) carrying that message; the
CLI prints it on stderr and exits with status 2.

Tree::

    TrajectoryError
    ├── ConfigError                 a bad config file or setting
    ├── InvalidArgumentError        a value from a client or the command line is unusable
    │   └── PathOutsideProjectError a path escapes the project root
    ├── NotConfiguredError          no project is configured yet
    ├── ProjectError                the project directory is missing or unusable
    ├── GitError                    a git command failed
    │   ├── GitUnavailableError     git is missing or older than required
    │   └── LockContentionError     a git lock stayed held past the retry budget
    ├── StorageError                the shadow repository cannot be written or read
    │   ├── UntrustedRepositoryError    .trajectory/ came from elsewhere (tracked, another user's)
    │   └── DamagedHistoryError     .trajectory/ is damaged and a read-only command left it as it was
    ├── SecretInPushError           a push was refused: what it would send holds a secret
    ├── JournalError                journal failures
    │   └── JournalConflictError    the section moved since it was read
    └── RecapError                  recap failures
"""

from __future__ import annotations


class TrajectoryError(Exception):
    """Base class: an anticipated failure with a message meant for the caller."""


class ConfigError(TrajectoryError):
    """A config file cannot be parsed or holds a value of the wrong type or range."""


class InvalidArgumentError(TrajectoryError):
    """A value from a client or the command line is unusable (empty, out of range, malformed)."""


class PathOutsideProjectError(InvalidArgumentError):
    """A path given by a client resolves outside the configured project root."""


class NotConfiguredError(TrajectoryError):
    """A project-specific operation was asked for before any project was configured."""


class ProjectError(TrajectoryError):
    """The project directory does not exist, is not a directory, or vanished."""


class GitError(TrajectoryError):
    """A git command exited non-zero or could not be run.

    Attributes:
        args_: the git arguments (without the ``git`` executable and the
            ``--git-dir``/``--work-tree`` prefix).
        returncode: the exit status, or ``None`` when git could not be started.
        stderr: git's standard error, decoded with replacement.
    """

    def __init__(self, message: str, *, args_: tuple[str, ...] = (), returncode: int | None = None,
                 stderr: str = "") -> None:
        super().__init__(message)
        self.args_ = args_
        self.returncode = returncode
        self.stderr = stderr


class GitUnavailableError(GitError):
    """git is not on PATH, or is older than the minimum version (see ``gitcmd.MIN_GIT_VERSION``)."""


class LockContentionError(GitError):
    """A git lock file (``index.lock``, ``<ref>.lock``) stayed held through every retry."""


class StorageError(TrajectoryError):
    """The shadow repository in ``.trajectory/`` cannot be written or read (disk full, corrupted, removed)."""


class ObjectTooLargeError(StorageError):
    """An object of the shadow repository is larger than a reader takes into memory
    (:attr:`code_trajectory.git.shadow.ShadowRepo.max_object_bytes`): recorded with a larger size cap, or planted.
    Answers treat it as content they cannot show."""


class UntrustedRepositoryError(StorageError):
    """``.trajectory/`` was not made here for this user: the project's git tracks it (it came with a clone),
    another user owns it, or it points git elsewhere. The message says how to start a new one."""


class DamagedHistoryError(StorageError):
    """The shadow repository is damaged (a ref or a commit cannot be read) and the command only reads: it left
    everything as it was. The message names the damage and says how to set it aside or repair it."""


class SecretInPushError(TrajectoryError):
    """A push sent nothing: a snapshot it would send holds a secret (the message names them and what to do)."""


class JournalError(TrajectoryError):
    """A journal operation failed (bad id, unknown entry, unreadable journal repository)."""


class JournalConflictError(JournalError):
    """A journal write was refused: the section was not read first, or moved since it was read."""


class RecapError(TrajectoryError):
    """A recap operation failed (unreadable recap file, bad entry type)."""
