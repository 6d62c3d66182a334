"""jsonsplice: changes edited into JSON/JSONC text keep every other byte, and the result always reads back as the
new document (else the splice declines and the caller rewrites the file)."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from code_trajectory.clients import jsontext
from code_trajectory.clients.jsonsplice import splice

TEXT = """// head
{
  "a": 1, // one
  /* before b */
  "b": {"x": [1, 2], "y": "z",},
  "c": [
    "keep"
  ],
}
"""


def edited(text: str, change, unit: int | str = 2, newline: str = "\n") -> tuple[str | None, dict]:
    old, _ = jsontext.loads(text)
    new = copy.deepcopy(old)
    change(new)
    return splice(text, old, new, unit, newline), new


@pytest.mark.parametrize("change,kept", [
    (lambda d: d.update(d=True), ["// head", "// one", "/* before b */", '"b": {"x": [1, 2], "y": "z",},']),
    (lambda d: d.pop("a"), ["// head", "/* before b */", '"b": {"x": [1, 2], "y": "z",},']),
    (lambda d: d.pop("b"), ["// head", '"a": 1, // one', '"keep"']),
    (lambda d: d.pop("c"), ["// head", '"a": 1, // one', '"b": {"x": [1, 2], "y": "z",},']),
    (lambda d: d["b"].update(w={"n": None}), ["// head", '"a": 1, // one', '"c": [']),
    (lambda d: d["b"].__setitem__("y", "new"), ["// head", '"a": 1, // one', '"x": [1, 2]']),
])
def test_edits_keep_the_rest(change, kept) -> None:
    result, new = edited(TEXT, change)
    assert result is not None
    assert jsontext.loads(result)[0] == new
    for piece in kept:
        assert piece in result


def test_removing_what_was_added_gives_the_bytes_back() -> None:
    added, new = edited(TEXT, lambda d: d.update(srv={"command": "c", "args": ["a"]}))
    assert added is not None and added.startswith(TEXT[: TEXT.index('  ],')])
    back = splice(added, new, jsontext.loads(TEXT)[0], 2, "\n")
    assert back == TEXT


def test_declines_what_it_cannot_do_exactly() -> None:
    # a comment inside a value that must be replaced as a whole
    assert edited('{"a": [1, /* c */ 2]}', lambda d: d.__setitem__("a", 3))[0] is None
    # not an object at the top level
    assert splice("[1]", [1], [2], 2, "\n") is None  # type: ignore[arg-type]


def test_crlf_and_tabs_for_inserted_lines() -> None:
    text = '{\r\n\t"a": 1\r\n}\r\n'
    result, new = edited(text, lambda d: d.update(b=[1]), "\t", "\r\n")
    assert result == '{\r\n\t"a": 1,\r\n\t"b": [\r\n\t\t1\r\n\t]\r\n}\r\n'


values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                   max_size=3), max_leaves=8)
objects = st.dictionaries(st.text(max_size=4), values, max_size=4)


@settings(max_examples=150, deadline=None)
@given(old=objects, add=objects, drop=st.sets(st.integers(0, 5)), indent=st.sampled_from([None, 1, 2, 4]))
def test_result_reads_back_as_the_new_document(old: dict, add: dict, drop: set, indent: int | None) -> None:
    text = json.dumps(old, indent=indent, ensure_ascii=False)
    parsed, _ = jsontext.loads(text)
    new = {k: v for i, (k, v) in enumerate(parsed.items()) if i not in drop}
    for key, value in add.items():
        if key not in new:
            new[key] = value
    result = splice(text, parsed, new, indent or 2, "\n")
    if result is not None:
        assert jsontext.loads(result)[0] == new and list(jsontext.loads(result)[0]) == list(new)


SERVER = {"command": "ct", "args": ["serve"]}


def round_trip(text: str, change, newline: str = "\n") -> str:
    """``text`` with ``change`` spliced in; asserts it reads back as the changed document and that splicing the
    change out again gives ``text`` byte for byte."""
    result, new = edited(text, change, 2, newline)
    assert result is not None
    assert jsontext.loads(result)[0] == new
    assert splice(result, new, jsontext.loads(text)[0], 2, newline) == text
    return result


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("after,comment", [("", " // keep this"), (",", " // keep this"), ("", " /* keep */")])
def test_a_comment_after_the_last_member_stays_on_its_line(after: str, comment: str, newline: str) -> None:
    """Reported: a comment after the user's last server ended up after ours (the new member went between the
    value and the comment), as if it were about ours."""
    user = f'    "other": {{"command": "x"}}{after}{comment}'
    text = newline.join(["{", '  "mcpServers": {', user, "  }", "}", ""])
    result = round_trip(text, lambda d: d["mcpServers"].update(ct=SERVER), newline)
    lines = result.split(newline)
    assert lines[2] == (user if after else f'    "other": {{"command": "x"}},{comment}')  # its comment, on its line
    assert lines[3] == '    "ct": {' and comment.strip() not in result.split(lines[2], 1)[1]


def test_a_comment_after_the_last_element_of_a_hooks_array_stays_on_its_line() -> None:
    text = '{\n  "Stop": [\n    {"command": "mine"} // formatter\n  ]\n}\n'
    result = round_trip(text, lambda d: d["Stop"].append({"command": "ours"}))
    assert '{"command": "mine"}, // formatter\n    {\n      "command": "ours"\n    }\n  ]' in result


HOOKS = '{\n  "hooks": {\n    "PostToolUse": [ {"matcher": "Bash", "hooks": [{"type": "command", "command": "fmt"}]} ]\n  }\n}\n'
GROUP = {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "ct hook edit"}]}


def test_an_inline_array_gets_the_new_element_on_its_line() -> None:
    """Reported: an inline hooks array was rewritten over several lines when install appended to it."""
    result = round_trip(HOOKS, lambda d: d["hooks"]["PostToolUse"].append(GROUP))
    assert result == HOOKS.replace(
        "}]} ]", '}]}, {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "ct hook edit"}]} ]')


@pytest.mark.parametrize("text,appended", [
    ('{"a": [1, /* one */ 2], "b": 0}', '/* one */ 2, {"k": "ours"}], "b"'),
    ('{"a": [1 /* one */ ], "b": 0}', '[1 /* one */, {"k": "ours"} ]'),
    ('{\n  "a": [\n    // first\n    1,\n    2, // two\n  ],\n  "b": 0\n}\n',
     '    // first\n    1,\n    2, // two\n    {\n      "k": "ours"\n    },\n  ],'),
    ('{\n  "a": [\n    1,\n    {"x": [1, /* c */ 2]}\n  ]\n}\n', '{"x": [1, /* c */ 2]},\n    {\n'),
])
def test_a_comment_inside_an_array_survives_an_element_appended_and_removed(text: str, appended: str) -> None:
    """Reported: a comment inside a hooks array made install rewrite the whole file (after a backup); the array
    is now edited in place, and a comment right after its last element stays there."""
    result = round_trip(text, lambda d: d["a"].append({"k": "ours"}))
    assert appended in result, result


def test_an_element_changed_in_place_keeps_the_comments_around_it() -> None:
    text = '{"a": [\n  // mine\n  {"cmd": "old", "t": 1}, // note\n  3\n]}'
    result, _ = edited(text, lambda d: d["a"][0].__setitem__("cmd", "new"))
    assert result == text.replace('"old"', '"new"')


def test_a_removed_element_takes_its_line_and_the_others_keep_theirs() -> None:
    text = '{\n  "a": [\n    1, // one\n    2, // two\n    3 // three\n  ]\n}\n'
    result, _ = edited(text, lambda d: d["a"].remove(2))
    assert result == '{\n  "a": [\n    1, // one\n    3 // three\n  ]\n}\n'


arrays = st.lists(values, min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(items=arrays, more=st.lists(values, min_size=1, max_size=3), indent=st.sampled_from([None, 2]),
       comment=st.sampled_from(["", " // c", " /* c */"]))
def test_elements_appended_come_out_byte_for_byte(items: list, more: list, indent: int | None, comment: str) -> None:
    text = json.dumps({"a": items, "z": 1}, indent=indent, ensure_ascii=False)
    if indent and comment:  # a comment after the array's last element, on its line
        last = json.dumps(items[-1], indent=indent, ensure_ascii=False).replace("\n", "\n    ")
        text = text.replace(f"    {last}\n  ]", f"    {last}{comment}\n  ]")
    round_trip(text, lambda d: d["a"].extend(copy.deepcopy(more)))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("text,key,expected", [
    ('{\n  "servers": {\n    // "old": {"command": "old"}\n  }\n}\n', "servers",
     '{\n  "servers": {\n    // "old": {"command": "old"}\n    "ct": {\n      "command": "ct",\n'),
    ('{"servers": { /* none yet */ }}', "servers", '{"servers": { /* none yet */ "ct": {"command": "ct", "args": '),
    ('{\n  "Stop": [\n    // lint here later\n  ]\n}\n', "Stop", '    // lint here later\n    {\n      "command": "ct"'),
])
def test_an_empty_object_or_array_holding_a_comment_is_filled_in_place(text: str, key: str, expected: str,
                                                                       newline: str) -> None:
    """Reported: a ``"servers"`` object holding only a commented-out server made install rewrite the whole file (its
    comments gone, after a backup), and uninstall after a later edit could not give them back. Our entry now goes
    after the comment, and cutting it out gives the bytes back."""
    text = text.replace("\n", newline)
    result = round_trip(text, lambda d: d[key].append(SERVER) if isinstance(d[key], list) else d[key].update(ct=SERVER),
                        newline)
    assert expected.replace("\n", newline) in result, result
