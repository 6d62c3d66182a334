"""Helpers the tests import: real git in temp dirs, the server's command, an MCP SDK client, a watching session.

Importable as ``support`` under every pytest import mode (``pythonpath = ["tests"]`` in ``pyproject.toml``); fixtures
live in ``conftest.py`` files, never here. Submodules: ``support.hostile`` (poisoned shadow repositories),
``support.share_env`` (a two-person team sharing a remote), ``support.ui`` (the timeline UI's server and demo history),
``support.fault_report`` (the fault tests' JSON report).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

#: The repository's root and its ``src`` directory.
REPO_ROOT = Path(__file__).resolve().parents[2]
SRC = REPO_ROOT / "src"


def server_command() -> list[str]:
    """The ``code-trajectory`` console script installed next to this interpreter, else ``python -m code_trajectory``."""
    script = Path(sys.executable).with_name("code-trajectory")
    if script.is_file():
        return [str(script)]
    found = shutil.which("code-trajectory")
    return [found] if found else [sys.executable, "-m", "code_trajectory"]


def subprocess_env(**extra: str) -> dict[str, str]:
    """This test's environment (isolated homes) with ``src`` first on ``PYTHONPATH``, plus ``extra``."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


def cli_stdout(root: Path, *args: str) -> str:
    """Run ``code-trajectory ARGS`` (this checkout's ``src``) from ``root``, which the CLI takes as the project;
    assert it exits 0 and return its stdout."""
    done = subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=root, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def file_bytes(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative paths; a symlink not followed: its target's text) with its bytes:
    comparing two of them shows any write."""
    found = {}
    for dirpath, _dirs, names in os.walk(directory):
        for name in names:
            path = Path(dirpath, name)
            found[str(path.relative_to(directory))] = os.readlink(path).encode() if path.is_symlink() else \
                path.read_bytes()
    return found


def checkpoint_with_why(root: Path, why: str, how: str) -> None:
    """A CLI ``checkpoint`` of ``root`` whose why is ``why``: given as the intent first (``how`` ``"intent"``) or as
    the checkpoint's name (any other ``how``), the two ways a snapshot's heading says why."""
    if how == "intent":
        cli_stdout(root, "intent", why)
        cli_stdout(root, "checkpoint")
    else:
        cli_stdout(root, "checkpoint", "-m", why)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run git in ``cwd`` as a user would (fixed identity, no global config); return stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Dev",
               GIT_AUTHOR_EMAIL="dev@example.com", GIT_COMMITTER_NAME="Dev", GIT_COMMITTER_EMAIL="dev@example.com")
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, encoding="utf-8",
                          errors="surrogateescape")
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def conflict(root: Path, rel: str, *, branch: str = "main") -> None:
    """Leave ``rel`` unmerged in the git repository ``root`` (on ``branch``, with a commit): another branch and
    ``branch`` each commit their own content for it, then ``branch`` merges the other (the index holds stages 1-3)."""
    git(root, "checkout", "-qb", "other")
    write(root, rel, "other\n")
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", branch)
    write(root, rel, f"{branch}\n")
    git(root, "commit", "-qam", branch)
    git(root, "merge", "-q", "other", check=False)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write a file under ``root``, creating parent directories."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def rewrite_in_place(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` keeping its size and giving it back its access and modification times, so that
    only its ctime (and inode data) tell the change: the case a stat cache must not vouch for.

    Raises:
        AssertionError: ``text`` does not have the file's size.
    """
    st = path.stat()
    assert len(text.encode()) == st.st_size, f"{path}: {len(text.encode())} bytes, not {st.st_size}"
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    """A directory ``root`` (created with its parents, not a git repository) holding ``files``: relative path ->
    content (see :func:`write`). Returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        write(root, rel, text)
    return root


def git_repo(root: Path, files: dict[str, str | bytes], *, branch: str | None = None,
             commit: str | None = None) -> Path:
    """A git repository at ``root`` (created with its parents): ``git init``, then ``files`` written.

    Args:
        root: the work tree.
        files: relative path -> content (see :func:`write`), written after ``git init``.
        branch: the initial branch (``git init -b``); git's default when None.
        commit: when given, everything is added and committed with this message.

    Returns:
        ``root``.
    """
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", *(("-b", branch) if branch else ()))
    write_files(root, files)
    if commit is not None:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", commit)
    return root


def wait_for(predicate, timeout: float = 15.0, step: float = 0.1):
    """Poll ``predicate`` every ``step`` seconds until it returns a true value (returned) or ``timeout`` s pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


def wait_hooks_done(root: Path, timeout: float = 60.0) -> None:
    """Wait until the edits hooks handed over in ``root`` are recorded: none waits in ``.trajectory/state/requests``
    and no edit worker holds the recorder lock (with nothing recording, an edit hook's snapshot is taken by a
    worker it started, after the hook returned: issue 29). Not for a project a watcher records (it holds the lock)."""
    from code_trajectory.recording.handoff import waiting as pending
    from code_trajectory.recording.liveness import recording_now

    git_dir = root / ".trajectory"
    wait_for(lambda: not pending(git_dir / "state") and not recording_now(git_dir), timeout=timeout)


def shadow(root: Path, *args: str) -> str:
    """``git --git-dir <root>/.trajectory <args>``: its stdout; ``""`` when there is no shadow repository yet."""
    if not (root / ".trajectory" / "HEAD").is_file():
        return ""
    return git(root, "--git-dir", str(root / ".trajectory"), *args)


def shadow_count(root: Path, ref: str = "refs/heads/shadow/main") -> int:
    """Number of commits on a shadow ref of the project at ``root`` (0 when the ref does not exist)."""
    out = git(root, "--git-dir=.trajectory", "rev-list", "--count", ref, check=False)
    return int(out.strip() or 0)


def record_now(root: Path, checkpoint: str | None = None) -> str:
    """Record the work tree of ``root`` now (a real recorder's start-up scan), then a checkpoint named
    ``checkpoint`` when given; returns the id of the latest snapshot on the ``main`` shadow branch."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder

    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        recorder.reconcile()
        if checkpoint:
            recorder.checkpoint(checkpoint)
        return recorder.latest_commit("main")
    finally:
        recorder.close()


def restart(root: Path):
    """A new recorder's start-up reconcile of ``root``, as a restarted server does; returns the snapshot (or None
    when nothing changed)."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.recorder import Recorder

    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        return recorder.reconcile()
    finally:
        recorder.close()


def recorded(root: Path, ref: str, rel: str) -> str:
    """The content of ``rel`` (relative to the root) in the shadow commit or ref ``ref`` of ``root``, stripped."""
    return git(root, "--git-dir=.trajectory", "show", f"{ref}:{rel}").strip()


def half_restorable(root: Path) -> str:
    """Record a snapshot of twelve small files (``src/a00.py``...) and a 2 MB one (``src/big.bin``), then change them
    all and record again; returns the first snapshot (a restore of it writes 2 MB into ``src/big.bin``)."""
    for i in range(12):
        write(root, f"src/a{i:02}.py", f"A{i} = 'snapshot'\n")
    write(root, "src/big.bin", os.urandom(2 * 1024 * 1024))
    snapshot = record_now(root, "good")
    for i in range(12):
        write(root, f"src/a{i:02}.py", f"A{i} = 'now'\n")
    write(root, "src/big.bin", b"small now\n")
    record_now(root)
    return snapshot


@contextmanager
def watching(root: Path, debounce: float = 0.4, **settings):
    """A started, watching :class:`ProjectSession` of ``root`` with a short debounce (seconds), closed on exit.

    Args:
        root: the project.
        debounce: ``debounce_seconds``; settings: other :meth:`TrajectorySettings.load` overrides.

    Yields:
        The session.
    """
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession

    session = ProjectSession(root, TrajectorySettings.load(root, debounce_seconds=debounce, **settings), watch=True)
    session.start()
    try:
        yield session
    finally:
        session.close()


@asynccontextmanager
async def mcp_client(root: Path, **settings):
    """An MCP SDK client of a fresh server (:func:`~code_trajectory.server.build_server`) configured for ``root``.

    Args:
        root: the project the client's first call (``configure_project``) opens.
        settings: :meth:`TrajectorySettings.load` overrides; ``debounce_seconds`` is 30 unless given (no
            watcher snapshot comes between a test's steps).

    Yields:
        The connected ``mcp.Client``; on exit the client disconnects and the service is closed.
    """
    from mcp import Client

    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.service import TrajectoryService
    from code_trajectory.server import build_server

    settings.setdefault("debounce_seconds", 30)
    app = TrajectoryService(lambda r: TrajectorySettings.load(r, **settings))
    try:
        async with Client(build_server(app)) as client:
            await client.call_tool("configure_project", {"path": str(root)})
            # configure answers within a second while a slow machine may still import: the tests' steps start
            # from the imported project
            assert app.project().wait_started(120), "the start-up scan did not finish"
            yield client
    finally:
        app.close()


def hand_built_commit(git_dir: Path, files: dict[str, bytes | tuple[str, bytes]], *, parent: str | None = None,
                      ref: str | None = None) -> str:
    """Write a commit by hand into the repository ``git_dir`` (``git mktree``/``commit-tree``, no check of the
    names: what a hostile snapshot is made of) and return its id.

    Args:
        files: path -> content (mode 100644), or ``(mode, content)``; a mode ``160000`` takes a commit id as text.
        parent: the commit's parent; ref: a ref to point at it (``refs/heads/shadow/x``).
    """
    def run(*args: str, data: bytes | None = None) -> str:
        proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True,
                              env=dict({k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
                                       GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Eve",
                                       GIT_AUTHOR_EMAIL="eve@example.com", GIT_COMMITTER_NAME="Eve",
                                       GIT_COMMITTER_EMAIL="eve@example.com"))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.decode().strip()

    def tree(node: dict) -> str:
        lines = []
        for name, value in sorted(node.items()):
            if isinstance(value, dict):
                lines.append(f"040000 tree {tree(value)}\t{name}")
            else:
                mode, content = value
                if mode == "160000":
                    lines.append(f"160000 commit {content.decode()}\t{name}")
                else:
                    lines.append(f"{mode} blob {run('hash-object', '-w', '--stdin', data=content)}\t{name}")
        return run("mktree", "--missing", data="".join(f"{line}\n" for line in lines).encode("utf-8",
                                                                                            "surrogateescape"))

    root: dict = {}
    for path, value in files.items():
        node = root
        *dirs, name = path.split("/")
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = value if isinstance(value, tuple) else ("100644", value)
    commit = run("commit-tree", tree(root), *(["-p", parent] if parent else []), "-m", "a hand-built snapshot")
    if ref:
        run("update-ref", ref, commit)
    return commit


@contextmanager
def file_size_limit(limit: int):
    """Within the block, this process may not write a file past ``limit`` bytes (``RLIMIT_FSIZE``): a write past it
    fails with EFBIG (Python ignores SIGXFSZ), a real write failure no check beforehand can foresee."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))



def age_everything(root: Path, seconds: float = 10.0, *, skip: tuple[str, ...] = (".git",)) -> None:
    """Set every mtime under ``root`` (directories named in ``skip`` left alone) ``seconds`` in the past: the scan's
    listings and stat cache then trust what they read (no racy timestamps)."""
    past = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
        os.utime(dirpath, (past, past))
    time.sleep(0.05)  # the ctimes are now: a scan starting right away would not trust its listings (CTIME_SLACK_NS)


def write_user_config(text: str) -> Path:
    """Write ``text`` as the user's own config file (``<CODE_TRAJECTORY_HOME>/config.toml``: the tests' temporary
    home); returns its path."""
    from code_trajectory.core.config import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
