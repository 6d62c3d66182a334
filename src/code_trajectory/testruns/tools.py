"""MCP tools of test status: record_test_result, get_test_history, diff_since_green.

:mod:`code_trajectory.testruns.report` is imported when a tool first runs, not when the server starts (issue 29:
``initialize`` within 1 s)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from code_trajectory.core.mcp_util import MAX_RESULT_SIZE_CHARS, READ_ONLY, WRITES, bounded, in_thread, tool
from code_trajectory.history.tools import COMPARE_RESULT_CHARS
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.testruns import COUNT_RANGE, DURATION_RANGE, EXIT_CODE_RANGE, LIMIT_RANGE


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add the test status tools to ``mcp``; they work on the project ``app`` holds."""

    @tool(mcp, WRITES)
    async def record_test_result(
        command: Annotated[str, Field(description="e.g. 'pytest -q'")],
        ctx: Context,
        passed: Annotated[int | None, bounded(None, *COUNT_RANGE)] = None,
        failed: Annotated[int | None, bounded(None, *COUNT_RANGE)] = None,
        errors: Annotated[int | None, bounded(None, *COUNT_RANGE)] = None,
        skipped: Annotated[int | None, bounded(None, *COUNT_RANGE)] = None,
        xfailed: Annotated[int | None, bounded(None, *COUNT_RANGE)] = None,
        xpassed: Annotated[int | None, bounded(None, *COUNT_RANGE)] = None,
        failing_tests: Annotated[list[str] | None, Field(
            description="Failing test ids, optionally 'id: reason'")] = None,
        duration_seconds: Annotated[float | None, bounded(None, *DURATION_RANGE)] = None,
        exit_code: Annotated[int | None, bounded(None, *EXIT_CODE_RANGE)] = None,
        full_suite: bool = False,
    ) -> str:
        """Record a test run you made on the current state; its scope is read from the command (full_suite:
        it runs the whole suite). It marks green snapshots."""
        from code_trajectory.testruns import report

        session = await app.session_for(ctx)
        failures = None
        if failing_tests is not None:
            failures = [tuple(part.strip() for part in item.split(": ", 1)) if ": " in item else item
                        for item in failing_tests]
        return await in_thread(lambda: report.record_test_result(
            session, command=command, passed=passed, failed=failed, errors=errors, skipped=skipped,
            xfailed=xfailed, xpassed=xpassed, failing_tests=failures, duration_seconds=duration_seconds, exit_code=exit_code,
            full_suite=full_suite))

    @tool(mcp, READ_ONLY)
    async def get_test_history(
        ctx: Context,
        limit: Annotated[int, bounded("Number of runs", *LIMIT_RANGE)] = 10,
        branch: Annotated[str | None, Field(description="A recorded branch; default: the current one")] = None,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
    ) -> str:
        """Recorded test runs on the current branch, newest first: when, on which snapshot, scope (full suite or
        partial), counts and failing tests. Use to see when tests were last green."""
        from code_trajectory.testruns import report

        session = await app.session_for(ctx)
        return await in_thread(lambda: report.test_history(session, limit, branch, source))

    @tool(mcp, READ_ONLY, meta={MAX_RESULT_SIZE_CHARS: COMPARE_RESULT_CHARS})
    async def diff_since_green(
        ctx: Context,
        filepath: Annotated[str | None, Field(description="One file relative to the project root; omit for the "
                                                          "whole project")] = None,
        branch: Annotated[str | None, Field(description="A recorded branch; default: the current one")] = None,
        scope: Annotated[str | None, Field(description="'full' (default) or pytest selection arguments relative "
                                                       "to the project root, e.g. 'tests/test_api.py -k login'")] = None,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
    ) -> str:
        """What changed since the last snapshot green for a scope (default: the full suite; a snapshot where any
        overlapping run failed is not green): use when tests fail to find what broke without re-running
        anything. The answer names the scope it is for."""
        from code_trajectory.testruns import report

        session = await app.session_for(ctx)
        return await in_thread(lambda: report.diff_since_green(session, filepath, branch, scope, source))
