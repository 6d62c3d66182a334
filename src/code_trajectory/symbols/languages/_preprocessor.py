"""What C-family grammars misread in preprocessed source, blanked for parsing (a copy of the same length and lines:
see :meth:`~code_trajectory.symbols.engine.TreeSitterLanguage.parsed_text`). No grammar is imported here.

* :func:`blank_conditions`: each ``#if``/``#elif`` condition made one identifier of its length (C#, C++).

Every pattern here is linear in its input: possessive quantifiers and no lazy part before a trailing one (a hostile
file with a 300 KB line must not freeze the analysis).
"""

from __future__ import annotations

import re

#: A ``#if``/``#elif`` line: its keyword, its condition to the end of the line and over the lines a ``\\`` at a
#: line's end continues it to (linear: no lazy part before a trailing one, which a line of blanks would make
#: quadratic; trailing blanks are split off in Python).
_CONDITION = re.compile(rb"(?m)^([ \t]*#[ \t]*(?:if|elif)\b[ \t]*)((?:[^\r\n\\]|\\\r?\n|\\)*+)")

_NOT_BREAK = re.compile(rb"(?:[^\r\n\\]|\\(?![\r\n]))++")


def blank_conditions(source: bytes) -> bytes:
    """``source`` with each ``#if``/``#elif`` condition made one identifier of its length (``#if X___...``): which
    branch is taken never names a symbol, and grammars misread some conditions (C#'s ``#if !(A || B)`` in a base
    list, C++'s ``#if __has_include(<version>)``). Returns ``source`` itself when it has no ``#``."""
    if b"#" not in source:
        return source
    return _CONDITION.sub(_blank_condition, source)


def _blank_condition(match: re.Match[bytes]) -> bytes:
    keyword, rest = match.groups()
    condition = rest.rstrip(b" \t")
    if not condition:
        return match.group(0)
    # one identifier on the first line, blanks on the lines it continues to (their breaks and \\ kept)
    first = _NOT_BREAK.match(condition)
    if first is None:  # "#if \\" with the condition on the next line: left as written
        return match.group(0)
    width = first.end()
    blank = b"X" + b"_" * (width - 1) + _NOT_BREAK.sub(lambda m: b" " * len(m.group(0)), condition[width:])
    return keyword + blank + rest[len(condition):]
