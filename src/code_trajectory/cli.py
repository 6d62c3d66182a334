"""The ``code-trajectory`` command line: a lazy table of commands, each owned by its feature package.

Only the standard library is imported at start; the chosen command's module is imported alone, so
``code-trajectory recap`` or a hook starts without the MCP SDK or the watcher. That is why :data:`COMMANDS` names
its functions as ``"module:function"`` strings rather than holding them: holding them would import every
feature at start. Each row names both of a command's functions explicitly: ``arguments(parser)`` adds its
options and ``run(args) -> int`` runs it; a command that parses its own arguments (``recap``, ``journal``) has no
``arguments`` and its ``run`` is ``main(argv) -> int``. Errors print one line on stderr
(``code-trajectory: error: ...``) and exit with status 2, also those of ``recap`` and ``journal``: the one error
path is :mod:`code_trajectory.core.cli_errors`.
"""

from __future__ import annotations

import sys

from code_trajectory.core.cli_errors import parser_class, print_error

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms a hook would pay)
if TYPE_CHECKING:  # argparse itself is imported when a parser is built
    import argparse


class Command:
    """One CLI command: its help line and its functions, each ``"module:function"`` (imported when it runs).

    A plain class, not a ``NamedTuple`` or dataclass: ``typing`` and ``dataclasses`` cost more to import than a
    hook's whole run should.

    Attributes:
        help: the line ``--help`` shows.
        run: ``function(args: argparse.Namespace) -> int``, or ``main(argv: list[str]) -> int`` when
            ``arguments`` is None.
        arguments: ``function(parser: argparse.ArgumentParser) -> None`` adding the command's options; None for
            a command that parses its own.
    """

    __slots__ = ("help", "run", "arguments")

    def __init__(self, help: str, run: str, arguments: str | None) -> None:
        self.help = help
        self.run = run
        self.arguments = arguments


def load(target: str):  # -> Callable[..., int]; not annotated: that would import typing at start
    """The function a ``"module:function"`` string of :data:`COMMANDS` names (its module imported now)."""
    module, _, name = target.partition(":")
    __import__(module)  # importlib.import_module, without importing importlib (a hook pays for every import)
    return getattr(sys.modules[module], name)


_SERVING = "code_trajectory.serving"  # starts recording, then imports code_trajectory.server (the MCP SDK)
_RECORDING = "code_trajectory.recording.commands"
_HISTORY = "code_trajectory.history.commands"
_RESTORE = "code_trajectory.restore.commands"
_TESTRUNS = "code_trajectory.testruns.commands"
_RECAP = "code_trajectory.recap.commands"
_JOURNAL = "code_trajectory.journal.commands"
_UI = "code_trajectory.ui.commands"
_SHARE = "code_trajectory.share.commands"
_CLIENTS = "code_trajectory.clients.commands"
_HOOKS = "code_trajectory.clients.hook_events"

#: Every command, in the order ``--help`` lists them.
COMMANDS: dict[str, Command] = {
    "serve": Command("run the MCP server over stdio",
                     f"{_SERVING}:serve", f"{_SERVING}:serve_arguments"),
    "watch": Command("record a project in the foreground, one line per snapshot",
                     f"{_RECORDING}:watch", f"{_RECORDING}:watch_arguments"),
    "log": Command("recent commits across the project (get_global_trajectory)",
                   f"{_HISTORY}:log", f"{_HISTORY}:log_arguments"),
    "file": Command("how one file evolved (get_file_trajectory)",
                    f"{_HISTORY}:file", f"{_HISTORY}:file_arguments"),
    "session": Command("summary of the last session (get_session_summary)",
                       f"{_HISTORY}:session", f"{_HISTORY}:session_arguments"),
    "symbol": Command("how one function, class or method changed (get_symbol_trajectory)",
                      f"{_HISTORY}:symbol", f"{_HISTORY}:symbol_arguments"),
    "search": Command("snapshots that added or removed some text (search_trajectory)",
                      f"{_HISTORY}:search", f"{_HISTORY}:search_arguments"),
    "compare": Command("the change between two snapshots, or one and now (compare)",
                       f"{_HISTORY}:compare", f"{_HISTORY}:compare_arguments"),
    "restore": Command("put files back as a snapshot had them (a safety snapshot first undoes it)",
                       f"{_RESTORE}:restore", f"{_RESTORE}:restore_arguments"),
    "intent": Command("set the intent recorded with the next snapshots",
                      f"{_RECORDING}:intent", f"{_RECORDING}:intent_arguments"),
    "consolidate": Command("squash the trailing snapshots into one [CONSOLIDATE] commit",
                           f"{_RECORDING}:consolidate", f"{_RECORDING}:consolidate_arguments"),
    "checkpoint": Command("snapshot the project now",
                          f"{_RECORDING}:checkpoint", f"{_RECORDING}:checkpoint_arguments"),
    "status": Command("shadow repository facts: branches, snapshots, size",
                      f"{_RECORDING}:status", f"{_RECORDING}:status_arguments"),
    "test": Command("snapshot, run a test command, record its outcome; exits with its status",
                    f"{_TESTRUNS}:test", f"{_TESTRUNS}:test_arguments"),
    "test-history": Command("recorded test runs (get_test_history)",
                            f"{_TESTRUNS}:test_history", f"{_TESTRUNS}:test_history_arguments"),
    "since-green": Command("what changed since the last green test run (diff_since_green)",
                           f"{_TESTRUNS}:since_green", f"{_TESTRUNS}:since_green_arguments"),
    "recap": Command("goal, decisions, insights, risks of the current work (see `recap --help`)",
                     f"{_RECAP}:main", None),
    "journal": Command("the journal of what was learned (see `journal --help`)",
                       f"{_JOURNAL}:main", None),
    "ui": Command("a local timeline page of the history: diffs, live updates, restore",
                  f"{_UI}:ui", f"{_UI}:ui_arguments"),
    "push": Command("push this project's trajectory to refs/trajectory/<you>/* on its git remote",
                    f"{_SHARE}:push", f"{_SHARE}:push_arguments"),
    "pull": Command("fetch teammates' trajectories from the git remote (read-only)",
                    f"{_SHARE}:pull", f"{_SHARE}:pull_arguments"),
    "list-trajectories": Command("trajectories readable here: ours and pulled (list_trajectories)",
                                 f"{_SHARE}:list_trajectories", f"{_SHARE}:list_trajectories_arguments"),
    "install": Command("add the MCP server (and hooks) to a client's config",
                       f"{_CLIENTS}:install", f"{_CLIENTS}:install_arguments"),
    "uninstall": Command("remove the MCP server (and hooks) from a client's config",
                         f"{_CLIENTS}:uninstall", f"{_CLIENTS}:uninstall_arguments"),
    "hook": Command("handle a Claude Code hook event (JSON on stdin); run by the hooks",
                    f"{_HOOKS}:hook", f"{_HOOKS}:hook_arguments"),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every command's (for ``--help``) or, with ``selected``, that one command's, its
    module imported to add its options."""
    Parser = parser_class()
    parser = Parser(
        prog="code-trajectory",
        description="A memory of how a codebase evolved and why, for coding agents (MCP server and CLI).")
    from code_trajectory import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name, row in COMMANDS.items():
        if selected is not None and name != selected:
            continue  # one command's parser is all a command line needs (~1 ms each, a hook pays for it)
        if row.arguments is None:
            sub.add_parser(name, help=row.help, add_help=False)
            continue
        command = sub.add_parser(name, help=row.help)
        if name == selected:
            load(row.arguments)(command)
    return parser


def run(argv: list[str]) -> int:
    """Run one command line (without the program name); returns the exit status."""
    if argv[:1] == ["hook"] and argv[1:2] in (["prompt"], ["edit"]) and not {"-h", "--help"} & set(argv):
        # the hooks run on every prompt and every edit of an agent: no parser, no capabilities' handlers (issue 29)
        return load(f"{_HOOKS}:main")(argv[1:])
    from code_trajectory import wiring

    wiring.install()  # the capabilities' handlers of the lower layers' hooks, the same as the server's
    name = argv[0] if argv else None
    if name in COMMANDS and COMMANDS[name].arguments is None:  # recap, journal (a journal synced from a remote)
        _guard_streams()
        return load(COMMANDS[name].run)(argv[1:])
    args, unknown = build_parser(name if name in COMMANDS else None).parse_known_args(argv)
    if unknown:  # argparse's own error names the top parser: the usage to read is the command's
        return print_error(f"unrecognized arguments: {' '.join(unknown)}", usage_of=f"code-trajectory {args.command}")
    if args.command != "serve":  # stdout of serve is JSON-RPC, left as it is
        _guard_streams()
    return load(COMMANDS[args.command].run)(args)


def _guard_streams() -> None:
    """Make stdout and stderr show what could break or drive the terminal instead of writing it."""
    # file names and intents may hold bytes that are not UTF-8: show them escaped, never crash on them
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    # nor control characters that drive the terminal (a pulled commit message's ESC ] 52)
    from code_trajectory.core.terminal import guard

    sys.stdout, sys.stderr = guard(sys.stdout), guard(sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    from code_trajectory.core.errors import TrajectoryError

    try:
        return run(sys.argv[1:] if argv is None else argv)
    except TrajectoryError as exc:
        return print_error(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
