"""Issue 21 (parts 2, 3, 6): restore never writes what it must not, and is all or nothing. Through the CLI (a real
subprocess) and the MCP SDK client, with real git: a hand-built and a pulled hostile snapshot, a 6 MB file over the
size cap, a 240-byte name, a directory in the way."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.git.pathcheck import unsafe_reason
from code_trajectory.restore.service import restore
from support import git, hand_built_commit, mcp_client, record_now, server_command, subprocess_env, write

HOOK = b"#!/bin/sh\ntouch /tmp/pwned-by-a-snapshot\n"
#: Paths of a hostile snapshot: .git and .trajectory as some file system (or git itself) would read them.
HOSTILE = {
    ".git/hooks/pre-commit": ("100755", HOOK),
    ".trajectory/config": b"[core]\n\tfsmonitor = touch /tmp/pwned\n",
    ".GIT./x": b"x", "git~1/x": b"x", ".Trajectory/x": b"x", "TRAJEC~1/x": b"x", "sub/.git /config": b"x",
    ".g\u200cit/config": b"x", ".git::$INDEX_ALLOCATION/x": b"x", "a\\b": b"x",
}


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*server_command(), *args], cwd=root, env=subprocess_env(), capture_output=True,
                          text=True, timeout=120)


def digest(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file, link and directory under ``root`` (``.git`` and ``.trajectory`` included unless skipped): kind,
    mode and a hash of the content."""
    found = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in dirs + files:
            path = Path(dirpath, name)
            st = os.lstat(path)
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                found[rel] = "link " + os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = "dir"
            else:
                found[rel] = f"{st.st_mode & 0o777:o} {hashlib.sha1(path.read_bytes()).hexdigest()}"
    return found


def shadow_tip(root: Path) -> str:
    return git(root, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main").strip()


def no_temp_files(root: Path) -> bool:
    return not [p for p in root.rglob(".ct-*") if ".trajectory" not in p.parts]


@pytest.mark.parametrize("path", sorted(HOSTILE))
def test_every_spelling_of_git_and_trajectory_is_refused(project: Path, path: str) -> None:
    tip = record_now(project)
    evil = hand_built_commit(project / ".trajectory", {"src/app.py": b"X = 'evil'\n", path: HOSTILE[path]},
                             parent=tip, ref="refs/heads/shadow/evil")
    before = digest(project)
    with pytest.raises(InvalidArgumentError) as err:
        restore(project, evil)
    assert "must never write" in str(err.value) and "Nothing was written" in str(err.value)
    assert digest(project) == before


def test_path_rules_follow_git() -> None:
    for bad in (".git", ".GIT", ".git.", ".git . ", "GIT~1", "Git~1", "x/.git/y", ".trajectory", ".TRAJECTORY..",
                "trajec~1", "TR1A2B~1", ".git:stream", "\u200c.git", ".gi\ufefft", "..", "a//b", "a/./b", "a\\b"):
        assert unsafe_reason(bad, "100644") is not None, bad
    for good in ("src/app.py", ".gitignore", ".github/workflows/ci.yml", ".gitkeep", "git", "trajectory.md",
                 ".trajectoryrc", "git~1x", ".git-blame-ignore-revs", "x/.gitattributes"):
        assert unsafe_reason(good, "100644") is None, good
    assert unsafe_reason("vendor/lib", "160000") is not None  # a gitlink
    assert unsafe_reason(".gitmodules", "120000") is not None and unsafe_reason(".gitmodules", "100644") is None


def test_hand_built_hostile_snapshot_is_refused_by_the_cli_and_other_files_restore(project: Path) -> None:
    tip = record_now(project)
    evil = hand_built_commit(project / ".trajectory", {"src/app.py": b"X = 'from the snapshot'\n", **HOSTILE,
                                                       "vendor/lib": ("160000", b"1" * 40)},
                             parent=tip, ref="refs/heads/shadow/evil")
    before = digest(project)
    done = cli(project, "restore", evil)
    assert done.returncode != 0 and "must never write" in done.stderr and "Traceback" not in done.stderr
    assert "Nothing was written" in done.stderr and ".git" in done.stderr
    assert digest(project) == before  # .git/hooks and .trajectory byte for byte, no new file anywhere
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    # the safe file of that snapshot can still be restored by name
    named = cli(project, "restore", evil, "src/app.py")
    assert named.returncode == 0, named.stderr
    assert (project / "src" / "app.py").read_bytes() == b"X = 'from the snapshot'\n"
    assert not (project / ".git" / "hooks" / "pre-commit").exists() and no_temp_files(project)


@pytest.mark.slow
def test_a_file_over_the_size_cap_is_never_replaced_by_its_note(project: Path) -> None:
    big = os.urandom(6 * 1024 * 1024)
    write(project, "data/big.bin", big)
    snapshot = record_now(project, "with the big file")
    write(project, "src/app.py", "def main():\n    return 2\n")
    os.utime(project / "data" / "big.bin")  # touched: its size note changes, its content does not
    done = cli(project, "restore", snapshot)
    assert done.returncode == 0, done.stderr
    assert (project / "data" / "big.bin").read_bytes() == big
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert "Left as they are (1): `data/big.bin`" in done.stdout and "over the size cap" in done.stdout
    safety = next(line for line in done.stdout.splitlines() if line.startswith("**Safety snapshot:**")).split("`")[1]
    undo = cli(project, "restore", safety)
    assert undo.returncode == 0, undo.stderr
    assert (project / "data" / "big.bin").read_bytes() == big
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    # a big file created after the snapshot is not removed: it could not be brought back
    write(project, "data/later.bin", os.urandom(6 * 1024 * 1024))
    record_now(project)
    again = cli(project, "restore", snapshot)
    assert again.returncode == 0 and (project / "data" / "later.bin").stat().st_size == 6 * 1024 * 1024
    assert "`data/later.bin`" in again.stdout and no_temp_files(project)
    # the file is small now (recorded with its content): the snapshot's note is still never written over it
    write(project, "data/big.bin", "small now\n")
    record_now(project)
    for args in (["restore", "--dry-run", snapshot], ["restore", snapshot], ["restore", snapshot, "data/big.bin"]):
        done = cli(project, *args)
        assert done.returncode == 0, done.stderr
        assert (project / "data" / "big.bin").read_text() == "small now\n"
        assert "`data/big.bin`" in done.stdout.split("Left as they are", 1)[1], done.stdout


@pytest.mark.anyio
async def test_size_cap_and_long_names_through_the_sdk_client(project: Path) -> None:
    big = os.urandom(6 * 1024 * 1024)
    long_name = "d/" + "n" * 236 + ".txt"  # a 240-byte name: the old temporary name went past 255 bytes
    write(project, "data/big.bin", big)
    write(project, long_name, "first\n")
    async with mcp_client(project) as client:
        await client.call_tool("checkpoint", {"message": "good"})
        write(project, long_name, "second\n")
        os.utime(project / "data" / "big.bin")
        done = await client.call_tool("restore", {"snapshot": "good"})
        assert not done.is_error, done.content[0].text
        assert done.structured_content["written"] == [long_name]
        assert done.structured_content["not_recorded"] == ["data/big.bin"]
        assert (project / long_name).read_text() == "first\n" and (project / "data" / "big.bin").read_bytes() == big
        undo = await client.call_tool("restore", {"snapshot": done.structured_content["safety_snapshot"]})
        assert not undo.is_error and (project / long_name).read_text() == "second\n"
        assert (project / "data" / "big.bin").read_bytes() == big and no_temp_files(project)


def test_a_240_byte_name_restores_and_a_name_too_long_stops_before_any_write(project: Path) -> None:
    name = "n" * 240
    write(project, f"src/{name}", "first\n")
    write(project, "src/other.py", "A = 1\n")
    good = record_now(project, "good")
    write(project, f"src/{name}", "second\n")
    write(project, "src/other.py", "A = 2\n")
    done = cli(project, "restore", good)
    assert done.returncode == 0, done.stderr
    assert (project / "src" / name).read_text() == "first\n" and (project / "src" / "other.py").read_text() == "A = 1\n"
    assert no_temp_files(project)
    # a snapshot (hand-built) holding a 300-byte name: refused before anything is written
    write(project, "src/other.py", "A = 3\n")
    tip = record_now(project)
    evil = hand_built_commit(project / ".trajectory", {"src/other.py": b"A = 9\n", "src/" + "x" * 300: b"y"},
                             parent=tip)
    before = digest(project, skip=(".trajectory",))
    refused = cli(project, "restore", evil)
    assert refused.returncode != 0 and "300 bytes" in refused.stderr and "Nothing was written" in refused.stderr
    assert digest(project, skip=(".trajectory",)) == before


@pytest.mark.anyio
async def test_a_directory_in_the_way_stops_the_restore_before_any_write(project: Path) -> None:
    write(project, "docs/guide", "a file\n")
    write(project, "src/app.py", "def main():\n    return 'snap'\n")
    snap = record_now(project, "snap")
    (project / "docs" / "guide").unlink()
    write(project, "docs/guide/notes.md", "recorded\n")  # a directory now stands where the snapshot has a file,
    write(project, "docs/guide/debug.log", "not recorded\n")  # holding a file the restore must not remove (ignored)
    write(project, "src/app.py", "def main():\n    return 'now'\n")
    record_now(project)
    before = digest(project, skip=(".trajectory",))
    done = cli(project, "restore", snap)
    assert done.returncode != 0 and "a directory stands there" in done.stderr
    assert "docs/guide/debug.log" in done.stderr and "Nothing was written" in done.stderr
    assert digest(project, skip=(".trajectory",)) == before  # neither src/app.py nor notes.md changed first
    async with mcp_client(project) as client:
        answer = await client.call_tool("restore", {"snapshot": snap})
        assert answer.is_error and "a directory stands there" in answer.content[0].text
    assert digest(project, skip=(".trajectory",)) == before
    # once only recorded files are there, the restore removes them and puts the file in the directory's place
    (project / "docs" / "guide" / "debug.log").unlink()
    write(project, "docs/guide/sub/deeper.md", "recorded\n")
    record_now(project)
    fine = cli(project, "restore", snap)
    assert fine.returncode == 0, fine.stderr
    assert (project / "docs" / "guide").read_text() == "a file\n"
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 'snap'\n"


def test_a_hostile_tip_of_our_own_branch_never_makes_restore_remove_git_files(project: Path) -> None:
    good = record_now(project, "good")
    config = (project / ".git" / "config").read_bytes()
    # our own shadow branch's tip replaced by a hand-built snapshot listing the project's .git/config
    hand_built_commit(project / ".trajectory", {"src/app.py": b"X = 1\n", ".git/config": config,
                                                ".gitignore": (project / ".gitignore").read_bytes()},
                      parent=good, ref="refs/heads/shadow/main")
    for args in (["restore", good], ["restore", good, ".git/config"]):
        done = cli(project, *args)
        assert (project / ".git" / "config").read_bytes() == config, done.stdout + done.stderr
    assert git(project, "status", "--porcelain") is not None  # the project's repository still works


def test_temporary_names_are_never_recorded(project: Path) -> None:
    write(project, "src/.ct-0a1b2c3d4", "a killed restore's temporary file\n")  # the form restore writes
    write(project, ".claude/.ct-0123456789ab.tmp", "{}\n")  # the form core.atomic writes (install, killed)
    write(project, "src/.ct-notes.md", "an ordinary file\n")
    record_now(project)
    names = git(project, "--git-dir=.trajectory", "ls-tree", "-r", "--name-only", "refs/heads/shadow/main").split()
    assert "src/.ct-notes.md" in names and "src/.ct-0a1b2c3d4" not in names
    assert ".claude/.ct-0123456789ab.tmp" not in names


def test_a_name_git_checks_out_here_that_the_restore_leaves_alone_does_not_refuse_it(project: Path) -> None:
    # git on Linux checks out `back\slash`; it is the project's own file, recorded by us: every whole-project
    # restore was refused ("built by hand or pulled from someone else"), also when that file had not changed
    write(project, "back\\slash", "kept\n")
    first = record_now(project, checkpoint="first")
    write(project, "src/app.py", "def main():\n    return 2\n")
    record_now(project)
    done = restore(project, first)
    assert done.written == ["src/app.py"] and (project / "back\\slash").read_text() == "kept\n"
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    write(project, "back\\slash", "changed\n")  # now the restore would have to write it: refused, nothing written
    before = digest(project, skip=(".trajectory",))
    with pytest.raises(InvalidArgumentError) as err:
        restore(project, first)
    assert "must never write" in str(err.value) and digest(project, skip=(".trajectory",)) == before


def test_a_directory_replaced_by_a_link_outside_is_restored_whole_and_nothing_outside_is_touched(
        project: Path, tmp_path: Path) -> None:
    """``lib/`` held a file when recorded; now ``lib`` is a symlink to a directory outside holding a file of that
    name. The file outside was taken for what is at ``lib/conf.txt`` now: "in no snapshot", so it was kept, while
    the link was removed: the restore said it was done and left neither the link nor ``lib/conf.txt``."""
    write(project, "lib/conf.txt", "recorded\n")
    first = record_now(project, "with lib")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "conf.txt").write_text("the user's file outside\n")
    for sub in sorted((project / "lib").iterdir()):
        sub.unlink()
    (project / "lib").rmdir()
    (project / "lib").symlink_to(outside, target_is_directory=True)
    record_now(project, "lib is a link")
    result = restore(project, first)
    assert result.kept_unrecorded == [] and "lib/conf.txt" in result.written, result.text
    assert not (project / "lib").is_symlink() and (project / "lib" / "conf.txt").read_text() == "recorded\n"
    assert (outside / "conf.txt").read_text() == "the user's file outside\n"
    assert sorted(p.name for p in outside.iterdir()) == ["conf.txt"]
    undo = restore(project, result.safety_snapshot, ["lib/conf.txt", "lib"])
    assert (project / "lib").is_symlink() and not undo.kept_unrecorded, undo.text
    assert (outside / "conf.txt").read_text() == "the user's file outside\n"
