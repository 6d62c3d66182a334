"""The project the MCP server currently records, switchable at run time: what every feature's tools share."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import NotConfiguredError, TrajectoryError
from code_trajectory.project import resolve_project_root
from code_trajectory.recording.session import ProjectSession

log = logging.getLogger(__name__)

#: How long a tool call waits for a start-up scan still running before answering from what is recorded, seconds.
STARTUP_WAIT_SECONDS = 10.0


class TrajectoryService:
    """The project the MCP server currently records, switchable at run time.

    Each feature's ``tools.register(mcp, service)`` receives this object: tools get the project
    with :meth:`session_for`.

    Args:
        settings_factory: builds settings for a project root (config files + overrides).
        force_polling: passed to watchers (tests).
        journal_dir: the journal repository chosen on the command line (``serve --journal-dir``), or None.
    """

    def __init__(self, settings_factory: Callable[[Path], TrajectorySettings], *,
                 force_polling: bool | None = None, journal_dir: Path | None = None) -> None:
        self._settings_factory = settings_factory
        self._force_polling = force_polling
        self.journal_dir = journal_dir
        self._session: ProjectSession | None = None
        self._startup_error: TrajectoryError | None = None
        self._lock = threading.RLock()

    def startup_failed(self, error: TrajectoryError) -> None:
        """Remember why the project given at start (``serve --project``) could not be opened: every tool that
        needs the project raises it, until ``configure_project`` succeeds."""
        self._startup_error = error

    def configure(self, path: str, *, background: bool = False) -> tuple[ProjectSession, bool]:
        """Start recording ``path`` (stopping the previous project); the same path keeps its session.

        Args:
            path: the project directory (absolute).
            background: return as soon as the watcher runs, with the start-up scan going on
                in the background (see :meth:`ProjectSession.start`).

        Returns:
            ``(session, started)``: ``started`` is False when the path was already configured.
        """
        root = resolve_project_root(path)
        with self._lock:
            if self._session is not None and self._session.root == root:
                return self._session, False
            if self._session is not None:
                self._session.close()
                self._session = None
            session = ProjectSession(root, self._settings_factory(root), watch=True,
                                     force_polling=self._force_polling)
            try:
                session.start(background=background)
            except BaseException:
                session.close()
                raise
            self._session = session
            self._startup_error = None
            return session, True

    def project(self) -> ProjectSession:
        """Return the configured project.

        Raises:
            NotConfiguredError: none is configured yet.
            TrajectoryError: the project given at start could not be opened (:meth:`startup_failed`).
        """
        session = self._session
        if session is None and self._startup_error is not None:
            raise type(self._startup_error)(str(self._startup_error))  # a fresh one: no traceback piles up
        if session is None:
            raise NotConfiguredError("No project is configured. Call configure_project with the absolute path of "
                                     "the project directory first, e.g. configure_project(path=\"/home/me/app\").")
        return session

    def project_root(self) -> Path:
        """The configured project's root (raises :class:`NotConfiguredError` when none)."""
        return self.project().root

    def close(self) -> None:
        """Stop the current project's watcher."""
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    async def session_for(self, ctx: Any | None) -> ProjectSession:
        """The configured project; configured from the client's first MCP root when none is and it offers roots.

        Args:
            ctx: the tool call's ``mcp.server.mcpserver.Context``, or None.

        Raises:
            NotConfiguredError: no project is configured and the client offers no usable root.
        """
        try:
            session = self.project()
        except NotConfiguredError:
            if ctx is None:
                raise
            from mcp.types import ClientCapabilities, RootsCapability

            if not ctx.session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
                raise
        else:
            # a query right after start waits briefly for the start-up scan rather than answering "nothing yet"
            import anyio

            deadline = anyio.current_time() + STARTUP_WAIT_SECONDS
            while session.importing and anyio.current_time() < deadline:
                await anyio.sleep(0.05)
            return session
        import warnings

        import anyio.to_thread
        from mcp.shared.exceptions import MCPDeprecationWarning

        try:
            with warnings.catch_warnings():  # the SDK marks roots deprecated (SEP-2577); clients still send them
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                roots = (await ctx.session.list_roots()).roots
        except Exception as exc:  # noqa: BLE001 - roots are a convenience
            log.info("client roots unavailable: %s", exc)
            roots = []
        for root in roots:
            path = _root_from_uri(str(root.uri))
            if path is not None and path.is_dir():
                log.info("configuring the project from the client's root %s", path)
                configure = functools.partial(self.configure, str(path), background=True)
                session, _ = await anyio.to_thread.run_sync(configure)
                return session
        return self.project()


def _root_from_uri(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))
