"""A restore never replaces what no snapshot holds: a file ignored or a secret now, one that cannot be read, one
saved again and again while the restore runs. Each is left as it is and named (``kept_unrecorded``), so the undo
the answer offers really undoes the restore. Real git in temp dirs; the unreadable file through the CLI with the
capabilities that let root read anything dropped (``setpriv``), since the suite may run as root."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from code_trajectory.recording.session import ProjectSession
from code_trajectory.restore.apply import UNREADABLE, current_oid
from code_trajectory.restore.service import LATE_ROUNDS, restore
from support import server_command, subprocess_env, write

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"


def test_a_file_ignored_now_is_left_as_it_is(session: ProjectSession) -> None:
    root = session.root
    write(root, "build.out", "old\n")
    session.checkpoint("one")
    write(root, ".gitignore", (root / ".gitignore").read_text() + "*.out\n")
    write(root, "build.out", "precious new work\n")  # no snapshot can hold it any more
    dry = restore(session, "one", ["build.out"], dry_run=True)
    assert dry.kept_unrecorded == ["build.out"] and "build.out" not in dry.written, dry.text
    for paths in (["build.out"], ["*.out"], None):
        done = restore(session, "one", paths)
        assert (root / "build.out").read_text() == "precious new work\n", (paths, done.text)
        assert done.kept_unrecorded == ["build.out"] and "build.out" not in done.written, (paths, done.text)
        assert "in no snapshot" in done.text and done.answer().data["kept_unrecorded"] == ["build.out"]


def test_a_file_with_a_secret_now_is_left_as_it_is(session: ProjectSession) -> None:
    root = session.root
    write(root, "notes.txt", "plain notes\n")
    session.checkpoint("one")
    write(root, "notes.txt", "plain notes\n" + PRIVATE_KEY)  # its content keeps it out of every snapshot now
    done = restore(session, "one")
    assert (root / "notes.txt").read_text().endswith(PRIVATE_KEY)
    assert "notes.txt" in done.kept_unrecorded and "notes.txt" not in done.written


def test_a_file_saved_over_and_over_during_the_restore_is_left_to_its_writer(session: ProjectSession) -> None:
    root = session.root
    write(root, "src/app.py", "v = 1\n")
    session.checkpoint("one")
    write(root, "src/app.py", "v = 2\n")
    session.checkpoint("two")
    original = session.recorder.record_paths
    saves = []

    def keeps_saving(*args, **kwargs):  # the user saves after the safety snapshot and after every recording
        result = original(*args, **kwargs)
        saves.append(len(saves))
        write(root, "src/app.py", f"v = 'save {len(saves)}'\n")
        return result

    session.recorder.record_paths = keeps_saving  # type: ignore[method-assign]
    done = restore(session, "one", ["src/app.py"])
    assert len(saves) == 1 + LATE_ROUNDS  # the safety snapshot, then each round's recording
    assert (root / "src/app.py").read_text() == f"v = 'save {len(saves)}'\n"  # the last save is the file's
    assert done.kept_unrecorded == ["src/app.py"] and not done.written
    history = session.recorder.repo.git.text(["log", "-p", "refs/heads/shadow/main"])
    assert all(f"v = 'save {i}'" in history for i in range(1, len(saves)))  # each earlier save was recorded


def test_something_that_cannot_be_read_is_unreadable_not_absent(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        assert current_oid(tmp_path, "sock") == UNREADABLE
    assert current_oid(tmp_path, "missing") is None
    (tmp_path / "dir").mkdir()
    assert current_oid(tmp_path, "dir") is None
    (tmp_path / "link").symlink_to("/etc/passwd")  # read as a link, never followed
    assert current_oid(tmp_path, "link") == subprocess.run(
        ["git", "hash-object", "--stdin"], input=b"/etc/passwd", capture_output=True, check=True).stdout.decode().strip()


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is needed to drop root's reading")
def test_a_file_that_cannot_be_read_is_neither_overwritten_nor_removed(project: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        drop = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] if os.geteuid() == 0 else []
        return subprocess.run([*drop, *server_command(), *args], cwd=project, env=subprocess_env(),
                              capture_output=True, text=True, timeout=120)

    write(project, "a.txt", "A\n")
    write(project, "b.txt", "x\n")
    assert cli("checkpoint", "-m", "one").returncode == 0
    write(project, "a.txt", "B\n")
    write(project, "c.txt", "only in two\n")
    assert cli("checkpoint", "-m", "two").returncode == 0
    write(project, "a.txt", "C, the only copy\n")
    write(project, "c.txt", "C too\n")
    os.chmod(project / "a.txt", 0)
    os.chmod(project / "c.txt", 0)
    try:
        done = cli("restore", "one")
        assert done.returncode == 0, done.stderr
        assert "Left as they are (2)" in done.stdout and "`a.txt`" in done.stdout and "`c.txt`" in done.stdout
    finally:
        os.chmod(project / "a.txt", 0o644)
        os.chmod(project / "c.txt", 0o644)
    assert (project / "a.txt").read_text() == "C, the only copy\n"  # not written over
    assert (project / "c.txt").read_text() == "C too\n"  # not removed


def test_a_fifo_in_the_way_is_left_alone_without_blocking_the_restore(session: ProjectSession) -> None:
    root = session.root
    write(root, "a.txt", "recorded\n")
    session.checkpoint("one")
    (root / "a.txt").unlink()
    os.mkfifo(root / "a.txt")  # opening it to hash it would block for ever
    for dry_run in (True, False):
        done = restore(session, "one", ["a.txt"], dry_run=dry_run)
        assert done.kept_unrecorded == ["a.txt"] and not done.written, done.text
    assert stat.S_ISFIFO(os.lstat(root / "a.txt").st_mode)


def test_a_failed_restore_puts_back_no_file_it_did_not_write(session: ProjectSession, monkeypatch) -> None:
    from code_trajectory.core.errors import StorageError
    from code_trajectory.restore import apply

    root = session.root
    write(root, "x.out", "same bytes\n")
    write(root, "z.txt", "z one\n")
    session.checkpoint("one")
    (root / "x.out").unlink()
    write(root, "z.txt", "z two\n")
    session.checkpoint("two")
    write(root, ".gitignore", (root / ".gitignore").read_text() + "*.out\n")
    write(root, "x.out", "same bytes\n")  # in no snapshot now, and already what "one" holds
    real = apply.write_entry

    def failing(repo, root_, rel, *args, **kwargs):
        if rel == "z.txt":
            raise OSError(28, "No space left on device")
        return real(repo, root_, rel, *args, **kwargs)

    monkeypatch.setattr(apply, "write_entry", failing)
    with pytest.raises(StorageError):
        restore(session, "one", ["x.out", "z.txt"])
    assert (root / "x.out").read_text() == "same bytes\n" and (root / "z.txt").read_text() == "z two\n"
