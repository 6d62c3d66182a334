"""What the initial import reads of the project's own repository: its index with git's stat data, and its attributes.

Read-only, and apart from :mod:`code_trajectory.git.project` (the repository's layout, its tracked set, its
branch) because only :mod:`code_trajectory.recording.index_seed` needs it: the index's entries and cache-tree
(:mod:`code_trajectory.git.index_file`, or git's own listing when that reader declines), the paths staged apart from
``HEAD``, and the ``filter`` attribute's values. git runs as the user's git in the project (its config read), for
queries that run no program of that config.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from code_trajectory.git.file_output import run_to_files
from code_trajectory.git.gitcmd import base_env, project_argv
from code_trajectory.git.index_entries import IndexEntries, IndexRow
from code_trajectory.git.index_file import IndexCopy, IndexFile, IndexFormatError, IndexTree, read_index
from code_trajectory.git.project import ProjectRepo

__all__ = ["ProjectIndex", "attribute_files", "attribute_values", "head_trees", "index_with_stat"]

log = logging.getLogger(__name__)

#: :func:`os.fsdecode`'s encoding and error handler, applied inline where a path is decoded once a file.
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


@dataclass
class ProjectIndex:
    """What :func:`index_with_stat` read.

    Attributes:
        entries: the stage-0 entries that match ``HEAD``, in the index's order, as columns
            (:class:`~code_trajectory.git.index_entries.IndexEntries`); paths relative to the root, as bytes, as the
            index holds them (decoded only where needed: :func:`os.fsdecode`).
        mtime_ns: the index file's mtime, ns.
        copy: where its entries lie, to copy them into a private index as they are
            (:class:`~code_trajectory.git.index_file.IndexCopy`, its paths relative to the root); None when the
            project is a subdirectory of its work tree (the index's paths are not relative to the root), the index
            is not version 2, or git read it.
        index: the index file read (its cache-tree is parsed when :attr:`trees` is first asked for), or None when git
            read it.
        prefix: the root's path from the top of the work tree (``b""``, or ending in ``/``).
    """

    entries: IndexEntries
    mtime_ns: int
    copy: IndexCopy | None
    index: IndexFile | None = None
    prefix: bytes = b""

    @cached_property
    def trees(self) -> dict[str, IndexTree]:
        """git's cache-tree (:attr:`~code_trajectory.git.index_file.IndexFile.trees`) for the root and the
        directories below it, relative to the root (``""`` the root); empty when the index was read by git."""
        if self.index is None:
            return {}
        return {directory: tree for directory, tree in
                ((_directory_under(path, self.prefix), tree) for path, tree in self.index.trees.items())
                if directory is not None}


def index_with_stat(project: ProjectRepo, *, oid_bytes: int = 20) -> ProjectIndex | None:
    """The index's stage-0 entries under the root with git's stat data, for files that match HEAD.

    Read-only: the index file itself (:func:`code_trajectory.git.index_file.read_index`), or when it is not
    one that reader understands (a split index...), ``git ls-files -z --stage --debug --full-name``; then
    ``git diff-index --cached --name-only -z HEAD`` to leave out what is staged but not committed (a blob that
    only the index holds is not taken: see :mod:`code_trajectory.recording.index_seed`).

    Args:
        oid_bytes: the length of an object id (20 for SHA-1, 32 for SHA-256) expected in the index.

    Returns:
        A :class:`ProjectIndex`, or None when the project is not in a work tree, has no commit, or git failed
        (logged).
    """
    if project.git_dir is None or project.work_tree is None:
        return None
    env = base_env(isolate_config=False)
    # git reads the index and HEAD's trees while the index is parsed here
    staged_args = ["diff-index", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--"]
    try:
        running = subprocess.Popen(
            project_argv(staged_args), cwd=project.root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
    except OSError as exc:
        log.warning("cannot read the index of %s: %s", project.root, exc)
        return None
    found: IndexFile | None = None
    try:
        found = read_index(project.git_dir / "index", oid_bytes=oid_bytes)
        entries, mtime_ns = found.entries, found.mtime_ns
    except (OSError, IndexFormatError) as exc:
        log.info("reading the index of %s with git: %s", project.root, exc)
        try:
            mtime_ns = os.stat(project.git_dir / "index").st_mtime_ns
            listed = _ls_files_debug(project, env)
        except OSError:
            listed = None
        if listed is None:
            running.kill()
            running.communicate()
            return None
        entries = IndexEntries.from_rows(listed, oid_bytes)
    staged = _project_output(project, staged_args, env, running=running)
    if staged is None:
        return None
    entries = entries.without({path for path in staged.split(b"\0") if path})
    prefix = project.prefix.encode("utf-8", "surrogateescape")
    if prefix:
        return ProjectIndex(entries.under(prefix), mtime_ns, None, found, prefix)
    return ProjectIndex(entries, mtime_ns, found.copy if found is not None else None, found, prefix)


def _directory_under(path: bytes, prefix: bytes) -> str | None:
    """The directory ``path`` (relative to the top of the work tree, ``b""`` the top) relative to the project root,
    whose path from the top is ``prefix`` (``b""``, or ending in ``/``): ``""`` for the root itself, None for a
    directory outside it. The cache-tree's directories and ``HEAD``'s are named so alike (:func:`head_trees`)."""
    if path == prefix.rstrip(b"/"):
        return ""
    return path[len(prefix):].decode(_FS_ENCODING, _FS_ERRORS) if path.startswith(prefix) else None

def _project_output(project: ProjectRepo, args: list[str], env: dict[str, str], *,
                    running: subprocess.Popen[bytes] | None = None) -> bytes | None:
    """stdout of a read-only git query in the project (``running``: started already), or None when git failed
    (logged)."""
    try:
        if running is None:
            proc = run_to_files(project_argv(args), cwd=project.root, env=env, timeout=600)  # see file_output
            out, err, code = proc.stdout, proc.stderr, proc.returncode
        else:
            try:
                out, err = running.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                running.kill()
                running.communicate()
                raise
            code = running.returncode
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("cannot read the index of %s: %s", project.root, exc)
        return None
    if code != 0:
        log.info("not reusing the index of %s: git %s: %s", project.root, args[0], err.decode("utf-8", "replace").strip())
        return None
    return out

def _ls_files_debug(project: ProjectRepo, env: dict[str, str]) -> dict[bytes, IndexRow] | None:
    """The stage-0 entries of ``git ls-files --stage --debug`` (paths relative to the top of the work tree)."""
    out = _project_output(project, ["ls-files", "-z", "--stage", "--debug", "--full-name"], env)
    if out is None:
        return None
    rows: dict[bytes, IndexRow] = {}
    for match in _DEBUG_RECORD.finditer(out):
        if match.group("stage") == b"0":
            rows[match.group("path")] = (
                match.group("mode").decode(), match.group("oid").decode(), int(match.group("size")),
                int(match.group("ms")) * 1_000_000_000 + int(match.group("mn")),
                int(match.group("cs")) * 1_000_000_000 + int(match.group("cn")), int(match.group("ino")))
    return rows

def attribute_values(project: ProjectRepo, paths: list[str], *attributes: str) -> dict[str, str] | None:
    """``{path: value}`` of the git ``attributes`` for ``paths`` relative to the root (``git check-attr --stdin
    -z``), leaving out ``unspecified`` (a path for which several are specified: the last one's value); None when git
    failed (the caller must then assume the worst)."""
    if project.git_dir is None or project.work_tree is None:
        return None
    env = base_env(isolate_config=False)
    data = b"".join(os.fsencode(p) + b"\0" for p in paths)
    try:
        proc = subprocess.run(project_argv(["check-attr", "--stdin", "-z", *attributes]), cwd=project.root, env=env,
                              input=data, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("cannot read git attributes in %s: %s", project.root, exc)
        return None
    if proc.returncode != 0:
        return None
    fields = proc.stdout.split(b"\0")
    return {os.fsdecode(fields[i]): fields[i + 2].decode("utf-8", "replace")
            for i in range(0, len(fields) - 2, 3) if fields[i + 2] != b"unspecified"}

def attribute_files(project: ProjectRepo) -> list[Path]:
    """The attribute files git may read for this work tree besides the tracked ``.gitattributes`` files:
    ``$GIT_COMMON_DIR/info/attributes``, the user's (``core.attributesFile``, else
    ``$XDG_CONFIG_HOME/git/attributes`` or ``~/.config/git/attributes``) and the system's
    (``/etc/gitattributes``), those that exist."""
    found = []
    if project.common_dir is not None:
        found.append(project.common_dir / "info" / "attributes")
    env = base_env(isolate_config=False)
    try:
        proc = subprocess.run(project_argv(["config", "--path", "--get", "core.attributesFile"]),
                              cwd=project.root, env=env, capture_output=True, timeout=30)
        value = proc.stdout.decode("utf-8", "surrogateescape").strip()
    except (OSError, subprocess.SubprocessError):
        value = ""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    found.append(Path(value).expanduser() if value else Path(xdg) / "git" / "attributes")
    found.append(Path("/etc/gitattributes"))
    return [path for path in found if path.is_file()]


#: One record of ``git ls-files -z --stage --debug``: ``<mode> <oid> <stage>TAB<path>NUL`` then the stat lines
#: (git's ``ls-files.c`` ``print_debug``: ctime, mtime as ``sec:nsec``, dev and ino, uid and gid, size and flags).
_DEBUG_RECORD = re.compile(
    rb"(?P<mode>[0-7]{6}) (?P<oid>[0-9a-f]{40,64}) (?P<stage>[0-3])\t(?P<path>[^\0]*)\0"
    rb"  ctime: (?P<cs>\d+):(?P<cn>\d+)\n  mtime: (?P<ms>\d+):(?P<mn>\d+)\n"
    rb"  dev: \d+\tino: (?P<ino>\d+)\n  uid: \d+\tgid: \d+\n  size: (?P<size>\d+)\tflags: [0-9a-f]+\n")


def head_trees(project: ProjectRepo) -> dict[str, str] | None:
    """The tree id of ``HEAD`` for the root and each directory below it: ``{directory relative to the root (""
    the root): tree id hex}`` (``git rev-parse HEAD^{tree}``, ``git ls-tree -r -d -z --full-tree HEAD``; read-only).
    None when the project is not in a work tree, has no commit, or git failed (logged).

    The initial import takes a directory's tree from git's cache-tree only when it is this one: ``HEAD``'s trees are
    named by a commit (content-addressed from it), the cache-tree is only what the index file says.
    """
    if project.git_dir is None or project.work_tree is None:
        return None
    env = base_env(isolate_config=False)
    top_tree = _project_output(project, ["rev-parse", "--verify", "-q", "HEAD^{tree}"], env)
    listed = _project_output(project, ["ls-tree", "-r", "-d", "-z", "--full-tree", "HEAD"], env)
    if top_tree is None or listed is None:
        return None
    prefix = project.prefix.encode("utf-8", "surrogateescape")
    found = {"": top_tree.strip().decode("ascii", "replace")} if not prefix else {}
    for record in listed.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        fields = meta.split(b" ")
        if not tab or len(fields) != 3 or fields[1] != b"tree":
            continue
        directory = _directory_under(path, prefix)
        if directory is not None:
            found[directory] = fields[2].decode("ascii", "replace")
    return found
