"""What the early answers are made of: the SDK's answers kept from earlier starts and the ones this package ships.

:mod:`code_trajectory.early_answer` answers a client's first requests before the MCP SDK is imported; this module
holds what it answers with and how a request is told to be the same as one answered before:

* :func:`build_key` (and :func:`listing_build_key` for the lists of tools, prompts and resources): what an answer
  depends on besides the request;
* :func:`request_key`: the request's key, the client's name and version aside;
* :class:`AnswerCache`: the SDK's answers kept in ``<CODE_TRAJECTORY_HOME>/cache/opening-answers.json``;
* :class:`ShippedAnswers`: the answers to the opening requests this package ships for a first start.

It imports nothing of the SDK.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sys
from pathlib import Path

from code_trajectory import __version__
from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_json_object
from code_trajectory.core.paths import home_dir

log = logging.getLogger("code_trajectory.server")

#: Answers kept in :class:`AnswerCache` (the opening request, the listen request and the lists of tools, prompts and
#: resources of each client kind and protocol version seen: about 6 each); the least recently used go first.
CACHE_ENTRIES = 64
#: Least time between two notes of one kept answer's use (:meth:`AnswerCache.touch`), seconds.
TOUCH_SECONDS = 3600
#: Longest wait for another server's write of the cache file, seconds (then this answer is not kept).
LOCK_SECONDS = 2.0
#: Bound for the cache file (bytes); a ``tools/list`` answer takes ~16 KB.
CACHE_FILE_LIMIT = 4 * 1024 * 1024
#: The other packages a list of tools, prompts or resources depends on (pydantic makes the tools' input schemas).
LISTING_PACKAGES = ("pydantic", "pydantic_core")


def build_key() -> str:
    """A digest of what an opening answer depends on besides the request: this package's version, and the size and
    modification time of ``code_trajectory/server.py`` and of the SDK's ``mcp/__init__.py`` and
    ``mcp_types/__init__.py`` (found without importing them)."""
    origins = [str(Path(__file__).with_name("server.py")), _package_init("mcp"), _package_init("mcp_types")]
    parts = [__version__, sys.version.split()[0], *map(_stamp, origins)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _package_init(name: str) -> str:
    """The path of the installed package ``name``'s ``__init__.py``, found without importing it (``name`` itself when
    it is not installed)."""
    from importlib.util import find_spec

    spec = find_spec(name)
    return spec.origin if spec is not None and spec.origin else name


def _stamp(path: str) -> str:
    """``path:size:mtime_ns`` of the file at ``path`` (``path:missing`` when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:missing"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


#: Where an opening request names its client: ``initialize``'s ``clientInfo``, and the ``_meta`` key of the
#: 2026-07-28 envelope (``mcp_types.CLIENT_INFO_META_KEY``).
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
#: The 2026-07-28 envelope's protocol version and client capabilities (``mcp_types``' ``*_META_KEY``).
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"


def request_key(build: str, method: str, params: object, opening: str = "") -> str | None:
    """The key of a request answered early: ``build`` (:func:`build_key`, or :func:`listing_build_key` for a list),
    the method and the parameters as canonical JSON (sorted keys), the request's id and the client's name and version
    aside, and ``opening``, the key of the connection's opening request (for a request after it: a list's answer
    follows the protocol version agreed there); None when the request is not to be answered early (its client named
    in another shape than the SDK accepts).

    The SDK's answer does not depend on which client asks (``mcp.server.runner``'s ``_handle_initialize`` reads the
    protocol version alone; ``server/discover`` the envelope's protocol version), so a client upgraded since the last
    start (Claude Code updates itself often) is still answered at once. The client's name is only checked to be what
    the SDK accepts (an object with string ``name`` and ``version``): a request the SDK would refuse is its to answer."""
    if not isinstance(params, dict):
        return _digest(build, method, params, opening)
    if method == "initialize":
        info, rest = params.get("clientInfo"), {k: v for k, v in params.items() if k != "clientInfo"}
    else:
        meta = params.get("_meta")
        if not isinstance(meta, dict) or CLIENT_INFO_META_KEY not in meta:
            return _digest(build, method, params, opening)
        info = meta[CLIENT_INFO_META_KEY]
        rest = {**params, "_meta": {k: v for k, v in meta.items() if k != CLIENT_INFO_META_KEY}}
    if not (isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return None
    return _digest(build, method, rest, opening)


def _digest(build: str, method: str, params: object, opening: str = "") -> str:
    parts: list[object] = [build, method, params, opening] if opening else [build, method, params]
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


_LISTING_BUILD: list[str] = []


def listing_build_key() -> str:
    """:func:`build_key`, and what the lists of tools, prompts and resources depend on besides: the size and
    modification time of every ``.py`` file of this package (each feature registers its own tools) and of the
    ``__init__.py`` of :data:`LISTING_PACKAGES`. Computed once a process (277 files: a few milliseconds)."""
    if not _LISTING_BUILD:
        package = Path(__file__).parent
        parts = [build_key()]
        for directory, subdirectories, files in os.walk(package):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    parts.append(f"{os.path.relpath(path, package)}:{st.st_size}:{st.st_mtime_ns}")
        parts += [_stamp(_package_init(name)) for name in LISTING_PACKAGES]
        _LISTING_BUILD.append(hashlib.sha256("\n".join(parts).encode()).hexdigest())
    return _LISTING_BUILD[0]


class AnswerCache:
    """The SDK's answers to the requests answered early (the opening request, the lists, a listen request's
    acknowledgement: :mod:`code_trajectory.early_answer`), kept in ``<CODE_TRAJECTORY_HOME>/cache/opening-answers.json``
    (``{"answers": {key: {"result": {...}, "used": seconds}}}``, at most :data:`CACHE_ENTRIES`).

    The file is this user's own; a file that is missing, not JSON, too large or of another shape is an empty
    cache (and is rewritten at the next answer kept), never an error.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else home_dir() / "cache" / "opening-answers.json"
        self.locked_out = False  # the lock was held by another process for LOCK_SECONDS: no more waiting for it
        self._read: tuple[tuple[int, int, int], dict[str, dict]] | None = None  # the file's identity, its entries

    def _entries(self) -> dict[str, dict]:
        """The file's entries (a new dict each call), parsed once while the file stays the same one (inode, size and
        time: a start asks for about six answers; each read of the whole file took 2.7 ms at 68 KB)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return {}
        identity = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._read is None or self._read[0] != identity:
            data = read_json_object(self.path, CACHE_FILE_LIMIT)
            answers = data.get("answers") if data is not None else None
            entries = ({key: entry for key, entry in answers.items()
                        if isinstance(entry, dict) and isinstance(entry.get("result"), dict)}
                       if isinstance(answers, dict) else {})
            self._read = (identity, entries)
        return dict(self._read[1])

    def get(self, key: str) -> dict | None:
        """The result kept for ``key``, or None (also for a result strict JSON cannot carry, as a hand-edited file may
        hold: ``NaN`` or ``Infinity``, or a lone surrogate, which Python's parser reads and a client's refuses: the
        SDK's client dropped such an answer and waited 10 s before it asked again)."""
        entry = self._entries().get(key)
        if entry is None:
            return None
        try:
            json.dumps(entry["result"], allow_nan=False, ensure_ascii=False).encode()
        except ValueError:  # UnicodeEncodeError included
            return None
        return entry["result"]

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
        time. Once the lock was not had within :data:`LOCK_SECONDS` (another process holds it: stopped, or on a
        stalled disk), this cache keeps nothing more: the SDK's answer waits for this call, and each of a start's
        answers waited as long again (4 answers 8 s later)."""
        import time

        from filelock import FileLock, Timeout

        if self.locked_out:
            return
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
        except Timeout as exc:
            self.locked_out = True
            log.debug("could not keep the opening answer in %s: %s; none is kept any more", self.path, exc)
        except OSError as exc:
            log.debug("could not keep the opening answer in %s: %s", self.path, exc)


def _used(entry: dict) -> float:
    """When the entry was last used (seconds); 0.0, the oldest, for anything else than a finite number (a hand-edited
    file: an integer too large for a float raised OverflowError, ``Infinity`` made every later entry infinite)."""
    used = entry.get("used")
    if isinstance(used, bool) or not isinstance(used, (int, float)):
        return 0.0
    try:
        value = float(used)
    except OverflowError:
        return 0.0
    return value if math.isfinite(value) else 0.0


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
