"""The texts of a tool call the server cannot run (``core/tool_arguments.py``), from pydantic's error facts."""

from __future__ import annotations

from code_trajectory.core import tool_arguments

SCHEMA = {"type": "object", "required": ["filepath"], "properties": {
    "filepath": {"type": "string"}, "depth": {"type": "integer", "minimum": 1, "maximum": 200, "default": 5},
    "paths": {"type": "array", "items": {"type": "string"}}, "dry_run": {"type": "boolean", "default": False},
    "branch": {"type": ["string", "null"]}}}


def test_the_signature_names_each_argument_with_its_type_range_and_default() -> None:
    assert tool_arguments.signature("t", SCHEMA) == (
        "Arguments of t: `filepath` (string, required), `depth` (integer, 1 to 200, default 5), "
        "`paths` (array of string), `dry_run` (boolean, default false), `branch` (string).")
    assert tool_arguments.signature("t", {"type": "object", "properties": {}}) == "t takes no arguments."


def test_a_rejected_value_is_shown_short_with_secrets_redacted() -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = tool_arguments.invalid_arguments("t", [
        {"type": "int_parsing", "loc": ("depth",), "msg": "Input should be a valid integer", "input": key},
        {"type": "string_type", "loc": ("filepath",), "msg": "Input should be a valid string", "input": ["x"] * 100},
    ], SCHEMA)
    assert key not in text and "`depth`: Input should be a valid integer (got " in text
    assert '`filepath`: Input should be a valid string (got ["x", "x",' in text and "…)" in text
    assert len(text) < 500


def test_unknown_names_get_the_closest_declared_one_or_the_list() -> None:
    assert tool_arguments.unknown_arguments("t", ["dpeth", "zzz"], SCHEMA).startswith(
        "t has no argument `dpeth` (did you mean `depth`?), `zzz`; nothing was done. Arguments of t:")
    assert tool_arguments.unknown_tool("chekpoint", ["checkpoint", "restore"]) == (
        "There is no tool `chekpoint`. Did you mean `checkpoint`?")
    assert tool_arguments.unknown_tool("x", ["restore", "checkpoint"]) == (
        "There is no tool `x`. The tools are: checkpoint, restore.")


def test_a_name_with_control_characters_is_escaped() -> None:
    assert "\x1b" not in tool_arguments.unknown_tool("\x1b[31mred", ["restore"])


def test_a_huge_or_numerous_unknown_name_is_shown_short() -> None:
    """A 5 MB tool name or argument name was repeated whole in the error (and the SDK's log line), after difflib
    compared it with every name; 20,000 unknown arguments made a 189,000-character error."""
    big = "z" * 5_000_000
    assert len(tool_arguments.unknown_tool(big, ["restore", "get_recap"])) < 500
    assert len(tool_arguments.unknown_arguments("t", [big], SCHEMA)) < 500
    text = tool_arguments.unknown_arguments("t", [f"k{i}" for i in range(20_000)], SCHEMA)
    assert len(text) < 500 and "and 19995 more" in text
    assert "(did you mean `depth`?)" in tool_arguments.unknown_arguments("t", ["dpth"], SCHEMA)


def test_a_list_of_many_rejected_items_is_said_in_a_few_lines() -> None:
    """``restore(paths=[1, 2, ... 100000])`` gives pydantic one error an item: each was a part of the message."""
    errors = [{"type": "string_type", "loc": ("paths", i), "msg": "Input should be a valid string", "input": i}
              for i in range(100_000)]
    text = tool_arguments.invalid_arguments("restore", errors, SCHEMA)
    assert "`paths.0`: Input should be a valid string (got 0)" in text and "and 99995 more" in text
    assert len(text) < 600
