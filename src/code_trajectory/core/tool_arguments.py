"""What a model reads when a tool call names no tool we have, or arguments the tool cannot use.

The MCP SDK validates a call's arguments against the tool's pydantic model before the tool runs. What it says then
is pydantic's dump (``1 validation error for get_global_trajectoryArguments`` ... ``For further information visit
https://errors.pydantic.dev/...``), and an argument the tool does not have is dropped without a word, so a misspelt
``limt`` silently became the default ``limit``. These functions build the text of the tool error instead, from the
facts pydantic gives (:meth:`pydantic.ValidationError.errors`) and the tool's input schema as ``tools/list`` lists
it: which argument, what was wrong, what was sent (shortened), and the arguments the tool takes. Plain data in, a
string out: no SDK import here.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from code_trajectory.core.secrets import redact
from code_trajectory.core.terminal import visible

#: Characters of a rejected value repeated in the error (the caller's own data: enough to see which value it was).
SHOWN_VALUE_CHARS = 60
#: Unknown argument names, or rejected values, listed at most (the rest counted).
LISTED_NAMES = 5


def unknown_tool(name: str, tools: Sequence[str]) -> str:
    """The error for a call of ``name``, which is not among ``tools`` (the names ``tools/list`` lists)."""
    close = difflib.get_close_matches(name, list(tools), n=3, cutoff=0.6) if len(name) <= SHOWN_VALUE_CHARS else []
    hint = f" Did you mean {_names(close)}?" if close else f" The tools are: {', '.join(sorted(tools))}."
    return _clean(f"There is no tool {_quoted(name)}.{hint}")


def unknown_arguments(tool: str, unknown: Iterable[str], schema: Mapping[str, Any]) -> str:
    """The error for a call of ``tool`` with arguments its input ``schema`` (a JSON Schema object) does not have.

    Each unknown name gets its closest declared name when there is one (difflib's ratio >= 0.6)."""
    declared = list(_properties(schema))
    keys = list(unknown)
    parts = []
    for key in keys[:LISTED_NAMES]:
        close = difflib.get_close_matches(key, declared, n=1, cutoff=0.6) if len(key) <= SHOWN_VALUE_CHARS else []
        parts.append(f"{_quoted(key)} (did you mean {_quoted(close[0])}?)" if close else _quoted(key))
    if len(keys) > LISTED_NAMES:
        parts.append(f"and {len(keys) - LISTED_NAMES} more")
    return _clean(f"{tool} has no argument {', '.join(parts)}; nothing was done. {signature(tool, schema)}")


def invalid_arguments(tool: str, errors: Sequence[Mapping[str, Any]], schema: Mapping[str, Any]) -> str:
    """The error for a call of ``tool`` whose arguments pydantic rejected.

    Args:
        tool: the tool's name.
        errors: :meth:`pydantic.ValidationError.errors` of the rejection (``loc``, ``msg``, ``type``, ``input``).
        schema: the tool's input schema (a JSON Schema object), for the line listing its arguments.
    """
    lines = []
    for error in errors[:LISTED_NAMES]:
        where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        if error.get("type") == "missing":
            lines.append(f"{_quoted(where)} is required")
        else:
            message = str(error.get("msg", "is not valid"))
            lines.append(f"{_quoted(where)}: {message} (got {_shown(error.get('input'))})")
    if len(errors) > LISTED_NAMES:
        lines.append(f"and {len(errors) - LISTED_NAMES} more")
    return _clean(f"{tool} was not run: {'; '.join(lines)}. {signature(tool, schema)}")


def signature(tool: str, schema: Mapping[str, Any]) -> str:
    """One line naming each argument of ``tool`` with its JSON type, whether it is required, its range and default:
    ``Arguments of get_file_trajectory: `filepath` (string, required), `depth` (integer, 1 to 200, default 5).``"""
    required = set(schema.get("required", ()))
    parts = []
    for key, prop in _properties(schema).items():
        facts = [_type_of(prop)]
        if key in required:
            facts.append("required")
        if "minimum" in prop and "maximum" in prop:
            facts.append(f"{_number(prop['minimum'])} to {_number(prop['maximum'])}")
        if "enum" in prop:
            facts.append("one of " + ", ".join(str(v) for v in prop["enum"]))
        if "default" in prop and prop["default"] is not None:
            facts.append(f"default {_json(prop['default'])}")
        parts.append(f"{_quoted(key)} ({', '.join(f for f in facts if f)})")
    return f"Arguments of {tool}: {', '.join(parts)}." if parts else f"{tool} takes no arguments."


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return {str(k): (v if isinstance(v, dict) else {}) for k, v in properties.items()} \
        if isinstance(properties, dict) else {}


def _type_of(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind if k != "null")
    if isinstance(kind, str):
        if kind == "array" and isinstance(prop.get("items"), dict) and isinstance(prop["items"].get("type"), str):
            return f"array of {prop['items']['type']}"
        return kind
    branches = prop.get("anyOf")
    if isinstance(branches, list):
        return " or ".join(str(b.get("type")) for b in branches if isinstance(b, dict) and b.get("type") not in
                           (None, "null"))
    return ""


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _json(value: Any) -> str:
    """``value`` as the caller wrote it: JSON (``false``, ``"abc"``), else Python's ``repr``."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _shown(value: Any) -> str:
    text = _json(value)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[:SHOWN_VALUE_CHARS - 1] + "…"


def _quoted(name: str) -> str:
    """``name`` in backquotes, cut to :data:`SHOWN_VALUE_CHARS` (a caller's name may be megabytes long)."""
    return f"`{name if len(name) <= SHOWN_VALUE_CHARS else name[:SHOWN_VALUE_CHARS - 1] + '…'}`"


def _names(names: Iterable[str]) -> str:
    return " or ".join(_quoted(n) for n in names)


def _clean(text: str) -> str:
    """Secrets the redaction rules recognise replaced (a rejected value is the caller's data: a token pasted into
    the wrong argument), control and invisible characters escaped."""
    return str(visible(redact(text)))
