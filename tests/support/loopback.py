"""A scripted HTTP server on ``127.0.0.1`` (ephemeral port) for the real-client tests: each client's model API is
replaced by a subclass that answers from a script (Claude Code's Messages API, Gemini's, Codex's Responses API)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """The server's lifecycle: bound at construction, serving on a daemon thread inside ``with``, shut down and
    closed on exit. A subclass gives its request handler class (:meth:`_handler`) and may extend :attr:`url`."""

    #: the serving thread's name
    thread_name = "scripted-server"

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
