"""``code-trajectory recap``: read or update a project's recap from the command line.

Usage::

    code-trajectory recap [--project PATH] [--json]          show the recap
    code-trajectory recap add TYPE CONTENT... [--project PATH] [--json]
    code-trajectory recap goal TEXT... [--project PATH] [--json]

Without ``--project`` the project is the nearest directory, from the current one
upwards, that has a recap, a ``.trajectory/`` directory or a ``.git`` entry
(:func:`code_trajectory.recap.location.project_from_option`). ``--json`` prints the same
structure the MCP tools return (``get_recap``: ``{goal, entries, filePath, ...}``),
UTF-8 encoded; otherwise markdown for people. Errors go to stderr, one line as
every command's (:func:`code_trajectory.core.cli_errors.print_error`), with exit status 2.

Reading is fast on purpose (editors call it): this module and
:mod:`code_trajectory.recap.store` import neither the MCP SDK, the watcher nor any
model, the arguments are parsed by hand (``argparse`` alone costs ~8 ms), and a
read takes no lock. ``bench/recap_cli.py`` measures it against ``python -c pass``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from code_trajectory.core.cli_errors import print_error
from code_trajectory.core.errors import TrajectoryError
from code_trajectory.recap import location, render
from code_trajectory.recap import store as recap

PROG = "code-trajectory recap"

USAGE = f"""usage: {PROG} [--project PATH] [--json]
       {PROG} add TYPE CONTENT... [--project PATH] [--json]
       {PROG} goal TEXT... [--project PATH] [--json]"""

HELP = f"""{USAGE}

Show or update the recap of a project: its goal, decisions, insights, risks,
assumptions and fixes.

commands:
  (none)              show the recap (read-only)
  add TYPE CONTENT    add an entry (an identical entry is skipped); TYPE is one of:
{chr(10).join(f"                        {k:<11} {v}" for k, v in recap.ENTRY_TYPE_HELP.items())}
  goal TEXT           set the goal; a different goal archives the previous recap

options:
  --project PATH      project directory or any directory inside it (default: the
                      nearest directory upwards from the current one with a
                      recap, a .trajectory/ directory or a .git entry)
  --json              print JSON (the get_recap structure) instead of markdown
  -h, --help          show this help
  --                  treat every later word as text (for text starting with -)
"""


class UsageError(Exception):
    """The command line does not follow :data:`USAGE`."""


class _HelpRequested(Exception):
    """``-h`` or ``--help`` was given."""


class Args:
    """A parsed command line: ``command`` is ``None`` (show), ``"add"`` or ``"goal"``."""

    __slots__ = ("as_json", "command", "entry_type", "project", "text")

    def __init__(self, command: str | None, project: str | None, as_json: bool,
                 entry_type: str = "", text: str = "") -> None:
        self.command = command
        self.project = project
        self.as_json = as_json
        self.entry_type = entry_type
        self.text = text


def parse_args(argv: list[str]) -> Args:
    """Parse the arguments after ``recap`` (hand-written: ``argparse`` costs a third of the start-up).

    Options may appear anywhere; ``--`` makes every later word text.

    Raises:
        UsageError: unknown option or command, missing value or words.
        _HelpRequested: ``-h``/``--help``.
    """
    project: str | None = None
    as_json = False
    words: list[str] = []
    options_done = False
    tokens = iter(argv)
    for token in tokens:
        if options_done or not token.startswith("-") or token == "-":
            words.append(token)
        elif token == "--":
            options_done = True
        elif token in ("-h", "--help"):
            raise _HelpRequested
        elif token == "--json":
            as_json = True
        elif token == "--project" or token.startswith("--project="):
            project = token.partition("=")[2] if "=" in token else next(tokens, None)
            if not project:
                raise UsageError("--project needs a PATH")
        else:
            raise UsageError(f"unknown option {token!r} (put -- before text that starts with -)")
    return _command(words, project, as_json)


def _command(words: list[str], project: str | None, as_json: bool) -> Args:
    if not words:
        return Args(None, project, as_json)
    command, rest = words[0], words[1:]
    if command == "add":
        if len(rest) < 2:
            raise UsageError("add needs a TYPE and a CONTENT, e.g.: add decision Use X because Y")
        return Args("add", project, as_json, entry_type=rest[0], text=" ".join(rest[1:]))
    if command == "goal":
        if not rest:
            raise UsageError("goal needs a TEXT, e.g.: goal Fix the login redirect loop")
        return Args("goal", project, as_json, text=" ".join(rest))
    raise UsageError(f"unknown command {command!r}; use add, goal, or no command to show the recap")


def _print_json(data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from undecodable path bytes
        encoded = (json.dumps(data, indent=2) + "\n").encode("ascii")
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (e.g. redirected in tests)
        sys.stdout.write(encoded.decode("utf-8"))
    else:
        sys.stdout.flush()
        buffer.write(encoded)
        buffer.flush()


def _warn(answer: dict[str, Any]) -> None:
    if answer.get("warning"):
        print(f"warning: {answer['warning']}", file=sys.stderr)


def _show(project: Path, as_json: bool) -> None:
    answer = recap.get_recap(project)
    if as_json:
        _print_json(answer)
    else:
        sys.stdout.write(render.render_markdown(answer))


def _add(project: Path, entry_type: str, content: str, as_json: bool) -> None:
    answer = recap.add_entry(project, entry_type, content)
    _warn(answer)
    if as_json:
        _print_json(answer)
    elif answer["skipped"]:
        print(f"Skipped: the same entry is already recorded (id {answer['id']}, {answer['timestamp']}).")
    else:
        print(f"Recorded {recap.check_entry_type(entry_type)} {answer['id']} at {answer['timestamp']}.")


def _goal(project: Path, text: str, as_json: bool) -> None:
    answer = recap.set_goal(project, text)
    _warn(answer)
    if as_json:
        _print_json(answer)
    elif answer["unchanged"]:
        print("The goal was already set to this; nothing changed.")
    else:
        archived = f" The previous recap was archived to {answer['archivedTo']}." if answer["archivedTo"] else ""
        print(f"Goal set for {project}.{archived}")


def main(argv: list[str]) -> int:
    """Run ``code-trajectory recap`` with ``argv`` (the arguments after ``recap``); return the exit status.

    0 on success; 2 on a usage error or any :class:`~code_trajectory.core.errors.TrajectoryError`
    (message on stderr). Standard output carries only the requested recap or answer.
    """
    try:
        args = parse_args(argv)
    except _HelpRequested:
        sys.stdout.write(HELP)
        return 0
    except UsageError as exc:
        return print_error(str(exc), usage_of=PROG)
    try:
        project = location.project_from_option(args.project)
        if args.command == "add":
            _add(project, args.entry_type, args.text, args.as_json)
        elif args.command == "goal":
            _goal(project, args.text, args.as_json)
        else:
            _show(project, args.as_json)
    except (TrajectoryError, OSError) as exc:  # OSError: e.g. the current directory was deleted
        return print_error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
