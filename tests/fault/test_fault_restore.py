"""Issue 21 (part 6): a restore is all or nothing. A write that fails part-way (a real EFBIG: the CLI runs under a
file-size limit) puts back what was written and names it and the safety snapshot; a restore killed with SIGKILL
leaves temporary files that the next open removes, never records, and says how to undo. Real git, the real CLI in
a subprocess."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from code_trajectory.core.errors import StorageError
from code_trajectory.restore import plan
from code_trajectory.restore.service import restore
from support import (
    file_size_limit,
    git,
    git_repo,
    half_restorable,
    mcp_client,
    record_now,
    server_command,
    subprocess_env,
    write,
)


def work_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {".git", ".trajectory"} & set(p.relative_to(root).parts)}


def temp_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob(".ct-*") if ".trajectory" not in p.relative_to(root).parts]


def cli(root: Path, *args: str, file_size_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # in the child only: writing past it fails with EFBIG (Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return subprocess.run([*server_command(), *args], cwd=root, env=subprocess_env(), capture_output=True, text=True,
                          timeout=300, preexec_fn=limit if file_size_limit else None)


def test_a_write_failing_part_way_puts_back_what_was_written(project: Path) -> None:
    for i in range(12):
        write(project, f"src/a{i:02}.py", f"A{i} = 'snapshot'\n")
        write(project, f"src/c{i:02}.py", f"C{i} = 'snapshot'\n")
    write(project, "src/big.bin", os.urandom(2 * 1024 * 1024))  # under the 5 MiB cap: recorded
    write(project, "docs/guide", "a file in the snapshot\n")
    snapshot = record_now(project, "good")
    (project / "docs" / "guide").unlink()
    write(project, "docs/guide/notes.md", "a directory now: removed, then put back\n")
    for i in range(12):
        write(project, f"src/a{i:02}.py", f"A{i} = 'now'\n")
        write(project, f"src/c{i:02}.py", f"C{i} = 'now'\n")
    write(project, "src/big.bin", b"small now\n")
    write(project, "src/new.py", "created after the snapshot\n")
    record_now(project)
    before = work_tree(project)

    done = cli(project, "restore", snapshot, file_size_limit=1024 * 1024)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    error = done.stderr
    assert "failed writing `src/big.bin`" in error and "File too large" in error
    assert "Put back as they were before the restore" in error and "`src/new.py`" in error  # removed, then put back
    safety = re.search(r"safety snapshot `([0-9a-f]{12})`", error).group(1)
    assert git(project, "--git-dir=.trajectory", "cat-file", "-t", safety).strip() == "commit"
    assert work_tree(project) == before  # all or nothing: the files written first were put back
    assert not temp_files(project) and not os.listdir(project / ".trajectory" / "restore-journal")
    # without the limit the same restore goes through
    again = cli(project, "restore", snapshot)
    assert again.returncode == 0, again.stderr
    assert (project / "src" / "a00.py").read_text() == "A0 = 'snapshot'\n" and not (project / "src" / "new.py").exists()


@pytest.mark.anyio
async def test_a_failed_write_is_put_back_and_named_through_the_sdk_client(project: Path) -> None:
    snapshot = half_restorable(project)
    before = work_tree(project)
    async with mcp_client(project) as client:
        with file_size_limit(1024 * 1024):
            answer = await client.call_tool("restore", {"snapshot": snapshot})
        assert answer.is_error
        text = answer.content[0].text
        assert "failed writing `src/big.bin`" in text and "Put back as they were before the restore" in text
        safety = re.search(r'restore\(snapshot="([0-9a-f]{12})"\)', text).group(1)
        assert work_tree(project) == before and not temp_files(project)
        undo = await client.call_tool("restore", {"snapshot": safety})  # what the error says to do: nothing to change
        assert not undo.is_error and "Nothing to change" in undo.content[0].text
    assert work_tree(project) == before


@pytest.mark.slow
def test_a_killed_restore_leaves_nothing_recorded_and_says_how_to_undo(project: Path) -> None:
    count = 3000
    for i in range(count):
        write(project, f"w/d{i % 30:02}/f{i:04}.txt", f"snapshot {i}\n" * 400)
    snapshot = record_now(project, "good")
    for i in range(count):
        write(project, f"w/d{i % 30:02}/f{i:04}.txt", f"now {i}\n" * 400)
    record_now(project)
    before = work_tree(project)
    first = project / "w" / "d00" / "f0000.txt"

    proc = subprocess.Popen([*server_command(), "restore", snapshot], cwd=project, env=subprocess_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not first.read_bytes().startswith(b"snapshot") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its git processes
    proc.wait()
    after_kill = work_tree(project)
    restored = sum(1 for rel, data in after_kill.items() if data.startswith(b"snapshot"))
    assert 0 < restored < count, f"the kill landed after {restored} of {count} files: not mid-way"
    assert os.listdir(project / ".trajectory" / "restore-journal")  # the journal of the killed restore

    # the next command that opens the project clears the leftovers, records none of them and says how to undo
    nxt = cli(project, "checkpoint", "-m", "after the kill")
    assert nxt.returncode == 0, nxt.stderr
    assert "was interrupted" in nxt.stderr
    safety = re.search(r"restore snapshot ([0-9a-f]{12})", nxt.stderr).group(1)
    assert not temp_files(project) and not os.listdir(project / ".trajectory" / "restore-journal")
    names = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main")
    assert ".ct-" not in names
    undo = cli(project, "restore", safety)
    assert undo.returncode == 0, undo.stderr
    assert work_tree(project) == before


#: A restore run by the CLI that kills itself with SIGKILL as it starts its third file write (a kill at a known
#: point, without timing).
_KILLED_AT_THIRD_WRITE = """
import os, signal, sys
from code_trajectory.restore import apply
from code_trajectory.cli import main
writes = []
real = apply.write_entry
def write_entry(*args, **kwargs):
    writes.append(1)
    if len(writes) == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
apply.write_entry = write_entry
sys.exit(main(sys.argv[1:]))
"""


def test_a_read_only_command_after_a_killed_restore_says_how_to_undo_it(project: Path) -> None:
    snapshot = half_restorable(project)
    killed = subprocess.run([sys.executable, "-c", _KILLED_AT_THIRD_WRITE, "restore", snapshot], cwd=project,
                            env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    journals = os.listdir(project / ".trajectory" / "restore-journal")
    assert journals  # the killed restore's

    summary = cli(project, "session")  # read-only: it changes nothing, and it says what happened
    assert summary.returncode == 0, summary.stderr
    assert "was interrupted" in summary.stdout
    safety = re.search(r"restore snapshot ([0-9a-f]{12}) \(the safety snapshot", summary.stdout).group(1)
    assert os.listdir(project / ".trajectory" / "restore-journal") == journals
    assert git(project, "--git-dir=.trajectory", "cat-file", "-t", safety).strip() == "commit"


def _restorable_new_files(root: Path, count: int) -> str:
    """A git project at ``root`` whose snapshot "many" holds ``count`` small files under ``d/`` that the work tree
    no longer has (recorded after their removal); returns that snapshot."""
    git_repo(root, {"keep.py": "kept\n"})
    for i in range(count):
        write(root, f"d/f{i}.txt", f"file {i}\n")
    snapshot = record_now(root, "many")
    shutil.rmtree(root / "d")
    record_now(root)
    return snapshot


def test_new_files_whole_blocks_are_checked_before_the_first_write(tmpfs) -> None:
    disk = tmpfs("size=16m")
    root = disk / "project"
    snapshot = _restorable_new_files(root, 1500)  # 1,500 files of ~10 bytes: 6 MB of 4 KiB blocks, 15 KB of bytes
    spare = 2 * 1024 * 1024  # room for the bytes and the check's margin, not for the blocks
    write(disk, "filler", b"\0" * (shutil.disk_usage(disk).free - plan.SPARE_BYTES - spare))
    with pytest.raises(StorageError, match=r"free on the disk.*Nothing was written"):
        restore(root, snapshot)
    assert not (root / "d").exists() and not temp_files(root)


def test_new_files_inodes_are_checked_before_the_first_write(tmpfs) -> None:
    disk = tmpfs("size=64m,nr_inodes=3000")
    root = disk / "project"
    snapshot = _restorable_new_files(root, 600)
    (disk / "fill").mkdir()
    i = 0
    while os.statvfs(disk).f_favail > 100:  # 100 inodes left: a sixth of the files the restore creates
        (disk / "fill" / str(i)).touch()
        i += 1
    with pytest.raises(StorageError, match=r"600 files are created.*no free inodes.*Nothing was written"):
        restore(root, snapshot)
    assert not (root / "d").exists() and not temp_files(root)
