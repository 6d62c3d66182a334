"""Stopping a long-running command cleanly, and child processes that die with their parent.

Clients stop a stdio MCP server in different ways (measured with the real clients, issue 22): Claude Code 2.1 sends
SIGINT, then SIGTERM about 0.1 s later, leaving stdin open; Gemini CLI 0.61 sends SIGTERM; Codex CLI 0.169 closes
stdin. A terminal sends SIGHUP when it closes. :class:`StopRequest` turns all of them into one request to stop: the
first one counts, the ones after it change nothing (so a second signal never interrupts the flush the first one
started). Its signal handler only stores the reason and writes one byte to a pipe (no lock is taken in a handler:
one the interrupted main thread holds would deadlock it); whoever stops the program waits on that pipe.

A child process calls :func:`die_with_parent` first thing: on Linux the kernel kills it when its parent exits
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``, prctl(2)); everywhere it also exits when the pipe its parent holds on its stdin
reaches end of file (the parent exited or closed it). The parent stops its children with :func:`stop_child`.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: The signals that ask a long-running command to stop (those this platform has).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``.
PR_SET_PDEATHSIG = 1
#: How long :func:`stop_child` waits after SIGTERM before SIGKILL, seconds.
CHILD_TERM_SECONDS = 1.0


class StopRequest:
    """A request to stop, made by a stop signal (:meth:`install`), the end of stdin (:meth:`watch_stdin`) or a call
    of :meth:`request`. Only the first request is kept (:attr:`reason`); later ones are counted and change nothing.
    """

    def __init__(self) -> None:
        #: Why the program stops (``"SIGTERM"``, ``"end of stdin"``, ...), None until a stop is requested.
        self.reason: str | None = None
        #: Requests received (a client may send several signals).
        self.count = 0
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self._previous: dict[int, object] = {}

    def install(self, signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> None:
        """Make ``signals`` (default SIGINT, SIGTERM, SIGHUP) request a stop instead of their default action.

        Must be called from the main thread (Python runs signal handlers there); :meth:`restore` undoes it.
        """
        for sig in signals:
            self._previous[sig] = signal.signal(sig, self._on_signal)

    def restore(self) -> None:
        """Give the signals :meth:`install` took their previous handlers back (main thread only)."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]  # as signal() gave it (None: set from C)
        self._previous.clear()

    def ignore(self) -> None:
        """Once stopped cleanly, on the way out: ignore the signals :meth:`install` took (main thread only).

        Python gives them their default action back while it shuts down, so a late one (Claude Code's SIGTERM
        0.1 s after its SIGINT) would end a process that stopped cleanly with that signal instead of status 0.
        """
        for sig in self._previous:
            signal.signal(sig, signal.SIG_IGN)
        self._previous.clear()

    def watch_stdin(self) -> bool:
        """Request a stop when stdin reaches end of file, if stdin is a pipe or a socket (its other end is held by
        the process that started this one, so its end means that process is gone or wants this one to stop).

        A terminal, ``/dev/null`` or a file on stdin is left alone: a command started in the background or by a
        service manager (stdin ``/dev/null``) must keep running; so is a pipe already at its end when this is
        called (inherited from a parent whose own input was used up: it was never a lifeline). Whatever is read
        is discarded.

        Returns:
            True when stdin is watched.
        """
        try:
            mode = os.fstat(0).st_mode
        except OSError:
            return False
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False
        try:
            if select.select([0], [], [], 0)[0] and not os.read(0, 65536):
                return False  # already at its end
        except OSError:
            return False

        threading.Thread(target=_until_stdin_ends, args=(self.request, "end of stdin"), name="stop-on-stdin-eof",
                         daemon=True).start()
        return True

    def _on_signal(self, signum: int, frame: object) -> None:
        self.request(signal.Signals(signum).name)

    def request(self, reason: str) -> None:
        """Ask to stop because of ``reason``; safe from a signal handler and from any thread (takes no lock)."""
        if self.reason is None:
            self.reason = reason
        self.count += 1
        with contextlib.suppress(OSError):  # the pipe is full: a wake-up is already pending
            os.write(self._write_fd, b"\0")

    @property
    def requested(self) -> bool:
        """True once a stop was requested."""
        return self.reason is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: for ever) for a stop request; True when one was made."""
        if self.reason is None:
            with contextlib.suppress(OSError, ValueError):
                select.select([self._read_fd], [], [], timeout)
        return self.reason is not None


def die_with_parent(parent_pid: int, *, watch_stdin: bool = True) -> None:
    """In a child process, first thing: make sure it does not outlive ``parent_pid``.

    On Linux the kernel sends SIGKILL to this process when the thread that started it exits
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``); if the parent is already gone this process exits at once. With
    ``watch_stdin`` the process also exits (status 1) when stdin, a pipe the parent holds, reaches end of file:
    that covers the platforms without ``prctl``. Whatever is read on stdin is discarded.

    Args:
        parent_pid: the process id the parent passed (``os.getpid()`` in the parent).
        watch_stdin: exit when stdin reaches end of file.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols, libc's among them
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
                log.debug("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
        except (OSError, AttributeError) as exc:
            log.debug("prctl unavailable: %s", exc)
    if os.getppid() != parent_pid:  # the parent exited before the death signal was armed
        os._exit(1)
    if watch_stdin:
        threading.Thread(target=_until_stdin_ends, args=(os._exit, 1), name="exit-with-parent", daemon=True).start()


def _until_stdin_ends(then: Callable[[int], object], argument: int) -> None:
    """Read stdin (discarding it) until its end or an error, then call ``then(argument)``."""
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    then(argument)


def stop_child(proc: subprocess.Popen[Any], timeout: float = CHILD_TERM_SECONDS) -> None:
    """Stop a child process and reap it: close its stdin, SIGTERM, then SIGKILL after ``timeout`` seconds."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    if proc.poll() is not None:
        return
    with contextlib.suppress(OSError):
        proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
