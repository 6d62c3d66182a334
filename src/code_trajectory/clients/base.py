"""What every MCP client module provides, and how code-trajectory's own entries are recognised.

A client module (``claude_code``, ``claude_desktop``, ``cursor``, ``vscode``, ``gemini``, ``codex``, ...) holds
one object that satisfies :class:`Client`: where the client keeps its MCP configuration, in which file format
(``json``, ``toml``, ``yaml``), under which top-level key the servers live, and the shape of one stdio server
entry. The install logic (:mod:`code_trajectory.clients.install`) is the same for all of them; the command line
of every entry comes from one method, :meth:`StdioClient.server_command`.

Shared and per-user files: a client file meant to be committed (``shared``: ``.mcp.json``,
``.cursor/mcp.json``, ``.vscode/mcp.json``, ``.claude/settings.json``) holds no machine path: it runs
``code-trajectory`` by name (:data:`SHARED_EXE`, found on each user's ``PATH``) and names the project
only through what the client expands at run time (:attr:`StdioClient.project_arg`, e.g.
``${workspaceFolder}``), or not at all (the server then follows the client's roots or working
directory). A per-user file (claude-desktop's, Claude Code's local scope in ``~/.claude.json``) may
hold this machine's absolute paths.

The helpers here answer two questions for install and uninstall:

- *which executable runs the server* (:func:`default_exe`, :func:`exe_argv`): by name in shared
  files; in per-user files this installation's ``code-trajectory`` console script by absolute path,
  so the client starts the same version in the same environment whatever its ``PATH`` is;
- *is this entry ours* (:func:`is_our_server`, :func:`server_project`, :func:`our_hook_kind`): an
  entry is code-trajectory's when its command line runs a ``code-trajectory`` executable (or
  ``python -m code_trajectory``) with the ``serve`` subcommand; for hooks, the ``hook
  prompt|edit|stop`` subcommand. A foreign server that merely has our name is never ours.
"""

from __future__ import annotations

import hashlib
import ntpath
import os
import posixpath
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from code_trajectory.clients.userdirs import appdata, home, xdg_config
from code_trajectory.core.errors import InvalidArgumentError

#: The server name written into every client file (claude-desktop may add a suffix, see there).
SERVER_NAME = "code-trajectory"
#: Executable names that are code-trajectory's console script (``.exe`` is dropped before comparing).
_EXE_NAMES = frozenset({"code-trajectory"})
#: The module run by ``python -m``.
_MODULE = "code_trajectory"
#: The subcommands of ``code-trajectory hook`` that install writes into Claude Code's settings.
HOOK_KINDS = ("prompt", "edit", "stop")
#: The command written into shared (committed) files: the console script by name, found on each user's PATH.
SHARED_EXE = "code-trajectory"

Exe = str | Sequence[str]


@runtime_checkable
class Client(Protocol):
    """One MCP client: where its configuration lives and what one server entry looks like.

    Attributes:
        name: the name given on the command line (``claude-code``, ``claude-desktop``, ...).
        title: the product name shown to people (``Claude Code``).
        servers_key: the top-level key of the config file that maps server names to entries.
        global_config: True when one file serves every project (claude-desktop); the entry then
            carries the project and its name must be unique per project.
        docs: where the file format was verified (titles and addresses), for the docstrings and
            for people who want to check.
        hint: one sentence telling what to do after install (restart, approve, ...), or ``""``.
        file_format: ``"json"`` (JSON or JSONC), ``"toml"`` or ``"yaml"``: which editor keeps the file.
        owns_file: True when the whole file is code-trajectory's (a Continue block file): uninstall then
            deletes it once it holds no server.
        shared: True when :meth:`config_path` is a project file meant to be committed (the entry then runs
            :data:`SHARED_EXE` by name and holds no machine path); False for a per-user file.
        project_arg: what follows ``--project`` in a shared entry, expanded by the client at run time
            (``"${workspaceFolder}"``), or None to write no ``--project`` (the server follows the client's
            roots, else its working directory). Per-user entries always carry the absolute project.

    Optional (read with ``getattr``; :class:`StdioClient` provides them): ``local_config(project, env,
    platform)`` returns ``(file, key_path)``, the per-user file and the keys leading to the servers
    object that ``install --local`` writes for this project alone, or None when the client has no such
    place; ``local_is_global`` says that file serves every project (Zed's user settings: one entry per
    project, named as in :attr:`global_config` files); ``local_file_kept`` says uninstall never deletes it
    (``~/.claude.json``, which Claude Code itself writes); ``local_hint`` replaces :attr:`hint` after an
    ``install --local`` when the hint is about the shared file (None: the same hint).
    """

    name: str
    title: str
    servers_key: str
    global_config: bool
    hint: str
    file_format: str
    owns_file: bool
    shared: bool
    project_arg: str | None

    @property
    def docs(self) -> tuple[str, ...]:  # read-only: a client's own tuple type (say tuple[str, str]) then fits
        ...

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        """The config file for ``project`` (absolute) given the environment and ``sys.platform``.

        Raises:
            InvalidArgumentError: the environment lacks what the location needs (e.g. ``APPDATA``).
        """
        ...

    def entry(self, exe: Exe, project: Path | str | None) -> dict[str, Any]:
        """The server entry that runs ``exe serve [--project <project>]`` over stdio (None: no ``--project``)."""
        ...

    def entry_name(self, project: Path) -> str:
        """The preferred name of the entry for ``project``."""
        ...

    def alternate_names(self, project: Path, global_file: bool | None = None) -> list[str]:
        """Names to try, in order, when :meth:`entry_name` is taken by another entry (may be empty); ``global_file``
        says whether the file serves every project (default :attr:`global_config`)."""
        ...

    def servers(self, data: MutableMapping[str, Any]) -> tuple[MutableMapping[str, Any], str | None]:
        """The name-to-entry mapping inside the parsed file ``data``, created when missing.

        Returns the mapping (a live view: changes go into ``data``) and a note when something that was
        not a mapping had to be replaced, else None.
        """
        ...

    def as_stdio(self, entry: Any) -> Any:
        """``entry`` in the ``{"command": str, "args": [str]}`` shape that :func:`is_our_server` reads."""
        ...

    def named(self, entry: dict[str, Any], name: str) -> dict[str, Any]:
        """``entry`` as stored under ``name`` (for schemas that repeat the name inside the entry)."""
        ...


class StdioClient:
    """A base for clients whose entry is ``{["type": "stdio",] "command": ..., "args": [...]}``.

    Subclasses set the class attributes of :class:`Client` and :attr:`with_type`, and implement
    :meth:`config_path`.
    """

    name = ""
    title = ""
    servers_key = "mcpServers"
    global_config = False
    docs: tuple[str, ...] = ()
    hint = ""
    local_hint: str | None = None
    file_format = "json"
    owns_file = False
    shared = True
    project_arg: str | None = None
    #: Whether the entry carries ``"type": "stdio"`` (VS Code requires it; Claude Code writes it).
    with_type = False
    #: Whether the ``--local`` file (:meth:`local_config`) serves every project.
    local_is_global = False
    #: Whether uninstall --local never deletes the local file, only restores or edits it.
    local_file_kept = False

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        raise NotImplementedError

    def local_config(self, project: Path, env: Mapping[str, str], platform: str) -> tuple[Path, tuple[str, ...]] | None:
        """The per-user file and key path of the servers object for this project alone (``install --local``), or
        None when the client has none (the default)."""
        return None

    def server_command(self, exe: Exe, project: Path | str | None) -> tuple[str, list[str]]:
        """The one place that decides how a client starts code-trajectory: ``(command, args)``; ``project`` None
        writes no ``--project`` (the server then follows the client's roots or working directory).

        Every client's :meth:`entry` is built from this pair, whatever the file's schema.
        """
        argv = exe_argv(exe)
        return argv[0], [*argv[1:], "serve", *(["--project", str(project)] if project is not None else [])]

    def entry(self, exe: Exe, project: Path | str | None) -> dict[str, Any]:
        command, args = self.server_command(exe, project)
        entry: dict[str, Any] = {"type": "stdio"} if self.with_type else {}
        entry["command"] = command
        entry["args"] = args
        return entry

    def entry_name(self, project: Path) -> str:
        return SERVER_NAME

    def alternate_names(self, project: Path, global_file: bool | None = None) -> list[str]:
        """For a per-user file (``global_file``, default :attr:`global_config`): ``code-trajectory-<directory
        name>``, then that name with the first 8 hex digits of a SHA-256 of the full path; none for a per-project
        file."""
        if not (self.global_config if global_file is None else global_file):
            return []
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", project.name).strip("-.") or "project"
        digest = hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()[:8]
        return [f"{SERVER_NAME}-{slug}", f"{SERVER_NAME}-{slug}-{digest}"]

    def servers(self, data: MutableMapping[str, Any]) -> tuple[MutableMapping[str, Any], str | None]:
        found = data.get(self.servers_key)
        if isinstance(found, MutableMapping):
            return found, None
        note = (f'"{self.servers_key}" held {kind_of(found)}, not a mapping; it was replaced'
                if self.servers_key in data else None)
        data[self.servers_key] = self.new_servers()
        return data[self.servers_key], note

    def new_servers(self) -> Any:
        """The empty mapping stored under :attr:`servers_key` when the file has none."""
        return {}

    def as_stdio(self, entry: Any) -> Any:
        return entry

    def named(self, entry: dict[str, Any], name: str) -> dict[str, Any]:
        return entry

    def __repr__(self) -> str:
        return f"<client {self.name}>"


class UserFileClient(StdioClient):
    """A base for clients whose file is the user's own, one for every project (:attr:`global_config`, not
    :attr:`shared`): each entry carries its project's absolute path, and each project gets its own entry.

    Subclasses say where the file lies as path parts below a per-user directory (:mod:`.userdirs`), or override
    :meth:`config_path`:

    - :attr:`home_path`: below the home directory on every platform (when set, the others are not read);
    - :attr:`appdata_path`: on Windows, below the roaming application data (``APPDATA``);
    - :attr:`mac_path`: on macOS, below ``~/Library/Application Support``; empty: as on Linux;
    - :attr:`xdg_path`: elsewhere, below the XDG config directory (``XDG_CONFIG_HOME`` when absolute, else
      ``~/.config``).
    """

    global_config = True
    shared = False
    home_path: tuple[str, ...] = ()
    appdata_path: tuple[str, ...] = ()
    mac_path: tuple[str, ...] = ()
    xdg_path: tuple[str, ...] = ()

    def config_path(self, project: Path, env: Mapping[str, str], platform: str) -> Path:
        """The file for ``platform`` (a ``sys.platform`` value), from ``env`` alone (``project`` is not used).

        Raises:
            InvalidArgumentError: the environment lacks the variable the location needs (``HOME``, ``APPDATA``...).
        """
        if self.home_path:
            return home(env, platform, self.title).joinpath(*self.home_path)
        if platform == "win32":
            return appdata(env, platform, self.title).joinpath(*self.appdata_path)
        if platform == "darwin" and self.mac_path:
            return (home(env, platform, self.title) / "Library" / "Application Support").joinpath(*self.mac_path)
        return xdg_config(env, platform, self.title).joinpath(*self.xdg_path)


def kind_of(value: Any) -> str:
    """How a parsed value is named in messages: ``a list``, ``null``, ``a str``, ``a dict``..."""
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    for plain in (bool, int, float, str):
        if isinstance(value, plain):
            return f"a {plain.__name__}"
    return "a mapping" if isinstance(value, Mapping) else f"a {type(value).__name__}"


def default_exe(executable: str | None = None, which: Any = shutil.which) -> list[str]:
    """The command line that starts this installation of code-trajectory, as absolute paths.

    In order: the ``code-trajectory`` console script beside ``executable`` (default
    ``sys.executable``; ``code-trajectory.exe`` on Windows), the one found on ``PATH``, else
    ``[executable, "-P", "-m", "code_trajectory"]`` (``-P``: a client starts the server in the project, whose files
    must not be imported ahead of the standard library). The interpreter path is made absolute but not
    resolved, so a virtual environment's ``bin/python`` keeps pointing into the environment.
    """
    python = Path(os.path.abspath(executable or sys.executable))
    for name in ("code-trajectory", "code-trajectory.exe"):
        candidate = python.parent / name
        if candidate.is_file():
            return [str(candidate)]
    found = which("code-trajectory")
    if found:
        return [os.path.abspath(found)]
    return [str(python), "-P", "-m", _MODULE]


def on_path(which: Any = shutil.which) -> str | None:
    """Where :data:`SHARED_EXE` is found on ``PATH`` (what a shared entry runs), or None."""
    return which(SHARED_EXE)


def exe_argv(exe: Exe) -> list[str]:
    """``exe`` as a non-empty argument list (a string is one executable path)."""
    argv = [exe] if isinstance(exe, str) else [str(part) for part in exe]
    if not argv or not argv[0]:
        from code_trajectory.core.errors import InvalidArgumentError

        raise InvalidArgumentError("the code-trajectory executable is empty; pass the path of the "
                                   "code-trajectory script (or python -m code_trajectory)")
    return argv


def shell_command(exe: Exe, *args: str) -> str:
    """A POSIX shell command line running ``exe`` with ``args``, every word quoted as needed."""
    return " ".join(shlex.quote(word) for word in [*exe_argv(exe), *args])


def _exe_stem(word: str) -> str:
    """The file name of ``word`` without directory and ``.exe``, lower-cased (either separator)."""
    base = ntpath.basename(posixpath.basename(word)).lower()
    return base[:-4] if base.endswith(".exe") else base


def _subcommand_index(argv: Sequence[Any]) -> int | None:
    """The index just past the code-trajectory executable in ``argv``, or None when absent.

    Recognises ``.../code-trajectory[.exe]`` anywhere (so ``uvx --from pkg code-trajectory`` works)
    and ``... -m code_trajectory``.
    """
    words = [w for w in argv if isinstance(w, str)]
    if len(words) != len(argv):
        return None
    for i, word in enumerate(words):
        if _exe_stem(word) in _EXE_NAMES:
            return i + 1
        if word == "-m" and i + 1 < len(words) and words[i + 1] == _MODULE:
            return i + 2
    return None


def server_argv(entry: Any) -> list[str] | None:
    """``[command, *args]`` of a stdio server entry, or None when the entry is not of that shape."""
    if not isinstance(entry, Mapping):
        return None
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    if not all(isinstance(a, str) for a in args):
        return None
    return [command, *args]


def is_our_server(entry: Any) -> bool:
    """Whether ``entry`` runs code-trajectory's ``serve`` (whatever executable path or project)."""
    argv = server_argv(entry)
    if argv is None:
        return False
    i = _subcommand_index(argv)
    return i is not None and i < len(argv) and argv[i] == "serve"


def server_project(entry: Any) -> str | None:
    """The ``--project`` value of one of our server entries (``--project=P`` too), or None."""
    argv = server_argv(entry)
    if argv is None or not is_our_server(entry):
        return None
    for i, word in enumerate(argv):
        if word == "--project" and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("--project="):
            return word.split("=", 1)[1]
    return None


def our_hook_kind(command: Any) -> str | None:
    """``prompt``/``edit``/``stop`` when ``command`` runs ``code-trajectory hook <kind>``, else None."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    i = _subcommand_index(words)
    if i is None or i + 1 >= len(words) or words[i] != "hook":
        return None
    return words[i + 1] if words[i + 1] in HOOK_KINDS else None


def same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same directory (resolved when possible, case-folded where the OS does)."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
    except (OSError, RuntimeError, ValueError):
        pass
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def check_project_files(root: Path, *paths: Path | None) -> None:
    """Refuse to write the project's config files ``paths`` (those lexically under the project ``root``, which is
    resolved; None is skipped) when one resolves outside the project: the file, or a directory on its way, is a
    symbolic link the project's files hold (a cloned repository's ``.mcp.json -> ../../.bashrc``, ``.claude ->
    ~/.claude``). Writing through it would
    replace a file of the user's elsewhere (the backup left in the project) or set up every project of the user.
    Files outside ``root`` (the per-user ones of ``--local``, where a link to a dotfiles repository is common) are
    not checked.

    Raises:
        InvalidArgumentError: a path is under ``root`` but resolves outside it (the message names both and what
            to do).
    """
    for path in paths:
        if path is None or not path.is_relative_to(root):
            continue  # a per-user file
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(os.path.realpath(root)):
            raise _outside(path.relative_to(root), real)


def _outside(rel: Path, real: Path) -> InvalidArgumentError:
    return InvalidArgumentError(f"{rel} resolves to {real}, outside the project: a symbolic link in the project's "
                               "files leads there, so nothing was written; remove the link (or point it inside the "
                               "project), then run this again")
