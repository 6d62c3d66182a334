"""Keeping the shadow repository usable: stale locks, a deleted or corrupted ``.trajectory``.

* A git lock file (``<ref>.lock``, ``packed-refs.lock``, ``HEAD.lock``, ``index.lock``,
  ``config.lock``...) left behind by a killed process blocks every later write. One is
  *stale* when no process has it open (checked in ``/proc/*/fd``) and either its owner
  provably is not running — no git process works on this repository (``/proc/*/cmdline``
  naming it with ``--git-dir``) and the lock is older than :data:`STALE_LOCK_SECONDS` — or
  it is older than :data:`STALE_AGE_SECONDS`. Without ``/proc`` (macOS) only the age counts.
  Stale locks are logged and removed; live ones are waited for.
* Temporary files of a killed writer (``tmp_pack_*``, ``tmp_idx_*``, ``tmp_obj_*``,
  ``tmp_graph_*``) only take space; they are removed at start when older than
  :data:`STALE_AGE_SECONDS` and held open by no process (:func:`clear_stale_temp_files`).
* A shadow repository whose refs or tip objects cannot be read is *corrupted*: an
  opening that records moves it aside as ``.trajectory.corrupt-<timestamp>`` (kept for
  inspection, never recorded) and a fresh one starts; the caller tells the user. An
  opening of a read-only command changes nothing and says so (:func:`damaged_message`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from datetime import datetime
from pathlib import Path

from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import GitError, StorageError
from code_trajectory.git import nested
from code_trajectory.git.create import hide_from_project_git
from code_trajectory.git.shadow import ShadowRepo

log = logging.getLogger(__name__)

#: A git lock file nobody holds open, in a repository no git process works on, older than this is stale,
#: seconds. git keeps a lock file open while it writes it; a ref transaction closes it before the rename that
#: commits it (refs/files-backend.c), so the process check, not the open file, proves the owner is gone.
STALE_LOCK_SECONDS = 2.0
#: A lock or temporary file this old is stale even when a git process works on the repository, seconds
#: (10 minutes): a git writer keeps writing its temporary file until it renames it into place, and a lock it
#: closed (a ref transaction's) is renamed milliseconds later. git itself removes ``tmp_*`` files by age alone: ``git prune`` deletes those older
#: than ``--expire`` (builtin/prune.c, prune_tmp_file; ``git gc`` passes ``gc.pruneExpire``, 2 weeks by
#: default, git-gc(1)); maintenance does that too, this shorter age only serves the clean-up at start.
STALE_AGE_SECONDS = 600.0
#: Our own lock files: flock()-based, released by the kernel when their owner dies, never stale (filelock leaves
#: the file in place after a release; ``share.lock`` is ``state/share.lock``, held by push and pull).
OWN_LOCKS = {"write.lock", "recorder.lock", "maintenance.lock", "tests.lock", "share.lock"}
#: Other temporary files git creates exclusively and renames into place, which block the next run of the
#: same command when a kill leaves them behind (``git pack-refs`` writes ``packed-refs.new``).
GIT_TEMP_FILES = {"packed-refs.new"}
#: Prefix of the temporary files git and :mod:`code_trajectory.git.packs` write under ``objects/``.
TMP_PREFIX = "tmp_"
#: git's words for an object or ref it could not read.
_CORRUPTION = re.compile(r"corrupt|bad object|inflate|unable to read|broken|bad sha1|invalid object|"
                         r"not a valid|loose object .* is|packfile .* cannot|fatal: bad|missing (?:blob|tree|commit)",
                         re.IGNORECASE)


def _open_paths() -> set[str] | None:
    """Paths held open by any process we can see (``/proc/<pid>/fd``); None without ``/proc``."""
    held: set[str] = set()
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    held.add(os.readlink(fd))
        except OSError:
            pass
    return held


def git_working_on(git_dir: Path) -> list[int]:
    """Pids of running git processes that may write ``git_dir`` (``--git-dir`` names it; ``cat-file``, which only
    reads, excluded). Empty without ``/proc``: callers must then rely on the age alone.

    Args:
        git_dir: the repository's git directory.
    """
    proc = Path("/proc")
    target = os.path.realpath(git_dir)
    found: list[int] = []
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv or not os.path.basename(argv[0]).startswith(b"git") or b"cat-file" in argv:
            continue
        for i, arg in enumerate(argv):
            value = None
            if arg.startswith(b"--git-dir="):
                value = arg[len(b"--git-dir="):]
            elif arg == b"--git-dir" and i + 1 < len(argv):
                value = argv[i + 1]
            if value is None:
                continue
            path = os.fsdecode(value)
            if not os.path.isabs(path):
                try:
                    path = os.path.join(os.readlink(entry / "cwd"), path)
                except OSError:
                    found.append(int(entry.name))  # cannot tell which repository: assume this one
                    break
            if os.path.realpath(path) == target:
                found.append(int(entry.name))
                break
    return found


def clear_stale_locks(git_dir: Path, older_than: float | None = None) -> list[Path]:
    """Remove stale git lock files under ``git_dir`` (the rule is in the module docstring); return them.

    Never removes a lock a process holds open, nor one younger than :data:`STALE_AGE_SECONDS` while a git
    process works on the repository.

    Args:
        git_dir: the shadow repository's git directory.
        older_than: minimum age of a lock whose owner is gone, seconds (default :data:`STALE_LOCK_SECONDS`).
    """
    threshold = STALE_LOCK_SECONDS if older_than is None else older_than
    now = time.time()
    candidates: list[tuple[Path, os.stat_result]] = []
    objects = git_dir / "objects"
    for dirpath, dirs, files in os.walk(git_dir):
        if Path(dirpath) == objects:  # loose object and pack directories hold no locks; info/ does
            dirs[:] = [d for d in dirs if d == "info"]
        for name in files:
            if (name.endswith(".lock") and name not in OWN_LOCKS) or name in GIT_TEMP_FILES:
                path = Path(dirpath) / name
                try:
                    st = path.stat()
                except OSError:
                    continue
                if now - st.st_mtime >= threshold:
                    candidates.append((path, st))
    if not candidates:
        return []
    held = _open_paths()
    owner_may_run = held is None or bool(git_working_on(git_dir))
    removed = []
    for path, st in candidates:
        age = now - st.st_mtime
        if (held is not None and os.path.realpath(path) in held) or (owner_may_run and age < STALE_AGE_SECONDS):
            continue
        if not _unlink(path, st):
            continue
        log.warning("removed stale lock %s (%.0f s old, no process holds it)", path, age)
        removed.append(path)
    return removed


def _unlink(path: Path, seen: os.stat_result | None = None) -> bool:
    """Remove the file ``path``; True when it was removed.

    Args:
        path: the file.
        seen: when given, ``path``'s stat from the scan: a file that is no longer that one (renamed away and taken
            again by a new process since the scan: not ours to judge) is kept.

    Returns:
        False when it was kept or could not be removed (``OSError``: gone already, no permission).
    """
    try:
        if seen is not None:
            again = path.stat()
            if (again.st_ino, again.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
                return False
        path.unlink()
    except OSError:
        return False
    return True


def clear_stale_temp_files(git_dir: Path, older_than: float = STALE_AGE_SECONDS) -> list[Path]:
    """Remove temporary files a killed writer left under ``objects/``; return them.

    Removed: ``tmp_*`` files (``tmp_pack_*``, ``tmp_idx_*``, ``tmp_obj_*``, ``tmp_graph_*``...) in
    ``objects/``, ``objects/pack/``, ``objects/info/commit-graphs/`` and the loose object directories, older
    than ``older_than`` seconds (mtime, the rule of ``git prune``, see :data:`STALE_AGE_SECONDS`) and held open
    by no process (when ``/proc`` shows open files).

    Args:
        git_dir: the shadow repository's git directory.
        older_than: minimum age, seconds.
    """
    objects = git_dir / "objects"
    now = time.time()
    candidates: list[Path] = []
    try:
        subdirs = [objects, objects / "pack", objects / "info" / "commit-graphs"]
        subdirs += [objects / name for name in os.listdir(objects) if len(name) == 2]
    except OSError:
        return []
    for directory in subdirs:
        if any(os.path.islink(d) for d in (directory, *directory.parents) if d.is_relative_to(objects)):
            continue  # a planted link: nothing is removed where it leads (the opening's vetting refuses it)
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if not name.startswith(TMP_PREFIX):
                continue
            path = directory / name
            try:
                if now - path.lstat().st_mtime >= older_than and path.is_file():
                    candidates.append(path)
            except OSError:
                pass
    if not candidates:
        return []
    held = _open_paths() or set()
    removed = []
    for path in candidates:
        if os.path.realpath(path) in held:
            continue
        if not _unlink(path):
            continue
        log.warning("removed %s, a temporary file of a killed git process (older than %.0f s)", path, older_than)
        removed.append(path)
    return removed


def clear_leftovers(git_dir: Path) -> list[Path]:
    """What a killed process left in the shadow repository, cleared at start: stale locks
    (:func:`clear_stale_locks`) and temporary files (:func:`clear_stale_temp_files`); returns the removed paths."""
    if not git_dir.is_dir():
        return []
    return clear_stale_locks(git_dir) + clear_stale_temp_files(git_dir)


def looks_corrupt(exc: BaseException) -> bool:
    """True when a git failure reads like a damaged repository rather than a transient problem."""
    text = f"{exc} {getattr(exc, 'stderr', '')}"
    return isinstance(exc, (GitError, StorageError)) and bool(_CORRUPTION.search(text))


def verify(repo: ShadowRepo) -> str | None:
    """Cheap health check: every shadow ref resolves and its commit and root tree read back.

    Returns:
        None when healthy, else a description of the first problem found.
    """
    refs_dir = repo.git_dir / "refs" / "heads" / "shadow"
    for dirpath, _dirs, files in os.walk(refs_dir):  # a directory removed meanwhile is skipped, not an error
        for name in files:
            path = Path(dirpath) / name
            if name.endswith(".lock"):
                continue
            data = read_bounded(path, 4096)
            if data is None and not os.path.lexists(path):
                continue  # deleted meanwhile (``git pack-refs`` moved it into packed-refs, a ref was deleted)
            content = (data or b"").decode("ascii", "replace").strip()
            if not re.fullmatch(r"[0-9a-f]{40}", content):
                return f"ref {path.relative_to(repo.git_dir)} is broken ({content[:40]!r})"
    try:
        for ref, oid in repo.shadow_refs().items():
            obj = repo.read_object(oid)
            if obj is None or obj[0] != "commit":
                return f"{ref} points at a missing or unreadable commit {oid}"
            tree = repo.commit_tree_oid(oid)
            if tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" and repo.read_object(tree) is None:
                return f"the tree {tree} of {ref} is missing"
            repo.read_tree(tree)  # parsed entry by entry: a malformed tree raises
    except (GitError, StorageError, ValueError) as exc:
        return f"the shadow repository cannot be read: {exc}"
    return None


def damaged_message(repo: ShadowRepo, problem: str) -> str:
    """What a command that leaves it in place (one that only reads, or needs this very history: ``restore``) says of
    the damaged shadow repository ``repo`` (``problem``: :func:`verify`'s description), which it left as it was:
    where it is, and the two ways on (a recording start sets it aside and starts a new history; or the user moves it
    aside and repairs it with git)."""
    git_dir, root = repo.git_dir, repo.root
    aside = git_dir.with_name(f"{git_dir.name}.corrupt")
    return (f"the history of {root} is damaged ({problem}); nothing was changed, {git_dir} is as it was. To keep "
            f"recording, start recording (`code-trajectory watch '{root}'`, or the MCP server; once no other process "
            f"records the project): it moves the damaged history to {git_dir.name}.corrupt-<time> beside it, kept for "
            f"repair, and starts a new one; or move it "
            f"aside yourself (`mv '{git_dir}' '{aside}'`) and look into it with `git --git-dir='{aside}' fsck`")


def move_aside(repo: ShadowRepo) -> Path:
    """Rename ``.trajectory`` to ``.trajectory.corrupt-<YYYYmmdd-HHMMSS>`` and return the new path.

    Raises:
        StorageError: the rename failed.
    """
    repo.close()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = repo.git_dir.with_name(f"{repo.git_dir.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        target = repo.git_dir.with_name(f"{repo.git_dir.name}.corrupt-{stamp}-{n}")
        n += 1
    try:
        os.rename(repo.git_dir, target)
    except OSError as exc:
        raise StorageError(f"cannot move the damaged {repo.git_dir} aside: {exc}") from exc
    try:
        hide_from_project_git(target)  # a repository from an older release may lack it
        nested.remove_marker(target)  # not ignored from outside: its own .gitignore must hide it
    except OSError as exc:
        log.warning("cannot hide %s from the project's git: %s", target, exc)
    log.error("the shadow repository was damaged; moved it to %s and started a new one", target)
    return target
