"""Helpers shared by the MCP front ends (trajectory, journal, recap tools).

The tools themselves are plain functions in their feature modules; this module
holds the thin glue: translating :class:`~code_trajectory.core.errors.TrajectoryError`
into an MCP tool error (``isError`` with the message a model can act on) and
building results that carry both readable text and structured content, the latter
held to the size and order rule of :mod:`code_trajectory.core.answer` in one place
(:func:`finish`).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from code_trajectory.core import answer as answers
from code_trajectory.core.errors import TrajectoryError
from code_trajectory.core.memory import release_soon
from code_trajectory.core.secrets import redact
from code_trajectory.core.terminal import visible

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

#: Annotations of every tool (MCP "Tool annotations"): each says whether it writes, destroys, can be repeated.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
WRITES_IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False)
#: Reads only, but two calls may answer differently (it asks the client's model through MCP sampling).
READ_ONLY_SAMPLING = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                              open_world_hint=False)


def _translate(name: str, exc: Exception) -> ToolError:
    """The tool error a model reads for ``exc``: its message, with the secrets the redaction rules recognise replaced
    (an error names the argument it could not use: a token pasted as a snapshot name went back into the conversation
    and into the server's log)."""
    return ToolError(_error_text(name, exc))


def _error_text(name: str, exc: Exception) -> str:
    """What a model reads for ``exc`` raised by the tool or resource ``name`` (see :func:`_translate`)."""
    if isinstance(exc, TrajectoryError):
        return str(visible(redact(str(exc))))
    if isinstance(exc, (ValueError, TypeError)):
        log.info("%s rejected input: %s", name, redact(str(exc)))
        return str(visible(redact(f"invalid argument: {exc}")))
    log.exception("%s failed unexpectedly", name)
    return str(visible(redact(f"{name} failed unexpectedly ({type(exc).__name__}: {exc}); "
                              "the server keeps running and logged the details on stderr")))


def resource_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an async MCP resource function: its text is shown as a tool's is (control characters escaped:
    :func:`~code_trajectory.core.terminal.visible`), and any exception becomes a ``ResourceError`` carrying the
    message :func:`tool_errors` would give (the SDK otherwise answers a template resource's failure with a bare
    "Error creating resource from template <uri>", without the reason or what to do instead).

    Keeps the signature (the SDK matches the URI template's parameters against it).
    """
    name = fn.__name__

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return str(visible(str(await fn(*args, **kwargs))))
        except ResourceError:
            raise
        except Exception as exc:  # the boundary: everything becomes a resource error
            raise ResourceError(_error_text(name, exc)) from exc

    return wrapper


def tool_errors(fn: F) -> F:
    """Wrap a tool so any exception becomes a ToolError with a message a model can act on.

    Works for sync and async functions and keeps the signature (the SDK builds the
    input schema from it). Unexpected exceptions are logged with their traceback on
    stderr, never on stdout.
    """
    name = fn.__name__
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except ToolError:
                raise
            except Exception as exc:  # the boundary: everything becomes a tool error
                raise _translate(name, exc) from exc

        return async_wrapper  # type: ignore[return-value]  # functools.wraps: it is called as fn is

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:
            raise _translate(name, exc) from exc

    return wrapper  # type: ignore[return-value]  # functools.wraps: it is called as fn is


def bounded(description: str | None, low: float, high: float) -> Any:
    """The pydantic ``Field`` of a numeric tool argument the tool accepts from ``low`` to ``high``: the input schema
    in ``tools/list`` says so (``minimum``/``maximum``), so a client or model can check a value before calling.

    The check itself stays the tool's own (e.g. :func:`~code_trajectory.project.check_range` with the same
    bounds), so an out-of-range value gets its message as the tool error (``depth must be between 1 and 200, got
    0``), not pydantic's (``Input should be greater than or equal to 1 [type=greater_than_equal, ...]``, without
    the other bound). Pass the bounds the check uses (its ``(low, high)`` constant), never the numbers again.

    Args:
        description: the argument's description (None: none).
        low, high: the smallest and largest value accepted.
    """
    return Field(description=description, json_schema_extra={"minimum": low, "maximum": high})


def result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    """Build a tool result with markdown ``text`` and optional ``structured`` content (a JSON object)."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


#: Set (to any non-empty value) to make an order problem of a tool's structured content an error instead of a
#: logged warning: the tests set it, so a builder that breaks the rule fails them.
CHECK_ENV = "CODE_TRAJECTORY_CHECK_ANSWERS"


def finish(name: str, value: Any, *, schema: bool = False) -> CallToolResult:
    """The tool result of a tool's return value: an :class:`~code_trajectory.core.answer.Answer` (text and
    ``data``), a :class:`CallToolResult` or a plain ``str``, with its structured content held to the rule of
    :mod:`code_trajectory.core.answer` (pruned, at most the size of the text: :func:`answers.structured`; with
    ``schema``, a tool with a declared output shape, its keys are not counted).

    Raises:
        AssertionError: with :data:`CHECK_ENV` set, when the entries are not in the text's order.
    """
    if isinstance(value, CallToolResult):
        shown: CallToolResult = value.model_copy(update={"content": [
            c.model_copy(update={"text": visible(c.text)}) if isinstance(c, TextContent) else c
            for c in value.content]})
        value = shown
        if shown.structured_content is None or shown.is_error:
            return shown
        text = "".join(c.text for c in value.content if isinstance(c, TextContent))
        data = value.structured_content
    else:
        text, data = visible(str.__str__(value)), getattr(value, "data", None)
    content = answers.structured(text, data, keys=not schema)
    content = visible(content) if content is not None else None
    if content is not None:
        problems = answers.order_problems(text, content)
        if problems and os.environ.get(CHECK_ENV):
            raise AssertionError(f"{name}: structured content out of the text's order: {problems}")
        for problem in problems:
            log.warning("%s: structured content out of the text's order: %s", name, problem)
    if isinstance(value, CallToolResult):
        return value.model_copy(update={"structured_content": content})
    return result(text, content)


async def in_thread(fn: Callable[[], T]) -> T:
    """Run the blocking ``fn`` on a worker thread, so the server keeps answering meanwhile."""
    return await anyio.to_thread.run_sync(fn)


#: Per-connection state kept by :func:`connection_state`, oldest first; bounded (one entry per client connection).
_CONNECTIONS: OrderedDict[int, tuple[object, dict[str, Any]]] = OrderedDict()
_CONNECTIONS_LOCK = threading.Lock()
#: Connections remembered at most (a stdio server has one; an HTTP server may see many over its life).
MAX_CONNECTIONS = 1024


def connection_state(ctx: Any) -> dict[str, Any] | None:
    """A dict that lives as long as the caller's MCP connection, or None when there is none.

    None for a direct call (no request context) and for the stateless protocol
    (``MODERN_PROTOCOL_VERSIONS``: every request stands alone). The connection is told
    apart by the identity of its ``initialize`` parameters (``ctx.session.client_params``,
    the SDK's public view of the connection), which is held here so its identity is never
    reused while remembered; at most :data:`MAX_CONNECTIONS` connections are remembered.
    """
    try:
        protocol = ctx.protocol_version
        params = ctx.session.client_params
    except Exception:  # noqa: BLE001 - no request context (a direct call)
        return None
    modern: Collection[str] = ()
    try:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        modern = MODERN_PROTOCOL_VERSIONS
    except ImportError:  # pragma: no cover - older SDKs have no stateless protocol
        pass
    if params is None or protocol in modern:
        return None
    with _CONNECTIONS_LOCK:
        entry = _CONNECTIONS.get(id(params))
        if entry is None or entry[0] is not params:
            entry = (params, {})
            _CONNECTIONS[id(params)] = entry
            while len(_CONNECTIONS) > MAX_CONNECTIONS:
                _CONNECTIONS.popitem(last=False)
        else:
            _CONNECTIONS.move_to_end(id(params))
        return entry[1]


#: The ``_meta`` key of a tool in ``tools/list`` by which Claude Code (2.1.91 and later) keeps a result of up to that
#: many characters in the conversation; past its default, 50,000 characters, it saves the result to a file and shows
#: the model a reference to it (https://code.claude.com/docs/en/mcp, "MCP output limits and warnings").
MAX_RESULT_SIZE_CHARS = "anthropic/maxResultSizeChars"


def tool(mcp: Any, annotations: ToolAnnotations, *, output: type | None = None,
         title: str | None = None, meta: dict[str, Any] | None = None) -> Callable[[F], F]:
    """Register the decorated ``async`` function as an MCP tool of ``mcp`` with ``annotations``: the one way
    every feature package registers its tools.

    The function's name is the tool's name, its docstring (dedented, see :func:`inspect.cleandoc`) the tool's
    description and its signature the input schema. Its return value becomes the tool result: an
    :class:`~code_trajectory.core.answer.Answer` gives its markdown as the text content and its ``data`` as
    structured content; a :class:`~mcp.types.CallToolResult` (see :func:`result`) is passed on; a plain
    ``str`` gives text only. Structured content is held to the size and order rule (:func:`finish`). Every
    exception becomes a tool error (:func:`tool_errors`).

    Args:
        mcp: the server.
        annotations: the MCP tool annotations (:data:`READ_ONLY`, :data:`WRITES`, ...).
        output: a pydantic model of the structured content: the SDK validates every answer against it (the
            server does not list it, so ``tools/list`` stays small: see ``server.TrajectoryMCPServer``).
        title: the tool's human-readable title, if any.
        meta: the tool's ``_meta`` in ``tools/list``, if any (e.g. :data:`MAX_RESULT_SIZE_CHARS`).
    """

    def decorate(fn: F) -> F:
        guarded = tool_errors(fn)

        @functools.wraps(fn)
        async def run(*args: Any, **kwargs: Any) -> CallToolResult:
            try:
                value = await guarded(*args, **kwargs)
            finally:
                release_soon()  # a query's short-lived objects are handed back once the calls pause
            return finish(fn.__name__, value, schema=output is not None)

        # evaluated in the tool's module (its annotations may be strings: ``from __future__ import annotations``)
        returns = CallToolResult if output is None else Annotated[CallToolResult, output]
        signature = inspect.signature(fn, eval_str=True).replace(return_annotation=returns)
        run.__signature__ = signature  # type: ignore[attr-defined]  # read by inspect.signature; not in typeshed
        run.__annotations__ = {**{name: p.annotation for name, p in signature.parameters.items()},
                               "return": returns}
        mcp.tool(description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations, title=title,
                 meta=meta)(run)
        return fn

    return decorate
