"""The recap MCP tools, called through the SDK's in-memory client."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from code_trajectory.core.errors import NotConfiguredError
from code_trajectory.recap import store as recap
from code_trajectory.recap.tools import register_recap_tools

pytestmark = pytest.mark.anyio


def _server(project_root: Callable[[], Path]) -> MCPServer:
    server = MCPServer("recap-test")
    register_recap_tools(server, project_root)
    return server


def _text(result: object) -> str:
    return "\n".join(block.text for block in result.content)  # type: ignore[attr-defined]


async def test_tools_are_listed_with_schemas_and_hints(spaced_dir: Path) -> None:
    async with Client(_server(lambda: spaced_dir)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"set_goal", "add_entry", "get_recap"}
    assert tools["get_recap"].annotations.read_only_hint is True
    assert tools["add_entry"].annotations.read_only_hint is False
    assert tools["set_goal"].annotations.destructive_hint is False
    for tool in tools.values():
        assert tool.description and tool.output_schema
    # the entry types come from recap.EntryType, not a copy
    schema = json.dumps(tools["add_entry"].input_schema)
    assert json.dumps(list(recap.ENTRY_TYPES)) in schema
    assert tools["add_entry"].input_schema["required"] == ["type", "content"]
    assert json.dumps(list(recap.ENTRY_TYPES)) in json.dumps(tools["get_recap"].output_schema)
    for kind in recap.ENTRY_TYPES:
        assert kind in tools["add_entry"].description


async def test_set_goal_add_entry_get_recap(spaced_dir: Path) -> None:
    async with Client(_server(lambda: spaced_dir)) as client:
        goal = await client.call_tool("set_goal", {"goal": "Fix the login loop"})
        assert not goal.is_error
        assert goal.structured_content["success"] is True
        assert "Goal set" in _text(goal)

        added = await client.call_tool("add_entry", {"type": "decision", "content": "Use soft reset"})
        assert not added.is_error
        entry_id = added.structured_content["id"]
        assert uuid.UUID(entry_id).version == 4
        assert added.structured_content["timestamp"].endswith("Z")
        assert added.structured_content["skipped"] is False
        assert entry_id in _text(added)

        await client.call_tool("add_entry", {"type": "fix", "content": "Redirect kept the query string"})
        got = await client.call_tool("get_recap", {})
    assert not got.is_error
    data = got.structured_content
    assert data["goal"] == "Fix the login loop"
    assert [(e["type"], e["content"]) for e in data["entries"]] == [
        ("decision", "Use soft reset"), ("fix", "Redirect kept the query string")]
    assert data["entries"][0]["id"] == entry_id
    assert data["filePath"] == str(recap.recap_path(spaced_dir))
    assert Path(data["filePath"]).is_file()
    text = _text(got)
    assert "**Goal:** Fix the login loop" in text and "## Fixes (1)" in text


async def test_duplicate_entry_is_skipped_with_existing_id(spaced_dir: Path) -> None:
    async with Client(_server(lambda: spaced_dir)) as client:
        first = await client.call_tool("add_entry", {"type": "insight", "content": "The cache is per user"})
        again = await client.call_tool("add_entry", {"type": "insight", "content": "the cache is  per user"})
    assert again.structured_content["skipped"] is True
    assert again.structured_content["id"] == first.structured_content["id"]
    assert "Skipped" in _text(again)
    assert len(recap.get_recap(spaced_dir)["entries"]) == 1


async def test_new_goal_archives_through_the_tool(spaced_dir: Path, ct_home: Path) -> None:
    async with Client(_server(lambda: spaced_dir)) as client:
        await client.call_tool("set_goal", {"goal": "first"})
        await client.call_tool("add_entry", {"type": "risk", "content": "might break"})
        second = await client.call_tool("set_goal", {"goal": "second"})
        same = await client.call_tool("set_goal", {"goal": "second"})
    archived = Path(second.structured_content["archivedTo"])
    assert archived.parent == ct_home / "recaps" / "archived"
    assert json.loads(archived.read_text(encoding="utf-8"))["goal"] == "first"
    assert "archived" in _text(second)
    assert same.structured_content["unchanged"] is True


@pytest.mark.parametrize(("arguments", "message"), [
    ({"type": "opinion", "content": "x"}, "decision"),
    ({"type": "decision", "content": "   "}, "content is empty"),
    ({"type": "decision"}, "content"),
])
async def test_bad_entries_are_tool_errors(spaced_dir: Path, arguments: dict[str, str], message: str) -> None:
    async with Client(_server(lambda: spaced_dir)) as client:
        result = await client.call_tool("add_entry", arguments)
    assert result.is_error
    assert message in _text(result)
    assert not recap.recap_path(spaced_dir).exists()


async def test_missing_project_is_a_tool_error(ct_home: Path) -> None:
    def not_configured() -> Path:
        raise NotConfiguredError("no project is configured; call configure_project first")

    async with Client(_server(not_configured)) as client:
        for name, arguments in (("get_recap", {}), ("set_goal", {"goal": "g"}),
                                ("add_entry", {"type": "other", "content": "c"})):
            result = await client.call_tool(name, arguments)
            assert result.is_error
            assert "configure_project" in _text(result)


async def test_corrupt_file_is_reported_through_the_tools(spaced_dir: Path) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    file.write_text("{corrupt")
    async with Client(_server(lambda: spaced_dir)) as client:
        read = await client.call_tool("get_recap", {})
        assert not read.is_error and "corrupt" in read.structured_content["warning"]
        assert "Warning" in _text(read)
        added = await client.call_tool("add_entry", {"type": "fix", "content": "start over"})
    assert not added.is_error
    assert "moved to" in added.structured_content["warning"]
    assert "Warning" in _text(added)
    assert any(p.name.startswith(file.name + ".corrupt-") for p in file.parent.iterdir())


async def test_project_is_resolved_on_every_call(tmp_path: Path, ct_home: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    current = [first]
    async with Client(_server(lambda: current[0])) as client:
        await client.call_tool("set_goal", {"goal": "goal one"})
        current[0] = second
        got = await client.call_tool("get_recap", {})
    assert got.structured_content.get("goal") is None
    assert recap.get_recap(first)["goal"] == "goal one"
