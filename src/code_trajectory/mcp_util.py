"""Helpers shared by the MCP front ends (trajectory, journal, recap tools).

The tools themselves are plain functions in their feature modules; this module
holds the thin glue: translating :class:`~code_trajectory.errors.TrajectoryError`
into an MCP tool error (``isError`` with the message a model can act on) and
building results that carry both readable text and structured content.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from code_trajectory.errors import TrajectoryError

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


def _translate(name: str, exc: Exception) -> ToolError:
    if isinstance(exc, TrajectoryError):
        return ToolError(str(exc))
    if isinstance(exc, (ValueError, TypeError)):
        log.info("tool %s rejected input: %s", name, exc)
        return ToolError(f"invalid argument: {exc}")
    log.exception("tool %s failed unexpectedly", name)
    return ToolError(f"{name} failed unexpectedly ({type(exc).__name__}: {exc}); "
                     "the server keeps running and logged the details on stderr")


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
            except Exception as exc:  # noqa: BLE001 - the boundary: everything becomes a tool error
                raise _translate(name, exc) from exc

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _translate(name, exc) from exc

    return wrapper  # type: ignore[return-value]


def result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    """Build a tool result with markdown ``text`` and optional ``structured`` content (a JSON object)."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)
