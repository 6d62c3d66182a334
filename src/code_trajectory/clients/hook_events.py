"""``code-trajectory hook prompt|edit|stop``: what Claude Code's hooks run (see :mod:`.hooks` for their set-up).

Claude Code writes the event's JSON on the hook's stdin (Claude Code hooks reference: ``session_id``, ``cwd``,
``hook_event_name``; ``prompt`` for ``UserPromptSubmit``; ``tool_name`` and ``tool_input`` for ``PostToolUse``):

* ``prompt`` (UserPromptSubmit): the prompt's first line (at most 200 characters, secrets redacted) becomes the
  current intent, on disk, where the server, the CLI and the next snapshots read it; it belongs to the session
  (``session_id``): the hooks of another session do not carry it, and the next server start ends it;
* ``edit`` (PostToolUse for Edit, Write, MultiEdit, NotebookEdit): the edited file is snapshotted at once, with
  ``Trajectory-Origin: claude-code; tool=<tool>; session=<id>``; a path outside the project is ignored;
* ``stop`` (Stop): the end of the turn names a checkpoint after the intent; when no watcher or server records the
  project, a full scan first records what other tools (a shell command) changed.

A hook never fails the agent: it always exits 0 and says what went wrong on stderr. It imports neither the MCP SDK
nor the watcher, and an edit costs one O(changed) snapshot, so it adds little to the agent's turn.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from code_trajectory.project import add_project_option

EVENTS = ("prompt", "edit", "stop")
#: Tools whose PostToolUse snapshots the file they edited, and the tool_input key naming it.
EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
#: Longest intent taken from a prompt, characters (as set_trajectory_intent).
MAX_INTENT_CHARS = 200
#: Secrets in a prompt, replaced by ``[redacted]`` before it becomes an intent: assignments to secret-named keys
#: (the deny list's credentials: passwords, tokens, API keys) and the token formats of common providers (as
#: published by AWS, GitHub, Slack, Stripe, OpenAI/Anthropic and in PEM headers).
SECRET_PATTERNS: tuple[tuple[str, int], ...] = (
    (r"(?i)\b([\w.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|credential)s?[\w.-]*)"
     r"(\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|\S+)", 0),
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
    (r"\bgh[pousr]_[A-Za-z0-9]{20,}\b", 0),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", 0),
    (r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}\b", 0),
    (r"\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}\b", 0),
    (r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
    (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:[^\s@/]+@", 0),  # credentials in a URL
)


def redact(text: str) -> str:
    """``text`` with secrets replaced by ``[redacted]`` (see :data:`SECRET_PATTERNS`; compiled on first use, so an
    edit or stop hook does not pay for them)."""
    for source, flags in SECRET_PATTERNS:
        pattern = re.compile(source, flags)  # re caches compiled patterns
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
        else:
            text = pattern.sub("[redacted]", text)
    return text


def intent_from_prompt(prompt: str) -> str | None:
    """The intent a prompt gives: its first non-empty line, secrets redacted, at most 200 characters."""
    line = next((line.strip() for line in redact(prompt).splitlines() if line.strip()), "")
    if not line:
        return None
    return line if len(line) <= MAX_INTENT_CHARS else line[:MAX_INTENT_CHARS - 1].rstrip() + "…"


def hook_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("event", choices=EVENTS, help="the Claude Code hook event: prompt, edit or stop")
    add_project_option(parser)


def hook(args: argparse.Namespace) -> int:
    """Handle one hook event from Claude Code (JSON on stdin); always exits 0, problems go to stderr."""
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        message = handle(args.event, payload, args.project)
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the agent
        message = f"skipped: {exc}"
    if message:
        print(f"code-trajectory hook {args.event}: {message}", file=sys.stderr)
    return 0


def _project(option: str | None, payload: dict) -> Path:
    from code_trajectory.project import find_project_root

    start = option or payload.get("cwd") or "."
    return find_project_root(start)


def handle(event: str, payload: dict, project: str | None) -> str | None:
    """Do what ``event`` asks for the project; return a note for stderr, or None when all went well.

    Raises:
        TrajectoryError, ValueError: the event cannot be handled (the caller reports it and exits 0).
    """
    root = _project(project, payload)
    if event == "prompt":
        return _prompt(root, payload)
    if event == "edit":
        return _edit(root, payload)
    return _stop(root, payload)


def _prompt(root: Path, payload: dict) -> str | None:
    from code_trajectory.git.shadow import ShadowRepo
    from code_trajectory.recording.intent import IntentStore

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        return "no prompt in the hook input"
    intent = intent_from_prompt(prompt)
    if intent is None:
        return None
    repo = ShadowRepo(root)
    try:
        if not repo.exists():
            from code_trajectory.project import check_recordable

            check_recordable(root, creating=True)
            repo.ensure()
        IntentStore(repo.state_dir).set(intent, session=_session(payload) or None)
    finally:
        repo.close()
    return None


def _session(payload: dict) -> str:
    """The hook's agent session (Claude Code's ``session_id``, at most 64 characters), or ``""``."""
    return str(payload.get("session_id") or "")[:64]


def _open(root: Path, payload: dict):
    """The project's recorder, acting for the hook's agent session (an intent of another session is not carried)."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder

    recorder = Recorder.open(root, TrajectorySettings.load(root))
    recorder.agent_session = _session(payload) or None
    return recorder


def _edit(root: Path, payload: dict) -> str | None:
    from code_trajectory.core.errors import PathOutsideProjectError
    from code_trajectory.project import confine

    tool = payload.get("tool_name")
    key = EDIT_TOOLS.get(tool) if isinstance(tool, str) else None
    if key is None:
        return f"not an edit tool: {tool!r}"
    target = (payload.get("tool_input") or {}).get(key) if isinstance(payload.get("tool_input"), dict) else None
    if not isinstance(target, str) or not target:
        return f"{tool} named no file"
    try:
        rel = confine(root, target)
    except PathOutsideProjectError:
        return None  # an edit outside the project is not ours to record
    session = _session(payload)
    origin = f"claude-code; tool={tool}" + (f"; session={session}" if session else "")
    recorder = _open(root, payload)
    try:
        recorder.record_paths([rel], origin=origin)
    finally:
        recorder.close()
    return None


def _stop(root: Path, payload: dict) -> str | None:
    from datetime import datetime

    from code_trajectory.git.points import name_point
    from code_trajectory.recording.liveness import recording_now

    recorder = _open(root, payload)
    try:
        if not recording_now(recorder.repo.git_dir):
            recorder.checkpoint(None)  # no watcher: record what shell commands changed during the turn
        branch = recorder.project.current_branch()
        tip = recorder.latest_commit(branch)
        if tip is None:
            return "nothing recorded yet: no checkpoint named"
        intent = recorder.intent.get(session=recorder.agent_session)
        name = f"turn ended {datetime.now().strftime('%H:%M:%S')}" + (f": {intent}" if intent else "")
        name_point(recorder.repo, tip, name, branch)
    finally:
        recorder.close()
    return None
