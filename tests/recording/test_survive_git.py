"""Issue 22.3: the history survives the project's git. ``git clean -fdx``/``-fdX``, ``git stash -u``/``--all`` (and
pop), ``git checkout -f``, ``git reset --hard`` and ``git add -A`` leave ``.trajectory/`` in place and intact (``git
fsck`` of the shadow repository, same commit count); git run inside it finds no work tree; the project's ``git
status`` is unchanged. A ``.trajectory`` deleted while a server records is said once and a new history starts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import nested
from code_trajectory.recording.session import ProjectSession
from support import git, git_repo, server_command, shadow_count, subprocess_env, wait_for, write

GIT_COMMANDS = (
    [["clean", "-fdx"]],
    [["clean", "-fdX"]],
    [["stash", "-u"], ["stash", "pop"]],
    [["stash", "--all"], ["stash", "pop"]],
    [["checkout", "-f"]],
    [["reset", "--hard"]],
    [["add", "-A"], ["reset", "-q"]],
)


def record_history(root: Path) -> int:
    """Three snapshots and a named point of ``root``; the number of shadow commits."""
    session = ProjectSession(root, TrajectorySettings.load(root))
    try:
        session.start()
        for i in range(2):
            write(root, "src/app.py", f"def main():\n    return {i + 10}\n")
            session.recorder.record_paths(["src/app.py"])
        session.checkpoint("recorded")
    finally:
        session.close()
    return shadow_count(root)


def shadow_files(root: Path) -> dict[str, bytes]:
    """Every file under ``.trajectory`` but the stat cache (which a recorder rewrites), with its content."""
    found = {}
    for dirpath, _dirs, files in os.walk(root / ".trajectory"):
        for name in files:
            path = Path(dirpath) / name
            if "statcache" not in name:
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


def dirty(root: Path) -> None:
    """A modified tracked file, an untracked file and an ignored one, as work in progress has."""
    write(root, "src/app.py", "def main():\n    return 99\n")
    write(root, "scratch.txt", "untracked\n")
    write(root, "build/out.o", "ignored\n")


@pytest.mark.parametrize("commands", GIT_COMMANDS, ids=lambda c: " + ".join(" ".join(a) for a in c))
def test_git_commands_leave_the_history_in_place_and_intact(project: Path, commands: list[list[str]]) -> None:
    count = record_history(project)
    assert count >= 3
    dirty(project)
    status_before = git(project, "status", "--porcelain", "--untracked-files=all")
    files_before = shadow_files(project)
    for args in commands:
        git(project, *args)
    assert shadow_files(project) == files_before
    assert git(project, "--git-dir=.trajectory", "fsck", "--strict", "--no-dangling") == ""
    assert shadow_count(project) == count
    status = git(project, "status", "--porcelain", "--untracked-files=all")
    assert ".trajectory" not in status
    if commands[-1][0] in ("stash", "reset") and commands[-1] != ["reset", "--hard"]:
        assert status == status_before  # stash + pop, add + reset: the work in progress is back as it was


def test_the_project_sees_nothing_and_git_inside_the_history_finds_no_work_tree(project: Path) -> None:
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    record_history(project)
    assert git(project, "status", "--porcelain", "--untracked-files=all") == " M src/app.py\n"  # only the edit
    git(project, "add", "-A")
    assert git(project, "diff", "--cached", "--name-only") == "src/app.py\n"  # no .trajectory gitlink
    # what an IDE runs in a folder holding `.git` to decide whether it is a repository with changes
    inside = project / ".trajectory"
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=inside, capture_output=True, text=True)
    assert top.returncode != 0 and "work tree" in top.stderr
    status = subprocess.run(["git", "status", "--porcelain"], cwd=inside, capture_output=True, text=True)
    assert status.returncode != 0 and status.stdout == ""
    assert git(project, "-C", ".trajectory/objects", "rev-parse", "--is-bare-repository").strip() == "true"
    # the history itself answers when named
    assert git(project, "--git-dir=.trajectory", "log", "shadow/main", "--format=%s").count("[AUTO-TRJ]") == 3


def test_a_repository_made_before_gets_the_marker_when_opened(project: Path) -> None:
    count = record_history(project)
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text("# the user's own line\n*.swp\n")  # as an older release left it: no marker, no line
    (project / ".trajectory" / ".git").rename(project / "old-marker")
    assert git(project, "clean", "-n", "-fdx").count(".trajectory") == 1  # would be deleted
    session = ProjectSession(project, TrajectorySettings.load(project))
    session.close()
    assert nested.has_marker(project / ".trajectory")
    assert exclude.read_text().startswith("# the user's own line\n*.swp\n")
    assert exclude.read_text().splitlines()[-1] == "/.trajectory"
    git(project, "clean", "-fdx", "-e", "!old-marker")
    assert shadow_count(project) == count


def test_a_marker_that_is_not_ours_is_replaced_so_git_inside_the_history_runs_nothing(project: Path,
                                                                                      tmp_path: Path) -> None:
    record_history(project)
    marker_config = project / ".trajectory" / ".git" / "config"
    ran = tmp_path / "fsmonitor-ran"
    program = tmp_path / "fsmonitor.sh"
    program.write_text(f"#!/bin/sh\ntouch {ran}\n")
    program.chmod(0o755)
    # a copied tree's marker: same HEAD, a config naming a program for git run inside .trajectory
    marker_config.write_text(f"[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = {program}\n")
    assert not nested.has_marker(project / ".trajectory")
    ProjectSession(project, TrajectorySettings.load(project)).close()
    assert nested.has_marker(project / ".trajectory")
    assert marker_config.read_text() == nested.MARKER_CONFIG
    subprocess.run(["git", "status"], cwd=project / ".trajectory", capture_output=True)
    assert not ran.exists()


def test_a_project_below_the_top_of_its_work_tree_and_a_plain_directory(tmp_path: Path, plain_dir: Path) -> None:
    top = git_repo(tmp_path / "mono", {"packages/app [v2]/main.py": "print(1)\n", "README.md": "mono\n"},
                   commit="initial")
    app = top / "packages" / "app [v2]"
    count = record_history_of(app)
    assert (top / ".git" / "info" / "exclude").read_text().splitlines()[-1] == "/packages/app \\[v2]/.trajectory"
    assert ".trajectory" not in git(top, "status", "--porcelain", "--untracked-files=all")
    git(top, "clean", "-fdx")
    git(top, "stash", "--all")
    assert shadow_count(app) == count
    record_history_of(plain_dir)
    assert not (plain_dir / ".trajectory" / ".git").exists()  # no git around: nothing to protect from


def record_history_of(root: Path) -> int:
    session = ProjectSession(root, TrajectorySettings.load(root))
    try:
        session.start()
        write(root, "notes.md", "a note\n")
        session.recorder.record_paths(["notes.md"])
    finally:
        session.close()
    return shadow_count(root)


def delete_while_written(path: Path) -> None:
    """``rm -rf path`` as a user runs it while the recorder writes there: rm fails with "Directory not empty" when a
    file lands in a directory it has just emptied (seen in CI, the watcher writing its state after its first
    snapshot); the user runs it again."""
    for _ in range(10):
        if subprocess.run(["rm", "-rf", str(path)], capture_output=True).returncode == 0:
            return
    raise AssertionError(f"rm -rf {path} failed 10 times")


@pytest.mark.slow
@pytest.mark.parametrize("recreated_by", ["the watcher", "a one-shot command"])
def test_deleted_while_a_watcher_records_it_is_said_once_and_a_new_history_starts(project: Path,
                                                                                  recreated_by: str) -> None:
    proc = subprocess.Popen([*server_command(), "watch", str(project), "--debounce", "0.3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        wait_for(lambda: shadow_count(project) > 0, timeout=60)
        delete_while_written(project / ".trajectory")
        if recreated_by == "a one-shot command":  # it makes a new .trajectory before the watcher notices
            cli = subprocess.run([*server_command(), "checkpoint", "-m", "right after", "--project", str(project)],
                                 capture_output=True, text=True, env=subprocess_env(), timeout=60)
            assert cli.returncode == 0, cli.stderr
        write(project, "src/app.py", "def main():\n    return 7\n")
        wait_for(lambda: "return 7" in git(project, "--git-dir=.trajectory", "show", "shadow/main:src/app.py",
                                           check=False), timeout=30)
        for i in range(3):  # it keeps recording, without a new notice
            write(project, "src/app.py", f"def main():\n    return {20 + i}\n")
            wait_for(lambda i=i: f"return {20 + i}" in git(project, "--git-dir=.trajectory", "show",
                                                           "shadow/main:src/app.py", check=False), timeout=30)
        status = subprocess.run([*server_command(), "status", "--project", str(project)], capture_output=True,
                                text=True, env=subprocess_env(), timeout=60)
        assert "History restarted" in status.stdout and "deleted while recording" in status.stdout
        summary = subprocess.run([*server_command(), "session", "--project", str(project)], capture_output=True,
                                 text=True, env=subprocess_env(), timeout=60)
        assert "nothing is recording this project now" not in summary.stdout  # it still holds recorder.lock
        assert nested.has_marker(project / ".trajectory")
        assert proc.poll() is None
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert err.count("was deleted while recording") == 1 and "Traceback" not in err


@pytest.mark.anyio
async def test_deleted_while_a_server_records_the_server_goes_on_answering(project: Path) -> None:
    command = server_command()
    params = StdioServerParameters(command=command[0], env=subprocess_env(),
                                   args=[*command[1:], "serve", "--project", str(project), "--debounce", "0.3"])
    async with Client(params) as client:
        await client.call_tool("get_session_summary", {})
        wait_for(lambda: shadow_count(project) > 0, timeout=60)
        delete_while_written(project / ".trajectory")
        write(project, "src/app.py", "def main():\n    return 8\n")
        wait_for(lambda: shadow_count(project) > 0, timeout=30)
        summary = (await client.call_tool("get_session_summary", {})).content[0].text
        assert "deleted while recording" in summary
        done = await client.call_tool("checkpoint", {"message": "after the loss"})
        assert not done.is_error
        history = (await client.call_tool("get_file_trajectory", {"filepath": "src/app.py"})).content[0].text
        assert "return 8" in history


def test_a_repository_moved_aside_as_damaged_stays_hidden_from_the_project(project: Path) -> None:
    from code_trajectory.git import health
    from code_trajectory.git.shadow import ShadowRepo

    record_history(project)
    moved = health.move_aside(ShadowRepo(project))
    assert not (moved / ".git").exists()  # without the marker its own .gitignore hides it again
    assert git(project, "status", "--porcelain", "--untracked-files=all") == " M src/app.py\n"
    git(project, "add", "-A")
    assert git(project, "diff", "--cached", "--name-only") == "src/app.py\n"


@pytest.mark.parametrize("kind", ["fifo", "link", "oversized"])
def test_a_hostile_info_exclude_is_never_read_through_and_the_opening_goes_on(project: Path, tmp_path: Path,
                                                                              kind: str) -> None:
    """The project's ``.git/info/exclude`` is read to protect the history (and by the watcher, to notice a ``.git``
    made again): a FIFO there (a tarball's) would hang the opening, a link lead the write elsewhere."""
    from code_trajectory.recording.opening import open_shadow_repository

    exclude = project / ".git" / "info" / "exclude"
    exclude.unlink()
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n")
    if kind == "fifo":
        os.mkfifo(exclude)
    elif kind == "link":
        exclude.symlink_to(outside)
    else:
        exclude.write_text("#" * (nested.EXCLUDE_LIMIT + 1))
    _repo, notices = open_shadow_repository(project)  # returns: no read waits on the FIFO
    assert any("would delete the history" in n for n in notices), notices
    assert not nested.has_marker(project / ".trajectory")  # not protected, so no marker git would show
    assert outside.read_text() == "not the project's\n"
    assert not nested.is_excluded(exclude, nested.exclude_line(""))


def test_a_checkout_that_puts_a_file_named_trajectory_in_place_is_a_clear_tool_error(session: ProjectSession) -> None:
    """git counts the excluded history in the way of a tracked file named `.trajectory` as expendable (the README
    says so): tools then failed with `git cat-file failed: fatal: invalid gitfile format`, or the log answered as if
    nothing was recorded. They now say what happened and what to do."""
    from code_trajectory.core.errors import StorageError
    from code_trajectory.history import service as history

    root = session.root
    (root / ".git" / "tracked.txt").write_text("not a history\n")
    blob = git(root, "hash-object", "-w", ".git/tracked.txt").strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "other-index")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=root, env=env, check=True)
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},.trajectory"], cwd=root, env=env,
                   check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    git(root, "branch", "tracks-it", git(root, "commit-tree", tree, "-p", "HEAD", "-m", "track .trajectory").strip())
    git(root, "checkout", "-q", "tracks-it")
    assert (root / ".trajectory").is_file()
    with pytest.raises(StorageError, match="no longer the shadow repository: it is a file now .*configure_project"):
        history.global_trajectory(session, 5)
