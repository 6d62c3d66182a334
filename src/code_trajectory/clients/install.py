"""Install and uninstall code-trajectory's MCP server entry in a client's config file.

``install("cursor", project)`` writes, into the shared (committed) ``<project>/.cursor/mcp.json``::

    {"mcpServers": {"code-trajectory": {"command": "code-trajectory", "args": ["serve", "--project", "${workspaceFolder}"]}}}

keeping every other key and server, in order. What goes where (see the README's client table):

- *shared* files (``.mcp.json``, ``.cursor/mcp.json``, ``.vscode/mcp.json``, ``.gemini/settings.json``,
  ``.zed/settings.json``, Continue's block file, and the hooks' ``.claude/settings.json``,
  ``.codex/hooks.json``) hold no machine path: ``code-trajectory`` by name, the project as the client expands it
  at run time (``${workspaceFolder}``; in hooks ``"$CLAUDE_PROJECT_DIR"``, ``$GEMINI_PROJECT_DIR``, Codex's ``.``)
  or not at all (the server finds the project from the client's roots or working directory). A worktree or a
  clone of a committed set-up therefore records itself. When ``code-trajectory`` is not on ``PATH``, install says
  so and what to do;
- *per-user* files hold this machine's absolute paths: the configs of claude-desktop, codex, windsurf, cline and
  goose, and with ``local=True`` (``--local``) Claude Code's local scope in ``~/.claude.json`` and
  ``.claude/settings.local.json``, or Zed's user ``settings.json``.

A second identical install writes nothing (``unchanged``); a changed entry is updated in place
(``updated``): how it starts the server is install's, what the user added to it (an ``env``, a ``timeout``,
``disabled``) is kept. The file rules (backups of anything a rewrite would lose, atomic writes, dry-run diffs) are
those of :mod:`code_trajectory.clients.jsonfile`. Install notes each file's previous bytes in the
:mod:`~code_trajectory.clients.ledger`, so uninstall is exact: a file install created goes away, a file it
edited gets its bytes back (when nothing else changed in it since; otherwise only our entries are removed).
Writes inside a recorded project are snapshotted as set-up, not as the agent's work
(:mod:`~code_trajectory.clients.own_writes`).

Which entry is ours: one whose command line runs ``code-trajectory serve`` (any path to the
executable, or ``python -m code_trajectory``) and, in a per-project file, is named
``code-trajectory`` or serves this project; in claude-desktop's global file, one that serves this
project (``--project`` names the same directory). A foreign server called ``code-trajectory`` is
never replaced nor removed: install refuses and says what to do.

One job, though over 450 lines: the install/uninstall transaction of one client entry (where it goes, which entry
is ours, the ledger round trip, the set-up snapshot, and the text people read); the file formats live in
:mod:`.jsonfile` and :mod:`.docfile`, the per-client facts in the client modules.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from code_trajectory.clients import docfile, jsonfile, ledger
from code_trajectory.clients import hooks as _hooks
from code_trajectory.clients.base import (
    SHARED_EXE,
    Client,
    Exe,
    check_project_files,
    default_exe,
    exe_argv,
    is_our_server,
    on_path,
    same_path,
    server_argv,
    server_project,
    shell_command,
)
from code_trajectory.clients.own_writes import SetupRecorder
from code_trajectory.clients.registry import client as _client
from code_trajectory.clients.report import Change as Change  # what was done to one file, re-exported
from code_trajectory.clients.report import below_top, change_of
from code_trajectory.clients.report import render as render  # the text people read, re-exported
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.project import check_recordable, find_project_root

log = logging.getLogger(__name__)

#: The package that installs the ``code-trajectory`` command (pyproject's ``name``): what pipx and uv install.
DISTRIBUTION = "code-trajectory-mcp"
#: The keys of a server entry that say how the server starts: install writes them; any other key of our existing
#: entry (the ``env`` the README suggests, a ``timeout``, ``disabled``, Goose's ``envs``) is the user's and is kept.
START_KEYS = frozenset({"type", "command", "args", "cmd", "source", "name"})


def resolve_project(project: str | os.PathLike[str] | None) -> Path:
    """``project`` (default: the project of the current directory, as every command finds it:
    :func:`code_trajectory.project.find_project_root`, so that a set-up run in ``src/`` goes where the client
    reads it, at the top of the work tree) as an absolute, resolved directory.

    Raises:
        InvalidArgumentError: it does not exist or is not a directory.
    """
    raw = Path(os.path.expanduser(os.fspath(project))) if project not in (None, "") else find_project_root(Path.cwd())
    path = Path(os.path.abspath(raw))
    if not path.exists():
        raise InvalidArgumentError(f"project directory {path} does not exist; pass --project with an existing "
                                   "directory (or run from inside the project)")
    if not path.is_dir():
        raise InvalidArgumentError(f"project {path} is not a directory; pass --project with the project's directory")
    return path.resolve()


def _context(client_name: str, project: Any, env: Mapping[str, str] | None,
             platform: str | None) -> tuple[Client, Path, Path]:
    client = _client(client_name)
    root = resolve_project(project)
    path = client.config_path(root, os.environ if env is None else env, platform or sys.platform)
    return client, root, path


def _edit(client: Client | None, path: Path, mutate: Any, **kw: Any) -> jsonfile.Edit:
    """Edit ``path`` with the editor of ``client.file_format`` (:mod:`.jsonfile` or :mod:`.docfile`; None: a JSON
    settings file)."""
    if client is None or client.file_format == "json":
        kw.pop("remove_if", None)
        return jsonfile.edit(path, mutate, **kw)
    if kw.get("previous") is jsonfile.UNKNOWN:
        kw.pop("previous")
    return docfile.edit(path, docfile.FORMATS[client.file_format], mutate, **kw)


def _servers_of(client: Client, data: Any, keys: tuple[str, ...], *,
                create: bool = True) -> tuple[Any | None, str | None]:
    """The servers mapping of ``client`` in ``data``: the client's own (format-aware) lookup for its usual key,
    :func:`_servers` for another key path (``install --local``)."""
    if keys == (client.servers_key,):
        if not create and not isinstance(data.get(client.servers_key), (Mapping, list)):
            return None, None
        return client.servers(data)
    return _servers(data, keys, create=create)


def _servers(data: dict[str, Any], keys: tuple[str, ...], *, create: bool = True) -> tuple[dict[str, Any] | None,
                                                                                       str | None]:
    """The servers object at ``keys`` in ``data`` (made when missing and ``create``); the note when a
    non-object had to be replaced. Only the last key's value is ever replaced: a non-object on the way
    (``projects`` in ``~/.claude.json``) is refused, never overwritten.

    Raises:
        InvalidArgumentError: a key on the way holds something that is not an object (with ``create``).
    """
    node = data
    for key in keys[:-1]:
        child = node.get(key)
        if child is None and create:
            child = node[key] = {}
        if not isinstance(child, dict):
            if not create:
                return None, None
            raise InvalidArgumentError(f'"{key}" holds {jsonfile.kind_of(child)}, not an object; fix the file '
                                       "or add the entry by hand")
        node = child
    key = keys[-1]
    servers = node.get(key)
    if isinstance(servers, dict) or not create:
        return (servers if isinstance(servers, dict) else None), None
    note = f'"{key}" held {jsonfile.kind_of(servers)}, not an object; it was replaced' if key in node else None
    node[key] = {}
    return node[key], note


def _ours_for(client: Client, name: str, entry: Any, project: Path, global_file: bool) -> bool:
    """Whether ``entry`` (called ``name``) is code-trajectory's entry for ``project`` in ``client``'s file
    (``global_file``: a file serving every project, where only the entry naming ``project`` is ours)."""
    entry = client.as_stdio(entry)
    if not is_our_server(entry):
        return False
    served = server_project(entry)
    if served is not None and same_path(served, project):
        return True
    return not global_file and name == client.entry_name(project)


def _describe(client: Client, entry: Any) -> str:
    argv = server_argv(client.as_stdio(entry))
    return shell_command(argv) if argv else "an entry that is not a stdio command"


@dataclass(frozen=True)
class _Target:
    """Where an install goes: the servers file and the key path to its servers object, the executable, what
    follows ``--project`` (None: nothing), whether the servers file is shared, the client's hooks (None: it has no
    hook mechanism), their settings file and the executable they run (by name in a shared settings file)."""

    path: Path
    keys: tuple[str, ...]
    argv: list[str]
    project_arg: Path | str | None
    shared: bool
    global_file: bool = False
    kept: bool = False
    hook_set: _hooks.HookSet | None = None
    settings: Path | None = None
    hook_argv: tuple[str, ...] = ()


def _target(client: Client, root: Path, exe: Exe | None, local: bool, env: Mapping[str, str] | None,
            platform: str | None) -> _Target:
    env_ = os.environ if env is None else env
    plat = platform or sys.platform
    here = exe_argv(exe if exe is not None else default_exe())  # this machine's paths, for per-user files
    project_arg: Path | str | None
    if local:
        local_config = getattr(client, "local_config", None)
        found = local_config(root, env_, plat) if local_config is not None else None
        if found is None:
            raise InvalidArgumentError(f"--local applies to claude-code, codex and zed only, not {client.name}; drop --local "
                                       f"({client.name}'s file is {'per-user already' if not getattr(client, 'shared', True) else 'shared'})")
        path, keys, argv, project_arg, shared = found[0], tuple(found[1]), here, root, False
        global_file = bool(getattr(client, "local_is_global", False))
    elif not getattr(client, "shared", True):  # a per-user file: this machine's paths
        path, keys, argv, project_arg, shared = client.config_path(root, env_, plat), (client.servers_key,), here, \
            root, False
        global_file = client.global_config
    else:
        path, keys, argv, shared = client.config_path(root, env_, plat), (client.servers_key,), \
            exe_argv(exe if exe is not None else [SHARED_EXE]), True
        project_arg = getattr(client, "project_arg", None)
        global_file = client.global_config
    hook_set = _hooks.HOOK_SETS.get(client.name)  # hooks go to the project's settings: shared unless --local
    hook_argv = here if local else exe_argv(exe if exe is not None else [SHARED_EXE])
    kept = local and bool(getattr(client, "local_file_kept", False))
    return _Target(path, keys, argv, project_arg, shared, global_file, kept, hook_set,
                   hook_set.path(root, local=local) if hook_set is not None else None, tuple(hook_argv))


def _path_warning(client: Client, shared: bool, exe: Exe | None) -> str | None:
    """What to do when a shared file's ``code-trajectory`` is not on this machine's ``PATH``, or None."""
    if not shared or exe is not None or on_path() is not None:
        return None
    here = default_exe()
    # what runs here, as typed: `code-trajectory` itself is not on PATH
    local = f" or run `{shell_command([*exe_argv(here), 'install', 'claude-code', '--local'])}` to use it from " \
            "this machine's per-user settings only" if client.name == "claude-code" else ""
    # the distribution's name, never the command's: `pipx install code-trajectory` would fetch another project
    return (f"`{SHARED_EXE}` is not on PATH, so {client.title} cannot start what the shared file names: put it "
            f"on PATH for everyone who uses the project (`pipx install {DISTRIBUTION}` or `uv tool install "
            f"{DISTRIBUTION}`, or from a clone of its repository; here: link {shell_command(here)} into a "
            f"directory on PATH){local}")


def _write(client: Client | None, path: Path, mutate: Any, *, dry_run: bool,
           now: _dt.datetime | None) -> jsonfile.Edit:
    """:func:`_edit` for install (``client`` None: a JSON settings file), noting the previous bytes in the ledger when the file is written."""
    before = ledger.read_bytes(path)
    made = ledger.missing_dirs(path)
    result = _edit(client, path, mutate, dry_run=dry_run, now=now)
    if not dry_run and result.action in ("created", "updated"):
        after = ledger.read_bytes(path)
        if after is not None:
            ledger.note_write(path, before, after, made, result.backup)
    return result


def install(client_name: str, project: str | os.PathLike[str] | None = None, *, exe: Exe | None = None,
            hooks: bool = False, local: bool = False, dry_run: bool = False, env: Mapping[str, str] | None = None,
            platform: str | None = None, now: _dt.datetime | None = None) -> list[Change]:
    """Write code-trajectory's server entry for ``project`` into ``client_name``'s config file.

    Args:
        client_name: a name from :data:`code_trajectory.clients.registry.CLIENTS`.
        project: the project directory (default: the current directory); resolved to absolute.
        exe: the command that starts code-trajectory, as one path or an argument list (default:
            ``code-trajectory`` by name in shared files, :func:`code_trajectory.clients.base.default_exe`
            in per-user ones).
        hooks: also merge the client's hooks into its project settings (:data:`.hooks.HOOK_SETS`: claude-code's
            ``.claude/settings.json``, ``.claude/settings.local.json`` with ``local``; gemini's
            ``.gemini/settings.json``, the file of its servers; codex's ``.codex/hooks.json``).
        local: write this machine's set-up to the client's per-user place for this project instead of the
            shared files (claude-code: local scope in ``~/.claude.json``; zed: the user's ``settings.json``).
        dry_run: compute the changes and their diffs, write nothing.
        env: the environment used to locate per-user files (default ``os.environ``).
        platform: a ``sys.platform`` value (default: this one).
        now: the time used in backup names (default: now).

    Returns:
        One :class:`Change` per file: the client's config, then the hooks' settings when ``hooks`` (one Change
        when both are the same file).

    Raises:
        InvalidArgumentError: unknown client, missing project, ``hooks`` or ``local`` for another client, or a
            foreign server already holding every name we could use.
        ProjectError: the project is a directory that is never recorded (the home directory, our own storage:
            :func:`code_trajectory.project.check_recordable`), so the server entry could never start.
        TrajectoryError: a file cannot be read, backed up or written.
    """
    client, root, _ = _context(client_name, project, env, platform)
    check_recordable(root, creating=False)  # the entry's server would refuse it
    target = _target(client, root, exe, local, env, platform)
    if hooks and target.hook_set is None:
        raise InvalidArgumentError(f"--hooks applies to {', '.join(_hooks.HOOK_SETS)} only, not {client.name} "
                                   "(it has no hook mechanism); drop --hooks")
    if hooks and local and target.hook_set is not None and target.hook_set.local_file is None:
        raise InvalidArgumentError(f"{client.title} keeps hooks only in the project's shared "
                                   f"{'/'.join(target.hook_set.shared_file)}, which names no machine path: run "
                                   f"install {client.name} --hooks without --local (code-trajectory on PATH)")
    path = target.path
    check_project_files(root, path, target.settings if hooks else None)  # no write through a link out of it
    wanted = client.entry(target.argv, target.project_arg)
    chosen: list[str] = []

    def mutate(data: dict[str, Any]) -> str | None:
        servers, note = _servers_of(client, data, target.keys)
        assert servers is not None
        name = next((n for n, e in servers.items() if _ours_for(client, n, e, root, target.global_file)), None)
        if name is None:
            candidates = [client.entry_name(root), *client.alternate_names(root, target.global_file)]
            name = next((n for n in candidates if n not in servers), None)
            if name is None:
                taken = candidates[0]
                raise InvalidArgumentError(
                    f"{path} already has a server named {taken!r} that runs {_describe(client, servers[taken])}, "
                    f"not code-trajectory; rename or remove that entry, then run install again")
        chosen[:] = [name]  # a mutate runs again when the file changed meanwhile (jsonfile.edit)
        entry = client.named(wanted, name)
        old = servers.get(name)
        if isinstance(old, Mapping):  # our entry already: the user's own keys in it stay
            entry = {**entry, **{k: v for k, v in old.items() if k not in START_KEYS}}
        if old != entry:
            servers[name] = entry
        return note

    def add_hooks(data: dict[str, Any]) -> str | None:
        assert target.hook_set is not None
        return _hooks.merge(data, list(target.hook_argv), hook_set=target.hook_set)

    together = hooks and target.settings == path  # gemini: servers and hooks in one settings file

    def both(data: dict[str, Any]) -> str | None:
        return "; ".join(n for n in (mutate(data), add_hooks(data)) if n) or None

    warning = _path_warning(client, target.shared or (hooks and not local), exe)
    setup = SetupRecorder(root, f"install {client.name}", enabled=not dry_run)
    changes: list[Change] = []
    try:
        result = _write(client, path, both if together else mutate, dry_run=dry_run, now=now)
        what = f'server "{chosen[0]}"' + (" and hooks" if together else "")
        changes.append(change_of(client.name, root, result, what, warning=warning))
        if hooks and not together:
            assert target.settings is not None
            result = _write(None, target.settings, add_hooks, dry_run=dry_run, now=now)
            changes.append(change_of(client.name, root, result, "hooks"))
    finally:
        _label(setup, changes)
    notice = below_top(root, [ch.path for ch in changes])
    return [replace(ch, local=local, notice=notice if i == 0 else None) for i, ch in enumerate(changes)]


def _label(setup: SetupRecorder, changes: list[Change]) -> None:
    """Record the files ``changes`` wrote as set-up (:class:`SetupRecorder`), and close it."""
    written = [ch.path for ch in changes if not ch.dry_run and ch.action in ("created", "updated", "removed")]
    note = setup.record(written)
    if note:
        log.info(note)


def uninstall(client_name: str, project: str | os.PathLike[str] | None = None, *, local: bool = False,
              dry_run: bool = False, env: Mapping[str, str] | None = None, platform: str | None = None,
              now: _dt.datetime | None = None) -> list[Change]:
    """Remove code-trajectory's entry for ``project`` from ``client_name``'s config file, exactly.

    Only entries that are ours (see the module docstring) are removed; everything else, including a
    foreign server named ``code-trajectory``, is kept. When what is left is what the file held before
    install (the :mod:`~code_trajectory.clients.ledger` keeps those bytes), the file gets its previous bytes
    back; a file install created (or, with no record, one left holding nothing but empty objects) is
    deleted, with the directories install created for it. A file that cannot be parsed is left untouched
    (``unchanged`` with a note). For a client with hooks (claude-code, gemini, codex), our hooks are removed from
    its hooks settings file too (``.claude/settings.local.json`` with ``local``); that file is only touched when
    it exists.

    Args and raises: as :func:`install` (without ``exe`` and ``hooks``).

    Returns:
        One :class:`Change` per file looked at: ``removed``, ``absent`` or ``unchanged``.
    """
    client, root, _ = _context(client_name, project, env, platform)
    target = _target(client, root, None, local, env, platform)
    check_project_files(root, target.path, target.settings)
    removed: list[str] = []
    had = ledger.document_before(target.path) if client.file_format == "json" else None

    def mutate(data: Any) -> None:
        removed.clear()  # a mutate runs again when the file changed meanwhile (jsonfile.edit)
        servers, _note = _servers_of(client, data, target.keys, create=False)
        if servers is not None:
            for name in [n for n, e in servers.items() if _ours_for(client, n, e, root, target.global_file)]:
                del servers[name]
                removed.append(name)
            key = target.keys[0]
            if removed and not servers and len(target.keys) == 1 and had is not None and key not in had:
                del data[key]  # the servers' object install added goes with our entry

    def emptied(data: Any) -> bool:  # a file that is all ours (Continue's block file) goes once it serves nothing
        return client.owns_file and bool(removed) and not client.servers(data)[0]

    together = target.settings == target.path  # gemini: servers and hooks in one settings file
    hooks_removed: list[str] = []

    def both(data: Any) -> None:
        mutate(data)
        hooks_removed[:] = _hooks.remove(data, ledger.document_before(target.path))

    setup = SetupRecorder(root, f"uninstall {client.name}", enabled=not dry_run)
    changes: list[Change] = []
    hook_changes: list[Change] = []
    try:
        # the hooks' file first: a directory both files live in (.codex/) goes with the server's file, the first made
        if target.settings is not None and not together and target.settings.exists():
            had = ledger.document_before(target.settings)

            def remove_hooks(data: Any) -> None:  # (a mutator's answer is a note worth a backup: none here)
                _hooks.remove(data, had)

            result = _undo(None, target.settings, remove_hooks, dry_run=dry_run, now=now, shared_file=True)
            hook_changes.append(change_of(client.name, root, result, "hooks", removal=True))
        result = _undo(client, target.path, both if together else mutate, dry_run=dry_run, now=now,
                       shared_file=not target.kept, remove_if=emptied)
        what = ", ".join(f'server "{n}"' for n in removed) or f'server "{client.entry_name(root)}"'
        changes.append(change_of(client.name, root, result, what + (" and hooks" if hooks_removed else ""),
                               removal=True))
        changes.extend(hook_changes)
    finally:
        _label(setup, [*changes, *hook_changes])  # (a path twice is recorded once)
    return [replace(ch, local=local) for ch in changes]


def _undo(client: Client | None, path: Path, mutate: Any, *, dry_run: bool, now: _dt.datetime | None,
          shared_file: bool, remove_if: Any = None) -> jsonfile.Edit:
    """``jsonfile.edit`` for uninstall with the ledger's previous bytes; a deleted file takes the directories
    install made for it along. ``shared_file`` False (``~/.claude.json``): never deleted, only restored."""
    entry = ledger.get(path)
    previous = entry.before if entry is not None else None
    if not shared_file and previous is None:
        previous = jsonfile.UNKNOWN
    if client is not None and client.file_format != "json" and previous is None:
        # a TOML/YAML file install created goes once nothing but empty tables is left (JSON: jsonfile.edit does it)
        ours_alone = remove_if

        def remove_if(data: Any) -> bool:
            return bool(ours_alone and ours_alone(data)) or jsonfile.hollow(data)

    result = _edit(client, path, mutate, dry_run=dry_run, replace_unreadable=False, now=now, previous=previous,
                   remove_if=remove_if, as_installed=ledger.as_installed(path, entry))
    if not dry_run and result.action in ("updated", "deleted"):
        if result.action == "deleted" or (previous is None and not path.exists()):
            ledger.remove_dirs(path, entry)
        elif entry is not None and ledger.read_bytes(path) == entry.before:
            ledger.remove_backups(path, entry)
        ledger.forget(path)
    return result
