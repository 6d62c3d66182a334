"""Issue 23.6: every tool the server lists returns structured content that holds its text's facts, in the text's
order, at most the text's size (the rule of :mod:`code_trajectory.core.answer`), through the SDK client on a real
recorded history: several snapshots, an intent, named checkpoints, test runs, a recap and a journal.

Claude Code and VS Code hand the model only the structured content when there is one, so it is measured against
the text the other clients show: compact JSON, strings counted as shown (``answer.size``); the recap's and the
journal's spec-fixed shapes by their values alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from code_trajectory.core import answer
from code_trajectory.core.mcp_util import CHECK_ENV
from support import mcp_client, write

pytestmark = pytest.mark.anyio

#: Tools whose output shape a specification fixes (recap-issue.md, journal-design.md): measured by their values.
SPEC_SHAPED = {"set_goal", "add_entry", "get_recap", "journal_read", "journal_write", "journal_toc",
               "journal_list_entries", "journal_search", "journal_synthesize_conflict"}
#: A snapshot id as the answers show it.
SNAPSHOT_ID = re.compile(r"\b[0-9a-f]{12}\b")


def text_of(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def ids_in_order(text: str) -> list[str]:
    """The snapshot ids of ``text`` in the order of their first appearance."""
    seen: list[str] = []
    for found in SNAPSHOT_ID.findall(text):
        if found not in seen:
            seen.append(found)
    return seen


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [s for item in items for s in strings(item)]


async def build_history(client, root: Path) -> dict[str, object]:
    """Record a small history through the tools; returns the answers of the recording tools."""
    calls = {}
    calls["set_trajectory_intent"] = await client.call_tool("set_trajectory_intent",
                                                            {"intent": "Make main configurable"})
    write(root, "src/app.py", "def main(value=1):\n    return value\n")
    await client.call_tool("checkpoint", {})
    write(root, "src/app.py", "def main(value=1):\n    return value\n\n\ndef helper():\n    return 2\n")
    write(root, "src/util.py", "def util():\n    return 3\n")
    calls["checkpoint"] = await client.call_tool("checkpoint", {"message": "before refactor"})
    await client.call_tool("record_test_result", {
        "command": "pytest -q", "passed": 3, "failed": 1,
        "failing_tests": ["tests/test_app.py::test_main: AssertionError: 2 != 1"]})
    write(root, "src/app.py", "def main(value=2):\n    '''Main.'''\n    return value * 2\n\n\ndef helper():\n"
                              "    return 2\n")
    await client.call_tool("checkpoint", {"message": "refactor"})
    calls["record_test_result"] = await client.call_tool("record_test_result",
                                                         {"command": "pytest -q", "passed": 4, "failed": 0})
    write(root, "src/util.py", "def util():\n    return 4\n")
    await client.call_tool("checkpoint", {})
    return calls


#: Arguments of every tool, in the order they are called (the journal's write needs its read first).
CALLS: list[tuple[str, dict]] = [
    ("configure_project", {}),
    ("get_file_trajectory", {"filepath": "src/app.py"}),
    ("get_global_trajectory", {}),
    ("get_session_summary", {}),
    ("get_symbol_trajectory", {"filepath": "src/app.py", "symbol": "main"}),
    ("search_trajectory", {"query": "return"}),
    ("compare", {"from_snapshot": "before refactor"}),
    ("get_test_history", {}),
    ("diff_since_green", {}),
    ("list_trajectories", {}),
    ("set_goal", {"goal": "Make main configurable"}),
    ("add_entry", {"type": "decision", "content": "main takes a value, default 1"}),
    ("get_recap", {}),
    ("journal_read", {"id": "proj/api"}),
    ("journal_write", {"path": "proj/api", "entry": "work_context: debugging\n\nFixed the login retry.",
                       "overview": "# API\n\nSessions use cookies.", "summary": "login fix"}),
    ("journal_toc", {"id": "", "depth": 2}),
    ("journal_list_entries", {"path": "proj/api"}),
    ("journal_search", {"work_context": "debugging", "content": "login retry"}),
    ("journal_synthesize_conflict", {"section": "proj/api", "version_a": "# A", "version_b": "# B",
                                     "work_context": "api design"}),
    ("restore", {"snapshot": "before refactor", "dry_run": True}),
    ("restore", {"snapshot": "before refactor"}),
    ("checkpoint", {"message": "after restore"}),
    ("checkpoint", {"message": "named with nothing new"}),
    ("consolidate", {"intent": "Made main configurable"}),
]


async def test_every_tool_answers_with_its_facts_in_its_order_within_its_size(project: Path, monkeypatch) -> None:
    monkeypatch.setenv(CHECK_ENV, "1")  # an entry out of the text's order is a tool error here
    async with mcp_client(project) as client:
        results = await build_history(client, project)
        listed = {t.name for t in (await client.list_tools()).tools}
        assert listed <= {name for name, _ in CALLS} | set(results), "a tool this test does not call"
        for name, args in CALLS:
            args = {"path": str(project)} if name == "configure_project" else args
            if name == "consolidate":  # two automatic snapshots to squash (a reported run snapshots first)
                for value in (5, 6):
                    write(project, "src/util.py", f"def util():\n    return {value}\n")
                    await client.call_tool("record_test_result", {"command": "pytest -q", "passed": 4})
            results[name] = await client.call_tool(name, args)
            results.setdefault(f"{name}:all", []).append(results[name])
    assert {name for name, _ in CALLS} | set(results) >= listed
    figures = []
    for name in sorted(listed):
        for result in results.get(f"{name}:all", [results[name]]):
            text = text_of(result)
            assert not result.is_error, (name, text)
            data = result.structured_content
            assert data, f"{name} returned no structured content"
            spec = name in SPEC_SHAPED
            measured = answer.size(data, keys=not spec)
            figures.append(f"{name}: text {len(text)}, structured {len(answer.compact(data))} (measured {measured})")
            assert measured <= len(text), (name, measured, len(text), answer.compact(data))
            if not spec:
                assert len(answer.compact(data)) <= len(text) + answer.escapes(data), name
            # no null or empty field, nothing cut by the last resort
            assert answer.prune(data) == data, name
            assert not any(s.endswith(answer.CUT_MARK) and s not in text for s in strings(data)), name
            # the snapshot ids come in the text's order, and every one is a fact the text shows
            found = ids_in_order(answer.compact(data))
            shown = ids_in_order(text)
            assert set(found) <= set(shown), (name, found, shown)
            assert found == [i for i in shown if i in found], (name, found, shown)
            assert not answer.order_problems(text, data), name
    print("\n".join(figures))

    # the diffs are there as the text shows them, the entries in its order (oldest first where it is)
    trajectory = results["get_file_trajectory"].structured_content
    diffs = [v["diff"] for v in trajectory["versions"] if "diff" in v]
    assert diffs and all(f"```diff\n{d}\n```" in text_of(results["get_file_trajectory"]) for d in diffs)
    assert [v["n"] for v in trajectory["versions"]] == sorted(v["n"] for v in trajectory["versions"])
    assert any(v.get("checkpoint") == "before refactor" and v.get("tests") for v in trajectory["versions"])
    project_wide = results["get_global_trajectory"].structured_content
    rows = [dict(zip(project_wide["cols"], row, strict=False)) for row in project_wide["snapshots"]]
    assert [r["id"] for r in rows] == ids_in_order(text_of(results["get_global_trajectory"]))
    assert any("before refactor" in r["why"] for r in rows)
    symbol = results["get_symbol_trajectory"].structured_content
    changes = [dict(zip(symbol["cols"], row)) for row in symbol["versions"]]  # rows under cols
    assert symbol["symbol"] == "main" and all(f"```diff\n{v['diff']}\n```" in text_of(results["get_symbol_trajectory"])
                                              for v in changes if v.get("diff"))
    assert any(v.get("diff") for v in changes) and [v["id"] for v in changes] == ids_in_order(
        text_of(results["get_symbol_trajectory"]))
    compared = results["compare"].structured_content
    assert [row[1] for row in compared["files"]] == ["src/app.py", "src/util.py"]
    assert all(f"```diff\n{d}\n```" in text_of(results["compare"]) for d in compared["diffs"].values())
    dry_run = [r for r in results["restore:all"] if r.structured_content.get("dry_run")][0]
    assert dry_run.structured_content["diff"] and dry_run.structured_content["diff"] in text_of(dry_run)


async def test_the_tools_that_had_none_answer_with_their_facts(project: Path) -> None:
    """Regression: get_session_summary, get_test_history, checkpoint and set_trajectory_intent returned text only."""
    async with mcp_client(project) as client:
        made = await build_history(client, project)
        summary = await client.call_tool("get_session_summary", {})
        history = await client.call_tool("get_test_history", {})
        again = await client.call_tool("checkpoint", {"message": "nothing new"})

    intent = made["set_trajectory_intent"].structured_content
    assert intent == {"intent": "Make main configurable"}

    named = made["checkpoint"].structured_content
    assert named["name"] == "before refactor" and named["new"] is True
    assert f"`{named['id']}`" in text_of(made["checkpoint"])
    assert [row[1] for row in named["files"]] == ["src/app.py", "src/util.py"]
    assert named["cols"][:4] == ["status", "path", "+", "-"] and named["files"][0][2] == 4
    unchanged = again.structured_content
    assert unchanged["name"] == "nothing new" and unchanged["new"] is False and "files" not in unchanged

    runs = history.structured_content
    cols = runs["cols"]
    rows = [dict(zip(cols, row)) for row in runs["runs"]]
    assert [(r["outcome"], r["tests"]) for r in rows] == [("passed", "4 passed"), ("failed", "3 passed, 1 failed")]
    assert rows[1]["failures"] == [["tests/test_app.py::test_main", "AssertionError: 2 != 1"]]
    assert [r["id"] for r in rows] == ids_in_order(text_of(history))

    facts = summary.structured_content
    text = text_of(summary)
    assert facts["branch"] == "main" and "Make main configurable" in facts["intent"]
    assert facts["final"]["id"] in text and facts["last"]["snapshots"] >= 5
    work = facts["last"]["branches"][0]
    assert work["intents"][0][0] == "Make main configurable"
    assert [row[1] for row in work["net"]] == ["src/app.py", "src/util.py"]
    assert any("last run was green" in line for line in facts["sections"]["Tests"])
    assert answer.size(facts) <= answer.room(text)


async def test_what_the_budget_leaves_out_of_the_text_is_left_out_of_the_fields(project: Path) -> None:
    """With a small budget the text drops the oldest snapshots and cuts diffs: the fields follow it, never larger."""
    async with mcp_client(project, token_budget=500) as client:
        await client.call_tool("set_trajectory_intent", {"intent": "Grow the module"})
        for step in range(12):
            for name in ("app", "util", "model"):
                body = "".join(f"def {name}_{i}(value):\n    return value + {step * i}\n\n\n" for i in range(step + 3))
                write(project, f"src/{name}.py", body)
            await client.call_tool("checkpoint", {"message": f"step {step}"})
        answers = {name: await client.call_tool(name, args) for name, args in [
            ("get_global_trajectory", {"limit": 20}), ("get_file_trajectory", {"filepath": "src/app.py", "depth": 12}),
            ("get_symbol_trajectory", {"filepath": "src/app.py", "symbol": "app_2", "depth": 12}),
            ("search_trajectory", {"query": "return value"}), ("compare", {"from_snapshot": "step 0"}),
            ("get_session_summary", {})]}
    for name, result in answers.items():
        text, data = text_of(result), result.structured_content
        assert not result.is_error and data, name
        assert answer.size(data) <= answer.room(text), (name, answer.size(data), len(text))
        found = ids_in_order(answer.compact(data))
        assert found == [i for i in ids_in_order(text) if i in found], name
        assert not any(s.endswith(answer.CUT_MARK) and s not in text for s in strings(data)), name
    project_wide = answers["get_global_trajectory"]
    shown = [row[1] for row in project_wide.structured_content["snapshots"]]
    assert shown == ids_in_order(text_of(project_wide))
    dropped = re.search(r"(\d+) older snapshot\(s\) not shown", text_of(project_wide))
    assert dropped and project_wide.structured_content["left_out"] == int(dropped.group(1))
    versions = answers["get_file_trajectory"].structured_content["versions"]
    file_text = text_of(answers["get_file_trajectory"])  # the versions the text's own cut left out are not here
    assert [v["id"] for v in versions] == ids_in_order(file_text) and len(versions) >= 8
    assert all(f"```diff\n{v['diff']}\n```" in file_text for v in versions if "diff" in v)


async def test_message_answers_leave_the_message_to_the_text(project: Path) -> None:
    """Answers with nothing to list (nothing recorded for a path, no test run, nothing to compare) are messages: no
    structured content, so a client that shows the model only that shows the text instead (answer.message)."""
    async with mcp_client(project) as client:
        answers = {name: await client.call_tool(name, args) for name, args in [
            ("get_file_trajectory", {"filepath": "src/nope.py"}), ("get_test_history", {}),
            ("diff_since_green", {}), ("compare", {"from_snapshot": "~0"}), ("consolidate", {"intent": "Nothing"})]}
    for name, result in answers.items():
        assert not result.is_error and result.structured_content is None, name
        assert text_of(result).strip(), name
