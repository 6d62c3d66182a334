"""The MCP handshake answered before the SDK is imported (issue 29: ``initialize`` within 1 s of start-up).

Importing the MCP SDK takes 0.7-1 s of CPU on a 2-core machine (``python -X importtime``: ``mcp`` builds the
pydantic models of every protocol version it speaks) before the server can read its first message; with the
project's opening beside it, a new ``serve`` answered ``initialize`` 0.9-1.5 s after its spawn. The answer to a
client's opening request, ``initialize`` (protocol versions up to 2025-11-25) or ``server/discover``
(2026-07-28), is the same every time the same client starts the same server: the protocol version agreed, the
server's capabilities, name, version and instructions. So the SDK's own answer is kept, and the next start
answers the same request with it at once, while the SDK is still being imported.

How, without changing what the SDK sees or sends (:class:`EarlyAnswer`):

1. At start (:func:`start`), stdin's descriptor is taken over (fd 0 then reads the null device, as the SDK's
   stdio transport does while it serves) and a thread reads the first line from it.
2. If that line is an opening request whose parameters were answered before by this build of the server and of
   the SDK (:class:`AnswerCache`: keyed by the method and the parameters, the request id and the client's name and
   version aside: :func:`request_key`), the kept answer goes out on stdout with the request's id. On a first
   start, the answer this package ships for the request's protocol version does (:class:`ShippedAnswers`: recorded
   from a real ``serve`` of the same build and SDK, and used only with them).
3. The SDK is then given everything read, the first line included (:meth:`EarlyAnswer.stdin`): it handles the
   opening request as always (the state of its session is its own), and its answer to that id is dropped
   (:meth:`EarlyAnswer.take_answer`): the client already has one. When the SDK's answer differs from the one
   sent (an older build's), it replaces the kept one and a warning says so; when nothing was kept, the SDK's
   answer is sent as before and kept.

The build is told by the version of this package, the size and time of ``server.py`` (its instructions) and of the
SDK's ``__init__.py`` files (an upgrade rewrites them): a change of either makes a new key, so an answer kept by
another build is never sent. Only requests are answered early: a first line that is not JSON, a notification or
any other method goes to the SDK untouched. POSIX only (the descriptor is duplicated with ``fcntl``).

This module imports nothing of the SDK: it runs while the SDK is imported.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import sys
import threading
from pathlib import Path

from code_trajectory import __version__
from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object
from code_trajectory.core.paths import home_dir

log = logging.getLogger("code_trajectory.server")

#: The opening requests of the MCP protocol versions: ``initialize`` (2024-11-05 to 2025-11-25) and
#: ``server/discover`` (2026-07-28, a client without the handshake).
OPENING_METHODS = frozenset({"initialize", "server/discover"})
#: Longest first line read before giving up the early answer (bytes); an ``initialize`` is about 300 bytes.
FIRST_LINE_LIMIT = 1024 * 1024
#: Answers kept in :class:`AnswerCache` (one per client kind and protocol version seen); the oldest go first.
CACHE_ENTRIES = 16
#: Least time between two notes of one kept answer's use (:meth:`AnswerCache.touch`), seconds.
TOUCH_SECONDS = 3600
#: Longest wait for another server's write of the cache file, seconds (then this answer is not kept).
LOCK_SECONDS = 2.0
#: Bound for the cache file (bytes).
CACHE_FILE_LIMIT = 1024 * 1024


def build_key() -> str:
    """A digest of what an opening answer depends on besides the request: this package's version, and the size and
    modification time of ``code_trajectory/server.py`` and of the SDK's ``mcp/__init__.py`` and
    ``mcp_types/__init__.py`` (found without importing them)."""
    from importlib.util import find_spec

    parts = [__version__, sys.version.split()[0]]
    origins = [str(Path(__file__).with_name("server.py"))]
    for package in ("mcp", "mcp_types"):
        spec = find_spec(package)
        origins.append(spec.origin if spec is not None and spec.origin else package)
    for origin in origins:
        try:
            st = os.stat(origin)
        except OSError:
            parts.append(f"{origin}:missing")
        else:
            parts.append(f"{origin}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


#: Where an opening request names its client: ``initialize``'s ``clientInfo``, and the ``_meta`` key of the
#: 2026-07-28 envelope (``mcp_types.CLIENT_INFO_META_KEY``).
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
#: The 2026-07-28 envelope's protocol version and client capabilities (``mcp_types``' ``*_META_KEY``).
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"


def request_key(build: str, method: str, params: object) -> str | None:
    """The key of an opening request: ``build`` (:func:`build_key`), the method and the parameters as canonical JSON
    (sorted keys), the request's id and the client's name and version aside; None when the request is not to be
    answered early (its client named in another shape than the SDK accepts).

    The SDK's answer does not depend on which client asks (``mcp.server.runner``'s ``_handle_initialize`` reads the
    protocol version alone; ``server/discover`` the envelope's protocol version), so a client upgraded since the last
    start (Claude Code updates itself often) is still answered at once. The client's name is only checked to be what
    the SDK accepts (an object with string ``name`` and ``version``): a request the SDK would refuse is its to answer."""
    if not isinstance(params, dict):
        return _digest(build, method, params)
    if method == "initialize":
        info, rest = params.get("clientInfo"), {k: v for k, v in params.items() if k != "clientInfo"}
    else:
        meta = params.get("_meta")
        if not isinstance(meta, dict) or CLIENT_INFO_META_KEY not in meta:
            return _digest(build, method, params)
        info = meta[CLIENT_INFO_META_KEY]
        rest = {**params, "_meta": {k: v for k, v in meta.items() if k != CLIENT_INFO_META_KEY}}
    if not (isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return None
    return _digest(build, method, rest)


def _digest(build: str, method: str, params: object) -> str:
    canonical = json.dumps([build, method, params], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


class AnswerCache:
    """The SDK's answers to opening requests, kept in ``<CODE_TRAJECTORY_HOME>/cache/opening-answers.json``
    (``{"answers": {key: {"result": {...}, "used": seconds}}}``, at most :data:`CACHE_ENTRIES`).

    The file is this user's own; a file that is missing, not JSON, too large or of another shape is an empty
    cache (and is rewritten at the next answer kept), never an error.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else home_dir() / "cache" / "opening-answers.json"

    def _entries(self) -> dict[str, dict]:
        data = read_json_object(self.path, CACHE_FILE_LIMIT)
        answers = data.get("answers") if data is not None else None
        if not isinstance(answers, dict):
            return {}
        return {key: entry for key, entry in answers.items()
                if isinstance(entry, dict) and isinstance(entry.get("result"), dict)}

    def get(self, key: str) -> dict | None:
        """The result kept for ``key``, or None."""
        entry = self._entries().get(key)
        return entry["result"] if entry is not None else None

    def touch(self, key: str) -> None:
        """Note that the answer kept for ``key`` was used: its entry becomes the newest (so that the oldest dropped
        is the one least recently used), written at most once an hour per entry."""
        import time

        entry = self._entries().get(key)
        if entry is not None and _used(entry) < time.time() - TOUCH_SECONDS:
            self.put(key, entry["result"])

    def put(self, key: str, result: dict) -> None:
        """Keep ``result`` for ``key`` (the oldest entries beyond :data:`CACHE_ENTRIES` dropped), without an fsync.
        A failure to write (a read-only or full home directory) is logged at debug level: the cache only saves
        time."""
        import time

        from filelock import FileLock, Timeout

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # two servers started together each add their answer: read, change and write under one lock
            with FileLock(str(self.path) + ".lock", timeout=LOCK_SECONDS):
                entries = self._entries()
                latest = max((_used(entry) for entry in entries.values()), default=0.0)
                entries[key] = {"result": result, "used": max(time.time(), latest + 1e-6)}  # the newest last
                kept = sorted(entries.items(), key=lambda item: _used(item[1]), reverse=True)[:CACHE_ENTRIES]
                # no fsync: the SDK's answer waits for this write (twice 4-11 ms here, far more on a busy disk),
                # and a crash loses only time
                replace_file(self.path, json.dumps({"answers": dict(kept)}, separators=(",", ":")) + "\n",
                             fsync=False)
        except (OSError, Timeout) as exc:
            log.debug("could not keep the opening answer in %s: %s", self.path, exc)


def _used(entry: dict) -> float:
    used = entry.get("used")
    return float(used) if isinstance(used, (int, float)) else 0.0


class ShippedAnswers:
    """The SDK's answers to the opening requests of every protocol version it speaks, as this package ships them
    (``code_trajectory/opening_answers.json``, written by ``python tests/e2e/test_early_answer.py --recompute`` from a
    real ``serve``, and checked against it by that test): a first start (after an install, or with a new
    ``CODE_TRAJECTORY_HOME``) answers its opening request at once too.

    Used only where they were recorded: this package's version, the same ``server.py`` (its SHA-256: the server's
    instructions) and the same ``mcp`` and ``mcp_types`` distributions (their versions, from the names of their
    ``.dist-info`` directories, read without importing them); anything else answers nothing here. Keyed by the method
    and the protocol version the request asks for (``initialize``'s ``protocolVersion``, the 2026-07-28 envelope's
    ``io.modelcontextprotocol/protocolVersion``): the SDK's answer depends on nothing else of the request
    (``mcp.server.runner``; :func:`request_key`). A request of another shape, or of a version not recorded, is the
    SDK's to answer. The SDK's own answer is still compared with the one sent (:meth:`EarlyAnswer.take_answer`).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else Path(__file__).with_name("opening_answers.json")

    def get(self, method: str, params: object) -> dict | None:
        """The shipped result for the opening request ``method`` with ``params``, or None."""
        version = _asked_version(method, params)
        if version is None:
            return None
        data = read_json_object(self.path, CACHE_FILE_LIMIT)
        if data is None or data.get("build") != shipped_build():
            return None
        answers = data.get("answers")
        result = answers.get(f"{method} {version}") if isinstance(answers, dict) else None
        return result if isinstance(result, dict) else None


def _asked_version(method: str, params: object) -> str | None:
    """The protocol version an opening request asks for, when the request has the shape the SDK accepts for it."""
    if not isinstance(params, dict):
        return None
    if method == "initialize":
        version = params.get("protocolVersion")
        return version if isinstance(version, str) and isinstance(params.get("capabilities"), dict) else None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not isinstance(meta.get(CLIENT_CAPABILITIES_META_KEY), dict):
        return None
    version = meta.get(PROTOCOL_VERSION_META_KEY)
    return version if isinstance(version, str) else None


def shipped_build() -> dict[str, str] | None:
    """What :class:`ShippedAnswers` must have been recorded with to be used here: this package's version, the SHA-256
    of ``server.py``, and the versions of the installed ``mcp`` and ``mcp_types`` (None when one cannot be told)."""
    from importlib.util import find_spec

    build = {"code-trajectory": __version__}
    try:
        build["server.py"] = hashlib.sha256(Path(__file__).with_name("server.py").read_bytes()).hexdigest()
        for package in ("mcp", "mcp_types"):
            spec = find_spec(package)
            if spec is None or not spec.origin:
                return None
            site = Path(spec.origin).parent.parent
            found = [p.name for p in site.glob(f"{package}-*.dist-info")]
            if len(found) != 1:
                return None  # none, or a stale one beside the installed one: which is which cannot be told
            build[package] = found[0][len(package) + 1:-len(".dist-info")]
    except OSError:
        return None
    return build


class _PrefixedStdin(io.RawIOBase):
    """stdin for the SDK: the bytes :class:`EarlyAnswer` read first (once its answer, if any, is out), then the
    rest of the client's stream from the descriptor taken over."""

    def __init__(self, early: EarlyAnswer) -> None:
        super().__init__()
        self._early = early

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # buffer: a writable buffer (memoryview or bytearray)
        self._early.decided.wait()
        prefix = self._early.prefix
        if prefix:
            size = min(len(buffer), len(prefix))
            buffer[:size] = prefix[:size]
            self._early.prefix = prefix[size:]
            return size
        if self._early.wire_eof:
            return 0
        return _read_wire(os.readv, self._early.wire, [buffer])


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
    """The opening request read before the SDK is imported, and answered from :class:`AnswerCache` when it can be
    (see the module's docstring). Made by :func:`start`.

    Attributes:
        wire: the descriptor of the client's stream (stdin's, duplicated above 2).
        decided: set once the first line is read (or stdin ended) and its early answer, if any, is written.
        prefix: the bytes read from ``wire`` and not yet given to the SDK.
        sent_result: the result answered early, kept or shipped (None: none was).
        key: the cache key of the opening request read (None: the first line is no opening request).
    """

    def __init__(self, wire: int, out: int, cache: AnswerCache, shipped: ShippedAnswers | None = None) -> None:
        self.wire = wire
        self.out = out
        self.cache = cache
        self.shipped = shipped
        self.sent_kept = False  # the result sent early was the cache's (not the shipped one)
        self.decided = threading.Event()
        self.prefix = b""
        self.wire_eof = False
        self.sent_result: dict | None = None
        self.key: str | None = None
        self.request_id: int | str | None = None
        self.method = ""
        self._lock = threading.Lock()

    def read_first(self) -> None:
        """Read the first line from :attr:`wire` and answer it from the cache when it can be (on the thread
        :func:`start` starts); never raises: a failure leaves the SDK to answer."""
        try:
            line = self._read_line()
            if line is not None:
                self._answer(line)
        except Exception:  # the SDK answers instead; the cause is for the log only
            log.debug("the opening request is left to the SDK", exc_info=True)
        finally:
            self.decided.set()

    def _read_line(self) -> bytes | None:
        while True:
            chunk = _read_wire(os.read, self.wire, 65536)
            if not chunk:
                self.wire_eof = True
                break
            self.prefix += chunk  # at once: what a failure of the next read leaves is still the SDK's
            if b"\n" in chunk or len(self.prefix) > FIRST_LINE_LIMIT:
                break
        line, newline, _ = self.prefix.partition(b"\n")
        return line if newline else None

    def _answer(self, line: bytes) -> None:
        # UTF-8 text, as the SDK reads it: json.loads would take bytes with a BOM, or in UTF-16 or UTF-32, that the
        # SDK refuses (it would never answer the request answered here, and its id would stay awaited)
        request = json.loads(line.decode("utf-8"))
        if not (isinstance(request, dict) and request.get("jsonrpc") == "2.0"
                and request.get("method") in OPENING_METHODS):
            return
        request_id = request.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            return  # a notification, or an id JSON-RPC does not allow: the SDK's to answer
        key = request_key(build_key(), request["method"], request.get("params"))
        if key is None:
            return
        self.key = key
        self.method = request["method"]
        self.request_id = request_id
        result = self.cache.get(self.key)
        self.sent_kept = result is not None
        if result is None and self.shipped is not None:
            result = self.shipped.get(self.method, request.get("params"))
        if result is None:
            return
        answer = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":"))
        data = (answer + "\n").encode()
        while data:
            data = data[os.write(self.out, data):]
        self.sent_result = result

    def stdin(self) -> io.TextIOWrapper:
        """The client's stream for the SDK's stdio transport, from its first byte (as UTF-8 text, undecodable bytes
        replaced, as the SDK reads stdin itself)."""
        return io.TextIOWrapper(io.BufferedReader(_PrefixedStdin(self)), encoding="utf-8", errors="replace")

    def awaits(self, request_id: object) -> bool:
        """Whether ``request_id`` is the opening request's, whose answer :meth:`take_answer` has not seen yet."""
        return self.key is not None and request_id == self.request_id and not isinstance(request_id, bool)

    def take_answer(self, request_id: object, result: object) -> bool:
        """Whether the SDK's answer ``result`` (a JSON object, or None for an error) to ``request_id`` is to be
        dropped: True for its answer to the request answered early (once); the answer is kept in the cache when
        it is the answer to the opening request (and replaces a different one sent early, with a warning)."""
        with self._lock:
            key = self.key
            if key is None or not self.awaits(request_id):
                return False
            self.key = None
        sent = self.sent_result
        if isinstance(result, dict):
            if sent is None or (result == sent and not self.sent_kept):  # kept: the cache is read first
                self.cache.put(key, result)
            elif result != sent:
                self.cache.put(key, result)
                log.warning("the opening answer sent at start (%s) differs from the SDK's; the next start sends "
                            "the SDK's", "kept by another build" if self.sent_kept else "shipped with this package")
            else:
                log.info("%s answered at start with the answer kept in %s", self.method, self.cache.path)
                self.cache.touch(key)
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
    threading.Thread(target=early.read_first, name="trajectory-opening", daemon=True).start()
    return early
