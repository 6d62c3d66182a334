"""The client's first requests answered before the SDK is imported (issue 29: answers within 1 s of start-up).

Importing the MCP SDK takes 0.7-1 s of CPU on a 2-core machine (``python -X importtime``: ``mcp`` builds the
pydantic models of every protocol version it speaks) before the server can read its first message; with the
project's opening beside it, a new ``serve`` answered ``initialize`` 0.9-1.5 s after its spawn. The answers to a
client's first requests are the same every time the same client starts the same server: the opening request,
``initialize`` (protocol versions up to 2025-11-25) or ``server/discover`` (2026-07-28: the protocol version agreed,
the server's capabilities, name, version and instructions), the lists of tools, prompts, resources and resource
templates, and the acknowledgement of a ``subscriptions/listen`` request. So the SDK's own answers are kept, and the
next start answers the same requests with them at once, while the SDK is still being imported.

Claude Code 2.1.332 (2026-07-28) sends ``server/discover``, then ``subscriptions/listen``, and asks for the lists only
once that subscription is acknowledged: answered by the SDK, its tools came 1-3 s after the spawn, and a session's
first request to its model, sent meanwhile, went without them (on ``--resume`` the model then read "deferred tools
are no longer available" and "24 deferred tools are available again": about 4,000 characters each time).

How, without changing what the SDK sees or sends (:class:`EarlyAnswer`):

1. At start (:func:`start`), stdin's descriptor is taken over (fd 0 then reads the null device, as the SDK's
   stdio transport does while it serves) and a thread reads the client's stream from it, for the life of the
   process (:meth:`EarlyAnswer.serve_wire`).
2. If the first line is an opening request whose parameters were answered before by this build of the server and
   of the SDK (:class:`~code_trajectory.early_store.AnswerCache`: keyed by the method and the parameters, the
   request id and the client's name and version aside: :func:`~code_trajectory.early_store.request_key`), the kept
   answer goes out on stdout with the request's id. On a first start, the answer this package ships for the
   request's protocol version does (:class:`~code_trajectory.early_store.ShippedAnswers`: recorded from a real
   ``serve`` of the same build and SDK, and used only with them).
3. The lines that follow, until the SDK reads, are answered the same way when they are an opening request, a list
   (:data:`LISTING_METHODS`) or a ``subscriptions/listen`` (its acknowledgement, a notification) kept by an earlier
   start of this build (:func:`~code_trajectory.early_store.listing_build_key`: every file of this package), in a
   connection whose opening request was read here. Nothing else is: a tool call waits for the SDK.
4. The SDK is given everything read, in order (:meth:`EarlyAnswer.stdin`): it handles every request as always (the
   state of its session is its own), and its answer to a request answered early is dropped
   (:meth:`EarlyAnswer.take_answer`, :meth:`EarlyAnswer.take_acknowledgement`): the client already has one. When
   the SDK's answer differs from the one sent (an older build's), it replaces the kept one and a warning says so;
   when nothing was kept, the SDK's answer is sent as before and kept (for the first :data:`EXAMINED_LINES` lines).

Only requests are answered early: a line that is not JSON, a notification or any other method goes to the SDK
untouched. POSIX only (the descriptor is duplicated with ``fcntl``).

This module imports nothing of the SDK: it runs while the SDK is imported.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
import threading
from dataclasses import dataclass

from code_trajectory.early_store import (
    CACHE_ENTRIES,
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    AnswerCache,
    ShippedAnswers,
    build_key,
    listing_build_key,
    request_key,
    shipped_build,
)

__all__ = ["CACHE_ENTRIES", "CLIENT_CAPABILITIES_META_KEY", "CLIENT_INFO_META_KEY", "FIRST_LINE_LIMIT",
           "LISTING_METHODS", "OPENING_METHODS", "PROTOCOL_VERSION_META_KEY", "AnswerCache", "EarlyAnswer",
           "ShippedAnswers", "build_key", "listing_build_key", "request_key", "shipped_build", "start"]

log = logging.getLogger("code_trajectory.server")

#: The opening requests of the MCP protocol versions: ``initialize`` (2024-11-05 to 2025-11-25) and
#: ``server/discover`` (2026-07-28, a client without the handshake).
OPENING_METHODS = frozenset({"initialize", "server/discover"})
#: The lists a client asks for once connected: the same answer every time for one build (nothing is registered
#: conditionally: ``server.FEATURES``).
LISTING_METHODS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
#: The 2026-07-28 request for the server's notifications, acknowledged by a notification naming it.
LISTEN_METHOD = "subscriptions/listen"
ACKNOWLEDGED_METHOD = "notifications/subscriptions/acknowledged"
#: The ``_meta`` key of an acknowledgement naming the ``subscriptions/listen`` request (its id).
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
#: Longest first line read before giving up the early answer (bytes); an ``initialize`` is about 300 bytes.
FIRST_LINE_LIMIT = 1024 * 1024
#: Longest line looked at after the first (bytes): a list request is under 1 KB; a longer line ends the looking.
LATER_LINE_LIMIT = 64 * 1024
#: Lines looked at (answered early, or their answers kept), the first included; after them the stream goes to the
#: SDK as it comes (Claude Code's first requests take 6, a handshake client's about as many).
EXAMINED_LINES = 32


@dataclass
class _Pending:
    """A request read here whose answer from the SDK is awaited: ``sent`` what was answered early (None: nothing,
    the SDK's answer goes out and is kept), ``kept`` whether it came from the cache (not the shipped answers)."""

    key: str
    method: str
    sent: dict | None
    kept: bool


def _id_key(request_id: object) -> tuple[str, object] | None:
    """A request id as a dictionary key (``1`` and ``"1"`` differ; ``True`` is no id), or None when JSON-RPC does not
    allow it."""
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return (type(request_id).__name__, request_id)


class _PrefixedStdin(io.RawIOBase):
    """stdin for the SDK: the bytes :class:`EarlyAnswer` read (once the first line's answer, if any, is out), in
    order; then the rest of the client's stream, from :class:`EarlyAnswer`'s reader (:meth:`EarlyAnswer.serve_wire`)
    or, when none runs, from the descriptor taken over."""

    def __init__(self, early: EarlyAnswer) -> None:
        super().__init__()
        self._early = early

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # buffer: a writable buffer (memoryview or bytearray)
        early = self._early
        early.decided.wait()
        with early.arrived:
            early.sdk_reading = True  # from here on, nothing is answered early
            while early.pumping and not early.prefix and not early.wire_eof:
                early.arrived.wait()
            prefix = early.prefix
            if prefix:
                size = min(len(buffer), len(prefix))
                buffer[:size] = prefix[:size]
                del prefix[:size]  # a bytearray: taking from its front costs no copy of the rest
                return size
            if early.wire_eof:
                return 0
        return _read_wire(os.readv, early.wire, [buffer])


#: A line's end as the SDK reads the client's stream (text with universal newlines): ``\n``, ``\r\n`` or a lone ``\r``.
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _split_line(data: bytes | bytearray) -> tuple[bytes, bytes, bytes]:
    """``data`` as its first line, that line's end and the rest (``bytes.partition`` on :data:`_LINE_END`: a client
    ending its lines with ``\r`` alone was never answered, the first line waiting for a ``\n``; a ``\r`` last in
    ``data`` is a line's end, and a ``\n`` read after it an empty line, which answers nothing)."""
    found = _LINE_END.search(data)
    if found is None:
        return bytes(data), b"", b""
    return bytes(data[:found.start()]), found.group(), bytes(data[found.end():])


def _read_wire(read, wire: int, into):
    """``read(wire, into)`` (:func:`os.read` or :func:`os.readv`), waiting until ``wire`` is readable when it is in
    non-blocking mode (a client may hand over such a descriptor: the mode belongs to the open file it shares)."""
    import select

    while True:
        try:
            return read(wire, into)
        except BlockingIOError:
            waiting = select.poll()  # not select.select: it cannot wait on a descriptor numbered 1024 or more
            waiting.register(wire, select.POLLIN)
            waiting.poll()


class EarlyAnswer:
    """The client's first requests read before the SDK is imported, and answered from the kept (or shipped) answers
    when they can be (see the module's docstring). Made by :func:`start`.

    Attributes:
        wire: the descriptor of the client's stream (stdin's, duplicated above 2).
        decided: set once the first line is read (or stdin ended) and its early answer, if any, is written.
        arrived: the condition (and lock) of :attr:`prefix`, :attr:`pending`, :attr:`sdk_reading`, :attr:`wire_eof`.
        prefix: the bytes read from ``wire`` and not yet given to the SDK; pending: the end of a line not yet whole.
        sdk_reading: the SDK has begun to read (nothing is answered early after that).
        pumping: :meth:`serve_wire` reads the wire (else the SDK reads it once :attr:`prefix` is given).
        sent_result: the result answered early to the opening request, kept or shipped (None: none was).
        opening_key: the cache key of the connection's opening request, part of the keys of the requests after it
            (``""``: the first line is no opening request).
    """

    def __init__(self, wire: int, out: int, cache: AnswerCache, shipped: ShippedAnswers | None = None) -> None:
        self.wire = wire
        self.out = out
        self.cache = cache
        self.shipped = shipped
        self.decided = threading.Event()
        self.arrived = threading.Condition()
        self.prefix = bytearray()
        self.pending = b""
        self.sdk_reading = False
        self.pumping = False
        self.wire_eof = False
        self.sent_result: dict | None = None
        self.opening_key = ""
        self.examined = 0
        self._awaited: dict[tuple[str, object], _Pending] = {}
        self._acknowledging: dict[tuple[str, object], _Pending] = {}
        self._lock = threading.Lock()

    def serve_wire(self) -> None:
        """Read the client's stream until it ends (the thread :func:`start` starts): the first line
        (:meth:`read_first`), then every later line, answered early while the SDK has not begun to read
        (:meth:`_later`), and handed to it in order; never raises (a failure to read is the stream's end)."""
        self.pumping = True
        self.read_first()
        try:
            while not self.wire_eof:
                try:
                    chunk = _read_wire(os.read, self.wire, 65536)
                except OSError:
                    log.debug("reading the client's stream failed; it ends here", exc_info=True)
                    chunk = b""
                with self.arrived:
                    if not chunk:
                        self.wire_eof = True
                    elif self.examined >= EXAMINED_LINES:
                        self.prefix += chunk  # as it comes
                    else:
                        self.pending += chunk
                        self._take_lines()
                    self.arrived.notify_all()
        finally:  # the SDK is never left waiting: what was read is its, then the end of the stream
            with self.arrived:
                self.wire_eof = True
                self.prefix += self.pending
                self.pending = b""
                self.arrived.notify_all()

    def _take_lines(self) -> None:
        """Move the whole lines of :attr:`pending` to :attr:`prefix`, each looked at first (:meth:`_later`) while
        fewer than :data:`EXAMINED_LINES` were; called with :attr:`arrived` held."""
        while self.examined < EXAMINED_LINES:
            line, newline, rest = _split_line(self.pending)
            if not newline:
                if len(self.pending) > LATER_LINE_LIMIT:
                    self.examined = EXAMINED_LINES  # a long line: no list request; the rest goes as it comes
                break
            self.examined += 1
            if len(line) <= LATER_LINE_LIMIT:
                try:
                    self._later(line)
                except Exception:  # the SDK answers instead; the cause is for the log only
                    log.debug("a request is left to the SDK", exc_info=True)
            self.prefix += line + newline
            self.pending = rest
        if self.examined >= EXAMINED_LINES:
            self.prefix += self.pending
            self.pending = b""

    def read_first(self) -> None:
        """Read the first line from :attr:`wire` and answer it from the cache when it can be (with :attr:`pumping`,
        the lines read with it are looked at too: :meth:`_take_lines`); never raises: a failure leaves the SDK to
        answer."""
        try:
            line = self._read_line()
            if line is not None:
                self.examined = 1
                self._answer(line)
        except Exception:  # the SDK answers instead; the cause is for the log only
            log.debug("the opening request is left to the SDK", exc_info=True)
        finally:
            if self.pumping:  # the lines after the first are looked at before the SDK may read them
                with self.arrived:
                    first, newline, rest = _split_line(self.prefix)
                    if newline and self.opening_key:
                        self.prefix, self.pending = bytearray(first + newline), bytes(rest)
                        self._take_lines()
                    else:
                        self.examined = EXAMINED_LINES  # no opening request read here: the SDK reads on
            self.decided.set()

    def _read_line(self) -> bytes | None:
        while True:
            chunk = _read_wire(os.read, self.wire, 65536)
            if not chunk:
                self.wire_eof = True
                break
            self.prefix += chunk  # at once: what a failure of the next read leaves is still the SDK's
            if _LINE_END.search(chunk) or len(self.prefix) > FIRST_LINE_LIMIT:
                break
        line, newline, _ = _split_line(self.prefix)
        return bytes(line) if newline else None

    @staticmethod
    def _request(line: bytes, methods: frozenset[str]) -> tuple[dict, tuple[str, object]] | None:
        # UTF-8 text, as the SDK reads it: json.loads would take bytes with a BOM, or in UTF-16 or UTF-32, that the
        # SDK refuses (it would never answer the request answered here, and its id would stay awaited)
        request = json.loads(line.decode("utf-8"))
        if not (isinstance(request, dict) and request.get("jsonrpc") == "2.0" and request.get("method") in methods):
            return None
        id_key = _id_key(request.get("id"))
        return (request, id_key) if id_key is not None else None  # else a notification, or an id JSON-RPC refuses

    def _answer(self, line: bytes) -> None:
        found = self._request(line, OPENING_METHODS)
        if found is None:
            return
        request, id_key = found
        key = request_key(build_key(), request["method"], request.get("params"))
        if key is None:
            return
        self.opening_key = key
        result = self.cache.get(key)
        kept = result is not None  # else the shipped answer, if any
        if result is None and self.shipped is not None:
            result = self.shipped.get(request["method"], request.get("params"))
        if result is not None:
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})
            self.sent_result = result
        self._awaited[id_key] = _Pending(key, request["method"], result, kept)

    def _later(self, line: bytes) -> None:
        """Answer ``line``, a line after the first, from the kept answers when it is a request answered before in
        this build and the SDK has not begun to read; either way await the SDK's answer to keep or compare it."""
        if not self.opening_key:
            return  # no opening request read here: the protocol version agreed is not known
        found = self._request(line, OPENING_METHODS | LISTING_METHODS | {LISTEN_METHOD})
        if found is None:
            return
        request, id_key = found
        method = request["method"]
        if id_key in self._awaited or id_key in self._acknowledging:
            return  # an id used twice: the SDK's to answer
        opening = method in OPENING_METHODS
        key = request_key(build_key() if opening else listing_build_key(), method, request.get("params"),
                          "" if opening else self.opening_key)
        if key is None:
            return
        result = None if self.sdk_reading else self.cache.get(key)
        if method == LISTEN_METHOD:
            if result is not None:
                meta = {**result.get("_meta", {}), SUBSCRIPTION_ID_META_KEY: request["id"]}
                self._send({"jsonrpc": "2.0", "method": ACKNOWLEDGED_METHOD, "params": {**result, "_meta": meta}})
            self._acknowledging[id_key] = _Pending(key, method, result, True)
            return
        if result is not None:
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})
        self._awaited[id_key] = _Pending(key, method, result, True)

    def _send(self, message: dict) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[os.write(self.out, data):]

    def stdin(self) -> io.TextIOWrapper:
        """The client's stream for the SDK's stdio transport, from its first byte (as UTF-8 text, undecodable bytes
        replaced, as the SDK reads stdin itself)."""
        return io.TextIOWrapper(io.BufferedReader(_PrefixedStdin(self)), encoding="utf-8", errors="replace")

    def awaits(self, request_id: object) -> bool:
        """Whether the SDK's answer to ``request_id`` is awaited here (a request read here, answered early or to be
        kept), and :meth:`take_answer` has not seen it yet."""
        id_key = _id_key(request_id)
        return id_key is not None and id_key in self._awaited

    def take_answer(self, request_id: object, result: object) -> bool:
        """Whether the SDK's answer ``result`` (a JSON object, or None for an error) to ``request_id`` is to be
        dropped: True for its answer to a request answered early (once). The answer is kept in the cache (and
        replaces a different one sent early, with a warning)."""
        id_key = _id_key(request_id)
        with self._lock:
            pending = self._awaited.pop(id_key, None) if id_key is not None else None
        return pending is not None and self._compare(pending, result)

    def take_acknowledgement(self, params: object) -> bool:
        """Whether the SDK's ``notifications/subscriptions/acknowledged`` with ``params`` is to be dropped: True when
        the ``subscriptions/listen`` it names was acknowledged early (once); its parameters are kept as
        :meth:`take_answer` keeps an answer."""
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            return False
        id_key = _id_key(meta.get(SUBSCRIPTION_ID_META_KEY))
        with self._lock:
            pending = self._acknowledging.pop(id_key, None) if id_key is not None else None
        if pending is None:
            return False
        rest = {k: v for k, v in meta.items() if k != SUBSCRIPTION_ID_META_KEY}
        kept = {k: v for k, v in params.items() if k != "_meta"} | ({"_meta": rest} if rest else {})
        return self._compare(pending, kept)

    def _compare(self, pending: _Pending, result: object) -> bool:
        """Keep or compare the SDK's ``result`` for ``pending``; whether the SDK's answer is to be dropped (one was
        sent early). Never raises: a failure to keep only costs time, and the client must not get a second answer
        (an error) to a request it had answered."""
        sent = pending.sent
        if not isinstance(result, dict):
            return sent is not None
        try:
            if sent is None or (result == sent and not pending.kept):  # kept: the cache is read first
                self.cache.put(pending.key, result)
            elif result != sent:
                self.cache.put(pending.key, result)
                log.warning("the answer to %s sent at start (%s) differs from the SDK's; the next start sends "
                            "the SDK's", pending.method,
                            "kept by another build" if pending.kept else "shipped with this package")
            else:
                log.info("%s answered at start with the answer kept in %s", pending.method, self.cache.path)
                self.cache.touch(pending.key)
        except Exception:  # the boundary: see the docstring
            log.debug("the SDK's answer to %s was not kept", pending.method, exc_info=True)
        return sent is not None


def start(cache: AnswerCache | None = None) -> EarlyAnswer | None:
    """Take over stdin and start reading the client's first line on a thread (see the module's docstring); None
    where that cannot be done (not POSIX, or stdin is a terminal or closed): the SDK then reads stdin itself."""
    if sys.platform == "win32":
        return None
    import fcntl

    try:
        if os.isatty(0):
            return None
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        return None
    try:
        out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        os.close(wire)
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)  # as the SDK's transport does while it serves: children read nothing of the client's
        finally:
            os.close(null)
    except OSError:
        os.close(wire)
        os.close(out)
        return None
    early = EarlyAnswer(wire, out, cache if cache is not None else AnswerCache(), ShippedAnswers())
    threading.Thread(target=early.serve_wire, name="trajectory-opening", daemon=True).start()
    return early
