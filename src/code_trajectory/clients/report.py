"""What ``install`` and ``uninstall`` did to each file (:class:`Change`), and the text they print: what changed where,
how to undo it, and the diff of a dry run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from code_trajectory.clients import jsonfile
from code_trajectory.clients.base import shell_command
from code_trajectory.project import find_project_root


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
        warning: something the user must act on for the set-up to work (``code-trajectory`` not on
            ``PATH``), or None.
        local: True when the change is to the client's per-user place (``--local``).
        notice: something worth knowing about where the set-up applies (``--project`` names a directory below
            the top of its git work tree), or None.
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
    warning: str | None = None
    local: bool = False
    notice: str | None = None


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
        if ch.warning:
            lines.append(f"  warning: {ch.warning}")
        if ch.notice:
            lines.append(f"  note: {ch.notice}")
        if (show_diff if show_diff is not None else ch.dry_run) and ch.diff:
            lines.append(ch.diff.rstrip("\n"))
    if changes and any(ch.dry_run for ch in changes):
        lines.append("dry run: nothing written")
    elif installed:
        client = CLIENTS.get(changes[0].client)
        local_hint = getattr(client, "local_hint", None) if changes[0].local else None
        if client is not None and (local_hint or client.hint):
            lines.append(local_hint or client.hint)  # --local: not the shared file's approval or trust
        project = changes[0].project
        where = f" --project {shell_command([str(project)])}" if project is not None else ""
        local = " --local" if changes[0].local else ""
        lines.append(f"to undo: code-trajectory uninstall {changes[0].client}{where}{local}")
    return "\n".join(lines)


def change_of(client: str, project: Path, edit: jsonfile.Edit, what: str, *, removal: bool = False,
            warning: str | None = None) -> Change:
    """A :class:`Change` from an :class:`~code_trajectory.clients.jsonfile.Edit`.

    For a removal, ``updated`` and ``deleted`` become ``removed``; ``unchanged`` stays when the file was left alone
    because it could not be parsed (the note says so), and otherwise becomes ``absent``.
    """
    action = edit.action
    if removal:
        if action in ("updated", "deleted"):
            action = "removed"
        elif not (action == "unchanged" and edit.backup_reason):
            action = "absent"
    return Change(client=client, path=edit.path, action=action, backup=edit.backup, diff=edit.diff, what=what,
                  note=edit.backup_reason, dry_run=edit.dry_run, project=project, warning=warning)


def below_top(root: Path, paths: list[Path]) -> str | None:
    """The note for a set-up whose project ``root`` is below the project it belongs to (the top of its git work
    tree: :func:`~code_trajectory.project.find_project_root`), when some of the written ``paths`` are in ``root``;
    else None. An explicit ``--project`` of a subdirectory (a package of a monorepo) is legitimate and done as asked,
    but a client started at the top reads the top's files, not these, and the server of a client started in
    ``root`` records the top all the same (the project ``root`` belongs to), until ``root`` has its own
    ``.trajectory/``."""
    top = find_project_root(root)
    inside = [p for p in paths if p.is_relative_to(root)]
    if top == root or not inside:
        return None
    rel = inside[0].relative_to(root).as_posix()
    return (f"{root} is inside the git work tree {top}: a client started there reads {top / rel}, not this file, "
            f"and one started here records {top} too (unless this directory has its own .trajectory/); for the "
            f"whole repository: install --project {shell_command([str(top)])}")
