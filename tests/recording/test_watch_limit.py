"""The inotify watch limit reached for real: a ``code-trajectory serve`` whose kernel limit is lower than its project.

The machine's limit (``fs.inotify.max_user_watches``) is never touched. The server runs in a new user namespace
(``unshare --user --map-root-user``, util-linux) whose own limit, ``/proc/sys/user/max_inotify_watches``, is set
below the project's directory count: the kernel counts the server's watches against that namespace's limit as well
as the machine's, so adding watches past it fails with the kernel's own error (``ENOSPC``) while nothing else on the
machine is affected. The server is the real one, spoken to over stdio with the MCP SDK client; what it watches is
read from ``/proc/<pid>/fdinfo`` (one ``inotify wd:`` line per watch, with the directory's inode). The test is
skipped where unprivileged user namespaces are not available.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from support import git, git_repo, server_command, subprocess_env
from support.procfs import serve_pid, watched_inodes

pytestmark = pytest.mark.e2e

#: Directories of the test project (each with one file), and the watches its server may hold: well below them.
DIRS = 40
LIMIT = 16
SYSCTL = "fs.inotify.max_user_watches"


def namespace_limit_works() -> bool:
    """True when an unprivileged user namespace with its own inotify watch limit can be made here."""
    try:
        done = subprocess.run(["unshare", "--user", "--map-root-user", "/bin/sh", "-c",
                               "echo 1 > /proc/sys/user/max_inotify_watches"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@pytest.fixture
def big_project(tmp_path: Path) -> Path:
    files = {f"pkg{i:02d}/mod.py": f"VALUE = {i}\n" for i in range(DIRS)}
    return git_repo(tmp_path / "project", files, branch="main", commit="initial").resolve()


async def answer(client: Client, tool: str, args: dict | None = None) -> str:
    result = await client.call_tool(tool, args or {})
    body = "\n".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, body
    return body


@pytest.mark.anyio
@pytest.mark.skipif(not namespace_limit_works(), reason="no unprivileged user namespace with its own inotify limit")
async def test_past_the_kernel_watch_limit_the_rest_is_polled_with_one_warning(big_project: Path,
                                                                             tmp_path: Path) -> None:
    log_file = tmp_path / "serve.log"
    command = server_command()
    script = ('echo "$1" > /proc/sys/user/max_inotify_watches || exit 97; shift; log="$1"; shift; '
              'exec "$@" 2>>"$log"')
    server = StdioServerParameters(command="unshare", args=[
        "--user", "--map-root-user", "/bin/sh", "-c", script, "sh", str(LIMIT), str(log_file),
        *command, "serve", "--project", str(big_project), "--debounce", "0.3"], env=subprocess_env())
    async with Client(server) as client:
        summary = await answer(client, "get_session_summary")
        deadline = time.monotonic() + 60
        while "start-up scan is still running" in summary and time.monotonic() < deadline:
            await anyio.sleep(0.2)
            summary = await answer(client, "get_session_summary")
        pid = serve_pid(big_project)
        assert pid is not None, "the serve process was not found"
        inodes = watched_inodes(pid)
        assert 0 < len(inodes) <= LIMIT  # the kernel's limit held, and some directories are watched natively
        polled = [i for i in range(DIRS) if (big_project / f"pkg{i:02d}").stat().st_ino not in inodes]
        assert len(polled) >= DIRS - LIMIT

        # the warning: in the summary, naming the sysctl; and in `code-trajectory status` run beside the server
        assert SYSCTL in summary and "polled" in summary, summary
        status = subprocess.run([*command, "status", "--project", str(big_project)], capture_output=True, text=True,
                                env=subprocess_env(), timeout=120)
        assert status.returncode == 0, status.stderr
        line = next((line for line in status.stdout.splitlines() if line.startswith("- Watcher:")), "")
        assert SYSCTL in line and f"of {DIRS + 4}" in line, status.stdout  # pkg*, the root, .git, .git/logs, refs

        # a change in a polled directory is recorded (within a poll interval and the debounce)
        target = big_project / f"pkg{polled[-1]:02d}" / "mod.py"
        target.write_text("VALUE = 'changed while polled'\n")
        rel = target.relative_to(big_project).as_posix()
        deadline = time.monotonic() + 30
        shown = ""
        while time.monotonic() < deadline:
            shown = git(big_project, "--git-dir=.trajectory", "show", f"refs/heads/shadow/main:{rel}", check=False)
            if "changed while polled" in shown:
                break
            await anyio.sleep(0.2)
        assert "changed while polled" in shown

        # a directory created now (more than the limit allows) is watched or polled too
        (big_project / "fresh").mkdir()
        (big_project / "fresh" / "new.py").write_text("NEW = 1\n")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            shown = git(big_project, "--git-dir=.trajectory", "show", "refs/heads/shadow/main:fresh/new.py",
                        check=False)
            if "NEW = 1" in shown:
                break
            await anyio.sleep(0.2)
        assert "NEW = 1" in shown
        summary = await answer(client, "get_session_summary")
        assert SYSCTL in summary

    status = subprocess.run([*command, "status", "--project", str(big_project)], capture_output=True, text=True,
                            env=subprocess_env(), timeout=120)
    assert "- Watcher:" not in status.stdout  # the server stopped: its note is not shown
    log = log_file.read_text()
    warnings = [line for line in log.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, log  # one clear warning, however many groups were tried or directories added
    assert SYSCTL in warnings[0] and "polled" in warnings[0], warnings[0]


def test_a_directory_gone_before_its_watch_is_dropped_not_polled(tmp_path: Path) -> None:
    """A directory removed between the walk and the watch fails the native group with FileNotFoundError (watchfiles
    reports every native error now): the group is started again without it, nothing is polled, no warning."""
    from code_trajectory.recording.watchgroups import SyncPoint, WatchGroup
    from code_trajectory.recording.watchlimit import NativeWatches, stop_groups

    (tmp_path / "state").mkdir()
    sync = SyncPoint(tmp_path / "state" / "sync")
    dirs = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        dirs.append(str(tmp_path / name))
    seen: list[set] = []
    watches = NativeWatches(lambda group_dirs, polling: WatchGroup(group_dirs, on_batch=seen.append,
                                                                   watch_filter=lambda change, path: True,
                                                                   polling=polling, sync=sync))
    (tmp_path / "b").rmdir()
    groups = watches.start(dirs)
    try:
        assert [g.polling for g in groups] == [False] and groups[0].dirs == [dirs[0], dirs[2]]
        assert watches.polled == 0 and watches.notice is None
        (tmp_path / "c" / "new.txt").write_text("x")
        deadline = time.monotonic() + 15
        while not any(path.endswith("/c/new.txt") for batch in seen for _change, path in batch):
            assert time.monotonic() < deadline, seen
            time.sleep(0.05)
    finally:
        stop_groups(groups)


@pytest.mark.parametrize("planted", ["[1, 2]", '{"pid": "x", "polled": 1, "total": 2, "poll_seconds": 2}',
                                     '{"pid": 4242, "polled": "1e400", "total": 2, "poll_seconds": 2}',
                                     '{"pid": 4242, "polled": 1}', "\udcff not json", "symlink", "fifo", None,
                                     # Python's json reads these: int() of them raised OverflowError, a traceback
                                     '{"pid": Infinity, "polled": 1, "total": 2, "poll_seconds": 2}',
                                     '{"pid": 4242, "polled": 1, "total": -Infinity, "poll_seconds": 2}'])
def test_a_hostile_watch_limit_file_gives_no_status_line(tmp_path: Path, planted: str | None) -> None:
    """``state/watch-limit.json`` is untrusted: garbage, a link to ``/dev/zero`` or a FIFO is no line, at once,
    while the same process's sound note (``None`` here) is one; only a sysctl of the module's list is named."""
    import fcntl
    import json

    from code_trajectory.recording.liveness import STATE_FILE as RECORDER_STATE
    from code_trajectory.recording.watchlimit import STATE_FILE, status_line

    state = tmp_path / ".trajectory" / "state"
    state.mkdir(parents=True)
    (state / RECORDER_STATE).write_text(json.dumps({"pid": 4242}))
    note = state / STATE_FILE
    if planted == "symlink":
        note.symlink_to("/dev/zero")
    elif planted == "fifo":
        os.mkfifo(note)
    elif planted is None:
        note.write_text(json.dumps({"pid": 4242, "polled": 3, "total": 9, "poll_seconds": 2,
                                    "sysctl": "kernel.core_pattern"}))
    else:
        note.write_bytes(planted.encode("utf-8", "surrogateescape"))
    with open(tmp_path / ".trajectory" / "recorder.lock", "w") as lock:  # a recording process holds it
        fcntl.flock(lock, fcntl.LOCK_EX)
        line = status_line(state)
    if planted is None:
        assert line is not None and "3 of 9" in line and "core_pattern" not in line
    else:
        assert line is None
