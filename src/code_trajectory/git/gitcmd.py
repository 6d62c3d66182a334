"""The one module that runs git.

Every call is explicit about the repository (``--git-dir``) and, where git
needs one, the work tree (``--work-tree``); inherited ``GIT_*`` variables are
stripped so a caller's environment (a hook, ``GIT_DIR`` from a wrapping tool)
cannot redirect us. Calls on the shadow repository also isolate the user's
global and system config (``GIT_CONFIG_GLOBAL=/dev/null``,
``GIT_CONFIG_NOSYSTEM=1``), use a fixed identity, and disable hooks, signing and
replace refs. Calls on the *project's* repository keep the user's config (we
need their ``core.excludesFile``) but are read-only by construction and run with
``GIT_OPTIONAL_LOCKS=0`` so not even an index refresh is written.

**Untrusted data never names a program** (README, "Threat model"): the shadow's config and the project's
``.gitattributes`` may come with a clone, so every git process gets, here: ``--no-pager`` and no editor
(:data:`SAFE_ENV`); on the shadow the ``-c`` overrides of :data:`SHADOW_CONFIG` (read after every config file
and include, so they win), no transport outside :data:`NETWORK_COMMANDS` (:data:`OFFLINE_CONFIG`), the
transport resets of :func:`config_env` ahead of the user's own transport settings, ``GIT_ATTR_NOSYSTEM=1``;
and ``--no-ext-diff --no-textconv`` on every :data:`DIFF_COMMANDS` call. What ``-c`` cannot override
(``filter.<driver>.*``, ``url.*.insteadOf``, ``credential.<url>.helper``, ``extensions.*``) is removed from
the shadow's config when it is opened (:mod:`code_trajectory.git.untrusted`); nothing here applies filters.

Output that carries paths is always asked for with ``-z`` and split on NUL.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from code_trajectory.core.errors import GitError, GitUnavailableError, LockContentionError

log = logging.getLogger(__name__)

#: Oldest git we support: 2.30 brought ``GIT_CONFIG_GLOBAL`` (used to isolate the
#: user's config) and ``update-ref --stdin`` transactions (git 2.27 release notes).
MIN_GIT_VERSION: tuple[int, int] = (2, 30)

#: Fixed identity of every shadow commit.
IDENTITY_NAME = "code-trajectory"
IDENTITY_EMAIL = "code-trajectory@localhost"

#: Config forced on every shadow call with ``-c``, whatever the repository's config file (or a file it
#: includes) says: ``-c`` is read last (git-config(1), "FILES"), so these win. Each program setting points
#: at ``/dev/null``, which cannot be executed.
SHADOW_CONFIG: tuple[str, ...] = (
    "core.hooksPath=" + os.devnull,
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotePath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "core.pager=cat",
    "core.attributesFile=" + os.devnull,
    "core.alternateRefsCommand=" + os.devnull,
    "log.showSignature=false",
    "gpg.program=" + os.devnull,
    "gpg.openpgp.program=" + os.devnull,
    "gpg.x509.program=" + os.devnull,
    "gpg.ssh.program=" + os.devnull,
    "protocol.ext.allow=never",
)
#: Added to :data:`SHADOW_CONFIG` on a shadow call that is not a network call: no transport at all, so a
#: promisor remote or an alternate's refs can never make git reach out (and run an ssh or a helper).
OFFLINE_CONFIG: tuple[str, ...] = ("protocol.allow=never",)
#: git subcommands that talk to a remote (only these get the transport through :func:`config_env`).
NETWORK_COMMANDS = frozenset({"fetch", "push", "ls-remote"})
#: Transport settings reset on every shadow call, in ``GIT_CONFIG_COUNT`` (command scope, before the user's
#: own settings that :func:`config_env` appends): an empty ``credential.helper`` clears the helper list
#: (gitcredentials(7)), ``core.askPass`` empty asks nobody, ``core.sshCommand`` is plain ``ssh`` (or the
#: user's ``GIT_SSH``).
TRANSPORT_RESETS: tuple[tuple[str, str], ...] = (
    ("credential.helper", ""),
    ("core.askPass", ""),
)
#: Subcommands that can show a diff: ``--no-ext-diff --no-textconv`` follow the subcommand on every call.
DIFF_COMMANDS = frozenset({"log", "show", "diff", "diff-tree", "diff-index", "diff-files", "whatchanged",
                           "format-patch"})
#: Environment of every git process: no pager, no editor whatever any config names.
SAFE_ENV: dict[str, str] = {"GIT_PAGER": "cat", "PAGER": "cat", "GIT_EDITOR": "true",
                            "GIT_SEQUENCE_EDITOR": "true"}
#: Options before the subcommand of every call on the project's own repository (read-only queries).
PROJECT_OPTIONS: tuple[str, ...] = ("--no-pager", "-c", "core.fsmonitor=false")

_LOCK_PATTERNS = re.compile(
    rb"(Unable to create '[^']*\.lock'|cannot lock ref|Unable to lock|\.lock': File exists|unable to lock|"
    rb"could not lock config file|packed-refs\.new: File exists)",
    re.IGNORECASE,
)

T = TypeVar("T")


def base_env(*, isolate_config: bool) -> dict[str, str]:
    """Return a copy of ``os.environ`` fit for running git.

    Args:
        isolate_config: True for the shadow repository: ignore the user's global and
            the system config and use the fixed identity. False for read-only queries of
            the project's own repository, which must see the user's config.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
        LC_ALL="C",
        LANGUAGE="C",
    )
    env.update(SAFE_ENV)
    if isolate_config:
        env.update(config_env(()))
        env.update(
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_ATTR_NOSYSTEM="1",
            GIT_PROXY_COMMAND="",
            GIT_AUTHOR_NAME=IDENTITY_NAME,
            GIT_AUTHOR_EMAIL=IDENTITY_EMAIL,
            GIT_COMMITTER_NAME=IDENTITY_NAME,
            GIT_COMMITTER_EMAIL=IDENTITY_EMAIL,
            GIT_OPTIONAL_LOCKS="1",
        )
    return env


def config_env(user_config: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>`` for a shadow call (git >= 2.31).

    :data:`TRANSPORT_RESETS` come first, then ``core.sshCommand`` (``ssh``, or ``GIT_SSH`` of the
    environment quoted for the shell), then ``user_config`` in order: the user's own transport settings
    (trusted, from their config) override the resets, and nothing from the shadow's config file is left.

    Args:
        user_config: ``(key, value)`` pairs of the user's effective config to hand to the call.
    """
    ssh = shlex.quote(os.environ["GIT_SSH"]) if os.environ.get("GIT_SSH") else "ssh"
    entries = [*TRANSPORT_RESETS, ("core.sshCommand", ssh), *user_config]
    env = {"GIT_CONFIG_COUNT": str(len(entries))}
    for n, (key, value) in enumerate(entries):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


def subcommand(args: Sequence[str]) -> str | None:
    """The git subcommand of ``args`` (after any leading ``-c key=value`` pairs), or None."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return args[i] if i < len(args) else None


def project_argv(args: Sequence[str]) -> list[str]:
    """argv of a read-only query of the project's own repository, run in its work tree (discovery by git).

    The user's config applies (it is theirs); :data:`PROJECT_OPTIONS` keep a pager and ``core.fsmonitor``
    out of it (a cloned project's ``.gitattributes`` cannot name a program for ``rev-parse``, ``config``,
    ``ls-files`` or ``symbolic-ref``: none of them diffs or filters).
    """
    return [git_executable(), *PROJECT_OPTIONS, *args]


def git_executable() -> str:
    """Return the path of git on PATH.

    Raises:
        GitUnavailableError: git is not on PATH.
    """
    exe = shutil.which("git")
    if exe is None:
        raise GitUnavailableError(
            "git was not found on PATH; code-trajectory needs git >= {}.{} (https://git-scm.com/downloads)".format(
                *MIN_GIT_VERSION)
        )
    return exe


_version_cache: tuple[int, ...] | None = None


def check_git_version() -> tuple[int, ...]:
    """Return git's version as a tuple and check it against :data:`MIN_GIT_VERSION`.

    Raises:
        GitUnavailableError: git is missing, does not run, or is too old.
    """
    global _version_cache
    if _version_cache is not None:
        return _version_cache
    exe = git_executable()
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, env=base_env(isolate_config=True),
                             timeout=30, check=True).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitUnavailableError(f"cannot run {exe} --version: {exc}") from exc
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    if not match:
        raise GitUnavailableError(f"cannot parse the git version from {out.strip()!r}")
    version = tuple(int(p) for p in match.groups() if p is not None)
    if version[:2] < MIN_GIT_VERSION:
        raise GitUnavailableError(
            f"git {'.'.join(map(str, version))} is too old: code-trajectory needs git >= "
            f"{MIN_GIT_VERSION[0]}.{MIN_GIT_VERSION[1]}"
        )
    _version_cache = version
    return version


class Git:
    """Runs git against one repository.

    Args:
        git_dir: the repository's git directory (absolute).
        work_tree: the work tree, or None for commands that need none.
        isolated: True for the shadow repository (see :func:`base_env`).
    """

    def __init__(self, git_dir: Path, work_tree: Path | None = None, *, isolated: bool = True) -> None:
        self.git_dir = Path(git_dir)
        self.work_tree = Path(work_tree) if work_tree is not None else None
        self.isolated = isolated
        self._exe = git_executable()
        self.env = base_env(isolate_config=isolated)

    def argv(self, args: Sequence[str], *, with_work_tree: bool = True) -> list[str]:
        """Return the full argv for ``git <args>`` on this repository."""
        argv = [self._exe, "--no-pager", f"--git-dir={self.git_dir}"]
        if with_work_tree and self.work_tree is not None:
            argv.append(f"--work-tree={self.work_tree}")
        command = subcommand(args)
        if self.isolated:
            forced = SHADOW_CONFIG if command in NETWORK_COMMANDS else SHADOW_CONFIG + OFFLINE_CONFIG
            for item in forced:
                argv += ["-c", item]
        else:
            argv += PROJECT_OPTIONS[1:]
        args = list(args)
        if command in DIFF_COMMANDS:
            at = args.index(command) + 1
            args[at:at] = ["--no-ext-diff", "--no-textconv"]
        return argv + args

    @property
    def cwd(self) -> Path:
        """Directory git runs in: the work tree when there is one, else the git dir."""
        return self.work_tree if self.work_tree is not None else self.git_dir

    def run(self, args: Sequence[str], *, input: bytes | None = None, check: bool = True,
            lock_retry_seconds: float = 2.0, timeout: float | None = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run ``git <args>`` and return the completed process (stdout and stderr as bytes).

        A failure caused by a held lock (``index.lock``, ``<ref>.lock``) is retried
        with exponential backoff (10 ms doubling, capped at 250 ms) for up to
        ``lock_retry_seconds`` seconds.

        Raises:
            LockContentionError: the lock was still held after the retry budget.
            GitError: git exited non-zero (when ``check``) or could not be started.
        """
        argv = self.argv(args)
        run_env = self.env if env is None else {**self.env, **env}
        deadline = time.monotonic() + lock_retry_seconds
        delay = 0.01
        while True:
            try:
                proc = subprocess.run(argv, input=input, capture_output=True, cwd=self.cwd, env=run_env,
                                      timeout=timeout)
            except FileNotFoundError as exc:
                if not self.cwd.exists():
                    raise GitError(f"directory {self.cwd} does not exist", args_=tuple(args)) from exc
                raise GitUnavailableError(f"cannot start git: {exc}", args_=tuple(args)) from exc
            except (OSError, subprocess.SubprocessError) as exc:
                raise GitError(f"git {' '.join(args[:2])} failed to run: {exc}", args_=tuple(args)) from exc
            if proc.returncode == 0 or not check:
                return proc
            locked = bool(_LOCK_PATTERNS.search(proc.stderr))
            if locked and time.monotonic() < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
                continue
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            cls = LockContentionError if locked else GitError
            raise cls(f"git {' '.join(args[:2])} failed ({proc.returncode}): {stderr}", args_=tuple(args),
                      returncode=proc.returncode, stderr=stderr)

    def out(self, args: Sequence[str], **kwargs: Any) -> bytes:
        """Run ``git <args>`` and return its stdout (see :meth:`run`)."""
        return self.run(args, **kwargs).stdout

    def text(self, args: Sequence[str], **kwargs: Any) -> str:
        """Run ``git <args>`` and return stdout decoded as UTF-8 (with replacement), stripped."""
        return self.out(args, **kwargs).decode("utf-8", "replace").strip()

    def popen(self, args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start ``git <args>`` with pipes for stdin and stdout; stderr is captured too. ``env``: variables added
        to this repository's environment (for example ``GIT_INDEX_FILE``)."""
        extra = kwargs.pop("env", None)
        return subprocess.Popen(self.argv(args), stdin=kwargs.pop("stdin", subprocess.PIPE),
                                stdout=subprocess.PIPE, stderr=kwargs.pop("stderr", subprocess.PIPE),
                                cwd=self.cwd, env=self.env if extra is None else {**self.env, **extra}, bufsize=0,
                                **kwargs)


def split_z(data: bytes) -> list[bytes]:
    """Split ``-z`` output on NUL, dropping the empty tail."""
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


class BatchProcess:
    """A long-running git process answering requests on stdin, one at a time.

    Used for ``cat-file --batch`` and ``hash-object -w --stdin-paths``: one process start (~2 ms) saved per object. Calls are
    serialised by a lock; a process that died (killed, or git exited on bad input)
    is restarted on the next call and the failure reported as :class:`GitError`.

    Args:
        git: the repository.
        args: the git arguments, e.g. ``["cat-file", "--batch"]``.
        name: short name used in messages.
    """

    def __init__(self, git: Git, args: Sequence[str], name: str) -> None:
        self.git = git
        self.args = list(args)
        self.name = name
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._stderr_chunks: list[bytes] = []

    def _start(self) -> subprocess.Popen[bytes]:
        proc = self.git.popen(self.args, stderr=subprocess.PIPE)
        self._stderr_chunks = []
        chunks = self._stderr_chunks
        assert proc.stderr is not None  # stderr=PIPE

        def drain(stream: IO[bytes] = proc.stderr) -> None:  # keep stderr from filling its pipe
            try:
                for line in iter(stream.readline, b""):
                    chunks.append(line)
                    del chunks[:-20]
            except (OSError, ValueError):  # closed under us
                pass
            finally:
                stream.close()  # at EOF (the process ended): no pipe left open for the garbage collector

        threading.Thread(target=drain, daemon=True, name=f"git-{self.name}-stderr").start()
        return proc

    def request(self, data: bytes, reader: Callable[[IO[bytes]], T]) -> T:
        """Write ``data`` to the process and return ``reader(stdout)``.

        Raises:
            GitError: the process died or answered malformed output.
        """
        with self._lock:
            if self._proc is not None and self._proc.poll() is not None:
                self._kill()  # it ended (killed, or its repository went): its pipes are closed before a new one
            if self._proc is None:
                self._proc = self._start()
            proc = self._proc
            try:
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(data)
                proc.stdin.flush()
                return reader(proc.stdout)
            except (OSError, ValueError, EOFError) as exc:
                self._kill()
                err = b"".join(self._stderr_chunks).decode("utf-8", "replace").strip()
                raise GitError(f"git {self.name} failed: {err or exc}", args_=tuple(self.args),
                               stderr=err) from exc

    def _kill(self) -> None:
        if self._proc is not None:
            try:
                self._proc.kill()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.SubprocessError):
                pass
            for stream in (self._proc.stdin, self._proc.stdout):
                try:
                    if stream:
                        stream.close()
                except OSError:
                    pass
            self._proc = None

    def close(self) -> None:
        """Stop the process (idempotent)."""
        with self._lock:
            if self._proc is not None:
                try:
                    if self._proc.stdin:
                        self._proc.stdin.close()
                    self._proc.wait(timeout=5)
                except (OSError, subprocess.SubprocessError):
                    pass
                self._kill()


def read_line(stream: IO[bytes]) -> bytes:
    """Read one ``\\n``-terminated line without the terminator.

    Raises:
        EOFError: the stream ended first.
    """
    line = stream.readline()
    if not line.endswith(b"\n"):
        raise EOFError("git process ended unexpectedly")
    return line[:-1]


def read_exact(stream: IO[bytes], size: int) -> bytes:
    """Read exactly ``size`` bytes.

    Raises:
        EOFError: the stream ended first.
    """
    chunks = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise EOFError("git process ended unexpectedly")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def chunked(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    """Yield consecutive slices of ``items`` of at most ``size`` elements."""
    for start in range(0, len(items), size):
        yield items[start:start + size]
