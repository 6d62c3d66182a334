"""Claude Code hooks: merge code-trajectory's three hooks into ``<project>/.claude/settings.json``.

Shape, as verified against Claude Code's hooks reference (docs corpus, 2026: "Hooks reference",
https://docs.anthropic.com/en/docs/claude-code/hooks and its translations at
https://docs.claude.com/de/docs/claude-code/hooks and others):

- project settings live in ``.claude/settings.json`` (beside the user's ``~/.claude/settings.json``
  and the uncommitted ``.claude/settings.local.json``);
- ``{"hooks": {"<Event>": [{"matcher": "<regex>", "hooks": [{"type": "command", "command": "<shell
  command>", "timeout": <seconds>}]}]}}``; ``matcher`` is a case-sensitive tool-name pattern that
  applies to ``PreToolUse``/``PostToolUse`` and "supports regex" such as ``Edit|Write``; events
  without matchers (``UserPromptSubmit``, ``Stop``) may omit it; ``timeout`` is optional, in seconds;
- several hooks on one event all run (so a user's own hooks are kept beside ours).

The hooks written (the ``hook`` subcommand is code-trajectory's; commands are POSIX-shell quoted):

==================  ============================================  ==========================================
event               matcher                                       command
==================  ============================================  ==========================================
UserPromptSubmit    (none)                                        ``<exe> hook prompt --project <P>``
PostToolUse         ``Edit|Write|MultiEdit|NotebookEdit``         ``<exe> hook edit --project <P>``
Stop                (none)                                        ``<exe> hook stop --project <P>``
==================  ============================================  ==========================================

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


def settings_path(project: Path) -> Path:
    """``<project>/.claude/settings.json``, the shared project settings of Claude Code."""
    return project / ".claude" / "settings.json"


def hook_command(exe: Exe, kind: str, project: Path) -> str:
    """The shell command of one hook: ``<exe> hook <kind> --project <project>``, quoted."""
    return shell_command(exe, "hook", kind, "--project", str(project))


def desired_group(spec: HookSpec, exe: Exe, project: Path) -> dict[str, Any]:
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


def merge(settings: dict[str, Any], exe: Exe, project: Path) -> str | None:
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
