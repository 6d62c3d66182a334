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
