"""Dangerous project roots (the home directory, our own storage, the file system root) are refused by every
front end that would start recording: the MCP tool ``configure_project``, the CLI (``checkpoint``, ``watch``,
``serve --project``, and ``install``, whose entry would run ``serve --project``); ``status`` shows the disk
use against the size cap."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import ProjectError
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.service import TrajectoryService
from code_trajectory.recording.status import disk_usage, project_status
from code_trajectory.server import build_server
from support import git, server_command, subprocess_env, write


@pytest.fixture
def storage_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory whose subdirectory is CODE_TRAJECTORY_HOME (our storage)."""
    root = tmp_path / "work"
    write(root, "notes.txt", "hello\n")
    monkeypatch.setenv("CODE_TRAJECTORY_HOME", str(root / "data" / "code-trajectory"))
    return root


def home_link(tmp_path: Path, isolated_env: Path) -> Path:
    link = tmp_path / "link-to-home"
    link.symlink_to(isolated_env, target_is_directory=True)
    return link


def dangerous(kind: str, tmp_path: Path, isolated_env: Path, storage_project: Path) -> tuple[Path, str]:
    """A refused root of ``kind`` and a word its error message must hold."""
    write(isolated_env, "notes.txt", "my home\n")
    if kind == "home":
        return isolated_env, "home directory"
    if kind == "home via symlink":
        return home_link(tmp_path, isolated_env), "home directory"
    if kind == "storage ancestor":
        return storage_project, "own storage"
    storage = Path(os.environ["CODE_TRAJECTORY_HOME"])
    storage.mkdir(parents=True, exist_ok=True)
    return storage, "own storage"


KINDS = ["home", "home via symlink", "storage ancestor", "storage itself"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_recorder_refuses_a_dangerous_root(kind: str, tmp_path: Path, isolated_env: Path,
                                               storage_project: Path) -> None:
    root, words = dangerous(kind, tmp_path, isolated_env, storage_project)
    with pytest.raises(ProjectError, match=words) as info:
        Recorder.open(root.resolve(), TrajectorySettings.load())
    assert "record a project directory" in str(info.value)  # what to do instead
    assert not (root / ".trajectory").exists()


def test_the_file_system_root_is_refused_by_the_same_guard() -> None:
    with pytest.raises(ProjectError, match="file system root"):
        Recorder.open(Path("/"), TrajectorySettings.load())


def test_a_project_next_to_our_storage_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_TRAJECTORY_HOME", str(tmp_path / "data" / "code-trajectory"))
    root = tmp_path / "data" / "app"
    write(root, "main.py", "print(1)\n")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        assert recorder.reconcile() is not None
    finally:
        recorder.close()


def test_an_existing_shadow_repository_in_the_home_directory_is_refused_too(isolated_env: Path) -> None:
    git(isolated_env, "--git-dir=.trajectory", "init", "-q", "--bare")  # recorded by an older release
    with pytest.raises(ProjectError, match="home directory"):
        Recorder.open(isolated_env, TrajectorySettings.load(), create=False)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_configure_project_refuses_a_dangerous_root(kind: str, tmp_path: Path, isolated_env: Path,
                                                          storage_project: Path) -> None:
    root, words = dangerous(kind, tmp_path, isolated_env, storage_project)
    service = TrajectoryService(lambda r: TrajectorySettings.load(r))
    try:
        async with Client(build_server(service)) as client:
            result = await client.call_tool("configure_project", {"path": str(root)})
            assert result.is_error
            assert words in result.content[0].text and "refusing to record" in result.content[0].text
            result = await client.call_tool("configure_project", {"path": "/"})
            assert result.is_error and "file system root" in result.content[0].text
    finally:
        service.close()
    assert not (root / ".trajectory").exists()


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*server_command(), *args], cwd=cwd, env=subprocess_env(), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["home", "home via symlink", "storage ancestor"])
def test_every_cli_command_that_starts_recording_refuses_a_dangerous_root(kind: str, tmp_path: Path,
                                                                         isolated_env: Path,
                                                                         storage_project: Path) -> None:
    root, words = dangerous(kind, tmp_path, isolated_env, storage_project)
    for args, cwd in [(["checkpoint"], root), (["checkpoint", "--project", str(root)], tmp_path),
                      (["watch", str(root)], tmp_path), (["watch"], root), (["serve", "--project", str(root)], tmp_path),
                      (["install", "cursor", "--project", str(root)], tmp_path)]:
        proc = run_cli(*args, cwd=cwd)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert words in proc.stderr and "refusing to record" in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert not (root / ".trajectory").exists() and not (root / ".cursor").exists()


def test_a_project_inside_the_home_directory_is_recorded(isolated_env: Path) -> None:
    root = isolated_env / "code" / "app"
    write(root, "main.py", "print(1)\n")
    proc = run_cli("checkpoint", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".trajectory" / "HEAD").is_file()


def test_status_shows_the_disk_use_against_the_size_cap(project: Path) -> None:
    write(project, ".trajectory/config.toml", "[trajectory]\nmax_history_bytes = 524288000\n")
    recorder = Recorder.open(project, TrajectorySettings.load(project))
    try:
        recorder.reconcile()
        usage = disk_usage(recorder.repo, 524288000)
    finally:
        recorder.close()
    assert 0 < usage["bytes"] < usage["cap_bytes"] == 524288000
    assert usage["fraction"] == usage["bytes"] / 524288000
    text = project_status(project)
    assert " of 500.0 MiB cap (0%)" in text and "- Disk: " in text
    proc = run_cli("status", cwd=project)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("- Disk: "))
    assert line.endswith("of 500.0 MiB cap (0%); past the cap (`max_history_bytes`), maintenance drops snapshots "
                         "older than 30 days"), line


def test_a_session_opened_with_a_relative_or_linked_root_works_on_the_resolved_project(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ProjectSession(Path("project"))` created its shadow repository from a relative path (git, run in a temporary
    directory, failed: "Invalid path .../.trajectory.tmp-.../project"); a root reached through a symlink made every
    path "outside the project" (the root unresolved, each path resolved). The session resolves its root."""
    from code_trajectory.history import service as history
    from code_trajectory.recording.session import ProjectSession

    link = project.parent / "linked"
    link.symlink_to(project, target_is_directory=True)
    monkeypatch.chdir(project.parent)
    for given in (Path("project"), link):
        session = ProjectSession(given, TrajectorySettings.load(given))
        try:
            assert session.root == project.resolve()
            write(project, "src/app.py", f"def main():\n    return {given.name!r}\n")
            session.checkpoint(f"through {given}")
            assert repr(given.name) in history.file_trajectory(session, "src/app.py")
        finally:
            session.close()
    assert not (project / "project").exists() and not (project.parent / ".trajectory").exists()
