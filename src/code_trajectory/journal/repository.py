"""The journal's git repository: its creation, the inter-process lock, refs and objects, the cached list of commits,
and the plumbing that makes a commit without a checkout and publishes it with a compare-and-swap of HEAD.

What the files and commits mean (sections, overviews, entries) is :mod:`.store`'s; see the package docstring for
the layout.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from code_trajectory.core.errors import GitError, JournalError
from code_trajectory.core.locks import CombinedLock
from code_trajectory.git.gitcmd import Git, check_git_version, chunked, read_exact, split_z
from code_trajectory.journal.model import Commit, _HistoryCache
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.text import MAX_OVERVIEW_CHARS

log = logging.getLogger(__name__)

LOCK_TIMEOUT_SECONDS = 60.0
#: A commit's line in :meth:`JournalRepository._scan`'s log: RS, its id, US, its time.
_COMMIT_HEAD = re.compile("\n*\x1e[0-9a-f]{40}(?:[0-9a-f]{24})?\x1f[0-9]+\n*")
GC_EVERY = 20
#: Largest section file read, bytes: an overview of :data:`~.text.MAX_OVERVIEW_CHARS` characters, 4 bytes each at
#: most in UTF-8, and its entry count.
MAX_SECTION_BYTES = 4 * MAX_OVERVIEW_CHARS + 4096


class JournalRepository:
    """The git repository of one journal.

    Args:
        settings: resolved journal settings (the repository is ``settings.journal_data_path``).

    The repository is created on first use (:meth:`ensure`). Methods are safe to
    call from several threads and several processes.
    """

    def __init__(self, settings: JournalSettings) -> None:
        self.settings = settings
        self.root = Path(settings.journal_data_path)
        self.git_dir = self.root / ".git"
        self._git: Git | None = None
        self._ready = False
        self._thread_lock = threading.RLock()
        self._history = _HistoryCache()
        self._history_lock = threading.Lock()
        self._writes = 0

    # -- setup

    @property
    def git(self) -> Git:
        if self._git is None:
            check_git_version()
            self._git = Git(self.git_dir, self.root, isolated=True)
        return self._git

    def exists(self) -> bool:
        """True when the journal's repository is there (:meth:`ensure` created it, or a clone put it there).

        Creates nothing: a reader that must not create a journal asks this first.
        """
        return (self.git_dir / "HEAD").is_file()

    def ensure(self) -> None:
        """Create the journal directory and its git repository when missing (idempotent).

        Raises:
            JournalError: the directory cannot be created or is not a usable repository.
        """
        if self._ready:
            return
        try:
            # private, as .trajectory/ is: what was learned may name what is not for the machine's other users
            # (an existing directory, a team's shared one, keeps its mode)
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"cannot create the journal directory {self.root}: {exc}") from exc
        if not (self.git_dir / "HEAD").exists():
            if self.git_dir.exists() and not self.git_dir.is_dir():
                raise JournalError(f"{self.git_dir} is not a directory; the journal needs its own git repository")
            # init in a private directory and rename it into place: two processes creating
            # the same journal at once must not interleave inside one .git
            tmp = self.root / f".git-init-{os.getpid()}-{secrets.token_hex(4)}"
            try:
                tmp.mkdir()
                Git(tmp / ".git", tmp, isolated=True).run(["init", "-q", "--initial-branch=main", str(tmp)])
                try:
                    os.rename(tmp / ".git", self.git_dir)
                except OSError:
                    if not (self.git_dir / "HEAD").exists():
                        raise
            except (GitError, OSError) as exc:
                raise JournalError(f"cannot create the journal repository in {self.root}: {exc}") from exc
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        self._ready = True

    def lock(self):
        """The inter-process write lock (a context manager), held by every writer of this journal."""
        from filelock import FileLock

        self.ensure()
        return CombinedLock(self._thread_lock, FileLock(str(self.git_dir / "code-trajectory-journal.lock"),
                                                         timeout=LOCK_TIMEOUT_SECONDS))

    def author_env(self) -> dict[str, str]:
        """Environment naming the configured author and committer."""
        name, email = self.settings.author
        return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}

    # -- refs and objects

    def head(self) -> str | None:
        """The commit HEAD points at, or None for an empty journal."""
        self.ensure()
        proc = self.git.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip()

    def branch(self) -> str:
        """The branch HEAD points to (``main`` unless changed)."""
        self.ensure()
        proc = self.git.run(["symbolic-ref", "-q", "--short", "HEAD"], check=False)
        name = proc.stdout.decode().strip()
        return name or "main"

    def blob_text(self, rev: str | None, file: str) -> str | None:
        """The text of ``file`` at ``rev``, or None when absent (or not a file).

        Raises:
            JournalError: the file is larger than :data:`MAX_SECTION_BYTES` (a journal synced from a remote can
                hold any file; its size is read from ``cat-file``'s header, the content is not).
        """
        if rev is None or "\n" in file:
            return None
        proc = self.git.popen(["cat-file", "--batch"], stderr=subprocess.DEVNULL)
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None  # popen pipes both
        try:
            with stdin:
                stdin.write(f"{rev}:{file}\n".encode("utf-8", "surrogateescape"))
            header = stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                return None
            size = int(header[2])
            if size > MAX_SECTION_BYTES:
                raise JournalError(f"the journal's {file} at {rev[:12]} is {size:,} bytes, more than a section "
                                   f"file can be ({MAX_SECTION_BYTES:,}); code-trajectory never writes such a file: "
                                   "it came from the journal's remote. Remove it there (or sync from another "
                                   "remote)")
            return read_exact(stdout, size).decode("utf-8", "replace")
        except (EOFError, OSError):
            return None
        finally:
            proc.kill()  # an object not read: git exits without writing the rest
            proc.wait()
            stdout.close()

    def resolve_commit(self, sha: str) -> str:
        """The full sha of the commit named by the prefix ``sha``.

        Raises:
            JournalError: unknown or ambiguous.
        """
        proc = self.git.run(["rev-parse", "-q", "--verify", "--end-of-options", f"{sha}^{{commit}}"], check=False)
        if proc.returncode != 0:
            raise JournalError(f"no journal entry with sha {sha!r} (unknown or ambiguous; "
                               "use the id from journal_list_entries or journal_search, CLI `code-trajectory journal "
                               "list` or `search`)")
        return proc.stdout.decode().strip()

    # -- history

    def history(self, head: str | None = None) -> list[Commit]:
        """All non-merge commits reachable from ``head`` (default HEAD), newest first, with the files each touched.

        Cached per head; a head that descends from the cached one is scanned incrementally.
        """
        head = self.head() if head is None else head
        if head is None:
            return []
        with self._history_lock:
            cache = self._history
            if cache.head == head:
                return cache.commits
            if cache.head is not None and self._is_ancestor(cache.head, head):
                new = self._scan(f"{cache.head}..{head}")
                commits = new + cache.commits
            else:
                commits = self._scan(head)
            self._history = _HistoryCache(head, commits)
            return commits

    def _is_ancestor(self, a: str, b: str) -> bool:
        return self.git.run(["merge-base", "--is-ancestor", a, b], check=False).returncode == 0

    def _scan(self, rev_range: str) -> list[Commit]:
        # each commit's line follows an empty token (NUL NUL): a file name, pulled by a sync, may hold RS, an id, US
        # and a time, but is never empty
        out = self.git.out(["log", "-z", "--no-merges", "--no-renames", "--format=%x00%x1e%H%x1f%at",
                            "--name-only", rev_range, "--"])
        commits: list[Commit] = []
        sha: str | None = None
        ts = 0
        files: list[str] = []
        tokens = split_z(out)
        after_head = False
        for n, token in enumerate(tokens):
            text = token.decode("utf-8", "replace")
            if not token:
                continue
            if n > 0 and not tokens[n - 1] and _COMMIT_HEAD.fullmatch(text):
                if sha is not None:
                    commits.append(Commit(sha, ts, tuple(files)))
                sha_s, _, ts_s = text.strip("\n")[1:].partition("\x1f")
                sha, ts, files, after_head = sha_s, int(ts_s or 0), [], True
            else:
                name = text[1:] if after_head and text.startswith("\n") else text  # git's line break before the names
                after_head = False
                if name:
                    files.append(name)
        if sha is not None:
            commits.append(Commit(sha, ts, tuple(files)))
        return commits

    def messages(self, shas: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``{sha: (raw message, author name)}`` for the given commits."""
        result: dict[str, tuple[str, str]] = {}
        for chunk in chunked(list(shas), 400):
            # NUL between commits (-z): a message, pulled by a sync, may hold any other control character (an RS
            # there forged the message of another commit)
            out = self.git.out(["show", "-z", "-s", "--no-notes", "--format=%H%x1f%an%x1f%B", *chunk, "--"])
            for record in out.decode("utf-8", "replace").split("\0"):
                if not record:
                    continue
                sha, _, rest = record.partition("\x1f")
                author, _, body = rest.partition("\x1f")
                result[sha.strip()] = (body, author)
        return result

    # -- commits

    def commit_files(self, parent: str | None, files: dict[str, str | None], message: str, *,
                     env: dict[str, str] | None = None, parents: Iterable[str] | None = None) -> str:
        """Create (but do not publish) a commit: ``parent``'s tree with ``files`` replaced (None deletes).

        Returns:
            The new commit's sha.
        """
        index = self.git_dir / f"ct-index-{os.getpid()}-{secrets.token_hex(4)}"
        index_env = {"GIT_INDEX_FILE": str(index)}
        try:
            if parent is not None:
                self.git.run(["read-tree", parent], env=index_env)
            else:
                self.git.run(["read-tree", "--empty"], env=index_env)
            for file, content in files.items():
                if content is None:
                    self.git.run(["update-index", "--force-remove", "--", file], env=index_env)
                    continue
                blob = self.git.text(["hash-object", "-w", "--stdin"], input=content.encode("utf-8"))
                self.git.run(["update-index", "--add", "--cacheinfo", f"100644,{blob},{file}"], env=index_env)
            tree = self.git.text(["write-tree"], env=index_env)
        finally:
            with contextlib.suppress(FileNotFoundError):
                index.unlink()
        args = ["commit-tree", tree]
        for p in (parents if parents is not None else ([parent] if parent else [])):
            args += ["-p", p]
        args += ["-F", "-"]
        return self.git.text(args, input=message.encode("utf-8"), env=env)

    def cas_head(self, old: str | None, new: str, reason: str) -> bool:
        """Move HEAD (its branch) from ``old`` to ``new`` atomically; False when HEAD was not ``old``."""
        zero = "0" * len(new)
        for _ in range(100):
            proc = self.git.run(["update-ref", "-m", reason, "HEAD", new, old or zero], check=False)
            if proc.returncode == 0:
                return True
            err = proc.stderr.decode("utf-8", "replace")
            if ".lock': File exists" in err or "Unable to create" in err:
                time.sleep(0.02)
                continue
            if "but expected" in err or "already exists" in err or "is at" in err:
                return False
            raise JournalError(f"cannot update the journal's HEAD: {err.strip()}")
        return False

    def refresh_worktree(self, old: str | None, new: str) -> None:
        """Bring the work tree and index from ``old`` to ``new``; a local edit is kept (logged, not overwritten)."""
        args = ["read-tree", "-m", "-u", old, new] if old else ["read-tree", "-m", "-u", new]
        proc = self.git.run(args, check=False)
        if proc.returncode != 0:
            log.warning("journal work tree %s not refreshed (local edits?): %s", self.root,
                        proc.stderr.decode("utf-8", "replace").strip())

    def maybe_gc(self) -> None:
        """Run ``git gc --auto`` every :data:`GC_EVERY` writes of this process, when ``auto_gc`` is on."""
        self._writes += 1
        if self.settings.auto_gc and self._writes % GC_EVERY == 0:
            self.git.run(["-c", "gc.auto=6700", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"],
                         check=False)
