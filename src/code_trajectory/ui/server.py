"""The server of the page: a socket on 127.0.0.1, uvicorn running the guarded app, a clean stop.

The socket is bound before anything else, so the port (and with it the allowed ``Host`` values and the cookie
name) is known when the app is built, and the URL can be printed before the first request. uvicorn's access log
is off (it would print the token of the entry URL); its own messages go to the loggers, which
:func:`code_trajectory.core.logs.configure_logging` sends to stderr.
"""

from __future__ import annotations

import errno
import logging
import socket
import time
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.project import has_shadow_repo, nothing_recorded
from code_trajectory.ui.app import create_app
from code_trajectory.ui.security import TOKEN_PARAM, new_token

logger = logging.getLogger(__name__)

#: The only address the server listens on.
HOST = "127.0.0.1"
#: Seconds open requests get to finish when the server stops.
GRACEFUL_SECONDS = 3


def bind_loopback(port: int) -> socket.socket:
    """A listening TCP socket on ``127.0.0.1:port`` (0: a free port chosen by the system).

    Raises:
        InvalidArgumentError: the port is out of range or already in use.
    """
    if not 0 <= port <= 65535:
        raise InvalidArgumentError(f"--port must be between 0 and 65535, got {port}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InvalidArgumentError(f"port {port} on {HOST} is already in use; pick another with --port, or "
                                       "--port 0 for any free port") from None
        raise InvalidArgumentError(f"cannot listen on {HOST}:{port}: {exc}") from None
    sock.set_inheritable(False)
    return sock


class UIServer:
    """The page of one project's history, served on ``127.0.0.1``.

    Args:
        root: the project root; it must have a shadow repository (``.trajectory/``).
        port: the port to listen on (0: any free port).
        token: the access token (default: a new random one, see :func:`~.security.new_token`).
        default_branch: the branch shown first (default: the project's current branch).

    Raises:
        ProjectError: nothing is recorded for ``root``.
        InvalidArgumentError: the port cannot be used.
    """

    def __init__(self, root: Path, *, port: int = 0, token: str | None = None,
                 default_branch: str | None = None) -> None:
        import uvicorn

        root = Path(root).resolve()
        if not has_shadow_repo(root):
            raise nothing_recorded(root)
        self.root = root
        self.token = token or new_token()
        settings = TrajectorySettings.load(root)
        self.socket = bind_loopback(port)
        self.port: int = self.socket.getsockname()[1]
        try:
            self.app, self.page = create_app(root, token=self.token, port=self.port,
                                             gap_seconds=settings.session_gap_seconds, default_branch=default_branch)
        except BaseException:
            self.socket.close()
            raise
        config = uvicorn.Config(self.app, log_config=None, access_log=False, lifespan="on", ws="none",
                                server_header=False, proxy_headers=False,
                                timeout_graceful_shutdown=GRACEFUL_SECONDS)
        self.server = uvicorn.Server(config)
        self.page.start_warm_up()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no token)."""
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """The URL to open: ``http://127.0.0.1:PORT/?token=…``."""
        return f"{self.base_url}/?{TOKEN_PARAM}={self.token}"

    def run(self) -> None:
        """Serve until :meth:`stop` (or, in the main thread, Ctrl-C / SIGTERM: uvicorn stops gracefully)."""
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
        self.server.run(sockets=[self.socket])

    def wait_started(self, timeout: float) -> bool:
        """Wait until the server accepts requests; False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.server.started:
                return True
            time.sleep(0.02)
        return False

    def stop(self) -> None:
        """Ask the server to stop (returns at once; :meth:`run` returns when open requests finished)."""
        self.server.should_exit = True

    def close(self) -> None:
        """Release the socket and the shadow repository's git processes (idempotent)."""
        self.socket.close()
        self.page.close()
