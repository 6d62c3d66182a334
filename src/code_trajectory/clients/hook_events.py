"""``code-trajectory hook prompt|edit|stop``: what the installed agent hooks run (see :mod:`.hooks` for their set-up).

The client writes the event's JSON on the hook's stdin; every field is untrusted and checked. Claude Code (hooks
reference: ``session_id``, ``cwd``, ``hook_event_name``; ``prompt`` for ``UserPromptSubmit``; ``tool_name`` and
``tool_input`` for ``PostToolUse``, and its Edit's and Write's ``tool_response``, whose ``originalFile`` the
hand-over pins, see :func:`told_contents`), Gemini CLI (``BeforeAgent``, ``AfterTool``, ``AfterAgent``, the same field
names; its write_file's and replace's ``tool_response.returnDisplay.originalContent`` is pinned alike) and Codex
CLI (``UserPromptSubmit``, ``PostToolUse``, ``Stop``, the same field names) differ only in their edit tools, whose
names tell the clients apart (:data:`EDIT_TOOLS`). So the command line is the same for every client and names no
client: an older ``code-trajectory`` on a teammate's ``PATH`` runs a newer set-up's hooks without a usage error
(exit status 2, which all three clients take as "block the prompt or the turn").

* ``prompt``: the prompt's first line (at most 200 characters, secrets redacted) becomes the current intent, on
  disk, where the server, the CLI and the next snapshots read it; it belongs to the session (``session_id``): the
  hooks of another session do not carry it, and the next server start ends it;
* ``edit``: the edited files are snapshotted at once, with ``Trajectory-Origin: <client>; tool=<tool>;
  session=<id>`` (the client the tool belongs to); Claude Code's Edit, Write, MultiEdit, NotebookEdit and Gemini CLI's write_file and replace name
  one file in ``tool_input``; Codex's apply_patch gives the patch in ``tool_input.command``, whose ``*** Add File:``,
  ``*** Update File:``, ``*** Delete File:`` and ``*** Move to:`` lines name the files. A relative path is taken
  from stdin's ``cwd``; a path outside the project is ignored; a path through a symlink names its target too (the
  file the tool wrote, recorded with the edit's origin), and only its target when the link is a directory on the
  way (the recorded tree holds the link, not a file under it). The hook hands the edits over (one small file
  holding the files' content as the tool left it, see :mod:`code_trajectory.recording.handoff`) and exits: a
  watcher or server recording the project takes that snapshot, and when none does, a detached worker the hook
  starts takes it and exits (:mod:`code_trajectory.recording.edit_worker`); only the first edit of a project
  without a history, or a tool call naming more than 64 files or 1 MiB, is snapshotted by the hook itself;
* ``stop``: the end of the turn names a checkpoint after the intent holding every save made before the hook
  ran, shell commands' included: a watcher or server recording the project is asked to take it (see
  :mod:`code_trajectory.recording.checkpoint_requests`; it answers within a second), else a full scan here
  records what changed.

The project is found from ``--project`` (Claude Code's hooks say ``--project "$CLAUDE_PROJECT_DIR"``, Gemini CLI's
``--project $GEMINI_PROJECT_DIR``, which the client expands, Codex's ``--project .``, the directory it runs them
in: the directory's git top level, as every command finds it); without it (or empty, when the variable is unset),
the recorded project holding stdin's ``cwd``: a hook without ``--project`` never creates ``.trajectory/``, it does
nothing where no history exists.

A hook never fails the agent: it always exits 0, even for an event or an option it does not know (a newer set-up's;
they are ignored with a note), writes nothing on stdout (which the clients parse as JSON), and says what went wrong
on stderr. ``prompt`` and ``edit`` take a lean path (:func:`main`): no argument parser, no capabilities' handlers,
no ``typing``, no RE2 for a prompt no secret rule can match (:mod:`code_trajectory.core.secret_prefilter`), no git:
about 20 ms of a quiet machine's CPU beyond Python's own start-up, with or without a recording process
(``bench/hook.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from code_trajectory.core.paths import SHADOW_DIR_NAME

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: every hook imports this module
if TYPE_CHECKING:
    import argparse

EVENTS = ("prompt", "edit", "stop")
#: The tools whose edit hook snapshots what they edited: tool name -> (the client it belongs to, the ``tool_input``
#: key naming the file; :data:`PATCH`: the key holds a patch whose file lines name the files).
PATCH = "patch:command"
EDIT_TOOLS: dict[str, tuple[str, str]] = {
    "Edit": ("claude-code", "file_path"), "Write": ("claude-code", "file_path"),
    "MultiEdit": ("claude-code", "file_path"), "NotebookEdit": ("claude-code", "notebook_path"),
    "write_file": ("gemini", "file_path"), "replace": ("gemini", "file_path"),
    "apply_patch": ("codex", PATCH),
}
#: The file lines of a Codex patch (``codex-rs/apply-patch``'s grammar), and how much of a patch is read.
_PATCH_FILE_LINES = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
MAX_PATCH_CHARS = 4 << 20
#: Files one edit hook records at most (a patch naming more is recorded by the next stop's full scan).
MAX_EDIT_FILES = 1000
#: Characters of the first line redacted beyond the intent's length, so that a secret the cut would split is still
#: recognised whole (longer than any token format of :mod:`code_trajectory.core.secrets`); the rest is never read.
REDACT_WINDOW = 4096


def intent_from_prompt(prompt: str) -> str | None:
    """The intent a prompt gives: its first non-empty line, secrets redacted, at most 200 characters.

    Only the start of that line is redacted (:data:`REDACT_WINDOW`), so a prompt of any size costs the same.
    """
    from code_trajectory.core.freetext import MAX_INTENT_CHARS  # as set_trajectory_intent
    from code_trajectory.core.secrets import redact

    head = prompt.lstrip()[:MAX_INTENT_CHARS + REDACT_WINDOW]
    line = redact(head.splitlines()[0] if head else "").strip()
    if not line:
        return None
    return line if len(line) <= MAX_INTENT_CHARS else line[:MAX_INTENT_CHARS - 1].rstrip() + "…"


def hook_arguments(parser: argparse.ArgumentParser) -> None:
    import argparse

    from code_trajectory.project import add_project_option

    parser.add_argument("event", metavar="EVENT", nargs="?", help="the hook event: prompt, edit or stop (another "
                                                                  "word, or none, is ignored with a note, exit 0)")
    add_project_option(parser)
    # what follows the event, read by hook() itself so that an option it does not know never exits 2
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def hook(args: argparse.Namespace) -> int:
    """Handle one hook event (the client's JSON on stdin); always exits 0, problems go to stderr."""
    return run(args.event, getattr(args, "rest", None) or [], args.project)


def main(argv: list[str]) -> int:
    """The lean entry of ``code-trajectory hook prompt|edit [--project P] ...`` (``argv``: the words after
    ``hook``, the event first), which the CLI takes for those events unless ``--help`` is asked: no argument parser
    is built, nothing is imported but what the event needs, and no capabilities' handlers are registered
    (:mod:`code_trajectory.wiring`: ``prompt`` and ``edit`` neither consolidate nor report status; issue 29).
    Always exits 0, as :func:`hook`."""
    for stream in (sys.stdout, sys.stderr):  # as the CLI does: escaped bytes, never a crash on them
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    return run(argv[0] if argv else None, argv[1:], None)


#: Largest hook input read from stdin, characters (a prompt with pasted files is a few MB at most; the rest of a
#: larger input is left unread, and the hook does nothing).
MAX_INPUT_CHARS = 32 * 1024 * 1024

def run(event: str | None, words: list[str], project: str | None) -> int:
    """Handle ``event`` with the words that followed it (``--project P`` among them) and the client's JSON on
    stdin; report on stderr, return 0 whatever happened."""
    try:
        project, unknown = _options(words, project)
        if event not in EVENTS:
            given = "no hook event given" if event is None else f"unknown hook event {event!r}"
            raise ValueError(f"{given} (this version handles {', '.join(EVENTS)}); nothing done")
        text = sys.stdin.read(MAX_INPUT_CHARS + 1)  # the client's input is untrusted: bounded
        if len(text) > MAX_INPUT_CHARS:
            raise ValueError(f"the hook input is over {MAX_INPUT_CHARS:,} characters; nothing done")
        payload = json.loads(text or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        message = handle(event, payload, project)
        if unknown:
            message = "; ".join(filter(None, [message, f"ignored {' '.join(unknown)!r}"]))
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the agent
        message = f"skipped: {exc}"
    if message:
        print(" ".join(filter(None, ["code-trajectory hook", event])) + f": {message}", file=sys.stderr)
    return 0


def _options(words: list[str], project: str | None) -> tuple[str | None, list[str]]:
    """``--project P`` (or ``--project=P``) among the words after the event, and the words that are not it."""
    unknown: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--project" and i + 1 < len(words):
            project, i = words[i + 1], i + 2
            continue
        if word.startswith("--project="):
            project = word.split("=", 1)[1]
        else:
            unknown.append(word)
        i += 1
    return project, unknown


def _project(option: str | None, payload: dict) -> Path | None:
    """The project a hook acts on: ``--project`` (as installed), else the recorded project holding stdin's ``cwd``.

    Without ``--project`` the hook never starts a history: it acts only on a directory that already holds a shadow
    repository (``.trajectory/HEAD``), the ``cwd`` itself or its nearest parent that does, up to the file system
    root; None when there is none. A found project is still subject to the guard of every front end
    (:func:`code_trajectory.project.check_recordable`: never the file system root, the home directory, our storage).

    Raises:
        ProjectError: the recorded directory found is one that must never be recorded.
        ValueError: ``cwd`` is not a path.
    """
    from code_trajectory.project import check_recordable, find_project_root, has_shadow_repo

    if option:
        return find_project_root(option)
    cwd = payload.get("cwd", ".")
    if not isinstance(cwd, str) or not cwd or "\0" in cwd:
        raise ValueError(f"the hook input's cwd is not a directory path: {cwd!r}")
    here = Path(cwd).expanduser().resolve()
    found = next((d for d in (here, *here.parents) if has_shadow_repo(d)), None)
    if found is not None:
        check_recordable(found, creating=False)
    return found


def handle(event: str, payload: dict, project: str | None) -> str | None:
    """Do what ``event`` asks for the project; return a note for stderr, or None when all went well (or when,
    without ``--project``, the ``cwd`` belongs to no recorded project: nothing to do).

    Raises:
        TrajectoryError, ValueError: the event cannot be handled (the caller reports it and exits 0).
    """
    root = _project(project, payload)
    if root is None:
        return None
    if event == "prompt":
        return _prompt(root, payload)
    if event == "edit":
        return _edit(root, payload)
    return _stop(root, payload)


def _prompt(root: Path, payload: dict) -> str | None:
    from code_trajectory.recording.intent import IntentStore

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        return "no prompt in the hook input"
    intent = intent_from_prompt(prompt)
    if intent is None:
        return None
    from code_trajectory.git.vet_stamp import still_vetted

    state_dir = root / SHADOW_DIR_NAME / "state"
    if (root / SHADOW_DIR_NAME / "HEAD").is_file() and state_dir.is_dir() and not state_dir.is_symlink() \
            and still_vetted(root / SHADOW_DIR_NAME):
        # the history exists and its last vetting holds: the intent is one small file, written without opening the
        # shadow repository (whose modules cost more to import than the write itself); else the opening vets it
        IntentStore(state_dir).set(intent, session=_session(payload) or None)
        return None
    from code_trajectory.git.shadow import ShadowRepo

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
    """The project's recorder, acting for the hook's agent session (an intent of another session is not carried);
    its snapshot records the edits earlier hooks handed over first, in order (see :mod:`~.recording.handoff`)."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.checkpoint_requests import attach_handovers
    from code_trajectory.recording.recorder import Recorder

    recorder = Recorder.open(root, TrajectorySettings.load(root))
    attach_handovers(recorder)
    recorder.agent_session = _session(payload) or None
    return recorder


def edited_files(payload: dict) -> tuple[str, str, list[str]] | str:
    """The client, the tool and the files an edit hook's ``payload`` names (as written: absolute, or relative to
    ``cwd``), or a note saying why there are none (not an edit tool, no file named)."""
    tool = payload.get("tool_name")
    found = EDIT_TOOLS.get(tool) if isinstance(tool, str) else None
    if found is None:
        return f"not an edit tool: {tool!r}"
    client, key = found
    tool_input = payload.get("tool_input")
    value = tool_input.get(key.removeprefix("patch:")) if isinstance(tool_input, dict) else None
    if key == PATCH:
        value = value if isinstance(value, str) else ""
        files = [line[len(head):].strip() for line in value[:MAX_PATCH_CHARS].splitlines()
                 for head in _PATCH_FILE_LINES if line.startswith(head)]
    else:
        files = [value] if isinstance(value, str) else []
    files = [f for f in dict.fromkeys(files) if f and "\0" not in f]
    return (client, str(tool), files[:MAX_EDIT_FILES]) if files else f"{tool} named no file"


#: Gemini CLI's edit tools, whose AfterTool ``tool_response`` says the file's content before and after them.
_GEMINI_EDITS = ("write_file", "replace")


def told_contents(payload: dict, rels: list[str]) -> dict[str, tuple[str | None, str]] | None:
    """What the ``tool_response`` of an edit says the one file it edited (``rels``: its path relative to the
    project) held before and after the tool call: ``{rel: (text before, or None when the tool created the file,
    text after)}``. Claude Code's Edit and Write: ``originalFile``; the text after is ``content`` for Write,
    ``originalFile`` with ``oldString`` replaced by ``newString`` for Edit, every one with ``replaceAll``. Gemini
    CLI's write_file and replace: their result's ``returnDisplay`` (a FileDiff: ``originalContent``, ``newContent``,
    ``isNewFile``). Codex's apply_patch says no content before (its response is the tool's output text, its input
    the patch). None for another tool, more than one path (a link and its target), a failed call or a response of
    another shape. Untrusted: the hand-over keeps it only when the text after is the file's content
    (:func:`code_trajectory.recording.handoff.hand_over_edit`)."""
    response, tool = payload.get("tool_response"), payload.get("tool_name")
    if len(rels) != 1 or tool not in ("Edit", "Write", *_GEMINI_EDITS) or not isinstance(response, dict):
        return None
    if tool in _GEMINI_EDITS:
        return _gemini_told(response, rels[0])
    before = response.get("originalFile")
    if tool == "Write":
        after = response.get("content")
        if before is None and response.get("type") != "create":
            return None
    else:
        old, new, every = response.get("oldString"), response.get("newString"), response.get("replaceAll")
        if not isinstance(before, str) or not isinstance(old, str) or not isinstance(new, str) or not old \
                or old not in before:
            return None
        after = before.replace(old, new) if every is True else before.replace(old, new, 1)
    if not isinstance(after, str) or not isinstance(before, (str, type(None))):
        return None
    return {rels[0]: (before, after)}


def _gemini_told(response: dict, rel: str) -> dict[str, tuple[str | None, str]] | None:
    """:func:`told_contents` of a Gemini CLI ``write_file`` or ``replace`` result: ``originalContent`` (None, or
    with ``isNewFile``, when the tool created the file; ``""`` without ``isNewFile`` may be either: nothing is said)
    and ``newContent`` of its ``returnDisplay``; None for a failed call or a result of another shape (an older
    gemini-cli's display held the diff alone)."""
    display = response.get("returnDisplay")
    if response.get("error") is not None or not isinstance(display, dict):
        return None
    before, after, new = display.get("originalContent"), display.get("newContent"), display.get("isNewFile")
    if new is True:
        before = None
    elif before == "" and new is not False:
        return None
    if not isinstance(after, str) or not isinstance(before, (str, type(None))):
        return None
    return {rel: (before, after)}


def _edit(root: Path, payload: dict) -> str | None:
    import os

    from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError
    from code_trajectory.project import confine

    found = edited_files(payload)
    if isinstance(found, str):
        return found
    client, tool, files = found
    cwd = payload.get("cwd")
    rels = []
    for target in files:
        if not os.path.isabs(target) and isinstance(cwd, str) and os.path.isabs(cwd) and "\0" not in cwd:
            target = os.path.join(cwd, target)  # the client's relative paths are its working directory's
        try:
            rel = confine(root, target)
            path = os.path.join(root, rel)
            real = os.path.realpath(path)
            if real != path:  # saved through a link: its target is the file that changed
                if os.path.realpath(os.path.dirname(path)) == os.path.dirname(path):
                    rels.append(rel)  # the link itself, a file of the recorded tree
                rel = confine(root, real)  # a path under a linked directory is none: the tree holds the link
            rels.append(rel)
        except (PathOutsideProjectError, InvalidArgumentError):
            continue  # an edit outside the project is not ours to record
    rels = list(dict.fromkeys(rels))
    if not rels:
        return None
    session = _session(payload)
    from code_trajectory.git.vet_stamp import still_vetted
    from code_trajectory.recording import edit_worker, handoff

    git_dir = root / SHADOW_DIR_NAME
    # the hand-over copies the edited files into .trajectory/state: only into one whose last vetting holds (else the
    # recorder's opening vets it)
    if (git_dir / "HEAD").is_file() and still_vetted(git_dir) and handoff.hand_over_edit(
            git_dir / "state", rels, root=root, client=client, tool=tool, session=session,
            told=told_contents(payload, rels)):
        # the recording process snapshots them together (within its next listing, 0.1 s); when none records, a
        # worker started here does, and exits; where none can start, or an earlier one left a hand-over behind (it
        # failed: its stderr is /dev/null), this process records every hand-over, and says on stderr what failed
        if handoff.recording_now(git_dir) or (not edit_worker.stuck(git_dir / "state") and edit_worker.start(root)):
            return None
        edit_worker.drain(root)
        return None
    origin = handoff.edit_origin(client, tool, session)
    recorder = _open(root, payload)
    try:
        recorder.record_paths(rels, origin=origin)
    finally:
        recorder.close()
    return None


def _stop(root: Path, payload: dict) -> str | None:
    from datetime import datetime

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    # every save before this hook is in the checkpoint: a process recording the project is asked to take it (its
    # watcher may hold back the last seconds' saves, shell commands' included); else a full scan here records them
    session = ProjectSession(root, TrajectorySettings.load(root))
    try:
        session.recorder.agent_session = _session(payload) or None
        intent = session.recorder.intent.get(session=session.recorder.agent_session)
        name = f"turn ended {datetime.now().strftime('%H:%M:%S')}" + (f": {intent}" if intent else "")
        done = session.take_checkpoint(name, name_only=True)
    finally:
        session.close()
    return None if done.commit is not None else "nothing recorded yet: no checkpoint named"
