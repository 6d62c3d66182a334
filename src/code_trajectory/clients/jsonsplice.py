"""Write a changed JSON/JSONC document back by editing its text: only the changed values are new text.

:func:`splice` takes the original text and the new document and returns the original with each changed value
replaced, each removed member (of an object) or element (of an array) cut out and each added one inserted after the
last one, indented like its siblings (on the same line when the object or array is on one line; below a comment on
the last one's line, which stays with it). Everything else (comments, trailing commas, blank lines, inline arrays,
key spacing) keeps its bytes, which is what a hand-edited JSONC file such as Zed's ``settings.json`` or VS Code's
``mcp.json`` deserves; cutting out what was added gives the original bytes back.

An array is edited in place when the new one is the old with elements changed in place and more appended, or with
elements removed (the others unchanged); otherwise it is written anew at its place, which is declined when it held a
comment. An object or array holding nothing but comments (a commented-out server) gets its first members
after them, and keeps them when its last member is cut (:func:`_around_comments`).

It declines (returns None, and :mod:`.jsonfile` writes the whole document in its own layout instead, after a backup)
when the text holds a repeated key, when keys were reordered, or when re-reading the result does not give the new
document exactly: the splice is only ever used when it is provably right. Standard library and
:mod:`.jsontext` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from code_trajectory.clients import jsontext


@dataclass
class _Node:
    """A value's span ``[start, end)`` in the text; for an object or array (``container`` ``"{"`` or ``"["``), its
    members' spans: ``(key, key start, value node)``, the key None and its start the value's for an element."""

    start: int
    end: int
    members: list[tuple[str | None, int, _Node]] = field(default_factory=list)
    container: str = ""


class _Spans(jsontext._Reader):
    """jsontext's reader, also recording where each value and each member of an object or array is."""

    def node(self, depth: int) -> tuple[Any, _Node]:
        self.space()
        start = self.pos
        if self.text.startswith(("{", "["), self.pos):
            if depth >= jsontext.MAX_DEPTH:
                raise jsontext.JSONTextError("nested too deep", self.pos)
            return self.collection(start, depth + 1)
        value = self.value(depth)
        return value, _Node(start, self.pos)

    def collection(self, start: int, depth: int) -> tuple[Any, _Node]:
        opening = self.text[start]
        closing = "}" if opening == "{" else "]"
        self.pos += 1
        items: dict[str, Any] = {}
        elements: list[Any] = []
        node = _Node(start, start, container=opening)
        self.space()
        while not self.text.startswith(closing, self.pos):
            key_start = self.pos
            key: str | None = None
            if opening == "{":
                if not self.text.startswith('"', self.pos):
                    raise jsontext.JSONTextError("expected a key", self.pos)
                key = self.string()
                self.space()
                if not self.text.startswith(":", self.pos):
                    raise jsontext.JSONTextError("expected ':'", self.pos)
                self.pos += 1
            value, child = self.node(depth)
            if key is None:
                elements.append(value)
            elif key in items:
                raise jsontext.JSONTextError("repeated key", key_start)
            else:
                items[key] = value
            node.members.append((None if key is None else str(key), key_start, child))
            self.space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.space()
            elif not self.text.startswith(closing, self.pos):
                raise jsontext.JSONTextError(f"expected ',' or '{closing}'", self.pos)
        self.pos += 1
        node.end = self.pos
        return (items if opening == "{" else elements), node


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


_GONE: Any = object()  # a member's new value when it is removed


def _emit(text: str, old: Any, node: _Node, new: Any, unit: str, newline: str) -> str | None:
    if _same(old, new):
        return text[node.start:node.end]
    if node.container == "{" and isinstance(new, dict) and isinstance(old, dict):
        kept = [k for k in old if k in new]
        added = [k for k in new if k not in old]
        if list(new) != kept + added or not kept:  # reordered, or nothing of it stays: the value anew at its place
            return _replace(text, node, new, unit, newline) or _around_comments(text, node, old, new, unit, newline)
        targets = [new.get(key, _GONE) for key, _, _ in node.members]
        return _members(text, node, list(old.values()), targets, [(k, new[k]) for k in added], unit, newline)
    if node.container == "[" and isinstance(new, list) and isinstance(old, list):
        elements = _element_targets(old, new)
        if elements is not None and any(t is not _GONE for t in elements):
            return _members(text, node, old, elements, [(None, v) for v in new[len(old):]], unit, newline)
    return _replace(text, node, new, unit, newline) or _around_comments(text, node, old, new, unit, newline)


def _around_comments(text: str, node: _Node, old: Any, new: Any, unit: str, newline: str) -> str | None:
    """The text of the object or array at ``node``, which holds a comment, when ``new`` fills it from empty or
    empties it: the comments stay where they are (a commented-out server in an otherwise empty ``"servers": {}``);
    None for any other change."""
    if node.container != ("{" if isinstance(new, dict) else "[" if isinstance(new, list) else None):
        return None
    if not old and new:
        added: list[tuple[str | None, Any]] = (list(new.items()) if isinstance(new, dict)
                                               else [(None, value) for value in new])
        return _into_empty(text, node, added, unit, newline)
    if old and not new and node.members:
        return _emptied(text, node)
    return None


def _head(key: str | None) -> str:
    return "" if key is None else jsontext.dumps(key) + ": "


def _into_empty(text: str, node: _Node, added: list[tuple[str | None, Any]], unit: str, newline: str) -> str:
    """The empty object or array at ``node`` (comments only) with ``added`` after its comments, before the closing
    bracket: on its line when it is on one line, else each on a line of its own, one ``unit`` deeper than the line
    of the opening bracket. :func:`_emptied` takes them out again."""
    inner = text[node.start + 1:node.end - 1]
    if "\n" not in inner:  # { /* none */ }
        body = inner.rstrip(" \t")
        pieces = ", ".join(_head(key) + jsontext.dumps(value, None) for key, value in added)
        return text[node.start] + body + " " + pieces + inner[len(body):] + text[node.end - 1]
    cut = inner.rfind("\n")  # the members go before the line of the closing bracket
    if cut > 0 and inner[cut - 1] == "\r":
        cut -= 1
    indent = _line_indent(text, node.start) + unit
    pieces = ",".join(newline + indent + _head(key) + _fresh(value, unit, indent, newline) for key, value in added)
    return text[node.start] + inner[:cut] + pieces + inner[cut:] + text[node.end - 1]


def _emptied(text: str, node: _Node) -> str:
    """The object or array at ``node`` with every member cut (each with its comma and a comment on its line after
    it) and the comments on lines of their own kept: what :func:`_into_empty` was given back."""
    members = node.members
    out = [text[node.start:members[0][1]].rstrip(" \t")]
    if "\n" in text[node.start:node.end]:
        out[0] = out[0].removesuffix("\n").removesuffix("\r")  # the first member's line break goes with it
    for i, (_, _, child) in enumerate(members):
        sep = text[child.end:members[i + 1][1]] if i < len(members) - 1 else text[child.end:node.end - 1]
        line_end = sep.find("\n", _comma(sep) + 1) if i < len(members) - 1 else sep.find("\n")
        if line_end < 0:  # on one line: only the comma goes
            rest = sep[_comma(sep) + 1:] if sep[_comma(sep):].startswith(",") else sep
            out.append(rest if i == len(members) - 1 else "")
            continue
        if line_end > 0 and sep[line_end - 1] == "\r":
            line_end -= 1
        later = sep[line_end:]
        if i < len(members) - 1:  # comments on the lines below, up to the next member's line
            later = later.rstrip(" \t").removesuffix("\n").removesuffix("\r")
        out.append(later if later.strip() or i == len(members) - 1 else "")
    out.append(text[node.end - 1])
    return "".join(out)


def _element_targets(old: list[Any], new: list[Any]) -> list[Any] | None:
    """Each old element's new value (:data:`_GONE`: removed) when ``new`` is ``old`` with elements changed in place
    and more appended (as long as ``old`` or longer), or with elements removed (shorter: the others unchanged, in
    order); None when it is neither."""
    if len(new) >= len(old):
        return list(new[:len(old)])
    targets: list[Any] = []
    j = 0
    for item in old:
        if j < len(new) and _same(item, new[j]):
            targets.append(new[j])
            j += 1
        else:
            targets.append(_GONE)
    return targets if j == len(new) else None


def _comments_only(piece: str) -> bool:
    """True when ``piece`` holds a comment and nothing else but blanks (no value, comma or line break)."""
    if "\n" in piece or not piece.strip(" \t\r"):
        return False
    reader = jsontext._Reader(piece, [])
    try:
        reader.space()
    except jsontext.JSONTextError:
        return False
    return reader.pos == len(piece)


def _members(text: str, node: _Node, olds: list[Any], targets: list[Any], added: list[tuple[str | None, Any]],
             unit: str, newline: str) -> str | None:
    """The text of the object or array at ``node`` whose members ``olds`` become ``targets`` (:data:`_GONE`: cut,
    with its comma and the rest of its line) followed by ``added``: each kept member's text is its own (edited in
    place when it changed), the added ones go after the last kept one, on one line when the whole value is on one
    line, else each on its own line indented like the first kept one. A comment after the last member stays with it
    (:func:`_appended`), also when the added members come out again (:func:`_end_before_cut`)."""
    members = node.members
    keep = [i for i, target in enumerate(targets) if target is not _GONE]
    last = len(members) - 1
    tail = text[members[-1][2].end:node.end]  # what follows the last member: a trailing comma, comments, "}"
    inline = "\n" not in text[node.start:node.end]
    indent = _line_indent(text, members[keep[0]][1])

    def fresh(key: str | None, value: Any) -> str:
        head = "" if key is None else jsontext.dumps(key) + ": "
        return head + (jsontext.dumps(value, None) if inline else _fresh(value, unit, indent, newline))

    pieces = [fresh(key, value) for key, value in added]
    out = [text[node.start:members[0][1]]]  # the opening bracket and what precedes the first member
    for i, (_, key_start, child) in enumerate(members):
        sep = text[child.end:members[i + 1][1]] if i < last else ""
        comma = _comma(sep)
        if targets[i] is _GONE:  # cut the member, its comma and the rest of that line; later comments stay
            line_end = sep.find("\n", comma + 1)
            later = sep[line_end + 1:] if line_end >= 0 else ""
            if later.strip():  # comments on the lines below: they belong to what follows
                out.append(later)
            continue
        out.append(text[key_start:child.start])
        piece = _emit(text, olds[i], child, targets[i], unit, newline)
        if piece is None:
            return None
        out.append(piece)
        if i != keep[-1]:
            out.append(sep)
            continue
        if i == last:
            added_text, tail = _appended(tail, pieces, inline, indent, newline)
            out.append(added_text)
            continue
        out.extend("," + (" " if inline else newline + indent) + p for p in pieces)  # then cut the rest
        ending, tail = _end_before_cut(sep, comma, tail, bool(pieces))
        out.append(ending)
    out.append(tail)
    return "".join(out)


def _appended(tail: str, pieces: list[str], inline: bool, indent: str, newline: str) -> tuple[str, str]:
    """``(text, rest)``: the ``pieces`` to put right after the last member's value, with what of ``tail`` (the text
    after it, up to the closing bracket) goes before them, and the rest of ``tail``. They go after a comment that
    follows the value: below it (on their own lines), or after it on the same line for a value on one line."""
    if not pieces:
        return "", tail
    if inline:  # [1 /* one */, 2]
        reader = jsontext._Reader(tail, [])
        reader.space()
        note = tail[:reader.pos].rstrip(" \t")
        return note + "".join(", " + p for p in pieces), tail[len(note):]
    line, below, _ = tail.partition("\n")
    line = line.removesuffix("\r")
    body = line.lstrip(" \t")
    trailing = body.startswith(",")
    lines = ",".join(newline + indent + p for p in pieces)
    if below and _comments_only(body[1:] if trailing else body):  # "x": 1 // note: ours go below the note
        return (f"{line}{lines}," if trailing else f",{line}{lines}"), tail[len(line):]
    return "," + lines, tail


def _end_before_cut(sep: str, comma: int, tail: str, added: bool) -> tuple[str, str]:
    """``(text, tail)``: what follows the last kept member, whose following ones are all cut (``sep``: the text
    between it and the next, ``comma`` the index of the comma in it), and the ``tail`` after the last member as it
    now ends. The comma goes (a trailing one stays, in ``tail``); a comment on the kept member's line after the
    comma stays on it, and a trailing comma goes back before it (what :func:`_appended` did, undone)."""
    line_end = sep.find("\n", comma + 1)
    if line_end > 0 and sep[line_end - 1] == "\r":
        line_end -= 1
    same_line = sep[comma + 1:line_end] if line_end >= 0 else ""
    lead = len(tail) - len(tail.lstrip(" \t"))
    trailing = tail.startswith(",", lead)
    if added or not _comments_only(same_line) or not tail[lead + int(trailing):].startswith(("\n", "\r\n")):
        return sep[:comma], tail
    if trailing:
        return sep[:line_end], tail[:lead] + tail[lead + 1:]
    return sep[:comma] + same_line, tail


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
        if reader.pos != len(text) or root.container != "{":
            return None
        piece = _emit(text, old, root, new, unit if isinstance(unit, str) else " " * unit, newline)
        if piece is None:
            return None
        result = text[:root.start] + piece + text[root.end:]
        again, _ = jsontext.loads(result)
    except (jsontext.JSONTextError, ValueError, RecursionError):
        return None
    return result if _same(again, new) else None
