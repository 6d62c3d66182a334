"""The ``code-trajectory`` command line: a lazy table of commands, each owned by its feature package.

Only the standard library is imported at start; the chosen command's module is imported alone, so
``code-trajectory recap`` or a hook starts without the MCP SDK or the watcher. A command ``NAME`` in
:data:`COMMANDS` is served by two functions of its module: ``NAME_arguments(parser)`` adds its options
and ``NAME(args) -> int`` runs it (``-`` in a name becomes ``_``); the commands that parse their own
arguments (``recap``, ``journal``) have ``main(argv) -> int``. Errors print one line on stderr
(``code-trajectory: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:  # argparse itself is imported when a parser is built
    import argparse

EXIT_ERROR = 2

#: Every command: ``name -> (module, one-line help)``, in the order ``--help`` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("code_trajectory.server", "run the MCP server over stdio"),
    "watch": ("code_trajectory.recording.commands", "record a project in the foreground, one line per snapshot"),
    "log": ("code_trajectory.history.commands", "recent commits across the project (get_global_trajectory)"),
    "file": ("code_trajectory.history.commands", "how one file evolved (get_file_trajectory)"),
    "session": ("code_trajectory.history.commands", "summary of the last session (get_session_summary)"),
    "symbol": ("code_trajectory.history.commands", "how one function, class or method changed (get_symbol_trajectory)"),
    "search": ("code_trajectory.history.commands", "snapshots that added or removed some text (search_trajectory)"),
    "compare": ("code_trajectory.history.commands", "the change between two snapshots, or one and now (compare)"),
    "restore": ("code_trajectory.restore.commands",
                "put files back as a snapshot had them (a safety snapshot first undoes it)"),
    "intent": ("code_trajectory.recording.commands", "set the intent recorded with the next snapshots"),
    "consolidate": ("code_trajectory.recording.commands",
                    "squash the trailing snapshots into one [CONSOLIDATE] commit"),
    "checkpoint": ("code_trajectory.recording.commands", "snapshot the project now"),
    "status": ("code_trajectory.recording.commands", "shadow repository facts: branches, snapshots, size"),
    "test": ("code_trajectory.testruns.commands",
             "snapshot, run a test command, record its outcome; exits with its status"),
    "test-history": ("code_trajectory.testruns.commands", "recorded test runs (get_test_history)"),
    "since-green": ("code_trajectory.testruns.commands",
                    "what changed since the last green test run (diff_since_green)"),
    "recap": ("code_trajectory.recap.commands",
              "goal, decisions, insights, risks of the current work (see `recap --help`)"),
    "journal": ("code_trajectory.journal.commands", "the journal of what was learned (see `journal --help`)"),
    "ui": ("code_trajectory.ui.commands", "a local timeline page of the history: diffs, live updates, restore"),
    "push": ("code_trajectory.share.commands",
             "push this project's trajectory to refs/trajectory/<you>/* on its git remote"),
    "pull": ("code_trajectory.share.commands", "fetch teammates' trajectories from the git remote (read-only)"),
    "list-trajectories": ("code_trajectory.share.commands",
                          "trajectories readable here: ours and pulled (list_trajectories)"),
    "install": ("code_trajectory.clients.commands", "add the MCP server (and hooks) to a client's config"),
    "uninstall": ("code_trajectory.clients.commands", "remove the MCP server (and hooks) from a client's config"),
    "hook": ("code_trajectory.clients.hook_events", "handle a Claude Code hook event (JSON on stdin); run by the hooks"),
}
#: Commands that parse their own arguments: their module's ``main(argv)`` gets the rest of the line.
OWN_PARSER = frozenset({"recap", "journal"})


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every command's (for ``--help``) or, with ``selected``, that one command's, its
    module imported to add its options."""
    import argparse
    import importlib

    class Parser(argparse.ArgumentParser):
        """Usage errors as one line on stderr, exit status 2, like every other error of the CLI."""

        def error(self, message: str) -> NoReturn:
            self.exit(EXIT_ERROR, f"code-trajectory: error: {message} (see `{self.prog} --help`)\n")

    parser = Parser(
        prog="code-trajectory",
        description="A memory of how a codebase evolved and why, for coding agents (MCP server and CLI).")
    from code_trajectory import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name, (module, help_text) in COMMANDS.items():
        if selected is not None and name != selected:
            continue  # one command's parser is all a command line needs (~1 ms each, a hook pays for it)
        if name in OWN_PARSER:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        command = sub.add_parser(name, help=help_text)
        if name == selected:
            getattr(importlib.import_module(module), name.replace("-", "_") + "_arguments")(command)
    return parser


def run(argv: list[str]) -> int:
    """Run one command line (without the program name); returns the exit status."""
    import importlib

    from code_trajectory import wiring

    wiring.install()  # the capabilities' handlers of the lower layers' hooks, the same as the server's
    name = argv[0] if argv else None
    if name in OWN_PARSER:
        return importlib.import_module(COMMANDS[name][0]).main(argv[1:])
    args = build_parser(name if name in COMMANDS else None).parse_args(argv)
    if args.command != "serve":
        # file names and intents may hold bytes that are not UTF-8: show them escaped, never crash on them
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
    module = importlib.import_module(COMMANDS[args.command][0])
    return getattr(module, args.command.replace("-", "_"))(args)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    from code_trajectory.core.errors import TrajectoryError

    try:
        return run(sys.argv[1:] if argv is None else argv)
    except TrajectoryError as exc:
        print(f"code-trajectory: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
