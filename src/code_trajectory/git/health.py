"""Keeping the shadow repository usable: stale locks, a deleted or corrupted ``.trajectory``.

* A git lock file (``<ref>.lock``, ``packed-refs.lock``, ``HEAD.lock``, ``index.lock``...)
  left behind by a killed process blocks every later write. One is *stale* when it
  is older than :data:`STALE_LOCK_SECONDS` and no process has it open (checked in
  ``/proc/*/fd``; git holds its lock files open while it works). Stale locks are
  logged and removed; live ones are waited for.
* A shadow repository whose refs or tip objects cannot be read is *corrupted*: it
  is moved aside as ``.trajectory.corrupt-<timestamp>`` (kept for inspection, never
  recorded) and a fresh one starts; the caller tells the user.
"""

from __future__ import annotations

import logging
import os
import re
import time
from datetime import datetime
from pathlib import Path

from code_trajectory.core.errors import GitError, StorageError
from code_trajectory.git.shadow import ShadowRepo, hide_from_project_git

log = logging.getLogger(__name__)

#: A git lock file older than this with no process holding it open is stale, seconds. git keeps its lock
#: files open from creation until the moment it renames them (microseconds after closing), so a lock
#: nobody holds open for two seconds belongs to a process that died.
STALE_LOCK_SECONDS = 2.0
#: Our own lock files: flock()-based, released by the kernel when their owner dies, never stale.
OWN_LOCKS = {"write.lock", "recorder.lock", "maintenance.lock", "tests.lock"}
#: Other temporary files git creates exclusively and renames into place, which block the next run of the
#: same command when a kill leaves them behind (``git pack-refs`` writes ``packed-refs.new``).
GIT_TEMP_FILES = {"packed-refs.new"}
#: git's words for an object or ref it could not read.
_CORRUPTION = re.compile(r"corrupt|bad object|inflate|unable to read|broken|bad sha1|invalid object|"
                         r"not a valid|loose object .* is|packfile .* cannot|fatal: bad|missing (?:blob|tree|commit)",
                         re.IGNORECASE)


def _open_paths() -> set[str]:
    """Paths held open by any process we can see (``/proc/<pid>/fd``)."""
    held: set[str] = set()
    proc = Path("/proc")
    if not proc.is_dir():
        return held
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                try:
                    held.add(os.readlink(fd))
                except OSError:
                    pass
        except OSError:
            pass
    return held


def clear_stale_locks(git_dir: Path, older_than: float | None = None) -> list[Path]:
    """Remove git lock files under ``git_dir`` that are old and held by no process; return them.

    Args:
        git_dir: the shadow repository's git directory.
        older_than: age threshold, seconds (default :data:`STALE_LOCK_SECONDS`).
    """
    threshold = STALE_LOCK_SECONDS if older_than is None else older_than
    now = time.time()
    candidates = []
    objects = git_dir / "objects"
    for dirpath, dirs, files in os.walk(git_dir):
        if Path(dirpath) == objects:  # loose object and pack directories hold no locks; info/ does
            dirs[:] = [d for d in dirs if d == "info"]
        for name in files:
            if (name.endswith(".lock") and name not in OWN_LOCKS) or name in GIT_TEMP_FILES:
                path = Path(dirpath) / name
                try:
                    if now - path.stat().st_mtime >= threshold:
                        candidates.append(path)
                except OSError:
                    pass
    if not candidates:
        return []
    held = _open_paths()
    removed = []
    for path in candidates:
        if str(path) in held:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        log.warning("removed stale lock %s (older than %.0f s, no process holds it)", path, threshold)
        removed.append(path)
    return removed


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
    if refs_dir.is_dir():
        for path in refs_dir.rglob("*"):
            if path.is_file() and not path.name.endswith(".lock"):
                content = path.read_text("ascii", "replace").strip()
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
    except OSError as exc:
        log.warning("cannot hide %s from the project's git: %s", target, exc)
    log.error("the shadow repository was damaged; moved it to %s and started a new one", target)
    return target
