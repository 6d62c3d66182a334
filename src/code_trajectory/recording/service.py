"""The project the MCP server currently records, switchable at run time: what every feature's tools share.

Which project: ``serve --project P`` fixes it. Without it the server *follows the client*
(:attr:`TrajectoryService.follow_client`): once the client has sent ``notifications/initialized`` (or, at protocol
2026-07-28, which has no handshake, its first ``server/discover``: see :func:`code_trajectory.server._follow_client`)
and again on every ``notifications/roots/list_changed``, the project is found from the client's first ``file://``
root that is a directory, or, when the client offers no roots or cannot be asked for them, from the server's
working directory (Claude Code, Cursor and VS
Code start a project's servers there), by the project rule of :func:`code_trajectory.project.find_project_root`:
the nearest recorded directory above it, else the git top level (``git rev-parse --show-toplevel``), else the
directory itself. A root in ``repo/sub`` therefore records ``repo``; a linked worktree or a clone records itself.
``configure_project`` is an explicit choice: it stops the following.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import NotConfiguredError, TrajectoryError
from code_trajectory.project import check_recordable, find_project_root, has_shadow_repo, resolve_project_root
from code_trajectory.recording.session import ProjectSession

log = logging.getLogger(__name__)

#: How long after a project's session started a tool call may still wait for its start-up scan, seconds: a small
#: project's first answer holds its import, a large one's answers at once from what is recorded, with the scan's
#: progress (issue 29: every tool answers within 1 s of start-up at any size, also while the import runs).
FIRST_ANSWER_SECONDS = 0.8
#: How long the server waits for the client's answer to ``roots/list`` before using its working directory, seconds.
ROOTS_TIMEOUT_SECONDS = 10.0


class TrajectoryService:
    """The project the MCP server currently records, switchable at run time.

    Each feature's ``tools.register(mcp, service)`` receives this object: tools get the project
    with :meth:`session_for`.

    Args:
        settings_factory: builds settings for a project root (config files + overrides).
        force_polling: passed to watchers (tests).
        journal_dir: the journal repository chosen on the command line (``serve --journal-dir``), or None.
        follow_client: find the project from the client's roots (or the working directory) when the client
            initializes and when its roots change (``serve`` without ``--project``); see the module docstring.
    """

    def __init__(self, settings_factory: Callable[[Path], TrajectorySettings], *,
                 force_polling: bool | None = None, journal_dir: Path | None = None,
                 follow_client: bool = False) -> None:
        self._settings_factory = settings_factory
        self._force_polling = force_polling
        self.journal_dir = journal_dir
        self.follow_client = follow_client
        self._session: ProjectSession | None = None
        self._startup_error: TrajectoryError | None = None
        self._lock = threading.RLock()

    def startup_failed(self, error: TrajectoryError) -> None:
        """Remember why the project given at start (``serve --project``) could not be opened: every tool that
        needs the project raises it, until ``configure_project`` succeeds."""
        self._startup_error = error

    def configure(self, path: str, *, background: bool = False, watch_first: bool = True,
                  import_after: threading.Event | None = None) -> tuple[ProjectSession, bool]:
        """Start recording ``path`` (stopping the previous project); the same path keeps its session.

        Args:
            path: the project directory (absolute).
            background: return as soon as the watcher runs, with the start-up scan going on
                in the background (see :meth:`ProjectSession.start`).
            watch_first: False: an initial import's watches are set after it, on the start-up thread
                (``serve --project`` and following the client: see :meth:`ProjectSession.start`).
            import_after: an initial import starts once this is set (``serve --project``: when its server is
                built; see :func:`code_trajectory.recording.startup.startup_scan`), and a restart's watches are set
                once it is; None: at once.

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
                session.start(background=background, watch_first=watch_first, import_after=import_after)
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

    def awaiting_project(self) -> bool:
        """True while the server follows the client (:attr:`follow_client`) and records no project yet."""
        return self.follow_client and self._session is None

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
        """The configured project; when none is, the one :meth:`follow` finds (following the client), else the
        project of the client's first MCP root when it offers roots.

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
            if self.follow_client:  # no notifications/initialized seen yet (or a client without that handshake)
                await self.follow(ctx.session)
                return await settled(self.project())
            from mcp.types import ClientCapabilities, RootsCapability

            if not ctx.session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
                raise
        else:
            return await settled(session)
        import anyio.to_thread

        directory = await client_directory(ctx.session, cwd_fallback=False)
        if directory is not None:
            root = project_for_directory(directory)
            log.info("configuring the project %s from the client's root %s", root, directory)
            session, _ = await anyio.to_thread.run_sync(lambda: self.configure(str(root), background=True))
            return await settled(session)
        return await settled(self.project())

    async def follow(self, client_session: Any) -> Path | None:
        """Configure the project the client is in (roots, else the working directory) when following the client.

        Called on ``notifications/initialized`` and ``notifications/roots/list_changed``. A directory that must
        never be recorded (the home directory, the file system root...) is not configured: the reason is kept
        for the tools (:meth:`startup_failed`) and logged. Never raises.

        Args:
            client_session: the connection's ``ServerSession`` (to send ``roots/list``).

        Returns:
            The project now recorded, or None (not following, no usable directory, or refused).
        """
        if not self.follow_client:
            return None
        import anyio.to_thread

        try:
            directory = await client_directory(client_session, cwd_fallback=True)
            if directory is None:
                return None
            root = project_for_directory(directory)
            check_recordable(root, creating=not has_shadow_repo(root))
            session, started = await anyio.to_thread.run_sync(
                lambda: self.configure(str(root), background=True, watch_first=False))
        except TrajectoryError as exc:
            log.warning("not recording the client's directory: %s", exc)
            if self._session is None:
                self.startup_failed(exc)
            return None
        except Exception:
            log.exception("following the client's roots failed")
            return None
        if started:
            log.info("recording %s, the project of the client's root or working directory", session.root)
        return session.root


async def settled(session: ProjectSession) -> ProjectSession:
    """``session`` once a tool may answer from it: its start-up scan done or waited for briefly
    (:func:`wait_briefly_for_import`), and the edits hooks handed over before the call recorded
    (:meth:`ProjectSession.record_waiting_handovers`)."""
    import anyio.to_thread

    await wait_briefly_for_import(session)
    await anyio.to_thread.run_sync(session.record_waiting_handovers)
    return session


async def wait_briefly_for_import(session: ProjectSession) -> None:
    """Wait while ``session``'s start-up scan runs, until :data:`FIRST_ANSWER_SECONDS` after the session started
    (not after the call: a later call never waits), unless the scan is a large project's, which takes seconds
    (:func:`code_trajectory.recording.startup.takes_long`): then not at all. The answer given after it says how far
    the scan got (:meth:`ProjectSession.status_notices`)."""
    import time

    import anyio

    from code_trajectory.recording.startup import takes_long

    if session.importing and takes_long(session.recorder):
        return
    deadline = session.started_monotonic + FIRST_ANSWER_SECONDS
    while session.importing and time.monotonic() < deadline:
        await anyio.sleep(0.02)


def project_for_directory(directory: Path) -> Path:
    """The project a client directory belongs to (:func:`code_trajectory.project.find_project_root`): the nearest
    recorded directory above it, else its git top level, else itself; absolute and resolved."""
    return find_project_root(directory)


async def client_directory(client_session: Any, *, cwd_fallback: bool) -> Path | None:
    """The directory the client works in: its first ``file://`` root that is a directory (``roots/list``, when
    the client declares the roots capability), else the working directory when ``cwd_fallback``, else None."""
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp.types import ClientCapabilities, RootsCapability

    roots: list[Any] = []
    if client_session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
        import anyio

        try:
            with warnings.catch_warnings():  # the SDK marks roots deprecated (SEP-2577); clients still send them
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                with anyio.fail_after(ROOTS_TIMEOUT_SECONDS):
                    roots = list((await client_session.list_roots()).roots)
        except Exception as exc:  # noqa: BLE001 - roots are a convenience (TimeoutError: a client that never answers)
            log.info("client roots unavailable: %s", exc)
    for root in roots:
        path = _root_from_uri(str(root.uri))
        if path is not None and path.is_dir():
            return path
    if cwd_fallback:
        try:
            return Path.cwd()
        except OSError:  # the working directory was removed
            return None
    return None


def _root_from_uri(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (``file:///C:/x`` on Windows too), or None for other schemes, a remote
    host, a relative path or a NUL byte."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    text = unquote(parsed.path)
    if "\0" in text:
        return None
    if len(text) >= 3 and text[0] == "/" and text[2] == ":" and text[1].isalpha():  # /C:/... (RFC 8089)
        text = text[1:]
    path = Path(text)
    return path if path.is_absolute() else None
