"""``code-trajectory journal``: the journal's tools on the command line.

Usage::

    code-trajectory journal [--journal-dir DIR] [--json] COMMAND ...

    search WORK_CONTEXT [CONTENT] [--threshold X] [--limit N]   journal_search
    read ID                                                      journal_read
    toc [ID] [--depth N]                                         journal_toc
    list PATH [--start N] [--length N]                           journal_list_entries
    write PATH [--entry TEXT | --entry-file FILE] [--overview TEXT | --overview-file FILE] [--summary TEXT]
                                                                 journal_write (entry from stdin when not given)
    sync [--remote URL] [--branch NAME]                          fetch, rebase, push

``--journal-dir`` and ``--json`` are accepted before or after the command.
The reading commands (search, read, toc, list) never create a journal: where
none is, they say so (exit status 2), as ``sync`` without ``--remote`` does;
``write`` and ``sync --remote URL`` create it.
Text goes to stdout (``--json``: the tool's structured content); errors go to
stderr, one line as every command's (:func:`code_trajectory.core.cli_errors.print_error`), with exit status 2. ``sync`` exits with 1 when it left an overview
conflict to resolve. The CLI writes without the MCP write protection (a person
at a terminal is not a model working from a stale read).
"""

from __future__ import annotations

import argparse
import json
import sys

from code_trajectory.core.cli_errors import parser_class, print_error
from code_trajectory.core.errors import TrajectoryError

#: The commands that only read: they create no journal where there is none.
READING = frozenset({"search", "read", "toc", "list"})


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--journal-dir", metavar="DIR", default=argparse.SUPPRESS,
                        help="the journal repository (default: $CODE_TRAJECTORY_JOURNAL_DIR, the config's "
                             "journal_data_path, or <CODE_TRAJECTORY_HOME>/journal)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the structured result as JSON")
    parser = parser_class()(prog="code-trajectory journal", parents=[common],
                            description="The git-backed journal: search, read and write entries, "
                                        "and share the journal through a git remote.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("search", parents=[common], help="search entries by work context and content")
    p.add_argument("work_context", help="the broader kind of work being done")
    p.add_argument("content", nargs="?", default=None, help="the specific content sought (default: the work context)")
    p.add_argument("--threshold", type=float, default=None, help="minimum combined score, 0-1 (default 0.5)")
    p.add_argument("--limit", type=int, default=None, help="most results (default [journal.search] max_results)")

    p = sub.add_parser("read", parents=[common], help="read an overview ('path') or an entry ('path#sha')")
    p.add_argument("id")

    p = sub.add_parser("toc", parents=[common], help="the table of contents")
    p.add_argument("id", nargs="?", default="")
    p.add_argument("--depth", type=int, default=1)

    p = sub.add_parser("list", parents=[common], help="list a section's entries, newest first")
    p.add_argument("path")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--length", type=int, default=10)

    p = sub.add_parser("write", parents=[common], help="add an entry (and optionally a new overview)")
    p.add_argument("path")
    entry = p.add_mutually_exclusive_group()
    entry.add_argument("--entry", "-m", help="the entry text (default: read from stdin)")
    entry.add_argument("--entry-file", metavar="FILE", help="read the entry from FILE ('-' = stdin)")
    overview = p.add_mutually_exclusive_group()
    overview.add_argument("--overview", help="the new overview text")
    overview.add_argument("--overview-file", metavar="FILE", help="read the new overview from FILE")
    p.add_argument("--summary", help="a one-line summary")

    p = sub.add_parser("sync", parents=[common], help="fetch, rebase and push the journal through a git remote")
    p.add_argument("--remote", metavar="URL", help="set the remote (origin) to URL first")
    p.add_argument("--branch", help="the branch to share (default: the journal's branch, main)")
    return parser


def _read_file(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        with open(name, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise SystemExit(print_error(f"cannot read {name}: {exc}")) from exc


def main(argv: list[str]) -> int:
    """Run ``code-trajectory journal ARGV``; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    as_json = getattr(args, "json", False)
    try:
        from code_trajectory.journal.service import Journal
        from code_trajectory.journal.settings import JournalSettings

        journal = Journal(JournalSettings.load(journal_dir=getattr(args, "journal_dir", None)))
        # a sync without --remote has nothing to sync with where no journal is: it creates none either
        if (args.command in READING or (args.command == "sync" and args.remote is None)) \
                and not journal.store.exists():
            return print_error(f"no journal at {journal.settings.journal_data_path}: nothing was written there "
                               "(check --journal-dir and $CODE_TRAJECTORY_JOURNAL_DIR; `code-trajectory journal "
                               "write SECTION` starts a journal there, `code-trajectory journal sync --remote URL` "
                               "fetches a shared one)")
        status = 0
        if args.command == "search":
            text, data = journal.search(args.work_context, args.content if args.content is not None
                                        else args.work_context, args.threshold, max_results=args.limit)
        elif args.command == "read":
            text, data, _version = journal.read(args.id)
        elif args.command == "toc":
            text, data = journal.toc(args.id, args.depth)
        elif args.command == "list":
            text, data = journal.list_entries(args.path, args.start, args.length)
        elif args.command == "write":
            if args.entry is not None:
                entry = args.entry
            elif args.entry_file is not None:
                entry = _read_file(args.entry_file)
            elif not sys.stdin.isatty():
                entry = sys.stdin.read()
            else:
                return print_error("give the entry with --entry TEXT, --entry-file FILE, or on stdin")
            overview = args.overview if args.overview is not None else (
                _read_file(args.overview_file) if args.overview_file else None)
            text, data, _version = journal.write(args.path, entry, overview, args.summary)
        elif args.command == "sync":
            text, data = journal.sync(args.remote, args.branch)
            status = 1 if data["conflicts"] else 0
        else:  # pragma: no cover - argparse rejects unknown commands
            return print_error(f"unknown command {args.command}")
        journal.close()
    except TrajectoryError as exc:
        return print_error(str(exc))
    except KeyboardInterrupt:
        return 130
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(text)
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
