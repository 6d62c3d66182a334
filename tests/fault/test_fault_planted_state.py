"""A ``.trajectory/`` whose state files were planted (a copied or unpacked history is the user's own, so it passes
the opening's ownership check): every state file a symlink to ``/dev/zero`` or a FIFO with no writer, the stat
cache a FIFO, the project's ``.gitignore`` a symlink to ``/dev/zero``. Every command still answers, within a memory
bound and without waiting, records what it must, and the state files it rewrites are regular files again with
ordinary permissions (no mode lent by a link's target)."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from support import record_now, shadow_count, subprocess_env, write

#: Every state file the recording and answering paths read from ``.trajectory/state``: the JSON ones and the project
#: the history serves (``project``, :mod:`code_trajectory.git.owner`).
STATE_FILES = ("recorder.json", "history-restarts.json", "reflog-mark.json", "secret-files.json", "watch-limit.json",
               "share.json", "intent.json", "maintenance.json", "project")
#: Address space allowed to each command, bytes: far above what one needs, far below reading /dev/zero.
MEMORY_LIMIT = 2 * 1024 ** 3


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args, "--project", str(root)], cwd=root,
                          env=subprocess_env(), capture_output=True, text=True, timeout=120, preexec_fn=_limited)


def plant(path: Path, how: str) -> None:
    if os.path.lexists(path):
        path.unlink()
    if how == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)


@pytest.mark.parametrize("how", ["dev-zero", "fifo"])
def test_planted_state_files_are_ignored_and_every_command_answers(project: Path, how: str) -> None:
    record_now(project)
    state = project / ".trajectory" / "state"
    for name in STATE_FILES:
        plant(state / name, how)
    plant(state / "statcache.sqlite", "fifo")
    (project / ".gitignore").unlink()
    (project / ".gitignore").symlink_to("/dev/zero")
    write(project, "src/app.py", "def main():\n    return 2\n")
    before = shadow_count(project)

    for args in (["status"], ["intent", "fix the answer"], ["checkpoint", "-m", "after planting"], ["log"],
                 ["session"], ["file", "src/app.py"]):
        done = run(project, *args)
        assert done.returncode == 0, (args, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (args, done.stderr[-2000:])

    assert shadow_count(project) > before
    log = run(project, "log").stdout
    assert "after planting" in log and "src/app.py" in log
    for name in ("intent.json", "statcache.sqlite", "project"):
        st = (state / name).lstat()
        assert stat.S_ISREG(st.st_mode), name  # rewritten as a regular file, never written through the link
        assert not st.st_mode & stat.S_IWOTH, name  # no 0o666 taken from /dev/zero


def test_a_fifo_for_a_config_file_or_a_cache_tag_does_not_hang(project: Path) -> None:
    record_now(project)
    os.mkfifo(project / ".trajectory" / "config.toml")
    done = run(project, "status")
    assert done.returncode != 0 and "config.toml" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    (project / ".trajectory" / "config.toml").unlink()

    (project / "cache").mkdir()
    os.mkfifo(project / "cache" / "CACHEDIR.TAG")  # the walk asks every directory for one
    write(project, "src/new.py", "x = 1\n")
    done = run(project, "checkpoint", "-m", "with a fifo tag")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "src/new.py" in run(project, "log").stdout


@pytest.mark.parametrize("name", ["shallow", "packed-refs", "HEAD", "objects/info/alternates"])
def test_a_git_file_that_is_a_fifo_or_a_link_refuses_the_history_in_one_line(project: Path, name: str) -> None:
    record_now(project)
    path = project / ".trajectory" / name
    if name == "HEAD":
        path.unlink()
        path.symlink_to("/dev/zero")
    else:
        if os.path.lexists(path):
            path.unlink()
        os.mkfifo(path)  # git would wait on it forever
    done = run(project, "status")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and name in done.stderr, done.stderr
    assert "move it aside" in done.stderr or "aside" in done.stderr, done.stderr


@pytest.mark.parametrize("how", ["dev-zero", "fifo"])
def test_planted_project_reflogs_are_skipped_and_every_command_answers(project: Path, how: str) -> None:
    """The project's ``.git`` of a tarball: its HEAD and stash reflogs a FIFO or a link to ``/dev/zero``. git itself
    never reads them for a status or a commit; the recorder's reflog reading waited forever (or filled memory)."""
    logs = project / ".git" / "logs"
    plant(logs / "HEAD", how)
    (logs / "refs").mkdir(exist_ok=True)
    plant(logs / "refs" / "stash", how)
    write(project, "src/app.py", "def main():\n    return 2\n")
    for args in (["checkpoint", "-m", "with planted reflogs"], ["log"], ["session"]):
        done = run(project, *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr[-2000:])
    assert "with planted reflogs" in run(project, "log").stdout
