"""Read-only facts about the project's own git repository (never written).

Only ``git rev-parse``, ``git config --get`` and ``git ls-files`` are run against the
project's repository, with ``GIT_OPTIONAL_LOCKS=0``, ``core.fsmonitor=false`` and no pager
(:func:`code_trajectory.git.gitcmd.project_argv`, so no hook or program named by config runs); the current branch is read from the ``HEAD`` file and the
index is ``stat``-ed, and read for the initial import (:mod:`code_trajectory.git.index_file`). Nothing here can
write under the project's ``.git``.

The project may be a subdirectory of a git work tree (``repo/packages/app``): then
:attr:`ProjectRepo.work_tree` is the work tree's top (``repo``) and :attr:`ProjectRepo.prefix`
the project's path inside it (``packages/app/``), as ``git rev-parse --show-toplevel`` and
``--show-prefix`` report them.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import GitError
from code_trajectory.git.file_output import run_to_files
from code_trajectory.git.gitcmd import Git, base_env, project_argv

log = logging.getLogger(__name__)

#: Shadow branch name used while the project's HEAD is detached. git refuses to
#: create a branch called ``HEAD``, so it never collides with a real branch.
DETACHED_BRANCH = "HEAD"
#: Shadow branch name used when the project is not a git repository. git refuses
#: branch names starting with ``-``, so it never collides with a real branch either.
NO_GIT_BRANCH = "-no-git"


@dataclass(frozen=True)
class ProjectRepo:
    """The project's repository, as discovered from the project root.

    Attributes:
        root: the project root (absolute).
        git_dir: the repository's git directory for this work tree (for a linked
            worktree, ``.git/worktrees/<name>``), or None when the project is not in a
            git repository.
        common_dir: the directory holding ``info/exclude`` (the main git dir).
        work_tree: the top of the work tree holding ``root`` (``root`` itself, or an
            ancestor when the project is a subdirectory of a work tree); None when the
            project is not in a work tree.
        prefix: ``root``'s path relative to ``work_tree``, ``/``-separated with a trailing
            ``/`` (``packages/app/``); ``""`` when ``root`` is the top or not in a work tree.
    """

    root: Path
    git_dir: Path | None
    common_dir: Path | None
    work_tree: Path | None = None
    prefix: str = ""

    @classmethod
    def discover(cls, root: Path) -> ProjectRepo:
        """Find the repository containing ``root`` (None fields when there is none).

        Runs ``git rev-parse --absolute-git-dir --git-common-dir --show-toplevel --show-prefix``
        in ``root`` (falling back to the first two alone outside a work tree, e.g. in a bare
        repository). A git that fails to run gives a project without repository (logged).

        Raises:
            GitUnavailableError: git is not on PATH.
        """
        env = base_env(isolate_config=False)
        # rev-parse needs discovery, not an explicit --git-dir: run it plainly in root.
        lines: list[str] | None = None
        for args in (["--absolute-git-dir", "--git-common-dir", "--show-toplevel", "--show-prefix"],
                     ["--absolute-git-dir", "--git-common-dir"]):
            try:
                proc = subprocess.run(project_argv(["rev-parse", *args]), cwd=root, env=env,
                                      capture_output=True, timeout=30)
            except (OSError, subprocess.SubprocessError) as exc:
                log.warning("cannot run git rev-parse in %s: %s", root, exc)
                return cls(root, None, None)
            if proc.returncode == 0:
                lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
                break
        if not lines or not lines[0]:
            return cls(root, None, None)
        git_dir = Path(lines[0])
        common = Path(lines[1]) if len(lines) > 1 and lines[1] else git_dir
        if not common.is_absolute():
            common = (root / common).resolve()
        work_tree = Path(lines[2]) if len(lines) > 3 and lines[2] else None
        prefix = lines[3] if work_tree is not None else ""
        return cls(root, git_dir, common, work_tree, prefix)

    @property
    def is_git(self) -> bool:
        """True when the project is inside a git repository."""
        return self.git_dir is not None

    @property
    def head_file(self) -> Path | None:
        """The ``HEAD`` file whose changes signal a branch switch, or None."""
        return self.git_dir / "HEAD" if self.git_dir else None

    @property
    def info_exclude(self) -> Path | None:
        """The repository's ``info/exclude`` file (may not exist), or None."""
        return self.common_dir / "info" / "exclude" if self.common_dir else None

    @property
    def index_file(self) -> Path | None:
        """The index of this work tree (``<git_dir>/index``; may not exist yet), or None outside git."""
        return self.git_dir / "index" if self.git_dir else None

    def enclosing_gitignores(self) -> list[tuple[Path, str]]:
        """The ``.gitignore`` files above the root inside its work tree, outermost first.

        Returns ``(file, lead)`` pairs: ``lead`` is the root's path relative to the file's
        directory, with a trailing ``/`` (for ``repo/.gitignore`` and the project
        ``repo/packages/app``: ``packages/app/``), to prepend to a project-relative path to
        get the path the file's patterns are matched against (gitignore(5): "relative to the
        location of the .gitignore file"). Files are listed whether or not they exist. Empty
        when the root is the top of its work tree, or not in one.
        """
        if self.work_tree is None or not self.prefix:
            return []
        parts = self.prefix.strip("/").split("/")
        return [(self.work_tree.joinpath(*parts[:i], ".gitignore"), "/".join(parts[i:]) + "/")
                for i in range(len(parts))]

    def tracked_files(self, *, listing: bytes | None = None) -> tuple[list[bytes], list[bytes]] | None:
        """The paths under the root that the index tracks (git-ls-files(1) ``--cached``).

        Runs ``git ls-files`` in the root (:meth:`tracked_listing`; read-only: the index is
        not refreshed or written), or takes ``listing``, its output read already, and translates its paths, relative to the work tree's
        top, to paths relative to the root by dropping :attr:`prefix`.

        Returns:
            ``(paths, gitlinks)``: the tracked paths in the index's order (bytewise), an unmerged path
            once, each bytes, ``/``-separated, relative to the root; and those of them that are
            submodules (mode 160000). None when the project is not in a work tree or git failed (logged).

        Raises:
            GitUnavailableError: git is not on PATH.
        """
        if listing is None:
            listing = self.tracked_listing()
        return None if listing is None else _index_paths(listing, self.prefix.encode("utf-8", "surrogateescape"))

    def tracked_listing(self) -> bytes | None:
        """What ``git ls-files -z --stage --full-name`` in the root prints, without the blob ids: one
        ``<mode> <stage>TAB<path>NUL`` record an entry (see :meth:`tracked_files`); None when the project is not in a
        work tree or git failed (logged).

        git 2.38 and later print it so (``--format``); an older git's ``--stage`` output has its blob ids cut out
        here (a regular expression over the whole output, in C). The same bytes either way: a digest of them stays
        the same when git is upgraded.
        """
        if self.git_dir is None or self.work_tree is None:
            return None
        env = base_env(isolate_config=False)
        proc = None
        for args in ([] if _OLD_LS_FILES else [_LS_FILES_FORMAT], ["--stage"]):
            try:
                proc = run_to_files(project_argv(["ls-files", "-z", *args, "--full-name"]), cwd=self.root,
                                    env=env, timeout=300)  # megabytes: through a file (see file_output)
            except (OSError, subprocess.SubprocessError) as exc:
                log.warning("cannot list the files git tracks in %s: %s", self.root, exc)
                return None
            if proc.returncode == 0:
                return proc.stdout if args != ["--stage"] else _BLOB_IDS.sub(b"", proc.stdout)
            if args == [_LS_FILES_FORMAT] and b"format" in proc.stderr:
                _OLD_LS_FILES.append(True)  # git before 2.38: no --format
                continue
            break
        assert proc is not None
        log.warning("cannot list the files git tracks in %s: %s", self.root,
                    proc.stderr.decode("utf-8", "replace").strip())
        return None

    def current_branch(self) -> str:
        """Return the project's current branch name.

        Returns :data:`DETACHED_BRANCH` for a detached HEAD and :data:`NO_GIT_BRANCH`
        when the project is not a git repository. An unborn branch (no commit yet)
        gives its name. While a rebase of a branch is stopped or running (HEAD detached, the branch named in git's
        ``rebase-merge/head-name`` or ``rebase-apply/head-name``), that branch: what is done to it meanwhile (git's
        steps, a conflict's resolution, an ``edit`` stop's amendments) is its history, where it lands when the
        rebase ends, not a detached HEAD's.
        """
        if self.git_dir is None:
            return NO_GIT_BRANCH
        data = read_bounded(self.git_dir / "HEAD", 4096)  # the user's repository may be a hostile clone's
        if data is None:
            return DETACHED_BRANCH
        head = data.decode("utf-8", "surrogateescape").strip()
        if head.startswith("ref: refs/heads/") and head != "ref: refs/heads/.invalid":
            return utf8_branch(head[len("ref: refs/heads/"):])
        if head.startswith("ref:"):  # reftable backend keeps a placeholder in HEAD: ask git
            try:
                out = Git(self.git_dir, None, isolated=False).run(["symbolic-ref", "-q", "HEAD"], check=False)
            except GitError:
                return DETACHED_BRANCH
            ref = out.stdout.decode("utf-8", "surrogateescape").strip()
            if out.returncode == 0 and ref.startswith("refs/heads/"):
                return utf8_branch(ref[len("refs/heads/"):])
        return self._rebased_branch() or DETACHED_BRANCH

    def _rebased_branch(self) -> str | None:
        """The branch a rebase in progress rewrites (git's ``head-name``: ``refs/heads/<branch>``, or ``detached
        HEAD``), or None. Read bounded, never through a FIFO; a name git would refuse is refused by git at its use,
        as a name in ``HEAD`` is."""
        assert self.git_dir is not None
        for state in ("rebase-merge", "rebase-apply"):
            data = read_bounded(self.git_dir / state / "head-name", 4096)
            if data is None:
                continue
            name = data.decode("utf-8", "surrogateescape").strip()
            if name.startswith("refs/heads/") and len(name) > len("refs/heads/") and "\n" not in name:
                return utf8_branch(name[len("refs/heads/"):])
        return None

    def tracks(self, path: str) -> bool:
        """True when the project's index holds ``path`` or anything under it (``git ls-files -- :(literal)path``).

        Args:
            path: relative to the root, ``/``-separated (``.trajectory``).

        Returns:
            False too when the project is not in a work tree.

        Raises:
            GitError: git failed (the answer is unknown).
        """
        if self.git_dir is None or self.work_tree is None:
            return False
        env = base_env(isolate_config=False)
        try:
            proc = subprocess.run(project_argv(["ls-files", "-z", "--", f":(literal){path}"]), cwd=self.root,
                                  env=env, capture_output=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            raise GitError(f"cannot ask git whether it tracks {path}: {exc}", args_=("ls-files",)) from exc
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"cannot ask git whether it tracks {path}: {err}", args_=("ls-files",),
                           returncode=proc.returncode, stderr=err)
        return bool(proc.stdout.strip(b"\0"))

    def index_blobs(self, paths: list[str]) -> dict[str, str]:
        """``{path: blob id}`` of the project's index (staged content) for ``paths`` relative to the root.

        Read-only (``git ls-files --stage``, ``GIT_OPTIONAL_LOCKS=0``): paths not in the index are absent
        from the answer, and so are unmerged ones (a conflict is nobody's content); an empty answer when the
        project is not a git repository or git fails.
        """
        return self.index_stages(paths)[0]

    def index_stages(self, paths: list[str]) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
        """The project's index for ``paths`` (relative to the root): ``({path: staged blob id}, {unmerged path:
        its stages})``, the stages of an unmerged path (a conflict git left) as ``("1:<id>", "2:<id>", ...)``.

        Read-only (``git ls-files --stage``, ``GIT_OPTIONAL_LOCKS=0``); both empty when the project is not a git
        repository or git fails.
        """
        if self.git_dir is None or not paths:
            return {}, {}
        env = base_env(isolate_config=False)
        output = []
        for batch in arg_batches([f":(literal){p}" for p in paths]):  # a checkout of 50,000 files: beyond ARG_MAX
            try:
                proc = subprocess.run(project_argv(["ls-files", "--stage", "-z", "--", *batch]),
                                      cwd=self.root, env=env, capture_output=True, timeout=60)
            except (OSError, subprocess.SubprocessError) as exc:
                log.warning("cannot read the project's index: %s", exc)
                return {}, {}
            if proc.returncode != 0:
                return {}, {}
            output.append(proc.stdout)
        blobs: dict[str, str] = {}
        unmerged: dict[str, tuple[str, ...]] = {}
        for record in b"".join(output).split(b"\0"):
            meta, tab, path = record.partition(b"\t")
            fields = meta.split(b" ")
            if not tab or len(fields) != 3:
                continue
            rel, oid = os.fsdecode(path), fields[1].decode("ascii", "replace")  # relative to the root (git's cwd)
            if fields[2] == b"0":
                blobs[rel] = oid
            else:
                unmerged[rel] = (*unmerged.get(rel, ()), f"{fields[2].decode('ascii', 'replace')}:{oid}")
        return blobs, unmerged

    @property
    def objects_dir(self) -> Path | None:
        """The repository's ``objects`` directory (in the common git dir), or None outside git."""
        return self.common_dir / "objects" if self.common_dir is not None else None

    def global_excludes(self) -> Path:
        """The user's global excludes file: ``core.excludesFile`` or git's default location."""
        env = base_env(isolate_config=False)
        try:
            proc = subprocess.run(project_argv(["config", "--path", "--get", "core.excludesFile"]),
                                  cwd=self.root, env=env, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return default_global_excludes()
        value = proc.stdout.decode("utf-8", "surrogateescape").strip()
        if proc.returncode == 0 and value:
            path = Path(value).expanduser()
            return path if path.is_absolute() else self.root / path
        return default_global_excludes()


#: Bytes of pathspecs given to one git command (:func:`arg_batches`): far below Linux's 2 MiB ``ARG_MAX`` (which
#: the environment shares) and macOS's 1 MiB.
ARG_BYTES = 256 * 1024


def arg_batches(args: list[str]) -> list[list[str]]:
    """``args`` cut into consecutive batches of at most :data:`ARG_BYTES` bytes each (one argument at least), so that
    each fits on a command line: past ``ARG_MAX`` the command does not start at all (``E2BIG``)."""
    batches: list[list[str]] = []
    size = ARG_BYTES
    for arg in args:
        length = len(os.fsencode(arg)) + 1
        if size + length > ARG_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(arg)
        size += length
    return batches


#: ``git ls-files --format`` (git 2.38) printing ``--stage``'s records without the blob id (:meth:`tracked_listing`).
_LS_FILES_FORMAT = "--format=%(objectmode) %(stage)%x09%(path)"
#: The blob id of a ``git ls-files --stage`` record, cut out of an older git's output.
_BLOB_IDS = re.compile(rb" [0-9a-f]{40,64}(?= [0-3]\t)")
#: Holds ``True`` once git refused ``--format`` (older than 2.38) in this process.
_OLD_LS_FILES: list[bool] = []


#: The path of each ``<mode> <stage>TAB<path>NUL`` record (a path may hold a tab: the record's first one ends the
#: mode and stage, and a path holds no NUL).
_RECORD_PATH = re.compile(rb"\t([^\0]*)(?:\0|\Z)")
#: The path of each gitlink's record (mode 160000) of such output.
_GITLINK_PATH = re.compile(rb"(?:\A|\0)160000 [0-3]\t([^\0]*)")
#: A stage other than 0 (an unmerged path, listed once a stage): present, or a path holding these bytes.
_STAGES = (b" 1\t", b" 2\t", b" 3\t")


def _index_paths(output: bytes, prefix: bytes) -> tuple[list[bytes], list[bytes]]:
    """``(paths below prefix, those of gitlinks)`` of the :meth:`ProjectRepo.tracked_listing` records
    (``<mode> <stage>TAB<path>NUL``), in their order, an unmerged path once: cut out by regular expressions, in C
    (500,000 records at an import)."""
    paths = _RECORD_PATH.findall(output)
    gitlinks = _GITLINK_PATH.findall(output) if b"160000 " in output else []
    if any(stage in output for stage in _STAGES):
        paths = [path for path, before in zip(paths, [None, *paths]) if path != before]
        gitlinks = [path for path, before in zip(gitlinks, [None, *gitlinks]) if path != before]
    if not all(paths):  # a record with an empty path (never git's): not a path
        paths = [path for path in paths if path]
    if prefix:
        skip = len(prefix)
        paths = [path[skip:] for path in paths if path.startswith(prefix) and len(path) > skip]
        gitlinks = [path[skip:] for path in gitlinks if path.startswith(prefix) and len(path) > skip]
    return paths, gitlinks


def default_global_excludes() -> Path:
    """git's default global excludes file: ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "git" / "ignore"


def utf8_branch(name: str) -> str:
    """A project branch's name as code-trajectory names its shadow branch: ``name`` itself, but each byte of a name
    that is not UTF-8 (read with ``surrogateescape``) as ``%XX`` (``feat\\xff`` -> ``feat%FF``): the shadow ref, the
    messages and the answers are UTF-8 text, and such a name recorded nothing (every snapshot failed to encode it)."""
    if not any("\udc80" <= ch <= "\udcff" for ch in name):
        return name
    return "".join(f"%{ord(ch) - 0xDC00:02X}" if "\udc80" <= ch <= "\udcff" else ch for ch in name)
