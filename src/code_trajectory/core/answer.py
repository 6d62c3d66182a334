"""An answer of a query: markdown for the reader plus the same facts as fields for programs and models.

:class:`Answer` is a ``str`` (the markdown the CLI prints and a model reads) that also carries ``data``, a
JSON-ready dict of the facts the text shows. MCP tools return ``data`` as their structured content
(:func:`code_trajectory.core.mcp_util.tool`). Some clients hand the model *only* the structured content when
there is one (Claude Code 2.1: anthropics/claude-code#55677, #79944; VS Code: microsoft/vscode#290063), so the
fields are not metadata: they hold every fact the text holds (snapshot ids, times, intents, checkpoint names,
paths, counts, changed symbols, and the diffs and lines the text shows, exactly as shown).

The guarantee (checked once for every tool by :func:`structured`, which ``mcp_util.tool`` applies):

* **Size**: the compact JSON of the structured content (:func:`compact`) is at most as many characters as the
  text, counting each string as it is shown (:func:`size`: JSON's escapes, ``\n`` for each line break of a diff
  and ``\"`` for a quote, are not counted; a diff of many short lines would otherwise outweigh its own text by a
  character a line, and an escape is one token as the character it stands for). A tool whose output shape a
  specification fixes (the recap's and the journal's, which declare an output schema: ``recap-issue.md``,
  ``journal-design.md``) is measured by its values alone: the keys and the punctuation are the schema's, not
  facts; every value (each id, time and score) counts. Builders keep it so (short keys,
  rows with a column list, no nulls or empty values, one field per fact, no pretty-printing); when the facts of an
  answer would still be longer, as a last resort (logged) the oldest entries without a diff are left out (counted in
  ``<list>_left_out``), then the longest strings (diffs first) are cut at a line end with ``…``.
* **Messages**: an answer with nothing to list (nothing recorded yet, no test run, no difference) is a
  :func:`message`, without structured content: clients then show the model its text.
* **Order**: entries are in the order of the text (oldest to newest where the text is); an entry the text left
  out for the budget is left out here too (:func:`shown`). :func:`order_problems` checks it.

Shared field names: ``id`` a snapshot id as the text shows it (12 hex digits; every tool accepts it), ``t`` a time
(ISO 8601 to the second, the machine's local time as in the text), ``msg`` a snapshot's message
(intent and checkpoint name) as shown, ``diff`` a diff exactly as shown. Standard library only.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from typing import Any

log = logging.getLogger(__name__)

#: The marker that ends a string cut by the last-resort size rule.
CUT_MARK = "…"
#: Strings shorter than this are never cut (ids, names, times).
MIN_CUT = 40
#: Characters the structured content may exceed its text by: the field names and brackets of an answer's shape
#: (``path``, ``symbol``, ``branch``, ``cols`` of a symbol history: ~90 characters) cost more than a short text's
#: heading; without it, 21 of 176 one-change symbol histories of a JavaScript replay (tj/commander.js) had their only
#: diff cut by 18-21 characters in what Claude Code hands the model.
SHAPE_ALLOWANCE = 100


def room(text: str) -> int:
    """The most characters (:func:`size`) the structured content of an answer whose text is ``text`` may hold: the
    text's length plus :data:`SHAPE_ALLOWANCE`."""
    return len(text) + SHAPE_ALLOWANCE

_SNAPSHOT_ID = re.compile(r"^[0-9a-f]{12}$")
_FENCE = re.compile(r"^(```+)[a-z]*\n(.*?)\n\1$", re.S | re.M)
#: A line that would close a fence of backticks (CommonMark: up to 3 spaces, then 3 or more backticks).
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,})", re.M)


class Answer(str):
    """Markdown text with structured ``data`` alongside.

    Args:
        text: the markdown answer.
        data: JSON-ready fields (str, int, float, bool, None, lists and dicts of them); see the module docstring
            for the size and order rule :func:`structured` applies.
    """

    data: dict[str, Any]

    def __new__(cls, text: str, data: dict[str, Any] | None = None) -> Answer:
        answer = super().__new__(cls, text)
        answer.data = dict(data or {})
        return answer

    @property
    def text(self) -> str:
        """The markdown, as a plain ``str``."""
        return str.__str__(self)


def message(text: str) -> Answer:
    """An answer that is a message rather than facts to list (nothing recorded for a path yet, no test run, nothing
    to compare): it has no structured content, so every client, those that hand the model only the structured
    content when there is one included, shows the model the message itself (MCP's ``structuredContent`` is
    optional). Fields could only repeat it, in more characters than the text."""
    return Answer(text)


def compact(data: Any) -> str:
    """``data`` as compact JSON (no spaces, UTF-8 characters kept): the form its size is measured in."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def escapes(data: Any) -> int:
    """Characters JSON adds to escape the strings of ``data`` (``\n`` for a line break, ``\"`` for a quote...)."""
    if isinstance(data, str):
        return len(json.dumps(data, ensure_ascii=False)) - 2 - len(data)
    items = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
    return sum(escapes(item) for item in items) + (sum(escapes(key) for key in data) if isinstance(data, dict) else 0)


def _values(data: Any) -> int:
    """Characters of the scalar values of ``data`` as shown (strings without quotes or escapes)."""
    if isinstance(data, dict):
        return sum(_values(item) for item in data.values())
    if isinstance(data, list):
        return sum(_values(item) for item in data)
    return len(data) if isinstance(data, str) else len(compact(data))


def size(data: Any, *, keys: bool = True) -> int:
    """The size the rule bounds: characters of :func:`compact` JSON, strings counted as shown (without
    :func:`escapes`); with ``keys=False``, for a shape a specification fixes, the characters of the values alone
    (the keys and JSON's punctuation are the schema's, not facts)."""
    return len(compact(data)) - escapes(data) if keys else _values(data)


def when(moment: datetime) -> str:
    """A time as structured content gives it (``t``): ISO 8601 to the second in the machine's local time, without
    the offset, as the text shows it (``2026-11-21T14:02:11``)."""
    return moment.astimezone().replace(tzinfo=None).isoformat(timespec="seconds")


def short(oid: str) -> str:
    """A snapshot id as the text shows it: its first 12 hex digits."""
    return oid[:12]


def prune(value: Any) -> Any:
    """``value`` without None, empty strings, lists and dicts in its dicts (recursively); lists keep their
    positions (rows of a column list), only trailing empty values are dropped."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            item = prune(item)
            if item is None or (isinstance(item, (str, list, dict)) and not item):
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        items = [prune(item) for item in value]
        while items and _empty(items[-1]):
            items.pop()
        return items
    return value


def shown(text: str, entries: list[dict[str, Any]], key: str = "id") -> list[dict[str, Any]]:
    """The ``entries`` (given in the text's order) whose ``key`` the text shows: what a budget cut of the text left
    out is left out of the data too."""
    return [entry for entry in entries if entry.get(key) is not None and str(entry[key]) in text]


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def table(entries: list[dict[str, Any]], columns: list[str]) -> tuple[list[str], list[list[Any]]]:
    """``entries`` as rows: ``(cols, rows)``, a value per column (None where absent), each row without its
    trailing empty values and ``cols`` only as long as the longest row."""
    out = []
    for entry in entries:
        row = [entry.get(column) for column in columns]
        while row and _empty(row[-1]):
            row.pop()
        out.append(row)
    return columns[:max((len(row) for row in out), default=0)], out


def sections(text: str, marks: list[str]) -> list[str]:
    """The part of ``text`` each of ``marks`` (in text order) heads: from the mark's first occurrence after the
    previous mark to the next mark's ("" for a mark not found)."""
    starts: list[int] = []
    at = 0
    for mark in marks:
        found = text.find(mark, at)
        starts.append(found)
        if found >= 0:
            at = found + len(mark)
    out = []
    for i, start in enumerate(starts):
        if start < 0:
            out.append("")
            continue
        ends = [s for s in starts[i + 1:] if s > start]
        out.append(text[start:ends[0] if ends else len(text)])
    return out


def code_block(body: str, info: str = "diff") -> str:
    """``body`` as a fenced code block (```` ```diff ````) whose fence no line of ``body`` can close: one backtick
    longer than the longest run of backticks starting a line of it (a Markdown file's `` ``` `` as a diff's
    context line, `` ```py``). CommonMark's rule: a closing fence is indented up to 3 spaces and at least as long
    as the opening one."""
    longest = max((len(m.group(1)) for m in _FENCE_LINE.finditer(body)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def fenced(section: str) -> str | None:
    """The content of the fenced code blocks (```` ```diff ````, as :func:`code_block` writes them) in ``section``,
    as shown, one after the other (a version's hunks shown apart are one diff); None if none."""
    found = [match.group(2) for match in _FENCE.finditer(section)]
    return "\n".join(found) if found else None


def _strings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[int, tuple[Any, ...]]]:
    found: list[tuple[int, tuple[Any, ...]]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, str):
            found.append((len(item), (*path, key)))
        else:
            found += _strings(item, (*path, key))
    return found


def _cut(data: Any, path: tuple[Any, ...], length: int) -> None:
    node = data
    for key in path[:-1]:
        node = node[key]
    value: str = node[path[-1]]
    keep = value[:length]
    if "\n" in keep[length // 2:]:
        keep = keep[:keep.rindex("\n")]
    node[path[-1]] = keep.rstrip() + CUT_MARK


def structured(text: str, data: dict[str, Any] | None, *, keys: bool = True) -> dict[str, Any] | None:
    """The structured content of an answer: ``data`` pruned (:func:`prune`) and held to the size of ``text``.

    Args:
        text: the answer's text.
        data: its facts.
        keys: False for a shape a specification fixes (an output schema): the keys are not counted.

    Returns:
        A new dict whose :func:`size` is at most :func:`room` characters (when it would be more: the oldest
        entries without a diff left out, then the longest strings cut at a line end with :data:`CUT_MARK`; logged,
        a builder should not need it), or None when ``data`` is empty once pruned.
    """
    if not data:
        return None
    out: dict[str, Any] = prune(json.loads(compact(data)))
    if not out:
        return None
    now, bound = size(out, keys=keys), room(text)
    if now <= bound:
        return out
    log.warning("structured content of %d characters over its bound of %d: oldest entries without a diff left out, "
                "then the longest strings cut", now, bound)
    while now > bound:
        if _drop_oldest(out, now - bound, keys=keys):
            now = size(out, keys=keys)
            continue
        strings = sorted(_strings(out), reverse=True)
        if strings and strings[0][0] > MIN_CUT:
            length, path = strings[0]
            _cut(out, path, max(MIN_CUT - len(CUT_MARK), min(length - (now - bound) - 1, length // 2)))
        elif _drop_last(out, now - bound, keys=keys):
            pass
        elif len(out) > 1:  # only short fields left: the largest goes (never seen with the builders of this package)
            del out[max(out, key=lambda key: len(compact(out[key])))]
        else:
            break
        now = size(out, keys=keys)
    return out


#: Lists the last resort never shortens: the user's names of points (a few short entries, the names ``restore`` and
#: ``compare`` take). Being the only list of dicts whose times ran oldest first in the recent log and the session
#: summary, they were the entries left out there, while a string cut frees the same room.
KEPT_WHOLE = frozenset({"named_points"})


def _drop_oldest(out: dict[str, Any], excess: int, *, keys: bool = True) -> bool:
    """Leave out the oldest entries without a ``diff`` (the first ones: a list whose entries' times ``t`` run
    oldest first) of the longest such top-level list (not one of :data:`KEPT_WHOLE`), never its newest entry, as many as make up ``excess``
    characters (:func:`size`) in one pass, and count them in ``<key>_left_out``; False when there is none to leave
    out. A model given only the structured content then still reads the newest entries and every diff whole, where
    cutting strings first would cut the newest diff and deleting the list would leave it nothing."""
    def oldest_first(value: Any) -> bool:
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(i, dict) for i in value):
            return False
        times = [item.get("t") for item in value]
        return all(isinstance(t, str) for t in times) and times == sorted(times)

    lists = sorted(((len(value), key) for key, value in out.items() if key not in KEPT_WHOLE and oldest_first(value)),
                   reverse=True)
    for _length, key in lists:
        items = out[key]
        drop, freed = [], 0
        for index, item in enumerate(items[:-1]):
            if "diff" in item:
                continue
            drop.append(index)
            freed += size(item, keys=keys) + 1
            if freed >= excess:
                break
        if drop:
            dropped = set(drop)
            out[key] = [item for index, item in enumerate(items) if index not in dropped]
            out[f"{key}_left_out"] = out.get(f"{key}_left_out", 0) + len(drop)
            return True
    return False


def _drop_last(out: dict[str, Any], excess: int, *, keys: bool = True) -> bool:
    """Leave out the last entries of the longest top-level list of two or more (not one of :data:`KEPT_WHOLE`), never
    its first, as many as make up ``excess`` characters (:func:`size`), and count them in ``<key>_left_out``; False
    when there is none. The last resort before a whole field goes: a builder lists first what matters most (the
    newest or the best match), and a model given only the structured content then still reads those, where deleting
    the field left it ``{"query": ..., "more": true}`` (a search's rows, before they fitted)."""
    lists = [key for key, value in out.items() if key not in KEPT_WHOLE and isinstance(value, list) and len(value) > 1]
    if not lists:
        return False
    key = max(lists, key=lambda k: len(out[k]))
    items, freed, cut = out[key], 0, len(out[key])
    while cut > 1 and freed < excess:
        cut -= 1
        freed += size(items[cut], keys=keys) + 1
    out[key] = items[:cut]
    out[f"{key}_left_out"] = out.get(f"{key}_left_out", 0) + len(items) - cut
    return True


def rows_to_leave_out(limit: int, data: dict[str, Any], rows: list[Any], *, from_end: bool = False) -> int:
    """How many of ``rows`` (a list held in ``data``) at least leave out, from their start (or end), for
    :func:`size` of ``prune(data)`` to come within ``limit`` characters, never all of them: each row's size is
    measured once, so a builder trimming its rows one at a time does not measure the whole content again a row
    (1,000 rows: seconds). What leaving out adds (a count, a row's new first field) is not counted: the caller
    leaves these out, then goes on one row at a time while still over."""
    excess = size(prune(data)) - limit
    count = freed = 0
    order = reversed(rows) if from_end else iter(rows)
    while excess > freed and count < len(rows) - 1:
        freed += size(prune(next(order))) + 1  # the row and its comma
        count += 1
    return count


def order_problems(text: str, data: Any) -> list[str]:
    """Lists in ``data`` whose entries' ``id`` fields, or rows' first values when they are snapshot ids, do not
    appear in ``text`` in the same order: one line per problem, empty when the order matches (the rule of the
    module docstring). Paths are not checked: the text may quote an unusual name."""
    problems: list[str] = []

    def visit(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                visit(item, f"{where}.{key}")
        elif isinstance(value, list):
            marks = [str(item["id"]) for item in value if isinstance(item, dict) and "id" in item]
            if not marks and all(isinstance(item, list) and item and isinstance(item[0], str)
                                 and _SNAPSHOT_ID.match(item[0]) for item in value):
                marks = [item[0] for item in value]
            at = -1
            for mark in marks if len(marks) > 1 else []:
                found = text.find(mark, at + 1)
                if found < 0:
                    problems.append(f"{where}: id {mark!r} not in the text after the previous entry's")
                    break
                at = found
            for i, item in enumerate(value):
                visit(item, f"{where}[{i}]")

    visit(data, "$")
    return problems
