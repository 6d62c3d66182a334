"""What the CLI prints cannot drive the terminal: control characters from the data are shown, not obeyed.

A file name, a commit message pulled from a teammate's trajectory, an intent from a hook's prompt may hold terminal
control sequences (``ESC ] 52`` writes the clipboard, ``ESC [ 2 J`` clears the screen, C1's ``CSI`` does the same
in some terminals). The CLI's text streams are wrapped (:func:`guard`) so that each C0 control character but tab,
line feed and carriage return is printed as its Unicode control picture (``ESC`` as ``␛``, U+241B), ``DEL`` as
``␡`` and each C1 control character as U+FFFD: visible, and still valid inside the JSON some commands print (a
``\\x1b`` spelled out would not be). Bytes written to a stream's ``buffer`` (a test command's own output, passed
through) are not touched. MCP tool answers and errors get the same (:func:`visible`), which also spells out lone
surrogates (a file name's undecodable byte, ``surrogateescape``: ``\\xff``, as answers show paths), which JSON
cannot carry: one in a tool's answer made the SDK fail to send it (an internal error; the session summary's
killed the server).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

__all__ = ["SAFE", "SafeText", "guard", "visible"]

#: ``str.translate`` table of :func:`guard`.
SAFE: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n\r"},
    0x7F: "\u2421",
    **{code: "\ufffd" for code in range(0x80, 0xA0)},
}

#: A lone surrogate: ``\udc80``-``\udcff`` stand for undecodable bytes (``surrogateescape``), any other is invalid.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


class SafeText:
    """A text stream whose :meth:`write` shows control characters (see the module docstring); everything else is
    the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters made visible; returns ``len(text)``, as a text stream does."""
        self._stream.write(text.translate(SAFE))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def visible(value: Any) -> Any:
    """``value`` (a string, or lists and dicts of them as JSON holds them) with every string's control characters
    made visible as :class:`SafeText` shows them, one character for one, and its lone surrogates spelled out (an
    undecodable byte ``\\xff``, as :func:`~code_trajectory.git.messages.display_path` shows it; another
    ``\\ud800``), so that it can be sent as JSON. MCP answers go through it
    (:func:`code_trajectory.core.mcp_util.finish`): a client may show a tool's text in a terminal."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            value = _SURROGATE.sub(_spelled, value)
        return value.translate(SAFE)
    if isinstance(value, list):
        return [visible(item) for item in value]
    if isinstance(value, dict):
        return {visible(key): visible(item) for key, item in value.items()}
    return value


def guard(stream: TextIO) -> TextIO:
    """``stream`` wrapped in :class:`SafeText` (once: a wrapped stream is returned as it is)."""
    return stream if isinstance(stream, SafeText) else SafeText(stream)  # type: ignore[return-value]
