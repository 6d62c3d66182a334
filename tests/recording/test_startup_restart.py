"""The start-up of a restart (issue 29): what changed while stopped is recorded first (in a child process for a large
project), the watcher starts afterwards, and nothing saved between the scan and the watches is lost."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import messages
from code_trajectory.recording import importer, startup
from code_trajectory.recording.session import ProjectSession
from support import git, wait_for, write


def session_of(project: Path) -> ProjectSession:
    return ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=0.3), watch=True)


def recorded(project: Path, rel: str) -> str:
    return git(project, "--git-dir=.trajectory", "show", f"refs/heads/shadow/main:{rel}", check=False)


def first_run(project: Path) -> None:
    first = session_of(project)
    first.start(background=False)
    first.close()


def test_a_large_projects_restart_is_scanned_in_a_child_then_watched(project: Path, monkeypatch) -> None:
    first_run(project)
    write(project, "src/app.py", "def main():\n    return 'edited while stopped'\n")
    monkeypatch.setattr(startup, "CHILD_SCAN_FROM_BYTES", 0)  # every project is large
    calls: list[dict] = []
    real = importer.import_in_child
    monkeypatch.setattr(importer, "import_in_child", lambda *a, **k: (calls.append(k), real(*a, **k))[1])
    session = session_of(project)
    try:
        session.start(background=True)
        assert session.wait_started(60) and session.import_error is None
        assert len(calls) == 1 and calls[0]["catch_up"].stopped_at is not None  # the first run's stop
        snap = session.startup_snapshot
        assert snap is not None and snap.changes == [] and messages.UNRECORDED in snap.subject
        assert "edited while stopped" in recorded(project, "src/app.py")
        assert session.watcher is not None and session.watcher.running
        write(project, "src/later.py", "X = 1\n")  # the watcher records what comes after
        wait_for(lambda: "X = 1" in recorded(project, "src/later.py"), timeout=30)
    finally:
        session.close()


def test_the_scan_child_runs_in_a_session_of_its_own(project: Path, monkeypatch) -> None:
    """The child (and the ``git diff-files`` it runs) gets the scheduler's share of a session of its own, not a
    share of the server's (see :mod:`code_trajectory.recording.importer`)."""
    import os

    first_run(project)
    write(project, "src/app.py", "def main():\n    return 'edited while stopped'\n")
    monkeypatch.setattr(startup, "CHILD_SCAN_FROM_BYTES", 0)
    sessions: list[tuple[int, int]] = []
    real = importer.import_in_child

    def seen(*args, started, **kwargs):
        def note(proc) -> None:
            sessions.append((proc.pid, os.getsid(proc.pid)))  # alive, or a zombie not reaped yet: it has a session
            started(proc)
        return real(*args, started=note, **kwargs)

    monkeypatch.setattr(importer, "import_in_child", seen)
    session = session_of(project)
    try:
        session.start(background=True)
        assert session.wait_started(60) and session.import_error is None
        assert "edited while stopped" in recorded(project, "src/app.py")
        assert len(sessions) == 1 and sessions[0][0] == sessions[0][1] != os.getsid(0)
    finally:
        session.close()


def test_a_restart_in_process_records_then_watches_and_rescans_once(project: Path, monkeypatch) -> None:
    from code_trajectory.recording import watcher as watcher_module

    first_run(project)
    write(project, "src/app.py", "def main():\n    return 'edited while stopped'\n")
    original = watcher_module.Watcher.start

    def save_then_watch(self) -> None:  # a save after the scan, before any watch: only the rescan can see it
        write(project, "src/gap.py", "GAP = 1\n")
        original(self)

    monkeypatch.setattr(watcher_module.Watcher, "start", save_then_watch)
    session = session_of(project)
    try:
        session.start(background=True)
        assert session.wait_started(60) and session.import_error is None
        snap = session.startup_snapshot
        assert snap is not None and [c.path for c in snap.changes] == ["src/app.py"]  # in process: files kept
        assert session.watcher is not None and session.watcher.running
        wait_for(lambda: "GAP = 1" in recorded(project, "src/gap.py"), timeout=30)
    finally:
        session.close()


def test_a_restarts_watches_wait_until_the_server_is_built(project: Path) -> None:
    """``serve`` passes ``import_after`` (set once its server is built): the restart records what changed while
    stopped at once, sets its watches only then (their walk would hold the interpreter lock against the SDK's
    import), and a save made in between is recorded by the rescan that follows."""
    import threading

    first_run(project)
    write(project, "src/app.py", "def main():\n    return 'edited while stopped'\n")
    built = threading.Event()
    session = session_of(project)
    try:
        session.start(background=True, watch_first=False, import_after=built)
        wait_for(lambda: "edited while stopped" in recorded(project, "src/app.py"), timeout=30)
        write(project, "src/gap.py", "GAP = 1\n")  # saved after the scan, before any watch
        assert not session.wait_started(0.5) and session.importing
        assert session.watcher is not None and not session.watcher.running
        built.set()
        assert session.wait_started(30) and session.import_error is None and session.watcher.running
        wait_for(lambda: "GAP = 1" in recorded(project, "src/gap.py"), timeout=30)
    finally:
        session.close()


def test_a_restart_waiting_to_watch_ends_with_its_session(project: Path) -> None:
    import threading

    first_run(project)
    write(project, "src/app.py", "def main():\n    return 'edited while stopped'\n")
    session = session_of(project)
    watcher = None
    try:
        session.start(background=True, watch_first=False, import_after=threading.Event())  # never set
        wait_for(lambda: "edited while stopped" in recorded(project, "src/app.py"), timeout=30)
        watcher = session.watcher
    finally:
        session.close()
    assert session.wait_started(startup.HOLD_IMPORT_SECONDS / 2)  # the wait ends with the session, not its bound
    assert watcher is not None and not watcher.running


def test_a_git_operation_between_the_restarts_scan_and_its_watches_is_gits(project: Path) -> None:
    """A checkout made after the restart's scan and before its watches (no watch saw git write ``HEAD``) is
    recorded by the rescan that follows as git's ``[CHECKOUT]``, without the agent's intent, not as the agent's
    edit."""
    import threading

    git(project, "checkout", "-q", "-b", "other")
    write(project, "src/app.py", "def main():\n    return 'other branch'\n")
    git(project, "commit", "-qam", "other")
    git(project, "checkout", "-q", "main")
    first_run(project)
    write(project, "src/app.py", "def main():\n    return 'edited while stopped'\n")
    built = threading.Event()
    session = session_of(project)
    try:
        session.start(background=True, watch_first=False, import_after=built)
        wait_for(lambda: "edited while stopped" in recorded(project, "src/app.py"), timeout=30)
        session.set_intent("the agent's task")
        git(project, "checkout", "-q", "-f", "main")  # back to the committed content: git's
        git(project, "checkout", "-q", "other")
        built.set()
        assert session.wait_started(30) and session.import_error is None
        wait_for(lambda: "other branch" in git(project, "--git-dir=.trajectory", "show",
                                               "refs/heads/shadow/other:src/app.py", check=False), timeout=30)
        message = git(project, "--git-dir=.trajectory", "log", "-1", "--format=%B", "refs/heads/shadow/other")
        assert message.startswith("[CHECKOUT]") and "Trajectory-Intent" not in message, message
        assert f"Trajectory-Kind: {messages.KIND_GIT}" in message
    finally:
        session.close()
