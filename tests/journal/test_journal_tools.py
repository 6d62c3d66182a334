"""The journal's MCP tools through the SDK's in-memory client."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CreateMessageResult, TextContent

from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.tools import register_journal_tools

TOOLS = {"journal_search", "journal_read", "journal_toc", "journal_list_entries", "journal_write",
         "journal_synthesize_conflict"}


@pytest.fixture
def server(tmp_path: Path) -> MCPServer:
    mcp = MCPServer("journal-test")
    # lexical ranking keeps these tests independent of the optional model
    register_journal_tools(mcp, lambda: JournalSettings.load(journal_dir=tmp_path / "journal", ranking="lexical"))
    return mcp


def text(res) -> str:
    return res.content[0].text


@pytest.mark.anyio
async def test_tools_listed_with_schemas(server: MCPServer) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    search = tools["journal_search"]
    assert set(search.input_schema["required"]) == {"work_context", "content"}
    assert "salience_threshold" in search.input_schema["properties"]
    assert search.output_schema and "results" in search.output_schema["properties"]
    assert tools["journal_read"].input_schema["required"] == ["id"]
    assert tools["journal_toc"].input_schema["properties"]["depth"]["default"] == 1
    assert tools["journal_list_entries"].input_schema["properties"]["length"]["default"] == 10
    assert set(tools["journal_write"].input_schema["required"]) == {"path", "entry"}
    assert set(tools["journal_write"].input_schema["properties"]) == {"path", "entry", "overview", "summary"}
    assert set(tools["journal_synthesize_conflict"].input_schema["required"]) == \
        {"section", "version_a", "version_b", "work_context"}
    assert tools["journal_read"].annotations.read_only_hint is True
    assert tools["journal_write"].annotations.read_only_hint is False


@pytest.mark.anyio
async def test_read_write_toc_list_search_roundtrip(server: MCPServer) -> None:
    async with Client(server, mode="legacy") as client:
        refused = await client.call_tool("journal_write", {"path": "proj/api", "entry": "x"})
        assert refused.is_error and "journal_read('proj/api')" in text(refused)

        res = await client.call_tool("journal_read", {"id": "proj/api"})
        assert not res.is_error and res.structured_content["exists"] is False

        res = await client.call_tool("journal_write", {
            "path": "proj/api", "entry": "work_context: debugging\n\nFixed the login bug in the session cookie.",
            "overview": "# API\n\nSessions use cookies.", "summary": "login fix"})
        assert not res.is_error, text(res)
        first = res.structured_content
        assert first["created"] and first["entry_count"] == 1 and first["id"].startswith("proj/api#")

        # the session's record moved with its own write: a second write needs no re-read
        res = await client.call_tool("journal_write", {"path": "proj/api", "entry": "work_context: docs\n\nNotes."})
        assert not res.is_error and res.structured_content["entry_count"] == 2
        res = await client.call_tool("journal_write", {"path": "proj/api", "entry": "work_context: docs\n\nNotes."})
        assert not res.is_error and res.structured_content["duplicate"] and "nothing written" in text(res)
        assert res.structured_content["entry_count"] == 2  # the same entry again adds nothing

        res = await client.call_tool("journal_read", {"id": "proj/api"})
        data = res.structured_content
        assert data["type"] == "overview" and data["content"] == "# API\n\nSessions use cookies."
        assert "entry count" not in data["content"] and data["entry_count"] == 2
        assert "Sessions use cookies." in text(res)

        res = await client.call_tool("journal_read", {"id": first["id"]})
        assert res.structured_content["type"] == "entry"
        assert res.structured_content["content"].endswith("Fixed the login bug in the session cookie.")
        assert res.structured_content["summary"] == "login fix"

        res = await client.call_tool("journal_toc", {"id": "", "depth": 2})
        assert res.structured_content["subsections"][0]["subsections"][0]["id"] == "proj/api"

        res = await client.call_tool("journal_list_entries", {"path": "proj/api", "start": 0, "length": 1})
        listed = res.structured_content
        assert listed["total"] == 2 and len(listed["entries"]) == 1
        assert set(listed["entries"][0]) == {"id", "timestamp", "summary"}

        res = await client.call_tool("journal_search", {"work_context": "debugging", "content": "login cookie"})
        found = res.structured_content
        assert found["ranking"] == "lexical" and "lexical" in text(res)
        assert found["results"][0]["id"] == first["id"]
        assert set(found["results"][0]) >= {"id", "content", "work_context_score", "content_score",
                                            "combined_score", "timestamp"}


@pytest.mark.anyio
async def test_write_protection_across_sessions(server: MCPServer) -> None:
    async with Client(server, mode="legacy") as a, Client(server, mode="legacy") as b:
        await a.call_tool("journal_read", {"id": "shared"})
        await b.call_tool("journal_read", {"id": "shared"})
        ok = await a.call_tool("journal_write", {"path": "shared", "entry": "from a", "overview": "# A"})
        assert not ok.is_error
        stale = await b.call_tool("journal_write", {"path": "shared", "entry": "from b", "overview": "# B"})
        assert stale.is_error
        assert "merge conflict" in text(stale) and "journal_read('shared')" in text(stale)
        # b re-reads, sees a's overview, retries: accepted
        reread = await b.call_tool("journal_read", {"id": "shared"})
        assert reread.structured_content["content"] == "# A"
        ok = await b.call_tool("journal_write", {"path": "shared", "entry": "from b", "overview": "# A + B"})
        assert not ok.is_error
        # a read in one session does not authorise another session
        await a.call_tool("journal_read", {"id": "only-a"})
    async with Client(server, mode="legacy") as c:
        refused = await c.call_tool("journal_write", {"path": "only-a", "entry": "x"})
        assert refused.is_error and "not read in this session" in text(refused)


@pytest.mark.anyio
async def test_stateless_protocol_keeps_reads_per_process(server: MCPServer) -> None:
    async with Client(server) as client:  # modern per-request protocol: no connection-level session
        await client.call_tool("journal_read", {"id": "s"})
        res = await client.call_tool("journal_write", {"path": "s", "entry": "hello"})
        assert not res.is_error, text(res)


@pytest.mark.anyio
@pytest.mark.parametrize("tool,args,needle", [
    ("journal_read", {"id": "../etc/passwd"}, "'..'"),
    ("journal_read", {"id": "/abs/path"}, "absolute"),
    ("journal_read", {"id": "s#nothex"}, "hex"),
    ("journal_read", {"id": "s#0123456789ab"}, "no journal entry"),
    ("journal_read", {"id": ""}, "empty"),
    ("journal_toc", {"id": "nope"}, "no section"),
    ("journal_toc", {"id": "", "depth": 0}, "depth"),
    ("journal_list_entries", {"path": "nope"}, "no section"),
    ("journal_list_entries", {"path": "s", "start": -1}, "start"),
    ("journal_write", {"path": "../x", "entry": "x"}, "'..'"),
    ("journal_search", {"work_context": "", "content": ""}, "work_context"),
    ("journal_search", {"work_context": "a", "content": "b", "salience_threshold": 3}, "between 0 and 1"),
    ("journal_synthesize_conflict", {"section": "s", "version_a": "", "version_b": "b", "work_context": "w"},
     "non-empty"),
])
async def test_bad_arguments_are_tool_errors(server: MCPServer, tool: str, args: dict, needle: str) -> None:
    async with Client(server, mode="legacy") as client:
        await client.call_tool("journal_read", {"id": "s"})
        await client.call_tool("journal_write", {"path": "s", "entry": "exists"})
        res = await client.call_tool(tool, args)
        assert res.is_error, text(res)
        assert needle in text(res)
        # the server is still serving
        assert not (await client.call_tool("journal_toc", {})).is_error


@pytest.mark.anyio
async def test_empty_entry_is_tool_error(server: MCPServer) -> None:
    async with Client(server, mode="legacy") as client:
        await client.call_tool("journal_read", {"id": "s"})
        res = await client.call_tool("journal_write", {"path": "s", "entry": "  \n "})
        assert res.is_error and "empty" in text(res)


@pytest.mark.anyio
async def test_synthesize_conflict_uses_sampling_when_supported(server: MCPServer) -> None:
    seen: list[str] = []

    async def sampling(context, params) -> CreateMessageResult:
        seen.append(params.messages[0].content.text)
        return CreateMessageResult(role="assistant", model="test-model",
                                   content=TextContent(type="text", text="# Merged\n\nBoth views."))

    async with Client(server, mode="legacy", sampling_callback=sampling) as client:
        res = await client.call_tool("journal_synthesize_conflict", {
            "section": "proj", "version_a": "# A view", "version_b": "# B view", "work_context": "api redesign"})
    assert not res.is_error, text(res)
    data = res.structured_content
    assert data["method"] == "sampling" and data["synthesis"] == "# Merged\n\nBoth views."
    assert data["model"] == "test-model"
    assert "# A view" in seen[0] and "# B view" in seen[0] and "api redesign" in seen[0]


@pytest.mark.anyio
async def test_synthesize_conflict_falls_back_to_prompt(server: MCPServer) -> None:
    async with Client(server, mode="legacy") as client:  # no sampling capability
        res = await client.call_tool("journal_synthesize_conflict", {
            "section": "proj", "version_a": "# A view", "version_b": "# B view", "work_context": "api redesign"})
    data = res.structured_content
    assert data["method"] == "prompt" and "synthesis" not in data  # null fields are left out
    assert "<version_a>\n# A view\n</version_a>" in data["prompt"] and "# B view" in data["prompt"]
    assert "journal_write('proj'" in text(res)


@pytest.mark.anyio
async def test_synthesize_conflict_sampling_failure_falls_back(server: MCPServer) -> None:
    async def broken(context, params):
        raise RuntimeError("model offline")

    async with Client(server, mode="legacy", sampling_callback=broken) as client:
        res = await client.call_tool("journal_synthesize_conflict", {
            "section": "proj", "version_a": "a", "version_b": "b", "work_context": ""})
    assert not res.is_error and res.structured_content["method"] == "prompt"


@pytest.mark.anyio
async def test_bad_config_is_a_tool_error_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[journal.search]\nmax_results = -1\n")
    monkeypatch.setenv("CODE_TRAJECTORY_CONFIG", str(config))
    mcp = MCPServer("bad")
    register_journal_tools(mcp, tmp_path / "journal")  # a directory: the rest comes from the config
    async with Client(mcp) as client:
        res = await client.call_tool("journal_toc", {})
    assert res.is_error and "max_results" in text(res)


SERVER_SCRIPT = """
import sys
from mcp.server.mcpserver import MCPServer
from code_trajectory.journal.tools import register_journal_tools
mcp = MCPServer("journal-stdio")
register_journal_tools(mcp, sys.argv[1])
mcp.run()
"""


@pytest.mark.slow
@pytest.mark.anyio
async def test_stdio_server_keeps_stdout_clean(tmp_path: Path) -> None:
    """Over real stdio, a search (loading the model when installed) leaves the JSON-RPC stream intact."""
    import os
    import sys

    from mcp import StdioServerParameters

    from support import SRC as src

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PYTHONPATH"] = str(src)
    params = StdioServerParameters(command=sys.executable, args=["-c", SERVER_SCRIPT, str(tmp_path / "j")], env=env)
    async with Client(params, mode="legacy") as client:
        await client.call_tool("journal_read", {"id": "auth"})
        res = await client.call_tool("journal_write", {"path": "auth", "entry": "work_context: debugging\n\n"
                                                       "Fixed the login bug."})
        assert not res.is_error, text(res)
        res = await client.call_tool("journal_search", {"work_context": "debugging",
                                                        "content": "login bug"})
        assert not res.is_error, text(res)
        assert res.structured_content["results"][0]["path"] == "auth"
