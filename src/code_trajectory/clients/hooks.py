"""Claude Code hooks: merge code-trajectory's three hooks into ``<project>/.claude/settings.json``.

Shape, as verified against Claude Code's hooks reference (docs corpus, 2026: "Hooks reference",
https://docs.anthropic.com/en/docs/claude-code/hooks and its translations at
https://docs.claude.com/de/docs/claude-code/hooks and others):

- project settings live in ``.claude/settings.json`` (beside the user's ``~/.claude/settings.json``
  and the uncommitted ``.claude/settings.local.json``); hooks of every settings file all run;
- Claude Code sets ``CLAUDE_PROJECT_DIR`` (the project's absolute path) for hook commands, which run
  in a shell: ``"$CLAUDE_PROJECT_DIR"`` names the project without writing a machine path;
- ``{"hooks": {"<Event>": [{"matcher": "<regex>", "hooks": [{"type": "command", "command": "<shell
  command>", "timeout": <seconds>}]}]}}``; ``matcher`` is a case-sensitive tool-name pattern that
  applies to ``PreToolUse``/``PostToolUse`` and "supports regex" such as ``Edit|Write``; events
  without matchers (``UserPromptSubmit``, ``Stop``) may omit it; ``timeout`` is optional, in seconds;
- several hooks on one event all run (so a user's own hooks are kept beside ours).

The hooks written (the ``hook`` subcommand is code-trajectory's; commands are POSIX-shell quoted):

==================  ============================================  ==========================================
event               matcher                                       command
==================  ============================================  ==========================================
UserPromptSubmit    (none)                                        ``<exe> hook prompt --project "$CLAUDE_PROJECT_DIR"``
PostToolUse         ``Edit|Write|MultiEdit|NotebookEdit``         ``<exe> hook edit --project "$CLAUDE_PROJECT_DIR"``
Stop                (none)                                        ``<exe> hook stop --project "$CLAUDE_PROJECT_DIR"``
==================  ============================================  ==========================================

``<exe>`` is ``code-trajectory`` by name in the shared ``.claude/settings.json``; ``install --local``
writes the hooks into ``.claude/settings.local.json`` with this machine's absolute executable instead.
The hook finds the project from that directory as every command does (its git top level, see
:func:`code_trajectory.project.find_project_root`), so a worktree or a clone records itself.

A hook is recognised as ours by its command (``code-trajectory hook prompt|edit|stop``, whatever the
executable's path), so a reinstall after the executable moved updates it in place, and uninstall
removes exactly those hooks, plus matcher groups and events left empty by the removal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import Exe, our_hook_kind, shell_command
from code_trajectory.clients.jsonfile import kind_of


@dataclass(frozen=True)
class HookSpec:
    """One hook to install: the event, its matcher (None: no matcher), the subcommand and timeout."""

    event: str
    matcher: str | None
    kind: str
    timeout: int


#: The hooks install writes, in this order.
HOOKS: tuple[HookSpec, ...] = (
    HookSpec("UserPromptSubmit", None, "prompt", 10),
    HookSpec("PostToolUse", "Edit|Write|MultiEdit|NotebookEdit", "edit", 10),
    HookSpec("Stop", None, "stop", 30),
)


#: How a hook names the project: Claude Code's variable, expanded by the shell that runs the hook.
PROJECT_WORD = '"$CLAUDE_PROJECT_DIR"'


def settings_path(project: Path, *, local: bool = False) -> Path:
    """``<project>/.claude/settings.json``, the shared project settings of Claude Code, or with ``local`` the
    user's uncommitted ``<project>/.claude/settings.local.json``."""
    return project / ".claude" / ("settings.local.json" if local else "settings.json")


def hook_command(exe: Exe, kind: str, project: Path | None = None) -> str:
    """The shell command of one hook: ``<exe> hook <kind> --project "$CLAUDE_PROJECT_DIR"`` (``exe`` quoted).

    ``project`` is accepted for compatibility and not written: the hook names no machine path.
    """
    return f"{shell_command(exe, 'hook', kind)} --project {PROJECT_WORD}"


def desired_group(spec: HookSpec, exe: Exe, project: Path | None = None) -> dict[str, Any]:
    """The matcher group holding our one hook for ``spec``."""
    group: dict[str, Any] = {"matcher": spec.matcher} if spec.matcher is not None else {}
    group["hooks"] = [{"type": "command", "command": hook_command(exe, spec.kind, project),
                       "timeout": spec.timeout}]
    return group


def _hooks_object(settings: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``settings["hooks"]``, made an object when missing; the note when a non-object was dropped."""
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        return hooks, None
    note = None if "hooks" not in settings else f'"hooks" held {kind_of(hooks)}, not an object; it was replaced'
    settings["hooks"] = {}
    return settings["hooks"], note


def _ours(group: Any, kind: str) -> list[int]:
    """Indexes of the hooks in ``group`` that are our ``kind`` hook."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return []
    return [i for i, h in enumerate(group["hooks"])
            if isinstance(h, dict) and our_hook_kind(h.get("command")) == kind]


def merge(settings: dict[str, Any], exe: Exe, project: Path | None = None) -> str | None:
    """Put our hooks into ``settings`` (in place); return a note when something had to be dropped.

    Per event: the first of our hooks of that kind is updated in place (its group's matcher is set
    to ours when the group holds only our hook); further copies of it are removed; when there is
    none, our matcher group is appended after the user's groups. Everything else is kept as is.
    """
    hooks, note = _hooks_object(settings)
    notes = [note] if note else []
    for spec in HOOKS:
        groups = hooks.get(spec.event)
        if not isinstance(groups, list):
            if spec.event in hooks:
                notes.append(f'hooks.{spec.event} held {kind_of(groups)}, not a list; it was replaced')
            hooks[spec.event] = groups = []
        wanted = desired_group(spec, exe, project)
        found = False
        for group in list(groups):
            mine = _ours(group, spec.kind)
            if not mine:
                continue
            keep = None if found else mine[0]  # mine is ascending: every other index is after keep
            for i in reversed(mine):
                if i != keep:
                    del group["hooks"][i]
            if keep is None:
                if not group["hooks"]:
                    _remove_identical(groups, group)
                continue
            found = True
            group["hooks"][keep] = wanted["hooks"][0]
            if len(group["hooks"]) == 1:
                if spec.matcher is None:
                    group.pop("matcher", None)
                else:
                    group["matcher"] = spec.matcher
        if not found:
            groups.append(wanted)
    return "; ".join(notes) or None


def remove(settings: dict[str, Any]) -> list[str]:
    """Remove our hooks from ``settings`` (in place); return the events they were removed from.

    Matcher groups and events left empty by the removal are dropped, and ``"hooks"`` itself when it
    is left empty; groups that were already empty, and every other hook, are kept.
    """
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    touched: list[str] = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        for group in list(groups):
            mine = [i for kind in {s.kind for s in HOOKS} for i in _ours(group, kind)]
            if not mine:
                continue
            for i in sorted(mine, reverse=True):
                del group["hooks"][i]
            if event not in touched:
                touched.append(event)
            if not group["hooks"]:
                _remove_identical(groups, group)
        if event in touched and not groups:
            del hooks[event]
    if touched and not hooks:
        del settings["hooks"]
    return touched


def _remove_identical(items: list[Any], item: Any) -> None:
    """Remove ``item`` itself from ``items`` (not the first element equal to it)."""
    for i, candidate in enumerate(items):
        if candidate is item:
            del items[i]
            return
