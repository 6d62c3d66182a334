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
from support import git, wait_for, write

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


@pytest.mark.anyio
async def test_serve_answers_before_the_import_is_watched_and_records_an_edit_made_meanwhile(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from code_trajectory import serving
    from code_trajectory.core.shutdown import StopRequest
    from code_trajectory.recording import watcher as watcher_module

    release, watching = threading.Event(), threading.Event()
    original = watcher_module.Watcher.start

    def slow_start(self) -> None:  # the watches of a very large tree: set long after start-up
        watching.set()
        release.wait(60)
        original(self)

    monkeypatch.setattr(watcher_module.Watcher, "start", slow_start)
    monkeypatch.setattr(StopRequest, "install", lambda self, *a, **k: None)  # the test's process keeps its signals
    monkeypatch.setattr(serving, "stop_on_request", lambda stop, service: None)
    service, _ = serving.start_service(str(project), debounce=0.3)
    try:
        session = service.project()
        assert await anyio.to_thread.run_sync(lambda: watching.wait(30))  # the import ended; the watches start
        with anyio.fail_after(ANSWER_BOUND_SECONDS):
            async with Client(build_server(service)) as client:  # initialize answers without the watches
                result = await client.call_tool("get_session_summary", {})
                assert not result.is_error, result.content[0].text
                assert session.watcher is not None and not session.watcher.running
                write(project, "src/meanwhile.py", "SAVED = 'before the watches'\n")  # only the rescan sees it
                release.set()
                assert await anyio.to_thread.run_sync(lambda: session.wait_started(60))
                assert session.import_error is None and session.watcher.running
                await anyio.to_thread.run_sync(lambda: wait_for(
                    lambda: "before the watches" in git(project, "--git-dir=.trajectory", "show",
                                                        "refs/heads/shadow/main:src/meanwhile.py", check=False),
                    timeout=30))
    finally:
        release.set()
        service.close()


@pytest.mark.anyio
async def test_serve_holds_an_initial_import_until_its_server_is_built(project: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve --project`` starts the initial import of a large git project once its server is built
    (``import_after``): until then no import process runs, the answers say the scan runs, and nothing is recorded;
    afterwards the import is."""
    from code_trajectory import serving
    from code_trajectory.core.shutdown import StopRequest
    from code_trajectory.recording import service as service_module
    from code_trajectory.recording import startup

    monkeypatch.setattr(startup, "HOLD_IMPORT_FROM_INDEX_BYTES", 0)  # this small project is held as a large one
    # a large project's first answers do not wait for its scan at all (they would hit the bound below)
    monkeypatch.setattr(service_module, "FIRST_ANSWER_SECONDS", 10 * ANSWER_BOUND_SECONDS)

    children: list[object] = []
    real = importer.import_in_child

    def counted(*args, **kwargs):
        children.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(importer, "import_in_child", counted)
    monkeypatch.setattr(StopRequest, "install", lambda self, *a, **k: None)  # the test's process keeps its signals
    monkeypatch.setattr(serving, "stop_on_request", lambda stop, service: None)
    built = threading.Event()
    service, _ = serving.start_service(str(project), debounce=0.3, import_after=built)
    try:
        session = service.project()
        with anyio.fail_after(ANSWER_BOUND_SECONDS):
            async with Client(build_server(service)) as client:
                result = await client.call_tool("get_global_trajectory", {"limit": 5})
                assert not result.is_error, result.content[0].text
                assert "start-up scan is still running" in result.content[0].text
                assert not children and session.importing  # held: no import process yet
                assert git(project, "--git-dir=.trajectory", "for-each-ref", "refs/heads/shadow") == ""
                built.set()
                assert await anyio.to_thread.run_sync(lambda: session.wait_started(60))
                assert session.import_error is None and len(children) == 1
                result = await client.call_tool("get_global_trajectory", {"limit": 5})
                assert "A src/app.py" in result.content[0].text
    finally:
        built.set()
        service.close()


def test_a_held_import_is_not_started_once_its_session_closes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from code_trajectory.recording import startup

    monkeypatch.setattr(startup, "HOLD_IMPORT_FROM_INDEX_BYTES", 0)
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    never = threading.Event()
    session, _ = service.configure(str(project), background=True, watch_first=False, import_after=never)
    service.close()
    assert session.wait_started(startup.HOLD_IMPORT_SECONDS / 2)  # the hold ends with the session, not its bound
    assert "not started" in str(session.import_error)
    assert git(project, "--git-dir=.trajectory", "for-each-ref", "refs/heads/shadow") == ""


def test_a_small_project_is_imported_at_once_even_when_serve_would_hold_it(project: Path) -> None:
    """Its import ends within the first answer's short wait: it is not held back (see recording.startup)."""
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    never = threading.Event()
    try:
        session, _ = service.configure(str(project), background=True, watch_first=False, import_after=never)
        assert session.wait_started(ANSWER_BOUND_SECONDS)
        assert session.import_error is None and session.startup_snapshot is not None
    finally:
        service.close()


def test_a_large_project_without_git_is_held_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a git index the project's size is counted (breadth-first, up to ``HOLD_IMPORT_FROM_ENTRIES``): a
    large one is held until the server is built, as a large git project is; a small one is imported at once."""
    from code_trajectory.recording import startup

    monkeypatch.setattr(startup, "HOLD_IMPORT_FROM_ENTRIES", 30)
    large, small = tmp_path / "large", tmp_path / "small"
    for i in range(40):
        write(large, f"d{i % 4}/f{i}.txt", f"{i}\n")
    for i in range(10):
        write(small, f"d{i % 4}/f{i}.txt", f"{i}\n")
    service = TrajectoryService(lambda root: TrajectorySettings.load(root, debounce_seconds=0.3))
    built = threading.Event()
    try:
        session, _ = service.configure(str(large), background=True, watch_first=False, import_after=built)
        assert not session.wait_started(1.0) and session.importing  # held
        assert startup.takes_long(session.recorder)  # the first answers do not wait for it either
        built.set()
        assert session.wait_started(ANSWER_BOUND_SECONDS) and session.import_error is None
        assert "d3/f39.txt" in git(large, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "HEAD")
        session, _ = service.configure(str(small), background=True, watch_first=False, import_after=threading.Event())
        assert session.wait_started(ANSWER_BOUND_SECONDS) and session.startup_snapshot is not None  # not held
        assert not startup.takes_long(session.recorder)
    finally:
        built.set()
        service.close()


def test_counting_a_tree_follows_no_link(tmp_path: Path) -> None:
    """The count of a project without git (``large_tree``) never follows a link: a link to a large directory
    outside counts one entry, a link to the project itself (a loop) one, and ``.git``/``.trajectory`` none."""
    from code_trajectory.recording.startup import _holds_entries

    outside, project = tmp_path / "outside", tmp_path / "project"
    for i in range(50):
        write(outside, f"f{i}.txt", "x\n")
    write(project, "a.txt", "a\n")
    write(project, ".trajectory/state/x.json", "{}")
    (project / "out").symlink_to(outside, target_is_directory=True)
    (project / "loop").symlink_to(project, target_is_directory=True)
    assert _holds_entries(str(project), 3) and not _holds_entries(str(project), 4)  # a.txt, out, loop
