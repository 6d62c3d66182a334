"""Install and uninstall code-trajectory's MCP server entry in a client's config file.

``install("cursor", project)`` writes, into ``<project>/.cursor/mcp.json``::

    {"mcpServers": {"code-trajectory": {"command": "<abs exe>", "args": ["serve", "--project", "<abs P>"]}}}

keeping every other key and server, in order. A second identical install writes nothing
(``unchanged``); a changed executable path updates the entry in place (``updated``). The file
rules (backups of anything a rewrite would lose, atomic writes, dry-run diffs) are those of
:mod:`code_trajectory.clients.jsonfile`; the per-client formats and their documentation sources are
in the client modules (:mod:`~code_trajectory.clients.claude_code`, ...).

Which entry is ours: one whose command line runs ``code-trajectory serve`` (any path to the
executable, or ``python -m code_trajectory``) and, in a per-project file, is named
``code-trajectory`` or serves this project; in claude-desktop's global file, one that serves this
project (``--project`` names the same directory). A foreign server called ``code-trajectory`` is
never replaced nor removed: install refuses and says what to do.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_trajectory.clients import docfile, jsonfile
from code_trajectory.clients import hooks as _hooks
from code_trajectory.clients.base import (
    Client,
    Exe,
    default_exe,
    exe_argv,
    is_our_server,
    same_path,
    server_argv,
    server_project,
    shell_command,
)
from code_trajectory.clients.registry import client as _client
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.project import check_recordable

ACTIONS = ("created", "updated", "unchanged", "removed", "absent")


@dataclass(frozen=True)
class Change:
    """What install or uninstall did (or, in a dry run, would do) to one file.

    Attributes:
        client: the client name (``claude-code``...).
        path: the config file.
        action: ``created`` | ``updated`` | ``unchanged`` | ``removed`` | ``absent`` (nothing of ours
            was there to remove, or no file).
        backup: the copy of the previous content made before rewriting it, or None.
        diff: unified diff of the change (``""`` when nothing changed).
        what: what the change is about: ``server "code-trajectory"`` or ``hooks``.
        note: a reason worth telling (why a backup was made, why a file was left alone), or None.
        dry_run: True when nothing was written on purpose.
        project: the project the entry is for.
    """

    client: str
    path: Path
    action: str
    backup: Path | None
    diff: str
    what: str
    note: str | None = None
    dry_run: bool = False
    project: Path | None = None


def resolve_project(project: str | os.PathLike[str] | None) -> Path:
    """``project`` (default: the current directory) as an absolute, resolved directory.

    Raises:
        InvalidArgumentError: it does not exist or is not a directory.
    """
    raw = Path(os.path.expanduser(os.fspath(project))) if project not in (None, "") else Path.cwd()
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


def _edit(client: Client, path: Path, mutate: Any, **kw: Any) -> jsonfile.Edit:
    """Edit ``path`` with the editor of ``client.file_format`` (:mod:`.jsonfile` or :mod:`.docfile`)."""
    if client.file_format == "json":
        kw.pop("remove_if", None)
        return jsonfile.edit(path, mutate, **kw)
    return docfile.edit(path, docfile.FORMATS[client.file_format], mutate, **kw)


def _ours_for(client: Client, name: str, entry: Any, project: Path) -> bool:
    """Whether ``entry`` (called ``name``) is code-trajectory's entry for ``project`` in ``client``'s file."""
    entry = client.as_stdio(entry)
    if not is_our_server(entry):
        return False
    served = server_project(entry)
    if served is not None and same_path(served, project):
        return True
    return not client.global_config and name == client.entry_name(project)


def _describe(client: Client, entry: Any) -> str:
    argv = server_argv(client.as_stdio(entry))
    return shell_command(argv) if argv else "an entry that is not a stdio command"


def install(client_name: str, project: str | os.PathLike[str] | None = None, *, exe: Exe | None = None,
            hooks: bool = False, dry_run: bool = False, env: Mapping[str, str] | None = None,
            platform: str | None = None, now: _dt.datetime | None = None) -> list[Change]:
    """Write code-trajectory's server entry for ``project`` into ``client_name``'s config file.

    Args:
        client_name: a name from :data:`code_trajectory.clients.registry.CLIENTS`.
        project: the project directory (default: the current directory); resolved to absolute.
        exe: the command that starts code-trajectory, as one path or an argument list
            (default: :func:`code_trajectory.clients.base.default_exe`).
        hooks: also merge the Claude Code hooks into ``.claude/settings.json`` (claude-code only).
        dry_run: compute the changes and their diffs, write nothing.
        env: the environment used to locate per-user files (default ``os.environ``).
        platform: a ``sys.platform`` value (default: this one).
        now: the time used in backup names (default: now).

    Returns:
        One :class:`Change` per file: the client's config, then the settings when ``hooks``.

    Raises:
        InvalidArgumentError: unknown client, missing project, ``hooks`` for another client, or a
            foreign server already holding every name we could use.
        ProjectError: the project is a directory that is never recorded (the home directory, our own storage:
            :func:`code_trajectory.project.check_recordable`), so the server entry could never start.
        TrajectoryError: a file cannot be read, backed up or written.
    """
    client, root, path = _context(client_name, project, env, platform)
    check_recordable(root, creating=False)  # the entry runs `serve --project <root>`, which would refuse it
    if hooks and client.name != "claude-code":
        raise InvalidArgumentError(f"--hooks applies to claude-code only, not {client.name}; drop --hooks")
    argv = exe_argv(exe if exe is not None else default_exe())
    wanted = client.entry(argv, root)
    chosen: list[str] = []

    def mutate(data: dict[str, Any]) -> str | None:
        servers, note = client.servers(data)
        name = next((n for n, e in servers.items() if _ours_for(client, n, e, root)), None)
        if name is None:
            candidates = [client.entry_name(root), *client.alternate_names(root)]
            name = next((n for n in candidates if n not in servers), None)
            if name is None:
                taken = candidates[0]
                raise InvalidArgumentError(
                    f"{path} already has a server named {taken!r} that runs {_describe(client, servers[taken])}, "
                    f"not code-trajectory; rename or remove that entry, then run install again")
        chosen.append(name)
        entry = client.named(wanted, name)
        if servers.get(name) != entry:
            servers[name] = entry
        return note

    result = _edit(client, path, mutate, dry_run=dry_run, now=now)
    changes = [_change(client.name, root, result, f'server "{chosen[0]}"')]
    if hooks:
        result = jsonfile.edit(_hooks.settings_path(root), lambda s: _hooks.merge(s, argv, root),
                               dry_run=dry_run, now=now)
        changes.append(_change(client.name, root, result, "hooks"))
    return changes


def uninstall(client_name: str, project: str | os.PathLike[str] | None = None, *, dry_run: bool = False,
              env: Mapping[str, str] | None = None, platform: str | None = None,
              now: _dt.datetime | None = None) -> list[Change]:
    """Remove code-trajectory's entry for ``project`` from ``client_name``'s config file.

    Only entries that are ours (see the module docstring) are removed; everything else, including a
    foreign server named ``code-trajectory``, is kept. A file that cannot be parsed is left
    untouched (``unchanged`` with a note). For claude-code, our hooks are removed from
    ``.claude/settings.json`` too (the file is only touched when it holds some).

    Args and raises: as :func:`install` (without ``exe`` and ``hooks``).

    Returns:
        One :class:`Change` per file looked at: ``removed``, ``absent`` or ``unchanged``.
    """
    client, root, path = _context(client_name, project, env, platform)
    removed: list[str] = []

    def mutate(data: Any) -> None:
        if not isinstance(data.get(client.servers_key), (Mapping, list)):
            return
        servers, _ = client.servers(data)
        for name in [n for n, e in servers.items() if _ours_for(client, n, e, root)]:
            del servers[name]
            removed.append(name)

    def emptied(data: Any) -> bool:  # a file that is all ours (Continue's block file) goes once it serves nothing
        return client.owns_file and bool(removed) and not client.servers(data)[0]

    result = _edit(client, path, mutate, dry_run=dry_run, replace_unreadable=False, remove_if=emptied, now=now)
    what = ", ".join(f'server "{n}"' for n in removed) or f'server "{client.entry_name(root)}"'
    changes = [_change(client.name, root, result, what, removal=True)]
    if client.name == "claude-code":
        settings = _hooks.settings_path(root)
        if settings.exists():
            result = jsonfile.edit(settings, _remove_hooks, dry_run=dry_run, replace_unreadable=False, now=now)
            changes.append(_change(client.name, root, result, "hooks", removal=True))
    return changes


def _remove_hooks(settings: dict[str, Any]) -> None:
    _hooks.remove(settings)


def _change(client: str, project: Path, edit: jsonfile.Edit, what: str, *, removal: bool = False) -> Change:
    """A :class:`Change` from an :class:`~code_trajectory.clients.jsonfile.Edit`.

    For a removal, ``updated`` becomes ``removed``; ``unchanged`` stays when the file was left alone
    because it could not be parsed (the note says so), and otherwise becomes ``absent``.
    """
    action = edit.action
    if removal:
        if action == "updated":
            action = "removed"
        elif not (action == "unchanged" and edit.backup_reason):
            action = "absent"
    return Change(client=client, path=edit.path, action=action, backup=edit.backup, diff=edit.diff, what=what,
                  note=edit.backup_reason, dry_run=edit.dry_run, project=project)


_VERBS = {"created": ("created", "would create"), "updated": ("updated", "would update"),
          "removed": ("removed", "would remove")}


def render(changes: list[Change], *, show_diff: bool | None = None) -> str:
    """Short human text for ``changes``: what changed where, how to undo it, and the diff in a dry run.

    Args:
        changes: from :func:`install` or :func:`uninstall`.
        show_diff: include each diff (default: in a dry run only).
    """
    from code_trajectory.clients.registry import CLIENTS

    lines: list[str] = []
    installed = False
    for ch in changes:
        subject = f"{ch.client} {ch.what}"
        if ch.action in _VERBS:
            verb = _VERBS[ch.action][1 if ch.dry_run else 0]
            where = "from" if ch.action == "removed" else "in"
            lines.append(f"{subject}: {verb} {where} {ch.path}")
            installed = installed or ch.action != "removed"
        elif ch.action == "unchanged" and ch.note:
            lines.append(f"{subject}: nothing done: {ch.note}")
        elif ch.action == "unchanged":
            lines.append(f"{subject}: already installed in {ch.path} (nothing written)")
        else:
            lines.append(f"{subject}: not found in {ch.path} (nothing to remove)")
        if ch.backup is not None:
            lines.append(f"  backup of the previous file: {ch.backup} ({ch.note})")
        elif ch.dry_run and ch.note and ch.action in _VERBS:
            lines.append(f"  would back up the previous file first: {ch.note}")
        if (show_diff if show_diff is not None else ch.dry_run) and ch.diff:
            lines.append(ch.diff.rstrip("\n"))
    if changes and any(ch.dry_run for ch in changes):
        lines.append("dry run: nothing written")
    elif installed:
        client = CLIENTS.get(changes[0].client)
        if client is not None and client.hint:
            lines.append(client.hint)
        project = changes[0].project
        where = f" --project {shell_command([str(project)])}" if project is not None else ""
        lines.append(f"to undo: code-trajectory uninstall {changes[0].client}{where}")
    return "\n".join(lines)
