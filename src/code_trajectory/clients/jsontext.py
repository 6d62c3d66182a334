"""JSON text read and written back with the source text of every value kept: what a config rewrite owes the values
it does not own.

``json.loads`` followed by ``json.dumps`` changes how values are written: ``1e400`` becomes ``Infinity`` (which is
not JSON), ``1E5`` becomes ``100000.0``, ``"\\u00e9"`` becomes ``"é"``, and a lone surrogate (``"\\udc00"``) cannot
be encoded at all. :func:`loads` keeps each string's and number's token as written (:class:`RawStr`,
:class:`RawInt`, :class:`RawFloat`: the value, plus ``raw``, its source text), and :func:`dumps` writes that token
back unchanged; only values created after reading (ours) are serialized anew.

The grammar is JSON (RFC 8259) plus what VS Code's JSONC adds: ``//`` and ``/* */`` comments and trailing commas
(reported, since a rewrite drops them). Standard library only.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # public in json/decoder.py, not in typeshed
from typing import Any

#: Deepest nesting read (objects and arrays), far beyond any client config; deeper is refused, never a crash.
MAX_DEPTH = 200
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class RawStr(str):
    """A string read from JSON text; ``raw`` is its token as written (quotes and escapes included)."""

    raw: str


class RawInt(int):
    """An integer read from JSON text; ``raw`` is its token as written (e.g. ``-0``)."""

    raw: str


class RawFloat(float):
    """A number with a fraction or exponent read from JSON text; ``raw`` is its token (``1e400``, ``1E5``, ``1.0``)."""

    raw: str


def type_name(value: Any) -> str:
    """The Python type name of a JSON value, a read one as its plain type: ``str``, ``int``, ``float``, ``dict``..."""
    for plain in (bool, RawStr, RawInt, RawFloat):
        if isinstance(value, plain):
            return plain.__mro__[1].__name__ if plain is not bool else "bool"
    return type(value).__name__


def _raw(cls: type, value: Any, raw: str) -> Any:
    item = cls(value)
    item.raw = raw
    return item


class JSONTextError(ValueError):
    """The text is not JSON (nor JSONC); ``pos`` is the character offset of the problem."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(f"{message} at character {pos}")
        self.pos = pos


class _Reader:
    def __init__(self, text: str, duplicates: list[str]) -> None:
        self.text = text
        self.pos = 0
        self.duplicates = duplicates
        self.extensions = False  # a comment or a trailing comma was seen

    def space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            char = text[self.pos]
            if char in " \t\r\n":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
                self.extensions = True
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise JSONTextError("unclosed /* comment", self.pos)
                self.pos = end + 2
                self.extensions = True
            else:
                return

    def value(self, depth: int) -> Any:
        self.space()
        if self.pos >= len(self.text):
            raise JSONTextError("expected a value", self.pos)
        char = self.text[self.pos]
        if char == "{" or char == "[":
            if depth >= MAX_DEPTH:
                raise JSONTextError(f"nested deeper than {MAX_DEPTH} levels", self.pos)
            return self.container(char, depth + 1)
        if char == '"':
            return self.string()
        match = _NUMBER.match(self.text, self.pos)
        if match:
            raw = match.group(0)
            self.pos = match.end()
            if match.group(1) is None and match.group(2) is None:
                try:
                    return _raw(RawInt, int(raw), raw)
                except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
                    pass
            return _raw(RawFloat, float(raw), raw)
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return literal
        raise JSONTextError(f"unexpected {char!r}", self.pos)

    def string(self) -> RawStr:
        start = self.pos
        try:
            value, end = scanstring(self.text, start + 1, True)
        except json.JSONDecodeError as exc:
            raise JSONTextError(exc.msg, exc.pos) from None
        self.pos = end
        return _raw(RawStr, value, self.text[start:end])

    def container(self, opening: str, depth: int) -> Any:
        closing = "}" if opening == "{" else "]"
        self.pos += 1
        items: dict[str, Any] | list[Any] = {} if opening == "{" else []
        self.space()
        if self.text.startswith(closing, self.pos):
            self.pos += 1
            return items
        while True:
            self.space()
            if isinstance(items, dict):
                if not self.text.startswith('"', self.pos):
                    raise JSONTextError("expected a key in double quotes", self.pos)
                key = self.string()
                self.space()
                if not self.text.startswith(":", self.pos):
                    raise JSONTextError("expected ':'", self.pos)
                self.pos += 1
                value = self.value(depth)
                if key in items:
                    self.duplicates.append(str(key))
                items[key] = value  # a repeated key: the last value wins, at the first one's place (as json.loads)
            else:
                items.append(self.value(depth))
            self.space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.space()
                if self.text.startswith(closing, self.pos):
                    self.extensions = True
                    self.pos += 1
                    return items
                continue
            if self.text.startswith(closing, self.pos):
                self.pos += 1
                return items
            raise JSONTextError(f"expected ',' or '{closing}'", self.pos)


def loads(text: str, duplicates: list[str] | None = None) -> tuple[Any, bool]:
    """Parse JSON or JSONC ``text``, keeping each string's and number's source text.

    Args:
        text: the document (no byte-order mark).
        duplicates: when given, each key repeated within one object is appended (the last value is kept).

    Returns:
        ``(value, extensions)``: objects are dicts (insertion order), arrays lists, strings :class:`RawStr`,
        numbers :class:`RawInt`/:class:`RawFloat`; ``extensions`` is True when the text held comments or
        trailing commas.

    Raises:
        JSONTextError: the text is neither JSON nor JSONC (also when nested deeper than :data:`MAX_DEPTH`).
    """
    reader = _Reader(text, duplicates if duplicates is not None else [])
    value = reader.value(0)
    reader.space()
    if reader.pos != len(text):
        raise JSONTextError("extra data after the value", reader.pos)
    return value, reader.extensions


def _string(value: str) -> str:
    if isinstance(value, RawStr):
        return value.raw
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only a \\u escape can write it
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def dumps(value: Any, indent: int | str | None = 2) -> str:
    """``value`` as JSON text in ``json.dumps(value, indent=indent, ensure_ascii=False)``'s layout, where every
    value read by :func:`loads` keeps its source text (no final newline); ``indent=None``: on one line.

    Raises:
        ValueError: a value created after reading is not JSON (NaN or infinity, an unsupported type).
    """
    unit = "" if indent is None else indent if isinstance(indent, str) else " " * indent
    line = "" if indent is None else "\n"
    out: list[str] = []

    def emit(item: Any, level: int) -> None:
        if isinstance(item, (dict, list)):
            if not item:
                out.append("{}" if isinstance(item, dict) else "[]")
                return
            out.append("{" if isinstance(item, dict) else "[")
            pairs = item.items() if isinstance(item, dict) else ((None, v) for v in item)
            for i, (key, child) in enumerate(pairs):
                out.append(("," if i else "") + (line + unit * (level + 1) if line else " " if i else ""))
                if key is not None:
                    if not isinstance(key, str):
                        raise ValueError(f"object keys must be strings, got {type(key).__name__}")
                    out.append(_string(key) + ": ")
                emit(child, level + 1)
            out.append(line + unit * level + ("}" if isinstance(item, dict) else "]"))
        elif item is True or item is False or item is None:
            out.append("true" if item is True else "false" if item is False else "null")
        elif isinstance(item, (RawInt, RawFloat)):
            out.append(item.raw)
        elif isinstance(item, str):
            out.append(_string(item))
        elif isinstance(item, (int, float)):
            out.append(json.dumps(item, allow_nan=False))
        else:
            raise ValueError(f"{type(item).__name__} is not a JSON value")

    emit(value, 0)
    return "".join(out)
