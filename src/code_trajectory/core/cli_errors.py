"""The command line's one error path: every command's error, a usage error too, is one line on stderr
(``code-trajectory: error: ...``) and exit status 2.

Here, below every capability, so that the commands that parse their own arguments (``recap``, ``journal``) print
their errors as :mod:`code_trajectory.cli` prints every other command's. Standard library only, and ``argparse``
only when a parser is built: the hooks and ``recap`` import this at start.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hooks pay for every import)
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn

EXIT_ERROR = 2

_parser_class: type[argparse.ArgumentParser] | None = None


def print_error(message: str, *, usage_of: str | None = None) -> int:
    """Print the CLI's one error line on stderr, ``code-trajectory: error: MESSAGE``; return :data:`EXIT_ERROR`.

    Args:
        message: what went wrong and what to do instead (one line).
        usage_of: for a usage error, the command whose ``--help`` to read (``code-trajectory recap``): the line
            then ends with ``(see `USAGE_OF --help`)``.
    """
    hint = f" (see `{usage_of} --help`)" if usage_of else ""
    print(f"code-trajectory: error: {message}{hint}", file=sys.stderr)
    return EXIT_ERROR


def parser_class() -> type[argparse.ArgumentParser]:
    """The ``argparse.ArgumentParser`` class of every command line: a usage error goes through :func:`print_error`
    (one line, exit status 2) instead of ``argparse``'s usage and error lines. Its subparsers are of the same class.
    """
    global _parser_class
    if _parser_class is None:
        import argparse

        class Parser(argparse.ArgumentParser):
            """Usage errors as one line on stderr, exit status 2, like every other error of the CLI."""

            def error(self, message: str) -> NoReturn:
                raise SystemExit(print_error(message, usage_of=self.prog))

        _parser_class = Parser
    return _parser_class
