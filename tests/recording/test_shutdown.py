"""Issue 22, part 1: a stop never loses an edit, and no child process outlives its parent.

Real processes and real git: ``serve`` (raw JSON-RPC ``initialize`` over pipes), ``watch`` and ``ui`` are stopped the
ways the clients measured in issue 22 stop them — Claude Code: SIGINT then SIGTERM 0.1 s later, stdin left open;
Gemini CLI: SIGTERM; Codex CLI: stdin closed; a closing terminal: SIGHUP — each with an edit saved 0.3 s before, with
a 2 s debounce, so the edit is still pending when the stop comes. After each: the edit is on the shadow branch,
``recorder.json`` has ``stopped_at``, the status is 0, the process is gone well within the hang bound (the real
figure is printed: ``pytest -s``), and no process whose parent was the server, or whose command line names the
project, remains.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import git, server_command, shadow_count, subprocess_env, wait_for, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

#: The debounce of the processes under test: an edit 0.3 s before the stop is still pending, seconds.
DEBOUNCE = "2"
#: A hang detector, not a timing assertion: the figure measured is printed (the target is under 1 s; 0.06-0.33 s on
#: a quiet 2-core machine), seconds. Generous, as the suite runs in parallel on 2 shared cores.
EXIT_BOUND = 15.0
#: The stops measured with the real clients (issue 22).
STOPS = {
    "SIGINT": [signal.SIGINT],
    "SIGTERM": [signal.SIGTERM],
    "SIGHUP": [signal.SIGHUP],
    "SIGINT-then-SIGTERM": [signal.SIGINT, 0.1, signal.SIGTERM],
    "SIGTERM-during-the-flush": [signal.SIGINT, 0.01, signal.SIGTERM, 0.01, signal.SIGHUP],
    "stdin-EOF": ["eof"],
}
EDIT = "def main():\n    return 'saved just before the stop'\n"


def processes() -> list[tuple[int, int, str]]:
    """``(pid, parent pid, command line)`` of every process now (from ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":  # a zombie is gone, only not yet reaped
            continue
        found.append((int(entry), int(fields[1]), cmdline))
    return found


def leftovers(pid: int, project: Path) -> list[str]:
    """Processes whose parent was ``pid`` or whose command line names ``project`` (this test's own excluded)."""
    return [f"{p} (parent {pp}): {cmd}" for p, pp, cmd in processes()
            if p != os.getpid() and (pp == pid or str(project) in cmd)]


def start(args: list[str], log: Path) -> subprocess.Popen:
    """Start ``code-trajectory ARGS`` with pipes on stdin and stdout, stderr to ``log``."""
    with open(log, "wb") as err:
        return subprocess.Popen([*server_command(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, env=subprocess_env())


def send(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def initialize(proc: subprocess.Popen) -> dict:
    """The MCP handshake over the pipes: ``initialize``, its answer, ``notifications/initialized``."""
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "shutdown-test", "version": "1"}}})
    assert proc.stdout is not None
    answer = json.loads(proc.stdout.readline())
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


def recorder_state(project: Path) -> dict:
    try:
        return json.loads((project / ".trajectory" / "state" / "recorder.json").read_text())
    except (OSError, ValueError):
        return {}


def recording(project: Path, proc: subprocess.Popen) -> bool:
    """True once ``proc`` holds the recording and its start-up import is written."""
    assert proc.poll() is None, "the process exited"
    return recorder_state(project).get("pid") == proc.pid and shadow_count(project) >= 1


def watching_now(proc: subprocess.Popen, request_id: int) -> bool:
    """True when ``serve``'s start-up is over, its watches set: its session summary no longer says the start-up
    scan runs. ``serve`` imports first and watches after (a save in between is recorded by the rescan of that gap,
    a stop in between scans), and its opening is answered at once (the shipped answer), so a test saving right
    after the import must wait for this."""
    send(proc, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"name": "get_session_summary", "arguments": {}}})
    assert proc.stdout is not None
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == request_id:
            return "start-up scan is still running" not in json.dumps(answer)


def stop(proc: subprocess.Popen, steps: list) -> float:
    """Stop ``proc`` with ``steps`` (signals, pauses in seconds, ``"eof"``); return the seconds until it exited."""
    started = time.monotonic()
    for step in steps:
        if step == "eof":
            assert proc.stdin is not None
            proc.stdin.close()
        elif isinstance(step, float):
            time.sleep(step)
        else:
            proc.send_signal(step)
    try:
        proc.wait(EXIT_BOUND)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {EXIT_BOUND} s after the stop")
    return time.monotonic() - started


def finish(proc: subprocess.Popen) -> None:
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def assert_stopped_cleanly(name: str, proc: subprocess.Popen, project: Path, elapsed: float, log: Path) -> None:
    errors = log.read_text(errors="replace")
    print(f"\n{name}: exited {elapsed:.3f} s after the stop")
    assert proc.returncode == 0, errors
    assert "Traceback" not in errors
    wait_for(lambda: not leftovers(proc.pid, project), timeout=EXIT_BOUND)


def assert_edit_recorded(project: Path) -> None:
    assert git(project, "--git-dir", str(project / ".trajectory"), "show", "refs/heads/shadow/main:src/app.py") == EDIT
    log = git(project, "--git-dir", str(project / ".trajectory"), "log", "--format=%s", "-1", "refs/heads/shadow/main")
    assert "M src/app.py" in log
    state = recorder_state(project)
    assert state.get("stopped_at", "") >= state["started_at"]


@pytest.mark.slow
@pytest.mark.parametrize("how", STOPS)
@pytest.mark.parametrize("command", ["serve", "watch"])
def test_a_stopped_recorder_snapshots_the_pending_edit(project: Path, tmp_path: Path, command: str, how: str) -> None:
    """``serve`` (stopped by its client) and ``watch`` record an edit still waiting for its debounce as they stop."""
    log = tmp_path / f"{command}.log"
    where = ["--project", str(project)] if command == "serve" else [str(project)]
    proc = start([command, *where, "--debounce", DEBOUNCE], log)
    try:
        if command == "serve":
            assert initialize(proc)["result"]["serverInfo"]["name"] == "code-trajectory"
        wait_for(lambda: recording(project, proc) and (command == "serve" or "watching" in log.read_text()),
                 timeout=60)
        write(project, "src/app.py", EDIT)
        time.sleep(0.3)
        elapsed = stop(proc, STOPS[how])
    finally:
        finish(proc)
    assert_stopped_cleanly(f"{command}/{how}", proc, project, elapsed, log)
    assert_edit_recorded(project)


@pytest.mark.parametrize("how", STOPS)
def test_ui_stops_at_once(project: Path, tmp_path: Path, how: str) -> None:
    """The page records nothing itself (no flush to do): it stops with status 0 and leaves no process."""
    assert subprocess.run([*server_command(), "checkpoint", "--project", str(project)], env=subprocess_env(),
                          capture_output=True, timeout=60).returncode == 0
    log = tmp_path / "ui.log"
    proc = start(["ui", "--project", str(project), "--no-browser"], log)
    try:
        assert proc.stdout is not None
        while not (line := proc.stdout.readline().decode()).startswith("open "):
            assert line, f"no URL printed: {log.read_text()}"
        elapsed = stop(proc, STOPS[how])
    finally:
        finish(proc)
    assert_stopped_cleanly(f"ui/{how}", proc, project, elapsed, log)


def big_project(root: Path, files: int) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        write(root, f"pkg{i // 500}/module_{i}.py", f"VALUE = {i}\n" * 20)
    return root


def children_of(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes, from each of its threads' ``children`` file (one read per
    thread: cheap enough to poll every millisecond, so that a git process of a few milliseconds is seen)."""
    found = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for thread in threads:
        try:
            pids = Path(f"/proc/{pid}/task/{thread}/children").read_text().split()
        except OSError:
            continue
        for each in pids:
            try:
                found.append(Path(f"/proc/{each}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return found


def importer_of(pid: int) -> int | None:
    return next((p for p, pp, cmd in processes() if pp == pid and "code_trajectory.recording.importer" in cmd),
                None)


@pytest.mark.slow
@pytest.mark.parametrize(("command", "how"), [("serve", "SIGTERM"), ("serve", "SIGKILL"), ("watch", "SIGTERM")])
def test_a_stop_during_the_import_of_20000_files_leaves_no_process(tmp_path: Path, command: str, how: str) -> None:
    """SIGTERM: the process stops its import child; SIGKILL (no clean-up at all): the kernel kills the child."""
    project = big_project(tmp_path / "big", 20_000)
    log = tmp_path / f"{command}.log"
    proc = start(["serve", "--project", str(project)] if command == "serve" else ["watch", str(project)], log)
    try:
        # serve starts the import before it loads the MCP SDK (code_trajectory.serving): look for it first
        child = wait_for(lambda: importer_of(proc.pid), timeout=60, step=0.02)
        # well into the import: the child runs git processes of its own (the import takes ~1.5 s here)
        grandchildren = wait_for(lambda: children_of(child) or not Path(f"/proc/{child}").exists(), timeout=60,
                                 step=0.001)
        if not isinstance(grandchildren, list):
            # its git processes are brief (the listings at its start, the commit at its end) and the import of these
            # files takes about a second: on a loaded machine all of them may fall between two looks, the stop then
            # lands after the import, as below when the import committed first; no process may be left either way
            grandchildren = []
        if command == "serve":
            initialize(proc)
        # on a loaded machine the import may commit before the stop lands: no process may be left either way
        when = "while the import child ran" if shadow_count(project) == 0 else "just after the import committed"
        print(f"\n{command} import/{how}: stopped {when}: {grandchildren}")
        elapsed = stop(proc, [getattr(signal, how)])
    finally:
        finish(proc)
    print(f"\n{command} import/{how}: exited {elapsed:.3f} s after the stop")
    errors = log.read_text(errors="replace")
    assert proc.returncode == (0 if how == "SIGTERM" else -signal.SIGKILL), errors
    started = time.monotonic()
    wait_for(lambda: not leftovers(proc.pid, project), timeout=10)
    print(f"{command} import/{how}: no process left {time.monotonic() - started:.3f} s after it exited")
    if how == "SIGTERM":
        assert "stopped_at" in recorder_state(project)
        assert "Traceback" not in errors and "ERROR" not in errors, errors


#: A child that calls die_with_parent and then sleeps silently (no output that a closed pipe could end).
CHILD = ("import sys, time\nfrom code_trajectory.core.shutdown import die_with_parent\n"
         "die_with_parent(int(sys.argv[1]), watch_stdin=sys.argv[2] == 'stdin')\ntime.sleep(120)\n")
#: A parent that starts CHILD with a pipe on its stdin, prints the child's pid, then closes the pipe on request.
PARENT = ("import os, subprocess, sys, time\n"
          "child = subprocess.Popen([sys.executable, '-c', sys.argv[1], str(os.getpid()), sys.argv[2]],"
          " stdin=subprocess.PIPE)\n"
          "print(child.pid, flush=True)\nsys.stdin.readline()\nchild.stdin.close()\ntime.sleep(120)\n")


def alive(pid: int) -> bool:
    return any(p == pid for p, _, _ in processes())


@contextlib.contextmanager
def parent_and_child(watch: str) -> Iterator[tuple[subprocess.Popen, int]]:
    """A running PARENT and the pid of its CHILD, checked alive (``watch``: ``"stdin"`` makes the child watch its
    stdin too, ``"no-stdin"`` not); the parent is stopped after the block."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, watch], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=subprocess_env())
    try:
        child = int(parent.stdout.readline())
        time.sleep(0.5)
        assert alive(child)
        yield parent, child
    finally:
        finish(parent)


def test_a_child_dies_when_its_parent_is_killed() -> None:
    """prctl(PR_SET_PDEATHSIG): the parent gets SIGKILL (no clean-up of its own), the silent child dies."""
    with parent_and_child("no-stdin") as (parent, child):
        parent.kill()
        parent.wait()
        wait_for(lambda: not alive(child), timeout=EXIT_BOUND, step=0.05)


def test_a_child_exits_when_its_parent_closes_its_stdin() -> None:
    """The platform-independent way: the pipe on the child's stdin reaches end of file."""
    with parent_and_child("stdin") as (parent, child):
        parent.stdin.write(b"close\n")
        parent.stdin.flush()
        wait_for(lambda: not alive(child), timeout=EXIT_BOUND, step=0.05)
        assert parent.poll() is None


def test_flush_pending_snapshots_at_once_without_the_debounce(project: Path) -> None:
    """``Watcher.flush_pending``: what was saved is recorded now (the debounce is 30 s), once, also when called
    from several threads at the same time as the snapshot loop."""
    import threading

    from support import watching

    with watching(project, debounce=30) as session:
        watcher = session.watcher
        count = shadow_count(project)
        write(project, "src/app.py", EDIT)
        snapshot = watcher.flush_pending()  # no wait: it hands over the events the OS delivered first
        assert snapshot is not None and [c.path for c in snapshot.changes] == ["src/app.py"]
        assert shadow_count(project) == count + 1 and not session.recorder.has_pending()
        assert watcher.flush_pending() is None
        write(project, "src/other.py", "X = 1\n")
        results: list = []
        threads = [threading.Thread(target=lambda: results.append(watcher.flush_pending())) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sum(r is not None for r in results) == 1 and shadow_count(project) == count + 2


def test_watch_keeps_running_on_a_pipe_that_was_closed_before_it_started(project: Path, tmp_path: Path) -> None:
    """A stdin inherited already at its end (a harness's used-up input) was never a lifeline: only its end while
    ``watch`` runs stops it."""
    read_end, write_end = os.pipe()
    os.close(write_end)
    log = tmp_path / "watch.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([*server_command(), "watch", str(project)], stdin=read_end,
                                stdout=subprocess.DEVNULL, stderr=err, env=subprocess_env())
    os.close(read_end)
    try:
        wait_for(lambda: recording(project, proc) and "watching" in log.read_text(), timeout=60)
        time.sleep(1.0)
        assert proc.poll() is None, log.read_text()
        stop(proc, [signal.SIGTERM])
    finally:
        finish(proc)
    assert proc.returncode == 0



def test_watch_without_a_path_records_the_project_of_the_current_directory(project: Path, tmp_path: Path) -> None:
    """`code-trajectory watch` typed in a directory of the project (as every other command finds its project) was
    an error asking for PATH; it records the project git finds from there, not the subdirectory."""
    log = tmp_path / "watch.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([*server_command(), "watch"], stdin=subprocess.DEVNULL, cwd=project / "src",
                                stdout=subprocess.DEVNULL, stderr=err, env=subprocess_env())
    try:
        wait_for(lambda: recording(project, proc), timeout=60)
        assert not (project / "src" / ".trajectory").exists()
        stop(proc, [signal.SIGTERM])
    finally:
        finish(proc)
    assert proc.returncode == 0 and shadow_count(project) >= 1, log.read_text()

def test_the_last_save_is_snapshotted_before_the_full_scan_an_ignore_file_asks_for(project: Path,
                                                                                  tmp_path: Path) -> None:
    """Claude Code 2.1.332 stops its server with SIGINT, SIGTERM 0.1 s later and SIGKILL 0.4 s after that. A stop
    whose snapshot was a full scan (here: an ignore file saved in the same debounce window) took longer than that
    at 20,000 files (0.27 s at 2,000, 0.51 s at 6,000): the server was killed and the agent's last edit was not
    recorded. The saves seen are now snapshotted on their own first (in milliseconds), then the scan runs."""
    log = tmp_path / "serve.log"
    proc = start(["serve", "--project", str(project), "--debounce", "30"], log)
    try:
        initialize(proc)
        wait_for(lambda: recording(project, proc), timeout=60)
        ids = iter(range(2, 1000))
        wait_for(lambda: watching_now(proc, next(ids)), timeout=60)
        count = shadow_count(project)
        write(project, ".gitignore", "build/\nnode_modules/\n*.log\n*.tmp\n")
        write(project, "src/app.py", EDIT)
        time.sleep(0.3)
        stop(proc, [signal.SIGINT, 0.1, signal.SIGTERM, 0.4, signal.SIGKILL])
    finally:
        finish(proc)
    shadow_git = ["--git-dir", str(project / ".trajectory")]
    assert shadow_count(project) > count, log.read_text()
    first = git(project, *shadow_git, "rev-list", "--reverse", "refs/heads/shadow/main").split()[count]
    assert git(project, *shadow_git, "show", f"{first}:src/app.py") == EDIT, log.read_text()
    kind = git(project, *shadow_git, "log", "-1", "--format=%(trailers:key=Trajectory-Kind,valueonly)", first)
    assert kind.strip() == "snapshot", "the save was recorded only by the stop's full scan"
    assert "*.tmp" in git(project, *shadow_git, "show", "refs/heads/shadow/main:.gitignore")  # then the scan's


@pytest.mark.parametrize("command", ["serve", "watch"])
def test_a_save_in_a_polled_directory_just_before_the_stop_is_recorded(project: Path, tmp_path: Path,
                                                                       command: str) -> None:
    """A directory holding a name that is not UTF-8 is polled by the snapshot loop, not watched (see
    ``recording/listingpoll.py``): an edit there 0.3 s before SIGTERM was not pending yet, the stop recorded
    nothing and said it stopped cleanly; the edit waited for the next start ("changed while not recording")."""
    odd = os.path.join(os.fsencode(project), b"vendor", b"caf\xe9")
    os.makedirs(odd)
    Path(os.fsdecode(os.path.join(odd, b"f.py"))).write_text("F = 0\n")
    write(project, "vendor/a.py", "A = 0\n")
    log = tmp_path / f"{command}.log"
    proc = start([command, *(["--project", str(project)] if command == "serve" else [str(project)]), "--debounce",
                  "30"], log)
    try:
        if command == "serve":
            initialize(proc)
        wait_for(lambda: recording(project, proc) and "not watched natively" in log.read_text(), timeout=60)
        time.sleep(2.5)  # past the snapshot loop's first pass over the polled directory
        write(project, "vendor/a.py", EDIT)
        time.sleep(0.05)
        elapsed = stop(proc, [signal.SIGTERM])
    finally:
        finish(proc)
    assert_stopped_cleanly(f"{command}/polled", proc, project, elapsed, log)
    assert git(project, "--git-dir", str(project / ".trajectory"), "show",
               "refs/heads/shadow/main:vendor/a.py") == EDIT, log.read_text()


def test_watch_poll_records_a_save_made_just_before_the_stop(project: Path, tmp_path: Path) -> None:
    """``watch --poll`` (and the directories past the inotify limit) are looked at by a polling watch group every
    2 s: an edit 0.3 s before SIGTERM was not pending yet, ``watch`` exited 0 and the edit was not recorded. A stop
    with a polling group now scans."""
    log = tmp_path / "watch.log"
    proc = start(["watch", str(project), "--poll", "--debounce", "30"], log)
    try:
        wait_for(lambda: recording(project, proc) and "watching" in log.read_text(), timeout=60)
        time.sleep(2.5)  # past the polling group's first look
        write(project, "src/app.py", EDIT)
        time.sleep(0.3)
        elapsed = stop(proc, [signal.SIGTERM])
    finally:
        finish(proc)
    assert_stopped_cleanly("watch --poll/SIGTERM", proc, project, elapsed, log)
    assert_edit_recorded(project)
