"""MCP tools of the history: get_file_trajectory, get_global_trajectory, get_session_summary, get_symbol_trajectory,
search_trajectory, compare (and the resources and prompts of :mod:`.resources`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from code_trajectory.core.answer import Answer
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.mcp_util import MAX_RESULT_SIZE_CHARS, READ_ONLY, bounded, in_thread, tool
from code_trajectory.history import last_session, resources, service
from code_trajectory.history.narrative import CHARS_PER_TOKEN
from code_trajectory.history.render_symbol import DEFAULT_DIFFS
from code_trajectory.history.service import DEPTH_RANGE, DIFFS_RANGE, LIMIT_RANGE
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.recording.session import ProjectSession

#: Characters a ``compare`` answer reaches at its default cap (``compare_token_budget``), with room for the start-up
#: scan's notice: declared in ``tools/list`` so that Claude Code keeps such an answer in the conversation instead of
#: saving it to a file past 50,000 characters (:data:`~code_trajectory.core.mcp_util.MAX_RESULT_SIZE_CHARS`).
COMPARE_RESULT_CHARS = TrajectorySettings.compare_token_budget * CHARS_PER_TOKEN + 1_000


async def read(session: ProjectSession, query: Callable[[], str]) -> str:
    """Run the history ``query`` on a worker thread; while the start-up scan still runs (a large project's answers
    come at once, from what is recorded so far), its answer starts with a notice saying so and how far the scan got
    (also as ``data["importing"]``: phase, done, total)."""
    answer = await in_thread(query)
    if not session.importing:
        return answer
    phase, done, total = session.import_progress
    notice = (f"**Notice:** the start-up scan is still running ({phase}: {done}{f' of {total}' if total else ''}); "
              "this answer holds what is recorded so far: ask again in a while.\n\n")
    data = dict(getattr(answer, "data", {}) or {})
    data["importing"] = {"phase": phase, "done": done, **({"total": total} if total else {})}
    return Answer(notice + str.__str__(answer), data)


def register(mcp: MCPServer, app: TrajectoryService) -> None:
    """Add the narrative tools, resources and prompts to ``mcp``; they read the project ``app`` holds."""
    resources.register(mcp, app)

    @tool(mcp, READ_ONLY)
    async def get_file_trajectory(
        filepath: Annotated[str, Field(description="File path relative to the project root")],
        ctx: Context,
        depth: Annotated[int, bounded("Versions", *DEPTH_RANGE)] = 5,
        branch: Annotated[str | None, Field(description="Recorded branch; default current")] = None,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
    ) -> str:
        """How one file evolved: its last `depth` versions, each with the symbols and lines that changed (the
        newest with context), renames followed, reverts detected. Use before editing a file."""
        session = await app.session_for(ctx)
        return await read(session, lambda: service.file_trajectory(session, filepath, depth, branch,
                                                                           source))

    @tool(mcp, READ_ONLY)
    async def get_global_trajectory(
        ctx: Context,
        limit: Annotated[int, bounded("Maximum number of commits", *LIMIT_RANGE)] = 20,
        since_consolidate: Annotated[bool, Field(description="Go back to the last [CONSOLIDATE] commit instead")]
        = False,
        branch: Annotated[str | None, Field(description="Recorded branch; default current")] = None,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
        before: Annotated[str | None, Field(description="Page back: the snapshots older than this one (id, "
                                                        "checkpoint name, '~N' or a time)")] = None,
    ) -> str:
        """What changed across the project recently: snapshots oldest to newest with files, +/- counts and
        changed symbols. Use to see ripple effects or what happened while you were away."""
        session = await app.session_for(ctx)
        return await read(session, lambda: service.global_trajectory(session, limit, since_consolidate,
                                                                             branch, source, before))

    @tool(mcp, READ_ONLY)
    async def get_session_summary(
        ctx: Context,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
    ) -> str:
        """Catch up at the start of a conversation: whether a new session starts now (gap over an hour) and what
        the last session did (span, snapshots, files most changed, intents, final state, recap)."""
        session = await app.session_for(ctx)
        return await in_thread(lambda: last_session.full_session_summary(session, source))

    @tool(mcp, READ_ONLY)
    async def get_symbol_trajectory(
        filepath: Annotated[str, Field(description="File path relative to the project root")],
        symbol: Annotated[str, Field(description="Name, e.g. 'Serializer.loads'")],
        ctx: Context,
        depth: Annotated[int, bounded("Changes", *DEPTH_RANGE)] = 10,
        show_baseline: Annotated[bool, Field(description="First recorded body in full")] = False,
        diffs: Annotated[int, bounded("Changes with a diff", *DIFFS_RANGE)] = DEFAULT_DIFFS,
        branch: Annotated[str | None, Field(description="Recorded branch; default current")] = None,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
    ) -> str:
        """Changes of one function, class or method (code, docs, comments), each with why; the newest `diffs`
        with a diff. Follows renames and moves."""
        session = await app.session_for(ctx)
        return await read(session, lambda: service.symbol_trajectory(session, filepath, symbol, depth, branch, source,
                                                             show_baseline=show_baseline, diffs=diffs))

    @tool(mcp, READ_ONLY)
    async def search_trajectory(
        query: Annotated[str, Field(description="Text to find (a regex when regex=true)")],
        ctx: Context,
        regex: Annotated[bool, Field(description="Treat query as a regular expression")] = False,
        path: Annotated[str | None, Field(description="Only this file or directory")] = None,
        since: Annotated[str | None, Field(description="ISO 8601 time or '2 hours ago'")] = None,
        limit: Annotated[int, bounded("Snapshots", *LIMIT_RANGE)] = 20,
        source: Annotated[str | None, Field(description="Shared trajectory, e.g. 'bob@x.org/main'")] = None,
    ) -> str:
        """Snapshots that added or removed matching text, newest first, with the lines: when did this line
        appear, and when did it go."""
        session = await app.session_for(ctx)
        return await read(session, lambda: service.search_trajectory(session, query, regex, path, since, limit,
                                                                             source=source))

    @tool(mcp, READ_ONLY, meta={MAX_RESULT_SIZE_CHARS: COMPARE_RESULT_CHARS})
    async def compare(
        from_snapshot: Annotated[str, Field(description="Commit id, checkpoint message, '~N', 'start of recording' or a time")],
        ctx: Context,
        to_snapshot: Annotated[str, Field(description="Same, or 'now' for the work tree")] = "now",
        filepath: Annotated[str | None, Field(description="One file; default the whole project")] = None,
        source: Annotated[str | None, Field(description="Shared trajectory whose snapshots are named")] = None,
    ) -> str:
        """The change between two snapshots, or a snapshot and now: per file the counts, changed symbols and
        diffs."""
        session = await app.session_for(ctx)
        return await read(session, lambda: service.compare(session, from_snapshot, to_snapshot, filepath, source))
