"""The MCP server: composed from what each feature package registers.

``code-trajectory serve`` speaks MCP over stdio. stdout carries only JSON-RPC; logs go to stderr. Each
feature package owns its tools in ``<package>/tools.py`` with ``register(mcp, app)``; this module only
builds the server, calls them in :data:`FEATURES` order and runs it. Every tool error is an MCP tool error
(``isError``) whose text tells the model what to do next; the server never crashes on bad input.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from code_trajectory import __version__, wiring
from code_trajectory.core.errors import TrajectoryError
from code_trajectory.core.secrets import redact
from code_trajectory.core.shutdown import StopRequest
from code_trajectory.core.terminal import visible
from code_trajectory.early_answer import EarlyAnswer
from code_trajectory.history import tools as history_tools
from code_trajectory.journal import tools as journal_tools
from code_trajectory.recap import tools as recap_tools
from code_trajectory.recording import tools as recording_tools
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.restore import tools as restore_tools
from code_trajectory.share import tools as share_tools
from code_trajectory.testruns import tools as testruns_tools

log = logging.getLogger(__name__)

#: The ``register(mcp, app)`` of each feature package's ``tools`` module: they make up the server, in
#: ``tools/list`` order.
FEATURES: tuple[Callable[[MCPServer, TrajectoryService], object], ...] = (
    recording_tools.register, history_tools.register, restore_tools.register, testruns_tools.register,
    recap_tools.register, journal_tools.register, share_tools.register)

INSTRUCTIONS = """\
code-trajectory records every save of the project into a shadow git history (.trajectory/) and tells you how the
code evolved and why. At the start of a conversation call get_session_summary (or use the catch-up prompt). Before
editing a file, get_file_trajectory (get_symbol_trajectory for one function). When you start or switch tasks,
set_trajectory_intent. Before a risky change, checkpoint(message="<name>") so restore can go back to it by name;
restore takes a safety snapshot first, so it can be undone. When a task is done and its snapshots are no longer useful
one by one, consolidate(intent="<what was done>"): it squashes only that task's trailing snapshots. When tests fail,
diff_since_green; to find when a line appeared or went, search_trajectory.
"""


class TrajectoryMCPServer(MCPServer):
    """The SDK's server with compact tool schemas, since clients send ``tools/list`` to the model with every
    request (issue: at most ~250 tokens a tool). Without changing what is accepted or returned:

    * pydantic's generated ``title`` of every schema and property (``"title": "Filepath"``) is dropped;
    * an optional argument's ``anyOf: [{T}, {"type": "null"}], "default": null`` becomes ``{T}`` (leaving it
      out means null), and a nullable simple type ``{"type": ["string", "null"]}``;
    * output schemas are not listed: every tool's structured content is documented in the README, and the
      recap and journal tools still validate theirs against their pydantic models when they answer.
    """

    #: The opening request read and perhaps answered before the SDK was imported (``serve``); None: the SDK reads
    #: stdin itself.
    early: EarlyAnswer | None = None
    #: Each tool's input schema as listed, by name; read at the first call (the tools are all registered by then).
    _input_schemas: dict[str, dict] | None = None

    async def get_prompt(self, name, arguments=None, context=None):
        """The SDK's, with a prompt it cannot render (unknown, or an argument missing) answered as invalid
        parameters that say so (``Missing required arguments: {'path'}``, or the prompt's own
        :class:`TrajectoryError`), not the bare "Internal server error" (and a traceback on stderr) the SDK gives for
        its own ``ValueError``."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS

        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            cause: BaseException | None = exc  # a prompt's own error (a bad path) is the cause the SDK wraps
            while cause is not None and not isinstance(cause, TrajectoryError):
                cause = cause.__cause__
            raise MCPError(INVALID_PARAMS, str(visible(redact(str(cause or exc))))) from exc

    async def call_tool(self, name, arguments, context=None):
        """The SDK's, with a call it cannot run said so that a model can correct it (:mod:`.core.tool_arguments`):
        an unknown tool with the closest names; an argument the tool does not have refused (the SDK drops it, so
        a misspelt ``limt`` answered with the default ``limit``) with the closest declared name; arguments pydantic
        rejects said per argument with the value sent and the tool's arguments, not pydantic's dump."""
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import ValidationError

        from code_trajectory.core import tool_arguments

        if self._input_schemas is None:
            self._input_schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        schema = self._input_schemas.get(name)
        if schema is None:
            raise ToolError(tool_arguments.unknown_tool(name, list(self._input_schemas)))
        unknown = [key for key in arguments if key not in schema.get("properties", {})]
        if unknown:
            raise ToolError(tool_arguments.unknown_arguments(name, unknown, schema))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(tool_arguments.invalid_arguments(name, exc.__cause__.errors(), schema)) \
                from exc.__cause__

    async def list_tools(self):
        tools = await super().list_tools()
        return [tool.model_copy(update={"input_schema": compact_schema(tool.input_schema), "output_schema": None})
                for tool in tools]

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, reading the client's stream from :attr:`early` when set (its first line
        included) and leaving out the SDK's answer to a request :attr:`early` answered already (see
        :mod:`code_trajectory.early_answer`); a request the transport cannot read is answered with an error
        (:class:`_UnreadRequests`)."""
        import anyio
        from mcp.server.stdio import stdio_server

        early = self.early
        stdin = anyio.wrap_file(early.stdin()) if early is not None else None
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            await self._lowlevel_server.run(_UnreadRequests(read_stream, write_stream),
                                            write_stream if early is None else _EarlyAnswerFilter(write_stream, early),
                                            self._lowlevel_server.create_initialization_options())


def unread_request_error(exc: Exception):
    """The JSON-RPC error answering the line the SDK's stdio transport could not read (``exc``, what it yields for
    it), when that line is a request JSON-RPC can answer (an id) that Python's JSON reader reads; else None.

    The SDK's reader (pydantic) refuses a string holding a lone UTF-16 surrogate (``"bad\\udcff.py"``: a file name
    that is not UTF-8, as Python holds it, sent as JSON), and the SDK's dispatcher drops what its transport could not
    read: the client waited for an answer forever. Returns a ``SessionMessage`` of a ``JSONRPCError`` (code
    ``-32700``, parse error) saying what to send instead."""
    from mcp.shared.message import SessionMessage
    from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors()
    line = errors[0].get("input") if errors and errors[0].get("type") == "json_invalid" else None
    try:
        request = json.loads(line) if isinstance(line, str) else None
    except ValueError:  # no JSON at all: no id to answer
        return None
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        return None  # a notification is not answered, nor a client's answer
    request_id = request.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    try:
        json.dumps(request, ensure_ascii=False).encode("utf-8")
        why = f"the request is not JSON this server reads: {errors[0].get('msg', exc)}"
    except UnicodeEncodeError as err:
        why = (f"a string of the request holds a lone UTF-16 surrogate ({ascii(err.object[err.start])[1:-1]}), "
               "which is no Unicode text; name a file whose name is not UTF-8 as answers show it: each byte that is "
               "not UTF-8 as \\xNN (bad\\xff.py)")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id,
                                       error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {why}")))


class _Wrapped:
    """One of the SDK's memory streams, wrapped: closing and entering it as a context go to it."""

    def __init__(self, stream) -> None:
        self._stream = stream

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self):
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info):
        return await self._stream.__aexit__(*exc_info)


class _UnreadRequests(_Wrapped):
    """The SDK's read stream, less the lines its transport could not read that are requests JSON-RPC can answer:
    each is answered on the write stream (:func:`unread_request_error`) instead of being dropped by the SDK with
    the client left waiting."""

    def __init__(self, stream, write_stream) -> None:
        super().__init__(stream)
        self._write = write_stream

    @property
    def last_context(self):
        """The sender's context of the last item (the SDK's stream keeps it; the dispatcher reads it)."""
        return getattr(self._stream, "last_context", None)

    async def receive(self):
        while True:
            item = await self._stream.receive()
            answer = unread_request_error(item) if isinstance(item, Exception) else None
            if answer is None:
                return item
            log.info("answered a request the SDK could not read: %s", answer.message.error.message)
            await self._write.send(answer)

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _EarlyAnswerFilter(_Wrapped):
    """The SDK's write stream, less its answers to the requests :class:`EarlyAnswer` answered (each compared with the
    one sent and kept), and less its acknowledgement of a ``subscriptions/listen`` acknowledged early."""

    def __init__(self, stream, early: EarlyAnswer) -> None:
        super().__init__(stream)
        self._early = early

    async def send(self, item, /) -> None:
        from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCResponse

        from code_trajectory.early_answer import ACKNOWLEDGED_METHOD

        message = item.message
        if isinstance(message, (JSONRPCResponse, JSONRPCError)) and self._early.awaits(message.id):
            result = (json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))["result"]
                      if isinstance(message, JSONRPCResponse) else None)
            if self._early.take_answer(message.id, result):
                return
        elif isinstance(message, JSONRPCNotification) and message.method == ACKNOWLEDGED_METHOD:
            params = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True)).get("params")
            if self._early.take_acknowledgement(params):
                return
        await self._stream.send(item)


def compact_schema(schema, *, descriptions: bool = True, top: bool = True):
    """``schema`` without generated titles and null branches of optional values (see :class:`TrajectoryMCPServer`);
    with ``descriptions=False`` also without the descriptions below the top level."""
    if isinstance(schema, list):
        return [compact_schema(item, descriptions=descriptions, top=False) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "description" and not descriptions and not top:
            continue
        if key == "properties" and isinstance(value, dict):
            result[key] = {name: compact_schema(sub, descriptions=descriptions, top=False)
                           for name, sub in value.items()}
        else:
            result[key] = compact_schema(value, descriptions=descriptions, top=False)
    branches = result.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        if result.get("default", "absent") is None:  # optional: leaving it out means null
            result.pop("anyOf")
            result.pop("default")
            result = {**other, **result}
        elif set(other) == {"type"} and isinstance(other["type"], str):  # nullable: one type list
            result.pop("anyOf")
            result = {"type": [other["type"], "null"], **result}
    return result


def build_server(service: TrajectoryService, *, journal_dir: Path | None = None) -> TrajectoryMCPServer:
    """Create the MCP server with every feature's tools registered on ``service``.

    Args:
        service: the configured project (possibly none yet) shared by the tools.
        journal_dir: the journal repository (``serve --journal-dir``); None for the configured default.
    """
    wiring.install()  # the capabilities' handlers of the lower layers' hooks (idempotent; the CLI's too)
    if journal_dir is not None:
        service.journal_dir = journal_dir
    mcp = TrajectoryMCPServer("code-trajectory", instructions=INSTRUCTIONS, version=__version__, log_level="INFO")
    for register in FEATURES:
        register(mcp, service)
    _follow_client(mcp, service)
    return mcp


def _follow_client(mcp: MCPServer, service: TrajectoryService) -> None:
    """Have ``service`` find its project when the client connects and when its roots change (it does so only when
    :attr:`TrajectoryService.follow_client`: ``serve`` without ``--project``).

    A client of the handshake protocol versions (up to 2025-11-25) sends ``notifications/initialized``; one of
    2026-07-28 sends no handshake at all and starts with ``server/discover`` (Claude Code 2.1.332 does, and then
    answers no ``roots/list``: that version has no channel for a request from the server outside a request's own
    answer). So the project is also looked for once a ``server/discover`` is answered, in a task of its own: the
    answer does not wait for it, and recording starts before the agent's first tool call instead of at it (the
    edits made before that call would otherwise reach the history only through hooks, and the user's own not at
    all until then).
    """
    from mcp.types import NotificationParams

    async def on_client_directory(ctx, _params) -> None:
        await service.follow(ctx.session)

    lowlevel = mcp._lowlevel_server  # the SDK's documented way to add notification handlers is on the low-level server
    for method in ("notifications/initialized", "notifications/roots/list_changed"):
        lowlevel.add_notification_handler(method, NotificationParams, on_client_directory)
    discover = lowlevel.get_request_handler("server/discover")
    if discover is None:  # an SDK without the 2026-07-28 protocol
        return
    following: set[asyncio.Task] = set()  # strong references until each task ends

    async def on_discover(ctx, params):
        answer = await discover.handler(ctx, params)
        if service.awaiting_project():
            task = asyncio.get_running_loop().create_task(service.follow(ctx.session))
            following.add(task)
            task.add_done_callback(following.discard)
        return answer

    # the SDK's own answer, wrapped: "Operators can replace it wholesale via add_request_handler"
    lowlevel.add_request_handler("server/discover", discover.params_type, on_discover)


def serve_started(service: TrajectoryService, stop: StopRequest, *, journal_dir: Path | None = None,
                  started: Callable[[], object] | None = None, early: EarlyAnswer | None = None) -> int:
    """Serve MCP over stdio on ``service`` (its project, if any, already recording) until the client disconnects
    or ``stop`` is requested; returns the exit status.

    The end of stdin (Codex CLI) ends the SDK's stdio loop; SIGINT, SIGTERM and SIGHUP (Claude Code: SIGINT then
    SIGTERM 0.1 s later; Gemini CLI: SIGTERM) are turned into the same orderly stop by
    :func:`code_trajectory.serving.stop_on_request`. Either way the pending changes are snapshotted at once,
    ``recorder.json`` notes the stop, child processes are stopped, and the status is 0. ``started`` is called once
    the server is built, before it reads its first message; ``early``: the client's stream as
    :func:`code_trajectory.early_answer.start` took it over (None: stdin).
    """
    mcp = build_server(service, journal_dir=journal_dir)
    mcp.early = early
    if started is not None:
        started()
    try:
        mcp.run("stdio")
        log.info("stopping: the client closed stdin")
    finally:
        service.close()
    stop.ignore()  # stopped: a late signal must not turn status 0 into death by that signal
    return 0
