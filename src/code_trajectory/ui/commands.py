"""``code-trajectory ui [--project P] [--port N] [--no-browser]``: serve the timeline page on 127.0.0.1.

A pair ``ui_arguments(parser)`` / ``ui(args) -> int`` for :mod:`code_trajectory.cli`. The URL (with its token) is
printed on stdout; logs go to stderr. Ctrl-C, SIGTERM, SIGHUP, or the end of stdin when stdin is a pipe stop the server
gracefully (open requests get :data:`~.server.GRACEFUL_SECONDS` seconds) and the command exits with status 0. The page
records nothing itself (the watcher or server does), so there is nothing to snapshot on the way out.
"""

from __future__ import annotations

import argparse

from code_trajectory.project import add_project_option


def ui_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``ui``: ``--project``, ``--port``, ``--no-browser``."""
    add_project_option(parser)
    parser.add_argument("--port", type=int, default=0, metavar="N",
                        help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--no-browser", action="store_true", help="print the URL without opening a browser")


def ui(args: argparse.Namespace) -> int:
    """Serve the page until Ctrl-C; returns 0.

    Raises:
        ProjectError: nothing is recorded for the project.
        InvalidArgumentError: the port cannot be used.
    """
    import logging
    import sys
    import threading

    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import StopRequest
    from code_trajectory.project import project_from_option
    from code_trajectory.ui.server import UIServer

    configure_logging(logging.WARNING)
    logging.getLogger("code_trajectory.ui").setLevel(logging.INFO)
    root = project_from_option(args.project)
    # a stop from now on (the URL printed, a signal at once) is an orderly one; while uvicorn runs it handles
    # SIGINT/SIGTERM itself, stops gracefully and raises the signal again, which ours then only count
    stop = StopRequest()
    stop.install()
    try:
        server = UIServer(root, port=args.port)
        try:
            # before the URL is printed: a parent that reads the URL and then closes our stdin must find it watched
            # (a pipe already at its end when watched counts as no lifeline at all)
            stop.watch_stdin()
            print(f"code-trajectory ui: {root}", flush=True)
            print(f"open {server.url}", flush=True)
            print("Ctrl-C to stop", file=sys.stderr, flush=True)
            if not args.no_browser:
                threading.Thread(target=_open_browser, args=(server,), name="open-browser", daemon=True).start()

            def stop_when_asked() -> None:
                stop.wait()
                server.stop()

            threading.Thread(target=stop_when_asked, name="ui-stop", daemon=True).start()
            server.run()
        finally:
            server.close()
    finally:
        if stop.requested:
            stop.ignore()  # stopped: a late signal must not turn status 0 into death by that signal
        else:
            stop.restore()
    print("code-trajectory ui: stopped", file=sys.stderr, flush=True)
    return 0


def _open_browser(server) -> None:
    """Open the URL in the user's browser once the server accepts connections (a failure is only logged)."""
    import logging
    import webbrowser

    if not server.wait_started(10):
        return
    try:
        if not webbrowser.open(server.url):
            logging.getLogger(__name__).warning("no browser found: open the URL printed above")
    except Exception as exc:  # noqa: BLE001 - the URL is printed; a missing browser is not an error
        logging.getLogger(__name__).warning("cannot open a browser (%s): open the URL printed above", exc)
