"""A ``.trajectory`` symlink to another project's history is refused (``git/owner.py``): recording wrote this
project's snapshots into the other's history and answers mixed the two. A moved project, a copied one and a history
kept on another disk keep working. Real git, the CLI as a user runs it, in temp dirs."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.git.owner import OWNER_FILE, other_owner
from support import file_bytes, git, git_repo, subprocess_env, write


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m code_trajectory ARGS`` from ``cwd`` (this checkout's ``src``), never failing the test itself."""
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120, input="")


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def recorded(root: Path, text: str) -> Path:
    """A git project at ``root`` with one checkpoint ``text`` recorded through the CLI."""
    git_repo(root, {"app.py": f"x = {text!r}\n"}, branch="main", commit="initial")
    ok(cli("checkpoint", "-m", text, cwd=root))
    return root


def refs(git_dir: Path) -> str:
    return git(git_dir, "--git-dir", str(git_dir), "for-each-ref", "--format=%(refname) %(objectname)")


def test_a_new_history_notes_the_project_it_serves(tmp_path: Path) -> None:
    root = recorded(tmp_path / "alpha", "first")
    assert (root / ".trajectory" / OWNER_FILE).read_bytes() == os.fsencode(os.path.realpath(root))


def test_a_link_to_another_projects_history_is_refused_by_log_checkpoint_and_watch(tmp_path: Path) -> None:
    """``beta/.trajectory -> ../alpha/.trajectory``: beta's checkpoint went into alpha's history and beta's log
    listed alpha's snapshots. Every command refuses, naming the link, alpha and what to do; neither alpha's history
    nor beta's own (kept aside) changes by one byte."""
    alpha = recorded(tmp_path / "alpha", "alpha's work")
    beta = recorded(tmp_path / "beta", "beta's work")
    (beta / ".trajectory").rename(tmp_path / "beta-history")
    (beta / ".trajectory").symlink_to(Path("..") / "alpha" / ".trajectory")
    write(beta, "app.py", "x = 'changed in beta'\n")
    before = (file_bytes(alpha / ".trajectory"), refs(alpha / ".trajectory"), file_bytes(tmp_path / "beta-history"),
              file_bytes(beta))
    for args in (["log"], ["search", "work"], ["checkpoint", "-m", "beta again"], ["watch", str(beta)]):
        proc = cli(*args, cwd=beta)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert f"{beta / '.trajectory'} is a symlink to {alpha.resolve() / '.trajectory'}" in proc.stderr
        assert f"the history of another project, {alpha.resolve()}" in proc.stderr
        assert f"rm '{beta / '.trajectory'}'" in proc.stderr
    assert (file_bytes(alpha / ".trajectory"), refs(alpha / ".trajectory"), file_bytes(tmp_path / "beta-history"),
            file_bytes(beta)) == before
    assert "alpha's work" in ok(cli("log", cwd=alpha))  # alpha goes on undisturbed


def test_a_link_to_a_history_made_before_the_owner_file_is_refused_too(tmp_path: Path) -> None:
    alpha = recorded(tmp_path / "alpha", "alpha's work")
    (alpha / ".trajectory" / OWNER_FILE).unlink()
    beta = git_repo(tmp_path / "beta", {"b.py": "b = 1\n"}, branch="main", commit="initial")
    (beta / ".trajectory").symlink_to(alpha / ".trajectory")
    before = file_bytes(alpha / ".trajectory")
    proc = cli("checkpoint", cwd=beta)
    assert proc.returncode == 2 and f"another project, {alpha.resolve()}" in proc.stderr, proc.stderr
    assert file_bytes(alpha / ".trajectory") == before


def test_a_moved_project_keeps_its_history_on_another_disk(tmp_path: Path) -> None:
    """The history the link leads to names the old path, which no longer leads to it: the same history, a new path
    (the next recording notes it)."""
    disk = tmp_path / "disk" / "history"
    disk.mkdir(parents=True)
    old = git_repo(tmp_path / "old-name", {"app.py": "x = 1\n"}, branch="main", commit="initial")
    (old / ".trajectory").symlink_to(disk)
    ok(cli("checkpoint", "-m", "before the move", cwd=old))
    new = tmp_path / "new-name"
    old.rename(new)
    assert "before the move" in ok(cli("log", cwd=new))
    assert (disk / OWNER_FILE).read_bytes() == os.fsencode(str(old.resolve()))  # a read writes nothing
    write(new, "app.py", "x = 2\n")
    ok(cli("checkpoint", "-m", "after the move", cwd=new))
    out = ok(cli("log", cwd=new))
    assert "before the move" in out and "after the move" in out
    assert (disk / OWNER_FILE).read_bytes() == os.fsencode(str(new.resolve()))


def test_a_history_kept_in_a_directory_named_trajectory_elsewhere_is_this_projects(tmp_path: Path) -> None:
    """``mv .trajectory /big/proj/ && ln -s /big/proj/.trajectory``: the directory holding it is no project."""
    root = recorded(tmp_path / "proj", "first")
    holder = tmp_path / "big" / "proj"
    holder.mkdir(parents=True)
    shutil.move(str(root / ".trajectory"), holder / ".trajectory")
    (holder / ".trajectory" / OWNER_FILE).unlink()  # as a release before the owner file left it
    (root / ".trajectory").symlink_to(holder / ".trajectory")
    assert other_owner(root / ".trajectory") is None
    assert "first" in ok(cli("log", cwd=root))


@pytest.mark.parametrize("kind", ["directory", "link"])
def test_a_project_copied_with_cp_a(tmp_path: Path, kind: str) -> None:
    """A copied ``.trajectory`` directory is the copy's own history, starting from the original's; a copied link
    still leads to the original's history, which the original still uses: refused, the original untouched."""
    original = git_repo(tmp_path / "original", {"app.py": "x = 1\n"}, branch="main", commit="initial")
    if kind == "link":
        (tmp_path / "disk").mkdir()
        (original / ".trajectory").symlink_to(tmp_path / "disk")
    ok(cli("checkpoint", "-m", "in the original", cwd=original))
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(original), str(copy)], check=True)
    history = (original / ".trajectory").resolve()
    before = (file_bytes(history), refs(history))
    write(copy, "app.py", "x = 'the copy'\n")
    proc = cli("checkpoint", "-m", "in the copy", cwd=copy)
    if kind == "directory":
        ok(proc)
        out = ok(cli("log", cwd=copy))
        assert "in the original" in out and "in the copy" in out
        assert (copy / ".trajectory" / OWNER_FILE).read_bytes() == os.fsencode(str(copy.resolve()))
    else:
        assert proc.returncode == 2 and f"another project, {original.resolve()}" in proc.stderr, proc.stderr
        assert f"cp -a '{history}' '{copy / '.trajectory'}'" in proc.stderr
    assert (file_bytes(history), refs(history)) == before
    assert "in the copy" not in ok(cli("log", cwd=original))


def _bind_mount_works(tmp_path: Path) -> bool:
    """True when this machine lets an unprivileged user namespace bind-mount a directory (``unshare -rm``)."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    (tmp_path / "probe-a").mkdir()
    (tmp_path / "probe-b").mkdir()
    proc = subprocess.run(["unshare", "-rm", "mount", "--bind", str(tmp_path / "probe-a"), str(tmp_path / "probe-b")],
                          capture_output=True, timeout=30)
    return proc.returncode == 0


def test_a_project_opened_through_a_bind_mount_keeps_its_linked_history(tmp_path: Path) -> None:
    """The project ``proj`` keeps its history on another disk (``proj/.trajectory -> /elsewhere``) and is also
    reached as ``mnt`` (a bind mount of ``proj``; on macOS, the same folder spelled in another case): the noted
    owner ``proj`` is not ``mnt``'s real path, yet it is the same directory. Every command opened through ``mnt``
    was refused as 'the history of another project, proj', and its advice (`rm mnt/.trajectory`) removed the
    project's own link."""
    if not _bind_mount_works(tmp_path):
        pytest.skip("no unprivileged bind mount here (unshare -rm)")
    proj, mnt, history = tmp_path / "proj", tmp_path / "mnt", tmp_path / "disk" / "history"
    history.mkdir(parents=True)
    mnt.mkdir()
    git_repo(proj, {"app.py": "x = 1\n"}, branch="main", commit="initial")
    (proj / ".trajectory").symlink_to(history)
    ok(cli("checkpoint", "-m", "through proj", cwd=proj))
    assert (history / OWNER_FILE).read_bytes() == os.fsencode(os.path.realpath(proj))
    script = (f"mount --bind {shlex.quote(str(proj))} {shlex.quote(str(mnt))} && cd {shlex.quote(str(mnt))} && "
              f"{shlex.quote(sys.executable)} -m code_trajectory log")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=subprocess_env(), capture_output=True,
                          text=True, timeout=120, input="")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "through proj" in proc.stdout
    assert (proj / ".trajectory").is_symlink()
