"""Agent hooks: merge code-trajectory's three hooks into a client's hook settings, and take them out again.

Three clients have a hook mechanism of the same shape (``{"hooks": {"<Event>": [{"matcher": "<pattern>",
"hooks": [{"type": "command", "command": "<shell command>", "timeout": <n>}]}]}}``; several hooks on one event
all run, so a user's own hooks are kept beside ours). One :class:`HookSet` per client says where they go and
what they run; the ``hook`` subcommand (:mod:`.hook_events`) reads each client's stdin.

Claude Code (verified against its hooks reference, docs corpus 2026: "Hooks reference",
https://docs.anthropic.com/en/docs/claude-code/hooks): project settings ``.claude/settings.json`` (shared) or
``.claude/settings.local.json`` (``--local``); ``CLAUDE_PROJECT_DIR`` is set for hook commands, which run in a
shell, so ``"$CLAUDE_PROJECT_DIR"`` names the project without writing a machine path; ``matcher`` is a
regular expression over tool names; ``timeout`` in seconds.

Gemini CLI (its own docs as shipped in ``@google/gemini-cli`` 0.61, ``docs/hooks/reference.md`` and
``index.md``; https://geminicli.com/docs/hooks/): hooks live in the same ``.gemini/settings.json`` as its MCP
servers, read in a trusted folder only; events ``BeforeAgent`` (stdin ``prompt``), ``AfterTool`` (``tool_name``,
``tool_input``; the file tools are ``write_file`` and ``replace``, both with ``file_path``) and ``AfterAgent``
(end of a turn); ``matcher`` is an unanchored regular expression, so ours is anchored; ``timeout`` in
milliseconds. Gemini CLI replaces ``$GEMINI_PROJECT_DIR`` in the command text by the shell-quoted project
directory before running it, so the word is written unquoted. Exit status 2 would block the turn; the hook
always exits 0.

Codex CLI (https://developers.openai.com/codex/hooks, and ``codex-rs/config/src/hook_config.rs``,
``codex-rs/hooks/src/events/`` of https://github.com/openai/codex): hooks are read from ``hooks.json`` beside
every config layer, the project's ``.codex/hooks.json`` included (a trusted project's; Codex asks the user to
review new hooks before they run, ``/hooks``); events ``UserPromptSubmit`` (``prompt``), ``PostToolUse`` with
the tool ``apply_patch`` (``tool_input.command`` holds the patch, whose ``*** Add/Update/Delete File:`` lines
name the files) and ``Stop``; ``timeout`` in seconds. Codex sets no project variable but runs hooks in the
session's working directory, inside the project whose ``.codex/`` holds them, so ``--project .`` names it (its git
top level). Without ``--project`` a hook would act only on a project already recorded, and Codex runs the first
prompt's hook before its MCP server has recorded anything (found with the real ``codex exec``).

The hooks written (``<exe>`` is ``code-trajectory`` by name in a shared file; ``--local``: this machine's
absolute executable; commands are POSIX-shell quoted). The command is ``<exe> hook prompt|edit|stop`` plus how the
client names the project, the same for every client: the hook tells the clients apart by their tools' names.

===========  ================  ==================================================  ==========  =======================
client       prompt            edit (matcher)                                      stop        then
===========  ================  ==================================================  ==========  =======================
claude-code  UserPromptSubmit  PostToolUse ``Edit|Write|MultiEdit|NotebookEdit``   Stop        ``--project
                                                                                               "$CLAUDE_PROJECT_DIR"``
gemini       BeforeAgent       AfterTool ``^(write_file|replace)$``                AfterAgent  ``--project
                                                                                               $GEMINI_PROJECT_DIR``
codex        UserPromptSubmit  PostToolUse ``apply_patch``                         Stop        ``--project .``
===========  ================  ==================================================  ==========  =======================

A hook is recognised as ours by its command (``code-trajectory hook prompt|edit|stop``, whatever the
executable's path or options), so a reinstall after the executable moved updates it in place, and uninstall
removes exactly those hooks, plus matcher groups and events left empty by the removal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_trajectory.clients.base import HOOK_KINDS, Exe, our_hook_kind, shell_command
from code_trajectory.clients.jsonfile import kind_of


@dataclass(frozen=True)
class HookSpec:
    """One hook to install: the event, its matcher (None: no matcher), the subcommand and the timeout (in the
    client's unit: seconds for Claude Code and Codex, milliseconds for Gemini CLI)."""

    event: str
    matcher: str | None
    kind: str
    timeout: int


@dataclass(frozen=True)
class HookSet:
    """One client's hooks: the specs, where they are written, and how the command names the project.

    Attributes:
        client: the client's name (``claude-code``, ``gemini``, ``codex``).
        specs: the hooks install writes, in this order.
        shared_file: the settings file's path parts below the project (meant to be committed).
        local_file: the user's uncommitted settings file below the project for ``--local``, or None.
        project_word: what follows ``--project`` (the client's own variable), or None to write no ``--project``.
    """

    client: str
    specs: tuple[HookSpec, ...]
    shared_file: tuple[str, ...]
    local_file: tuple[str, ...] | None
    project_word: str | None

    def path(self, project: Path, *, local: bool = False) -> Path:
        """The settings file for ``project`` (``local``: the uncommitted one; the shared one when there is none)."""
        return project.joinpath(*(self.local_file if local and self.local_file else self.shared_file))

    def command(self, exe: Exe, kind: str) -> str:
        """The shell command of one hook: ``<exe> hook <kind> [--project <word>]`` (``exe`` quoted); the same for
        every client (the hook tells them apart by their tools' names)."""
        project = f" --project {self.project_word}" if self.project_word else ""
        return shell_command(exe, "hook", kind) + project

    def group(self, spec: HookSpec, exe: Exe) -> dict[str, Any]:
        """The matcher group holding our one hook for ``spec``."""
        group: dict[str, Any] = {"matcher": spec.matcher} if spec.matcher is not None else {}
        group["hooks"] = [{"type": "command", "command": self.command(exe, spec.kind), "timeout": spec.timeout}]
        return group


#: How a Claude Code hook names the project: its variable, expanded by the shell that runs the hook.
PROJECT_WORD = '"$CLAUDE_PROJECT_DIR"'
#: Claude Code's hooks (the default of every function here).
CLAUDE_CODE = HookSet("claude-code", (
    HookSpec("UserPromptSubmit", None, "prompt", 10),
    HookSpec("PostToolUse", "Edit|Write|MultiEdit|NotebookEdit", "edit", 10),
    HookSpec("Stop", None, "stop", 30),
), (".claude", "settings.json"), (".claude", "settings.local.json"), PROJECT_WORD)
#: Gemini CLI's hooks, in the project's ``.gemini/settings.json`` beside its MCP servers (timeouts in ms).
GEMINI = HookSet("gemini", (
    HookSpec("BeforeAgent", None, "prompt", 10_000),
    HookSpec("AfterTool", "^(write_file|replace)$", "edit", 10_000),
    HookSpec("AfterAgent", None, "stop", 30_000),
), (".gemini", "settings.json"), None, "$GEMINI_PROJECT_DIR")
#: Codex CLI's hooks, in the project's ``.codex/hooks.json``.
CODEX = HookSet("codex", (
    HookSpec("UserPromptSubmit", None, "prompt", 10),
    HookSpec("PostToolUse", "apply_patch", "edit", 10),
    HookSpec("Stop", None, "stop", 30),
), (".codex", "hooks.json"), None, ".")
#: Every client that takes hooks, by name.
HOOK_SETS: dict[str, HookSet] = {s.client: s for s in (CLAUDE_CODE, GEMINI, CODEX)}

#: Claude Code's hooks.
HOOKS = CLAUDE_CODE.specs


def desired_group(spec: HookSpec, exe: Exe, project: Path | None = None, hook_set: HookSet = CLAUDE_CODE
                  ) -> dict[str, Any]:
    """The matcher group holding our one hook for ``spec`` (``project`` is not written)."""
    return hook_set.group(spec, exe)


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


def merge(settings: dict[str, Any], exe: Exe, project: Path | None = None, hook_set: HookSet = CLAUDE_CODE
          ) -> str | None:
    """Put ``hook_set``'s hooks into ``settings`` (in place); return a note when something had to be dropped.

    Per event: the first of our hooks of that kind is updated in place (its group's matcher is set
    to ours when the group holds only our hook); further copies of it are removed; when there is
    none, our matcher group is appended after the user's groups. Everything else is kept as is.
    """
    hooks, note = _hooks_object(settings)
    notes = [note] if note else []
    for spec in hook_set.specs:
        groups = hooks.get(spec.event)
        if not isinstance(groups, list):
            if spec.event in hooks:
                notes.append(f'hooks.{spec.event} held {kind_of(groups)}, not a list; it was replaced')
            hooks[spec.event] = groups = []
        wanted = hook_set.group(spec, exe)
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


def remove(settings: dict[str, Any], before: Any = None) -> list[str]:
    """Remove our hooks from ``settings`` (in place); return the events they were removed from.

    Matcher groups and events left empty by the removal are dropped, and ``"hooks"`` itself when it
    is left empty; groups that were already empty, and every other hook, are kept. ``before``: the settings
    as they were before install (the ledger's), whose events (``"Stop": []``, a comment in it) and
    ``"hooks"`` stay, empty, as the user had them.
    """
    had = before.get("hooks") if isinstance(before, dict) else None
    had = had if isinstance(had, dict) else {}
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    touched: list[str] = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        for group in list(groups):
            mine = [i for kind in HOOK_KINDS for i in _ours(group, kind)]
            if not mine:
                continue
            for i in sorted(mine, reverse=True):
                del group["hooks"][i]
            if event not in touched:
                touched.append(event)
            if not group["hooks"]:
                _remove_identical(groups, group)
        if event in touched and not groups and not isinstance(had.get(event), list):
            del hooks[event]
    if touched and not hooks and not (isinstance(before, dict) and isinstance(before.get("hooks"), dict)):
        del settings["hooks"]
    return touched


def _remove_identical(items: list[Any], item: Any) -> None:
    """Remove ``item`` itself from ``items`` (not the first element equal to it)."""
    for i, candidate in enumerate(items):
        if candidate is item:
            del items[i]
            return
