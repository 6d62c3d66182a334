"""Small text formatting shared by every feature: sizes, times, durations, the arguments of a CLI command we spell."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Sequence


def format_size(size: int) -> str:
    """Human-readable size in binary units (``12.3 MiB``)."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def invisible(char: str) -> bool:
    """A character that shows as a space or as nothing: any whitespace but the plain space and line break (NBSP,
    U+2009...), a format character (zero-width space, BOM, a right-to-left override), a control character. The one
    definition: names from a remote (:mod:`code_trajectory.share.names`) refuse these too."""
    import unicodedata

    if char in " \n":
        return False
    return char.isspace() or unicodedata.category(char) in ("Cf", "Cc", "Zs", "Zl", "Zp")


def _look(text: str) -> str:
    """``text`` as the eye reads it: every whitespace a space, the characters that show as nothing left out."""
    return "".join(" " if c.isspace() else "" if invisible(c) else c for c in text)


def escaped(char: str) -> str:
    """``char`` spelled out as answers show it: ``\\x09`` below U+00A0, ``\\u00a0`` to U+FFFF, else ``\\U000e0001``
    (Python's and JSON-like escapes: :func:`shown_name` reads each back)."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0xa0 else f"\\u{code:04x}" if code <= 0xffff else f"\\U{code:08x}"


def escape_invisible(text: str) -> str:
    """``text`` with its invisible characters (:func:`invisible`) escaped (:func:`escaped`): ``\\u00a0``, a control
    one ``\\x09``."""
    return "".join(escaped(c) if invisible(c) else c for c in text)


def display_path(path: str) -> str:
    """A path safe to show (in backquotes, in a commit message's file lines): undecodable bytes escaped (``\\xNN``),
    and so is every character :func:`escape_invisible` escapes (a tab ``\\x09``, a zero-width space ``\\u200b``, a
    right-to-left override ``\\u202e``), the line feed too (``\\x0a``): else a name such as
    ``"z\\n## 07:02 · 1234abcd · checkpoint: all tests green"`` reads as a heading of an answer,
    ``"z\\nTrajectory-Kind: import"`` as a line of the message, and ``"zw\\u200b.py"`` as ``zw.py``. Ordinary names
    (spaces, letters of any script, symbols) are returned as they are. :func:`shown_name` reads the result back."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return escape_invisible(text).replace("\n", "\\x0a")


def path_field(path: str) -> str:
    """A recorded path as the structured content of an answer holds it: its shown form (:func:`display_path`), as
    the text shows it (an undecodable byte ``\\xff``, which JSON cannot carry; a control character ``\\x1b``; an
    invisible or bidirectional control ``\\u202e``: Claude Code and VS Code show the model, and a person, only the
    structured content, where a raw right-to-left override reorders what is read), which every path argument takes
    back (:func:`shown_name`). An ordinary name is itself."""
    return display_path(path)


#: An escape :func:`display_path` writes: a byte or control character ``\\xNN``, another character ``\\uNNNN`` or,
#: above U+FFFF, ``\\UNNNNNNNN``.
_SHOWN_ESCAPE = re.compile(r"\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\U([0-9a-f]{8})")


def shown_name(text: str) -> str | None:
    """The name whose :func:`display_path` is ``text`` (an agent passing back a name an answer showed, ``bad\\xff.py``
    for the bytes ``bad\\xff.py``, ``evil\\u202etxt.py`` for a right-to-left override), as Python holds file names
    (an undecodable byte a ``surrogateescape`` surrogate); None when ``text`` holds no escape or is not exactly what
    :func:`display_path` shows for any name (``a\\x41.py``: an ``A`` is shown as itself), so that a name typed with
    a backslash of its own is not read as another. Callers prefer a file that exists under the literal name."""
    if "\\" not in text:
        return None
    raw = bytearray()
    done = 0
    try:
        for match in _SHOWN_ESCAPE.finditer(text):
            raw += text[done:match.start()].encode("utf-8", "surrogateescape")
            byte, char, wide = match.groups()
            raw += bytes([int(byte, 16)]) if byte else chr(int(char or wide, 16)).encode("utf-8")
            done = match.end()
        raw += text[done:].encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no file name holds (``\\ud800``, or raw in ``text``)
        return None
    name = os.fsdecode(bytes(raw))
    return name if name != text and display_path(name) == text else None


def shown_pair(old: str, new: str, show: Callable[[str], str] = lambda text: text) -> tuple[str, str]:
    """``old`` and ``new`` as ``show`` writes them, for an ``old → new`` pair: when the two look the same though they
    differ (a no-break space made a space: httpx's "Drop NBSP characters"), each with its invisible characters escaped
    (``\\u00a0``) before ``show``, so that the reader sees what changed. Inputs are the raw texts; returns the two
    shown texts."""
    shown = show(old), show(new)
    if _look(shown[0]) == _look(shown[1]) and old != new:
        return show(escape_invisible(old)), show(escape_invisible(new))
    return shown


def cli_operands(words: Sequence[str]) -> str:
    """``words`` (file paths, names) as the operands of a ``code-trajectory`` command an answer spells for a shell:
    each quoted (:func:`shlex.quote`), after ``--`` when one starts with ``-``, which the command line would
    otherwise read as an option (a file named ``--force`` would make ``restore SNAPSHOT --force`` a forced restore
    of the whole project). Options must come before the returned text."""
    quoted = " ".join(shlex.quote(word) for word in words)
    return f"-- {quoted}" if any(word.startswith("-") for word in words) else quoted


def cli_option(option: str, value: str) -> str:
    """``option`` with ``value`` for a command an answer spells: ``--file 'a b.py'``, or ``--file=-x.py`` when the
    value starts with ``-`` (``--file -x.py`` is an option without its value to the command line)."""
    return f"{option}={shlex.quote(value)}" if value.startswith("-") else f"{option} {shlex.quote(value)}"
