"""Reaching the project's git remote from the shadow repository: which URL, which config, which credentials.

Sharing runs ``git push``/``git fetch``/``git ls-remote`` *in the shadow repository* against the
project's remote, so that nothing is ever written under the project's ``.git``. The shadow
repository's calls ignore the user's global and system config (see :mod:`code_trajectory.git.gitcmd`);
for the network this is what changes, and why:

* **Where.** The URL is the one the user's own ``git push <remote>`` (``git fetch <remote>`` for a
  pull) would use, read from the project's repository: ``git remote get-url [--push] <remote>``,
  which applies ``pushurl``, ``url.<base>.insteadOf`` and ``pushInsteadOf`` from every config level once. The network call
  itself still ignores the user's config, so no ``insteadOf`` rule can rewrite that URL a second
  time: it goes exactly where the report says. When a rewrite happened the report names both URLs.
* **Credentials.** The transport settings of the user's effective config (system, global and the
  project's own: :data:`TRANSPORT_SECTIONS` and :data:`TRANSPORT_KEYS`, e.g. ``credential.helper``,
  ``http.extraHeader``, ``core.sshCommand``) are handed to the network call through
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>`` (git >= 2.31), in their original
  order, so multi-valued keys keep their meaning, and never on the command line, where other users
  could read a token with ``ps``. The transport variables of the environment (:data:`TRANSPORT_ENV`,
  e.g. ``GIT_SSH_COMMAND``, ``GIT_ASKPASS``) are kept; ``SSH_AUTH_SOCK`` and ``HOME`` (so
  ``~/.ssh/config``) are never removed. Nothing else of the user's config applies.
* **No hooks, no signing.** The shadow repository's ``core.hooksPath=/dev/null`` holds (a
  ``pre-push`` hook never runs; ``push --no-verify`` as well), pushes are never signed
  (``push.gpgSign=false``), follow no tags and recurse into no submodules (:data:`PUSH_CONFIG`).
  Hooks on the *remote* (``pre-receive``) are the remote's business and may refuse a push.
* **Prompts.** ``GIT_TERMINAL_PROMPT=0`` unless the caller is interactive (the CLI on a terminal):
  a background push fails with a clear message instead of hanging on a password prompt.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from code_trajectory.core.errors import GitError, GitUnavailableError, InvalidArgumentError
from code_trajectory.core.secrets import url_without_credentials
from code_trajectory.git.gitcmd import Git, check_git_version, config_env, split_z
from code_trajectory.git.project import DETACHED_BRANCH, NO_GIT_BRANCH, ProjectRepo
from code_trajectory.share.names import sanitize_author_id
from code_trajectory.share.settings import ShareSettings

#: Oldest git that passes config through ``GIT_CONFIG_COUNT`` (git 2.31 release notes).
MIN_SHARE_GIT_VERSION = (2, 31)
DEFAULT_REMOTE = "origin"
#: Config sections of the user's effective config handed to the network call (all their keys).
TRANSPORT_SECTIONS = ("credential.", "http.")
#: Single keys handed to the network call (lower case, as ``git config --list`` prints them).
TRANSPORT_KEYS = frozenset({"core.sshcommand", "core.askpass", "core.gitproxy", "ssh.variant", "protocol.version"})
#: Environment variables of the user kept for the network call (the rest of ``GIT_*`` is dropped).
TRANSPORT_ENV = ("GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
                 "GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_CERT", "GIT_SSL_KEY",
                 "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_HTTP_USER_AGENT")
#: ``-c`` settings of every push, whatever any config says.
PUSH_CONFIG = ("push.gpgSign=false", "push.followTags=false", "push.recurseSubmodules=no", "push.negotiate=false")
#: ``-c`` settings of every fetch: objects are verified, nothing else is fetched or written.
FETCH_CONFIG = ("fetch.fsckObjects=true", "transfer.fsckObjects=true", "fetch.recurseSubmodules=false",
                "fetch.writeCommitGraph=false", "fetch.prune=false", "fetch.pruneTags=false",
                "fetch.showForcedUpdates=false", "submodule.recurse=false")
_REMOTE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]{0,99}$")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class RemoteTarget:
    """The remote a project shares through.

    Attributes:
        name: the remote's name in the project (``origin``).
        url: where the network call goes (already rewritten by the user's ``insteadOf`` rules).
        configured_url: the URL as configured, when a rewrite changed it, else None.
        config: transport settings handed to the network call, ``(key, value)`` in order.
    """

    name: str
    url: str
    configured_url: str | None = None
    config: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def describe(self) -> str:
        """``origin (URL)``, naming the configured URL too when ``insteadOf`` rewrote it."""
        rewritten = (f", rewritten from {url_without_credentials(self.configured_url)} by your url.*.insteadOf"
                     if self.configured_url else "")
        return f"`{self.name}` ({self.shown_url}{rewritten})"

    @property
    def shown_url(self) -> str:
        """:attr:`url` as printed and stored: without a password or token it carries
        (:func:`~code_trajectory.core.secrets.url_without_credentials`)."""
        return url_without_credentials(self.url)


def project_repo(root: Path) -> ProjectRepo:
    """The project's own repository.

    Raises:
        InvalidArgumentError: the project is not a git repository (sharing goes through its remote).
    """
    project = ProjectRepo.discover(Path(root))
    if not project.is_git:
        raise InvalidArgumentError(f"{root} is not a git repository: trajectories are shared through the "
                                   "project's git remote (git init, git remote add origin URL)")
    return project


def _project_git(project: ProjectRepo) -> Git:
    assert project.git_dir is not None
    return Git(project.git_dir, None, isolated=False)


def _config_get(git: Git, key: str) -> str | None:
    proc = git.run(["config", "--get", key], check=False)
    value = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return value if proc.returncode == 0 and value else None


def author_id(root: Path, settings: ShareSettings | None = None) -> str:
    """This user's author id for the project: ``[share] author_id``, else the project's ``user.email``; sanitized.

    Raises:
        InvalidArgumentError: neither is set, or the value sanitizes to nothing (the message says how to set one).
    """
    settings = settings or ShareSettings.load(root)
    raw = settings.author_id
    if raw is None:
        project = ProjectRepo.discover(Path(root))
        raw = _config_get(_project_git(project), "user.email") if project.is_git else None
    if not raw:
        raise InvalidArgumentError("no author id for shared trajectories: set `git config user.email you@example.com` "
                                   "in the project, or `author_id = \"you@example.com\"` under [share] in "
                                   ".trajectory/config.toml")
    return sanitize_author_id(raw)


def check_remote_name(name: str) -> str:
    """Return ``name`` if it can be a git remote name.

    Raises:
        InvalidArgumentError: empty, an option, a control character, ``..``, or over 100 characters.
    """
    if not isinstance(name, str) or not _REMOTE_NAME.match(name) or ".." in name or name.endswith((".", "/")):
        raise InvalidArgumentError(f"{name!r} is not a remote name; pass the name of one of the project's git "
                                   "remotes (`git remote` lists them), e.g. --remote origin")
    return name


def _absolute_url(url: str, root: Path) -> str:
    """A relative local path (``../shared.git``) made absolute against the project root; other URLs unchanged."""
    if _URL_SCHEME.match(url) or os.path.isabs(url):
        return url
    colon, slash = url.find(":"), url.find("/")
    if colon > 0 and (slash < 0 or colon < slash):  # scp-like host:path
        return url
    return str((root / url).resolve())


def resolve_remote(root: Path, name: str | None = None, settings: ShareSettings | None = None, *,
                   push: bool = True) -> RemoteTarget:
    """The remote to share through and its URL, read from the project's repository (never written).

    Args:
        root: the project root.
        name: the remote's name; None for ``[share] remote``, else the current branch's upstream remote
            (``branch.<name>.remote``), else ``origin``.
        settings: sharing settings (read from the config files when None).
        push: the push URL (``pushurl``, ``pushInsteadOf``) as ``git push`` uses it; False for the fetch URL.

    Raises:
        InvalidArgumentError: the project is not a git repository, or has no such remote (the message lists them).
        GitUnavailableError: git is older than 2.31.
    """
    if check_git_version()[:2] < MIN_SHARE_GIT_VERSION:
        raise GitUnavailableError("sharing trajectories needs git >= {}.{} (credentials are passed through "
                                  "GIT_CONFIG_COUNT); upgrade git".format(*MIN_SHARE_GIT_VERSION))
    root = Path(root)
    project = project_repo(root)
    git = _project_git(project)
    settings = settings or ShareSettings.load(root)
    if name is None:
        name = settings.remote
    if name is None:
        branch = project.current_branch()
        upstream = None
        if branch not in (DETACHED_BRANCH, NO_GIT_BRANCH):
            upstream = _config_get(git, f"branch.{branch}.remote")
        name = upstream if upstream and upstream != "." and _REMOTE_NAME.match(upstream) else DEFAULT_REMOTE
    check_remote_name(name)
    proc = git.run(["remote", "get-url", *(["--push"] if push else []), name], check=False)
    url = proc.stdout.decode("utf-8", "surrogateescape").strip().splitlines()
    if proc.returncode != 0 or not url or not url[0]:
        remotes = git.text(["remote"], check=False).split()
        listed = f"its remotes: {', '.join(remotes)}" if remotes else "it has none"
        raise InvalidArgumentError(f"the project has no git remote named {name!r} ({listed}); pass --remote NAME, "
                                   f"or add one with `git remote add {name} URL`")
    effective = url[0]
    if effective.startswith("-") or any(ord(ch) < 32 for ch in effective):
        raise InvalidArgumentError(f"the URL of the remote {name!r} ({effective!r}) starts with '-' or holds a "
                                   "control character; git would read it as an option: fix it with "
                                   f"`git remote set-url {name} URL`")
    configured = (push and _config_get(git, f"remote.{name}.pushurl")) or _config_get(git, f"remote.{name}.url")
    absolute = _absolute_url(effective, root)
    rewritten = configured if configured and configured not in (effective, absolute) else None
    return RemoteTarget(name=name, url=absolute, configured_url=rewritten, config=transport_config(project))


def transport_config(project: ProjectRepo) -> tuple[tuple[str, str], ...]:
    """The transport settings of the user's effective config for ``project``, in order (see the module docstring)."""
    proc = _project_git(project).run(["config", "--list", "-z"], check=False)
    if proc.returncode != 0:
        return ()
    picked = []
    for entry in split_z(proc.stdout):
        key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        low = key.lower()
        if low.startswith(TRANSPORT_SECTIONS) or low in TRANSPORT_KEYS:
            picked.append((key, value))
    return tuple(picked)


def network_env(target: RemoteTarget, *, interactive: bool = False) -> dict[str, str]:
    """Environment for a network call to ``target`` from the shadow repository (see the module docstring)."""
    env = {key: os.environ[key] for key in TRANSPORT_ENV if key in os.environ}
    env.update(config_env(target.config))  # after gitcmd's transport resets: the shadow's config names nothing
    env["GIT_TERMINAL_PROMPT"] = "1" if interactive else "0"
    return env


def config_args(settings: tuple[str, ...]) -> list[str]:
    """``-c key=value`` arguments for ``settings``."""
    args: list[str] = []
    for item in settings:
        args += ["-c", item]
    return args


def run_network(git: Git, target: RemoteTarget, settings: tuple[str, ...], args: list[str], *,
                interactive: bool = False, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git -c <settings> <args>`` (a ``push`` or ``fetch`` to ``target``) in :func:`network_env`'s environment.

    Unchecked and without lock retries (a network call is not repeated behind the caller's back): the caller reads
    the exit status and git's stderr of the returned process.
    """
    return git.run(config_args(settings) + args, input=input, check=False, lock_retry_seconds=0,
                   env=network_env(target, interactive=interactive))


def ls_remote(git: Git, target: RemoteTarget, *, interactive: bool = False,
              patterns: tuple[str, ...] = ()) -> dict[str, str]:
    """``{ref: object id}`` the remote advertises (``git ls-remote --refs``; ``patterns`` as git matches them).

    Names are decoded from UTF-8 with ``surrogateescape`` (invalid bytes survive as surrogates).

    Raises:
        GitError: the remote cannot be reached or read (the message says what to check).
    """
    proc = git.run(["ls-remote", "--refs", target.url, *patterns], check=False,
                   env=network_env(target, interactive=interactive))
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"cannot read the remote {target.describe()}: {err or 'git ls-remote failed'}. Check the URL "
                       f"and your credentials (`git ls-remote {target.name}` in the project shows the same problem)",
                       args_=("ls-remote",), returncode=proc.returncode, stderr=err)
    refs: dict[str, str] = {}
    for line in proc.stdout.split(b"\n"):
        oid, tab, name = line.partition(b"\t")
        if tab and re.fullmatch(rb"[0-9a-f]{40}", oid):
            refs[name.decode("utf-8", "surrogateescape")] = oid.decode("ascii")
    return refs
