"""Issue 29, answer at once: the read tools answer while the initial import holds the recorder (its child process
writes the import meanwhile), and say that it runs."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.recording import importer
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.server import build_server

#: A hang detector, far above the answer's real cost and far below the import held back for a minute.
ANSWER_BOUND_SECONDS = 20


@pytest.mark.anyio
async def test_read_tools_answer_while_the_import_holds_the_recorder(project: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    release, holding = threading.Event(), threading.Event()
    real = importer.import_in_child

    def held_import(recorder, *args, **kwargs):  # the import holds the recorder, as while its child runs
        with recorder.scanning_elsewhere():
            holding.set()
            release.wait(60)
            return real(recorder, *args, **kwargs)

    monkeypatch.setattr(importer, "import_in_child", held_import)
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    try:
        async with Client(build_server(service)) as client:
            result = await client.call_tool("configure_project", {"path": str(project)})
            assert not result.is_error, result.content[0].text
            assert await anyio.to_thread.run_sync(lambda: holding.wait(30))
            for name, arguments in (("get_session_summary", {}), ("get_global_trajectory", {"limit": 5}),
                                    ("get_file_trajectory", {"filepath": "src/app.py"})):
                with anyio.fail_after(ANSWER_BOUND_SECONDS):
                    result = await client.call_tool(name, arguments)
                answer = result.content[0].text
                assert not result.is_error, (name, answer)
                assert "start-up scan is still running" in answer, (name, answer)
            release.set()
            assert service.project().wait_started(60)
            result = await client.call_tool("get_global_trajectory", {})
            assert "A src/app.py" in result.content[0].text
    finally:
        release.set()
        service.close()
