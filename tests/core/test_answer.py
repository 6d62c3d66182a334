"""core.answer: the size and order rule every tool's structured content is held to (issue 23.6)."""

from __future__ import annotations

import logging

from code_trajectory.core import answer


def test_structured_prunes_empty_fields_and_counts_strings_as_shown() -> None:
    diff = "@@ -1 +1 @@\n-a = \"1\"\n+a = \"2\""
    text = f"## `0123456789ab` snapshot\n- M `a.py` (+1)\n```diff\n{diff}\n```"
    data = {"id": "0123456789ab", "intent": None, "files": [], "diff": diff, "rows": [["M", "a.py", 1, None]]}
    out = answer.structured(text, data)
    assert out == {"id": "0123456789ab", "diff": diff, "rows": [["M", "a.py", 1]]}
    assert answer.size(out) == len(answer.compact(out)) - answer.escapes(out) <= len(text)
    assert answer.structured(text, {"files": [], "note": None}) is None  # nothing left: no structured content


def test_the_last_resort_cuts_the_longest_string_at_a_line_end_and_says_so(caplog) -> None:
    long = "\n".join(f"+line {i}" for i in range(200))
    with caplog.at_level(logging.WARNING, logger="code_trajectory.core.answer"):
        out = answer.structured("x" * 600, {"id": "0123456789ab", "diff": long})
    assert out is not None and answer.size(out) <= 600 + answer.SHAPE_ALLOWANCE and out["id"] == "0123456789ab"
    assert out["diff"].endswith(answer.CUT_MARK) and long.startswith(out["diff"][:-1])
    assert out["diff"][:-1].split("\n")[-1] in long.split("\n")  # whole lines only
    assert "longest strings cut" in caplog.text


def test_rows_over_their_text_lose_their_last_entries_not_the_whole_list() -> None:
    """A list of rows (not dicts with times) over the text: the last resort deleted the whole field, so a model
    given only the structured content read ``{"query": ..., "more": true}`` and no hit."""
    rows = [[f"0123456789{i:02d}", f"src/m{i}.py", i] for i in range(40)]
    out = answer.structured("x" * 700, {"query": "x", "more": True, "hits": rows})
    assert out is not None and answer.size(out) <= 700 + answer.SHAPE_ALLOWANCE and out["query"] == "x"
    kept = out["hits"]
    assert 1 <= len(kept) < 40 and kept == rows[:len(kept)] and out["hits_left_out"] == 40 - len(kept)


def test_rows_to_leave_out_measures_each_row_once_and_never_more_than_needed() -> None:
    rows = [[f"0123456789{i:02d}", "x" * (i % 7)] for i in range(60)]
    data = {"q": "x", "rows": rows}
    for limit in (100, 400, 900, 5000):
        for from_end in (False, True):
            count = answer.rows_to_leave_out(limit, data, rows, from_end=from_end)
            needed = next((k for k in range(len(rows)) if answer.size(answer.prune(
                {**data, "rows": rows[:len(rows) - k] if from_end else rows[k:]})) <= limit), len(rows) - 1)
            assert count == needed, (limit, from_end)  # exactly, when leaving out adds nothing
    assert answer.rows_to_leave_out(10, data, rows) == len(rows) - 1  # never all of them


def test_a_spec_shape_is_measured_by_its_values() -> None:
    data = {"success": True, "archivedTo": None}
    assert answer.size(answer.prune(data), keys=False) == len("true")
    assert answer.structured("Goal set", data, keys=False) == {"success": True}


def test_order_problems_names_entries_out_of_the_texts_order() -> None:
    text = "## `aaaaaaaaaaaa` first\n## `bbbbbbbbbbbb` second mentions `aaaaaaaaaaaa`"
    assert answer.order_problems(text, {"v": [{"id": "aaaaaaaaaaaa"}, {"id": "bbbbbbbbbbbb"}]}) == []
    plain = "## `aaaaaaaaaaaa` first\n## `bbbbbbbbbbbb` second"
    assert answer.order_problems(plain, {"v": [{"id": "bbbbbbbbbbbb"}, {"id": "aaaaaaaaaaaa"}]})
    assert answer.order_problems(plain, {"runs": [["bbbbbbbbbbbb", "x"], ["aaaaaaaaaaaa", "y"]]})
    assert answer.shown(text, [{"id": "cccccccccccc"}, {"id": "bbbbbbbbbbbb"}]) == [{"id": "bbbbbbbbbbbb"}]


def test_table_rows_keep_positions_and_drop_trailing_empties() -> None:
    cols, rows = answer.table([{"id": "a", "t": "1"}, {"id": "b", "note": "n"}], ["id", "t", "note", "more"])
    assert cols == ["id", "t", "note"] and rows == [["a", "1"], ["b", None, "n"]]


def test_a_code_block_is_not_closed_by_a_fence_in_its_body() -> None:
    from markdown_it import MarkdownIt

    body = "@@ -1,4 +1,4 @@\n # Usage\n ```sh\n-pip install x\n+pip install y\n ```\n+````"
    block = answer.code_block(body)
    tokens = [t for t in MarkdownIt("commonmark").parse(f"## heading\n{block}\n\nafter") if t.type == "fence"]
    assert len(tokens) == 1 and tokens[0].content == body + "\n" and tokens[0].info == "diff"  # one block, whole
    assert answer.fenced(f"## heading\n{block}\n") == body
    assert answer.code_block("+a\n-b") == "```diff\n+a\n-b\n```"  # no fence in it: three backticks


def test_fenced_gives_every_block_of_a_section() -> None:
    section = "## v1\n```diff\n+one\n```\n(cut: 3 lines)\n```diff\n+two\n```\n"
    assert answer.fenced(section) == "+one\n+two"


def test_over_its_text_the_oldest_entries_without_a_diff_go_first() -> None:
    versions = [{"id": f"{i:012x}", "t": "2026-11-27T03:20:36", "what": "modified", "lines": "+1 -1, line 6"}
                for i in range(9)]
    versions[-1]["diff"] = "@@ -6 +6 @@\n-    return 1\n+    return 2"
    text = "\n".join(f"## 03:20:36 · `{v['id']}` · modified · +1 -1, line 6" for v in versions) + "\n```diff\n" \
        + versions[-1]["diff"] + "\n```"
    out = answer.structured(text, {"path": "m.py", "symbol": "f", "versions": versions})
    assert out is not None and answer.size(out) <= answer.room(text)
    assert out["versions"][-1] == versions[-1]  # the newest, its diff whole
    kept = len(out["versions"])
    assert 1 < kept < 9 and out["versions_left_out"] == 9 - kept and out["versions"] == versions[-kept:]


def test_the_users_named_points_are_never_the_entries_left_out() -> None:
    """A replay's recent log of 60 snapshots came out 178 characters over its text: the named points, the only list
    of dicts whose times run oldest first, lost their two oldest (the user's checkpoints); a string is cut instead."""
    points = [{"name": f"checkpoint {n}", "on": f"{n:012x}", "t": f"06:2{n}"} for n in range(3)]
    rows = [["06:21:54", f"{n:012x}", "Intent: replay", "M src/Loader.php (+62 -1): " + "x" * 300] for n in range(4)]
    text = "x" * (answer.size({"cols": ["t", "id", "why", "files"], "snapshots": rows, "named_points": points}) - 150)
    out = answer.structured(text, {"cols": ["t", "id", "why", "files"], "snapshots": rows, "named_points": points})
    assert out is not None and answer.size(out) <= answer.room(text)
    assert out["named_points"] == points and "named_points_left_out" not in out
    assert any(row[3].endswith(answer.CUT_MARK) for row in out["snapshots"])


def test_a_short_answers_shape_does_not_cut_its_only_diff() -> None:
    """The JavaScript replay (tj/commander.js): 21 of 176 one-change symbol histories had their only diff cut in the
    structured content (what Claude Code hands the model), 18-21 characters over a text whose heading is shorter
    than the fields' names (``path``, ``symbol``, ``branch``, ``cols``)."""
    diff = "@@ -0,0 +2 @@\n+exports.createCommand = (name) => new Command(name);"
    text = f"# `createCommand` in `index.js`\n## 12:00:01 · `0123456789ab` · added\n```diff\n{diff}\n```"
    data = {"path": "index.js", "symbol": "createCommand", "branch": "main", "cols": ["t", "id", "what", "diff"],
            "versions": [["12:00:01", "0123456789ab", "added", diff]]}
    assert answer.size(data) > len(text)  # the shape costs more than the text's heading
    out = answer.structured(text, data)
    assert out is not None and out["versions"][0][3] == diff and answer.size(out) <= answer.room(text)
