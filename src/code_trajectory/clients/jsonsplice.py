"""Write a changed JSON/JSONC document back by editing its text: only the changed values are new text.

:func:`splice` takes the original text and the new document and returns the original with each changed value
replaced, each removed member cut out and each added member inserted after the last one, indented like its
siblings. Everything else (comments, trailing commas, blank lines, inline arrays, key spacing) keeps its bytes,
which is what a hand-edited JSONC file such as Zed's ``settings.json`` or VS Code's ``mcp.json`` deserves.

It declines (returns None, and :mod:`.jsonfile` writes the whole document in its own layout instead) when the text
holds a repeated key, when keys were reordered, or when re-reading the result does not give the new document
exactly: the splice is only ever used when it is provably right. Standard library and
:mod:`.jsontext` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from code_trajectory.clients import jsontext


@dataclass
class _Node:
    """A value's span ``[start, end)`` in the text; for an object, its members' spans."""

    start: int
    end: int
    members: list[tuple[str, int, _Node]] = field(default_factory=list)  # (key, key start, value node)
    is_object: bool = False


class _Spans(jsontext._Reader):
    """jsontext's reader, also recording where each value and object member is."""

    def node(self, depth: int) -> tuple[Any, _Node]:
        self.space()
        start = self.pos
        if self.text.startswith("{", self.pos):
            if depth >= jsontext.MAX_DEPTH:
                raise jsontext.JSONTextError("nested too deep", self.pos)
            return self.object(start, depth + 1)
        value = self.value(depth)
        return value, _Node(start, self.pos)

    def object(self, start: int, depth: int) -> tuple[Any, _Node]:
        self.pos += 1
        items: dict[str, Any] = {}
        node = _Node(start, start, is_object=True)
        self.space()
        while not self.text.startswith("}", self.pos):
            if not self.text.startswith('"', self.pos):
                raise jsontext.JSONTextError("expected a key", self.pos)
            key_start = self.pos
            key = self.string()
            self.space()
            if not self.text.startswith(":", self.pos):
                raise jsontext.JSONTextError("expected ':'", self.pos)
            self.pos += 1
            value, child = self.node(depth)
            if key in items:
                raise jsontext.JSONTextError("repeated key", key_start)
            items[key] = value
            node.members.append((str(key), key_start, child))
            self.space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.space()
            elif not self.text.startswith("}", self.pos):
                raise jsontext.JSONTextError("expected ',' or '}'", self.pos)
        self.pos += 1
        node.end = self.pos
        return items, node


def _same(a: Any, b: Any) -> bool:
    """Deep equality that keeps key order and tells ``true`` from ``1`` and ``1.0`` from ``1``."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, str) != isinstance(b, str) or isinstance(a, float) != isinstance(b, float):
        return False
    return bool(a == b)


def _line_indent(text: str, pos: int) -> str:
    """The leading whitespace of the line holding ``pos``."""
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _fresh(value: Any, unit: str, base: str, newline: str) -> str:
    """``value`` as new JSON text whose continuation lines start with ``base``."""
    return jsontext.dumps(value, unit).replace("\n", newline + base)


def _replace(text: str, node: _Node, new: Any, unit: str, newline: str) -> str | None:
    """New text for the value at ``node``; None when the old text holds a comment or trailing comma it would lose."""
    try:
        _, extensions = jsontext.loads(text[node.start:node.end])
    except jsontext.JSONTextError:
        return None
    return None if extensions else _fresh(new, unit, _line_indent(text, node.start), newline)


def _emit(text: str, old: Any, node: _Node, new: Any, unit: str, newline: str) -> str | None:
    if _same(old, new):
        return text[node.start:node.end]
    if not (node.is_object and isinstance(new, dict) and isinstance(old, dict)):
        return _replace(text, node, new, unit, newline)
    kept = [k for k in old if k in new]
    added = [k for k in new if k not in old]
    if list(new) != kept + added or not kept:  # reordered, or nothing of it stays: the value anew at its place
        return _replace(text, node, new, unit, newline)
    members = node.members
    keep = [i for i, (key, _, _) in enumerate(members) if key in new]
    indent = _line_indent(text, members[keep[0]][1])
    out = [text[node.start:members[0][1]]]  # "{" and what precedes the first key
    for i, (key, key_start, child) in enumerate(members):
        sep = text[child.end:members[i + 1][1]] if i + 1 < len(members) else ""
        comma = _comma(sep)
        if key not in new:  # cut the member, its comma and the rest of that line; later comments stay
            line_end = sep.find("\n", comma + 1)
            later = sep[line_end + 1:] if line_end >= 0 else ""
            if later.strip():  # comments on the lines below: they belong to what follows
                out.append(later)
            continue
        out.append(text[key_start:child.start])
        piece = _emit(text, old[key], child, new[key], unit, newline)
        if piece is None:
            return None
        out.append(piece)
        if i == keep[-1]:
            out.extend("," + newline + indent + jsontext.dumps(k) + ": " + _fresh(new[k], unit, indent, newline)
                       for k in added)
            out.append(sep[:comma])  # no kept member follows: its comma goes (a trailing one stays, in what follows)
        else:
            out.append(sep)
    out.append(text[members[-1][2].end:node.end])  # what follows the last member: trailing comma, "}"
    return "".join(out)


def _comma(sep: str) -> int:
    """The index of the comma in the text between two members (whitespace and comments around it)."""
    reader = jsontext._Reader(sep, [])
    reader.space()
    return reader.pos


def splice(text: str, old: dict[str, Any], new: dict[str, Any], unit: int | str, newline: str) -> str | None:
    """``text`` (the document ``old`` was read from, without BOM) edited into ``new``, or None when it cannot be
    done exactly (see the module docstring).

    Args:
        unit: the indent of one level (spaces count or ``"\\t"``), for inserted values.
        newline: the file's line ending, for inserted lines.
    """
    try:
        reader = _Spans(text, [])
        parsed, root = reader.node(0)
        reader.space()
        if reader.pos != len(text) or not root.is_object:
            return None
        piece = _emit(text, old, root, new, unit if isinstance(unit, str) else " " * unit, newline)
        if piece is None:
            return None
        result = text[:root.start] + piece + text[root.end:]
        again, _ = jsontext.loads(result)
    except (jsontext.JSONTextError, ValueError, RecursionError):
        return None
    return result if _same(again, new) else None
