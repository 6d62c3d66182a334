"""The MCP tools through the SDK's in-memory client: schemas, annotations, answers, tool errors."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import Root

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.server import build_server
from support import git, shadow, shadow_count, wait_for, write

TRAJECTORY_TOOLS = {"configure_project", "set_trajectory_intent", "get_file_trajectory", "get_global_trajectory",
                    "get_session_summary", "consolidate", "checkpoint"}
READ_ONLY = {"get_file_trajectory", "get_global_trajectory", "get_session_summary"}


@pytest.fixture
def service():
    svc = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    yield svc
    svc.close()


def text(result) -> str:
    return result.content[0].text


@pytest.mark.anyio
async def test_tools_are_listed_with_annotations(service: TrajectoryService) -> None:
    async with Client(build_server(service)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= TRAJECTORY_TOOLS
    for name in TRAJECTORY_TOOLS:
        assert tools[name].description and len(tools[name].description) > 40
        assert tools[name].annotations.read_only_hint is (name in READ_ONLY), name
    assert tools["get_file_trajectory"].input_schema["properties"]["depth"]["default"] == 5
    assert tools["get_global_trajectory"].input_schema["properties"]["limit"]["default"] == 20


@pytest.mark.anyio
async def test_no_tool_says_it_reaches_an_open_world(service: TrajectoryService) -> None:
    """Every tool acts on the local project only; MCP reads a missing openWorldHint as true, and set_goal and
    add_entry (WRITES_IDEMPOTENT) left it out."""
    async with Client(build_server(service)) as client:
        tools = (await client.list_tools()).tools
    assert {"set_goal", "add_entry"} <= {t.name for t in tools}
    assert [t.name for t in tools if t.annotations is None or t.annotations.open_world_hint is not False] == []


@pytest.mark.anyio
async def test_unconfigured_server_tells_the_model_what_to_call(service: TrajectoryService) -> None:
    async with Client(build_server(service)) as client:
        for name, args in [("get_session_summary", {}), ("get_file_trajectory", {"filepath": "a.py"}),
                           ("get_global_trajectory", {}), ("set_trajectory_intent", {"intent": "x"}),
                           ("consolidate", {"intent": "x"}), ("checkpoint", {})]:
            result = await client.call_tool(name, args)
            assert result.is_error, name
            assert "configure_project" in text(result)
        result = await client.call_tool("configure_project", {"path": "relative/path"})
        assert result.is_error and "absolute" in text(result)
        result = await client.call_tool("configure_project", {"path": "/does/not/exist"})
        assert result.is_error and "does not exist" in text(result)


@pytest.mark.anyio
async def test_roots_configure_the_project(service: TrajectoryService, project: Path) -> None:
    async def roots(_ctx):
        from mcp.types import ListRootsResult

        return ListRootsResult(roots=[Root(uri=project.as_uri(), name="project")])

    async with Client(build_server(service), list_roots_callback=roots, mode="legacy") as client:
        result = await client.call_tool("get_global_trajectory", {"limit": 5})
        assert not result.is_error, text(result)
        assert "Project trajectory" in text(result)


@pytest.mark.anyio
async def test_every_tool_answers_on_a_configured_project(service: TrajectoryService, project: Path) -> None:
    async with Client(build_server(service)) as client:
        result = await client.call_tool("configure_project", {"path": str(project)})
        assert not result.is_error and "Recording" in text(result)
        result = await client.call_tool("configure_project", {"path": str(project)})
        assert "Already recording" in text(result)
        assert not (await client.call_tool("set_trajectory_intent", {"intent": "Teach main to count"})).is_error
        wait_for(lambda: shadow_count(project) > 0, timeout=60)  # the import done: a loaded machine makes it slow
        write(project, "src/app.py", "def main():\n    return 2\n")
        result = await client.call_tool("checkpoint", {"message": "before the risky bit"})
        assert "Checkpoint recorded" in text(result) and "Teach main to count" in text(result)
        result = await client.call_tool("checkpoint", {})
        assert "Nothing changed" in text(result)
        result = await client.call_tool("get_file_trajectory", {"filepath": "src/app.py", "depth": 2})
        assert not result.is_error and "# Trajectory of `src/app.py`" in text(result)
        result = await client.call_tool("get_global_trajectory", {"limit": 5})
        assert 'checkpoint: before the risky bit' in text(result)
        result = await client.call_tool("get_session_summary", {})
        assert "current session continues" in text(result)
        result = await client.call_tool("consolidate", {"intent": "Counting works"})
        assert "Nothing to consolidate" in text(result) and "checkpoint" in text(result)  # named points are kept
        write(project, "src/app.py", "def main():\n    return 3\n")
        wait_for(lambda: "return 3" in git(project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:src/app.py"))
        result = await client.call_tool("consolidate", {"intent": "Counting works"})
        assert "Consolidated 1 snapshot(s)" in text(result) and "M src/app.py" in text(result)
        result = await client.call_tool("get_global_trajectory", {"since_consolidate": True})
        assert not result.is_error


@pytest.mark.anyio
async def test_bad_input_gets_tool_errors_and_the_server_keeps_answering(service: TrajectoryService,
                                                                           project: Path, tmp_path: Path) -> None:
    (project / "escape").symlink_to(tmp_path)
    async with Client(build_server(service)) as client:
        await client.call_tool("configure_project", {"path": str(project)})
        cases = [
            ("get_file_trajectory", {"filepath": "../../etc/passwd"}, "outside the project"),
            ("get_file_trajectory", {"filepath": "/etc/passwd"}, "outside the project"),
            ("get_file_trajectory", {"filepath": "escape/x.py"}, "symlink"),
            ("get_file_trajectory", {"filepath": "a\x00b"}, "NUL"),
            ("get_file_trajectory", {"filepath": "src/app.py", "depth": 0}, "between 1 and"),
            ("get_file_trajectory", {"filepath": "src/app.py", "depth": 10**12}, "between 1 and"),
            ("get_file_trajectory", {"filepath": "src/app.py", "depth": "many"}, "depth"),
            ("get_global_trajectory", {"limit": -3}, "between 1 and"),
            ("set_trajectory_intent", {"intent": ""}, "non-empty"),
            ("consolidate", {"intent": "   "}, "intent"),
            ("get_file_trajectory", {}, "filepath"),
            ("configure_project", {"path": "-rf"}, "absolute"),
        ]
        for name, args, expected in cases:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            assert expected in text(result), (name, args, text(result))
        result = await client.call_tool("get_session_summary", {})
        assert not result.is_error


@pytest.mark.anyio
async def test_a_tool_error_does_not_echo_a_secret_given_as_an_argument(service: TrajectoryService, project: Path,
                                                                        caplog) -> None:
    """An error names the argument it could not use: a token pasted where a snapshot was asked went back into the
    conversation and the server's log (the secrets review)."""
    token = "ghp_" + "zYx9" * 9
    async with Client(build_server(service)) as client:
        await client.call_tool("configure_project", {"path": str(project)})
        with anyio.fail_after(60):  # the import recorded (a loaded machine's answer says "nothing is recorded yet")
            while not shadow(project, "for-each-ref", "refs/heads/"):
                await anyio.sleep(0.1)
        for name, args in (("compare", {"from_snapshot": token}), ("get_symbol_trajectory", {"filepath": "src/app.py", "symbol": token}),
                           ("restore", {"snapshot": token, "dry_run": True})):
            result = await client.call_tool(name, args)
            assert result.is_error and token not in text(result) and "[redacted]" in text(result), text(result)
    assert token not in caplog.text



#: Arguments that let each tool with a numeric argument reach its own checks (the rest are left at their defaults).
REQUIRED = {"get_file_trajectory": {"filepath": "src/app.py"}, "get_symbol_trajectory": {"filepath": "src/app.py",
            "symbol": "main"}, "search_trajectory": {"query": "x"}, "record_test_result": {"command": "pytest -q"},
            "journal_search": {"work_context": "debugging", "content": "x"}, "journal_list_entries": {"path": "notes"}}


def numeric_arguments(tools) -> dict[tuple[str, str], dict]:
    """``(tool, argument)``: the argument's schema, for every integer or number argument of every tool."""
    found = {}
    for listed in tools:
        for name, prop in listed.input_schema.get("properties", {}).items():
            kinds = prop.get("type") if isinstance(prop.get("type"), list) else [prop.get("type")]
            if {"integer", "number"} & set(kinds) or any(b.get("type") in ("integer", "number")
                                                       for b in prop.get("anyOf", [])):
                found[(listed.name, name)] = prop
    return found


def shown(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


@pytest.mark.anyio
async def test_every_numeric_argument_declares_the_range_its_tool_accepts(service: TrajectoryService, project: Path,
                                                                          tmp_path: Path) -> None:
    """tools/list gave ranges in prose only ("Versions, 1 to 200"), so neither a client nor a model could check a
    value. Every integer or number argument of every tool now has ``minimum`` and ``maximum`` in its schema, the
    bounds the tool itself checks: a value just outside either one is an isError result naming both bounds (the
    tool's own message, not the SDK's validation dump)."""
    async with Client(build_server(service, journal_dir=tmp_path / "journal")) as client:
        await client.call_tool("configure_project", {"path": str(project)})
        numeric = numeric_arguments((await client.list_tools()).tools)
        assert len(numeric) >= 18 and {tool for tool, _ in numeric} >= set(REQUIRED) | {"get_global_trajectory",
                                                                                          "get_test_history"}
        assert [key for key, prop in numeric.items() if not {"minimum", "maximum"} <= set(prop)] == []
        assert numeric[("get_file_trajectory", "depth")] == {"type": "integer", "description": "Versions",
                                                              "default": 5, "minimum": 1, "maximum": 200}
        for (tool, name), prop in numeric.items():
            low, high = prop["minimum"], prop["maximum"]
            step = 1 if prop.get("type") == "integer" or "integer" in prop.get("type", []) else 0.5
            for value in (low - step, high + step):
                result = await client.call_tool(tool, {**REQUIRED.get(tool, {}), name: value})
                assert result.is_error, (tool, name, value)
                message = text(result)
                assert f"between {shown(low)} and {shown(high)}" in message and "validation error" not in message, \
                    (tool, name, value, message)


@pytest.mark.anyio
async def test_a_call_the_tool_cannot_run_says_which_argument_and_what_to_send(service: TrajectoryService,
                                                                              project: Path) -> None:
    """A call with a wrong type, a missing argument, a misspelt argument or tool name: pydantic's dump ("1 validation
    error for get_global_trajectoryArguments ... https://errors.pydantic.dev/...") came back for the first two, and
    the SDK dropped an argument the tool does not have, so ``limt=1`` answered with the default ``limit`` of 20
    snapshots. Each is now an isError naming the argument, the value sent and the arguments the tool takes."""
    async with Client(build_server(service)) as client:
        await client.call_tool("configure_project", {"path": str(project)})
        typed = await client.call_tool("get_global_trajectory", {"limit": "abc"})
        missing = await client.call_tool("get_file_trajectory", {"depth": 2})
        misspelt = await client.call_tool("get_global_trajectory", {"limt": 1})
        no_tool = await client.call_tool("get_file_trajectry", {"filepath": "a.py"})
        fine = await client.call_tool("get_global_trajectory", {"limit": 1})
    assert typed.is_error and missing.is_error and misspelt.is_error and no_tool.is_error and not fine.is_error
    for result in (typed, missing, misspelt):
        assert "validation error" not in text(result) and "pydantic" not in text(result), text(result)
    assert text(typed).startswith("get_global_trajectory was not run: `limit`: Input should be a valid integer")
    assert '(got "abc")' in text(typed) and "`limit` (integer, 1 to 1000, default 20)" in text(typed)
    assert text(missing).startswith("get_file_trajectory was not run: `filepath` is required.")
    assert text(misspelt).startswith("get_global_trajectory has no argument `limt` (did you mean `limit`?); nothing")
    assert text(no_tool).startswith("There is no tool `get_file_trajectry`. Did you mean `get_file_trajectory`")


@pytest.mark.anyio
async def test_watcher_snapshots_show_up_in_answers(service: TrajectoryService, project: Path) -> None:
    async with Client(build_server(service)) as client:
        await client.call_tool("configure_project", {"path": str(project)})
        await client.call_tool("set_trajectory_intent", {"intent": "Watcher e2e"})
        wait_for(lambda: shadow_count(project) > 0, timeout=60)  # else the save may be the import's
        write(project, "src/watched.py", "X = 1\n")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            result = await client.call_tool("get_global_trajectory", {"limit": 3})
            if "src/watched.py" in text(result):
                break
            await anyio.sleep(0.2)
        assert "Watcher e2e" in text(result) and "A src/watched.py (+1)" in text(result)


@pytest.mark.slow
@pytest.mark.anyio
async def test_queries_answer_while_the_start_up_scan_runs(service: TrajectoryService, project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from code_trajectory.recording import importer

    release = threading.Event()
    real = importer.import_in_child

    def slow_import(*args, **kwargs):  # the real import (in its child process), held back until the test lets it go
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(importer, "import_in_child", slow_import)
    async with Client(build_server(service)) as client:
        result = await client.call_tool("configure_project", {"path": str(project)})
        assert not result.is_error and "still running in the background" in text(result)
        assert (await client.list_tools()).tools
        summary = await client.call_tool("get_session_summary", {})
        assert "start-up scan is still running" in text(summary)
        for name, arguments in (("get_global_trajectory", {}), ("get_file_trajectory", {"filepath": "src/app.py"}),
                                ("search_trajectory", {"query": "anything"})):
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, text(result))
            assert "start-up scan is still running" in text(result), (name, text(result))
        assert service.project().importing  # every answer above came while the import was held back
        release.set()
        session = service.project()
        assert session.wait_started(30)
        result = await client.call_tool("get_global_trajectory", {})
        assert "A src/app.py" in text(result)


@pytest.mark.anyio
async def test_tools_list_is_compact(service: TrajectoryService) -> None:
    """Issue 18.9: tools/list cost ~6,200 tokens for 19 tools (descriptions kept their source indentation).
    Each tool now costs at most 250 tokens (4 characters a token, the JSON as sent), not counting the bounds of its
    numeric arguments (``minimum``/``maximum``: the contract a client can check, at most 10 tokens each; the nine
    numeric arguments of record_test_result take it to ~295)."""
    import json

    async with Client(build_server(service)) as client:
        tools = (await client.list_tools()).tools

    def cost(tool, bounds: bool) -> float:
        listed = tool.model_dump(by_alias=True, exclude_none=True)
        if not bounds:
            for prop in listed["inputSchema"].get("properties", {}).values():
                prop.pop("minimum", None), prop.pop("maximum", None)
        return len(json.dumps(listed)) / 4

    sizes = {t.name: cost(t, bounds=False) for t in tools}
    assert max(sizes.values()) <= 250, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
    for tool in tools:
        numeric = sum("maximum" in prop for prop in tool.input_schema.get("properties", {}).values())
        assert cost(tool, bounds=True) - sizes[tool.name] <= 10 * numeric, tool.name
    for tool in tools:
        assert "\n    " not in (tool.description or ""), tool.name  # no source indentation
        assert not any("title" in prop for prop in tool.input_schema.get("properties", {}).values()), tool.name
