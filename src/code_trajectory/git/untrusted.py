"""Everything inside ``.trajectory/`` is untrusted input: vetting the shadow repository when it is opened.

A ``.trajectory/`` may arrive from elsewhere: force-added to a project's git and cloned, unpacked from a
tarball, or written by another user. Its config file could then name programs git would run (a
``diff.<driver>.textconv``, ``log.showSignature`` with a ``gpg.program``, a ``filter.<driver>.process``,
``core.fsmonitor``, an ``include.path`` to a file holding such keys...). Opening one therefore:

1. refuses it, with one line saying how to start a new history, when it is not ours: owned by another
   user (git's own ``safe.directory`` rule, git-config(1)), tracked by the project's git (it came with
   the repository), a linked git directory (a ``commondir`` file sends git to another repository's
   config and refs; code-trajectory never writes one), one borrowing objects (``objects/info/alternates``:
   git reads the directories it names, where a FIFO made every command wait), a ``.trajectory`` symlink to
   a directory holding files that is not a history code-trajectory made (``../mine/.git`` in a tarball: its
   config would be rewritten, its ``info/exclude`` replaced) or that is another project's history
   (:mod:`code_trajectory.git.owner`), or one holding a symlink or a special file
   anywhere (:func:`check_tree`: git writes through a link, and waits forever on a FIFO);
2. reduces its config file to the keys code-trajectory writes: the table
   :data:`~code_trajectory.git.shadow_config.SHADOW_REPO_CONFIG` (with exactly its values) and the
   layout keys ``git init`` writes (:data:`INIT_KEYS`); every other key, include and section is dropped
   by rewriting the file atomically (``config.lock`` renamed over ``config``, git's own protocol), and
   the dropped keys are reported once (a warning on stderr and a notice of the opening).

Independently of the file, every git process gets forced overrides (:mod:`code_trajectory.git.gitcmd`).

A stamp in ``state/config-checked`` (the config file's inode, ctime, mtime and size, the wanted keys, and the
project's git index's identity and state) skips the check while neither changed; a copied or cloned
``.trajectory`` cannot carry a valid stamp, since its files get a new inode and ctime (which no user can set), and
a pull that plants files in an existing ``.trajectory`` (a ``config.toml`` turning the secret deny list off)
rewrites the project's index, so the next opening asks git again whether it tracks anything there.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import stat
import time
from pathlib import Path

from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import GitError, LockContentionError, UntrustedRepositoryError
from code_trajectory.git.gitcmd import Git, split_z
from code_trajectory.git.owner import check_belongs
from code_trajectory.git.project import ProjectRepo
from code_trajectory.git.shadow_config import SHADOW_REPO_CONFIG
from code_trajectory.git.vet_stamp import STAMP_BYTES, STAMP_FILE, file_identity, index_stamp, read_stamp

log = logging.getLogger(__name__)

#: Layout keys ``git init`` writes (git-init(1), git-config(1) ``core.*``), with the values allowed.
INIT_KEYS: dict[str, tuple[str, ...]] = {
    "core.repositoryformatversion": ("0",),
    "core.filemode": ("true", "false"),
    "core.bare": ("true", "false"),
    "core.ignorecase": ("true", "false"),
    "core.precomposeunicode": ("true", "false"),
    "core.symlinks": ("true", "false"),
}
#: How long a ``config.lock`` held by another process is waited for before giving up, seconds.
LOCK_WAIT_SECONDS = 2.0
#: Dropped keys named in a notice (the rest are counted).
MAX_KEYS_NAMED = 40
#: ``.trajectory/.gitignore``: git ignores a directory whose own ``.gitignore`` says ``*`` (as virtualenvs and
#: pytest's cache do), so ``git status`` and ``git add -A`` of the project never see the shadow repository, and no
#: tracked file (the project's ``.gitignore``) nor anything under the project's ``.git`` is written for it. It also
#: tells a directory a ``.trajectory`` symlink leads to as a history code-trajectory made (:func:`check_link_target`).
SELF_IGNORE = "# code-trajectory: the shadow repository is not part of the project's git\n*\n"



def recreate_hint(git_dir: Path, first: str = "") -> str:
    """What the user does about a refused ``.trajectory``: move it aside (to a name that is never recorded, as a
    damaged one is), and the next start creates a new one. ``first``: a step to take before."""
    aside = git_dir.with_name(git_dir.name + ".corrupt-untrusted")
    return (f"{first}move it aside (`mv '{git_dir}' '{aside}'`) and code-trajectory creates a new one at the next "
            "start")


def vet(git_dir: Path) -> list[str]:
    """Check the existing shadow repository ``git_dir`` and reduce its config (see the module docstring).

    Args:
        git_dir: the shadow repository (``<project>/.trajectory``, or the temporary directory it is built in);
            its parent is the project root.

    Returns:
        The config keys removed (``section.[subsection.]key`` as ``git config --list`` names them, each
        once, in file order); empty when nothing was removed or the stamp says the file is unchanged.

    Raises:
        UntrustedRepositoryError: another user owns it, the project's git tracks it, it is a linked git
            directory, or a file git reads there is not a regular file (:func:`check_plain_files`); the message is
            one line saying how to re-create it.
        LockContentionError: another process held ``config.lock`` for :data:`LOCK_WAIT_SECONDS`.
        OSError: the config or the stamp cannot be written.
    """
    check_link_target(git_dir)
    check_owner(git_dir)
    check_plain_files(git_dir)
    if (git_dir / "commondir").exists():
        raise UntrustedRepositoryError(f"{git_dir} is a linked git directory (it holds a `commondir` file, which "
                                       f"code-trajectory never writes): {recreate_hint(git_dir)}")
    for alternates in ("alternates", "http-alternates"):
        if os.path.lexists(git_dir / "objects" / "info" / alternates):
            raise UntrustedRepositoryError(f"{git_dir} borrows objects from elsewhere (it holds objects/info/"
                                           f"{alternates}, which code-trajectory never writes; git would read the "
                                           f"directories it names): {recreate_hint(git_dir)}")
    stamp_file = git_dir / STAMP_FILE
    config = git_dir / "config"
    # the project's index too: a pull that brings files under .trajectory/ (a planted config.toml, state) changes it
    index = index_stamp(git_dir.parent)
    if index != "?" and read_stamp(stamp_file) == _stamp(config) + index and _stamp(config) != "":
        return []
    check_not_tracked(git_dir)
    check_tree(git_dir)  # a copied or unpacked .trajectory never carries a valid stamp: checked on its first opening
    removed = reduce_config(git_dir)
    if removed:
        log.warning("%s", removed_notice(removed))
    stamp_file.parent.mkdir(mode=0o700, exist_ok=True)
    _write_atomic(stamp_file, (_stamp(config) + index).encode("utf-8", "surrogateescape"))  # a path not UTF-8
    return removed


def removed_notice(removed: list[str]) -> str:
    """One sentence naming the config keys :func:`reduce_config` removed."""
    named = ", ".join(removed[:MAX_KEYS_NAMED])
    more = f" and {len(removed) - MAX_KEYS_NAMED} more" if len(removed) > MAX_KEYS_NAMED else ""
    return (f"the shadow repository's config held settings code-trajectory does not write; they were removed so "
            f"that nothing they name can run: {named}{more}")


#: Files git reads in a repository it opens, relative to the git directory (gitrepository-layout(5)); none of them
#: is ever anything but a regular file in a repository code-trajectory made.
GIT_READS = ("HEAD", "config", "packed-refs", "shallow", "index", "FETCH_HEAD", "ORIG_HEAD", "objects/info/alternates",
             "objects/info/packs", "objects/info/commit-graph", "info/exclude", "info/attributes", "info/grafts")


def check_plain_files(git_dir: Path) -> None:
    """Refuse ``git_dir`` when a file git reads there (:data:`GIT_READS`) exists as anything but a regular file:
    a FIFO makes every git command wait forever, a symlink to ``/dev/zero`` read forever, and a symlink may send git
    to another repository's files.

    Raises:
        UntrustedRepositoryError: one such file was found; the message names it and says how to re-create.
    """
    for name in GIT_READS:
        path = git_dir / name
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UntrustedRepositoryError(f"{path} cannot be examined ({exc.strerror}): {recreate_hint(git_dir)}") \
                from None
        if not stat.S_ISREG(mode):
            kind = "a symlink" if stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
            raise UntrustedRepositoryError(f"{path} is {kind}, which code-trajectory never writes (git would read "
                                           f"it): {recreate_hint(git_dir)}")


def check_link_target(git_dir: Path) -> None:
    """Refuse a ``git_dir`` that is a symlink to a directory holding files but no history code-trajectory made (no
    :data:`SELF_IGNORE` ``.gitignore``): a link made to keep the history on another disk leads to an empty
    directory (created there) or to a moved ``.trajectory``; one shipped with a project may lead to another
    repository's ``.git``, whose config, ``info/`` files and stale locks the opening would rewrite or remove. A
    history of ours that another project still uses as its own is refused too (:func:`.owner.check_belongs`).

    Raises:
        UntrustedRepositoryError: the link leads to such a directory, or to another project's history.
    """
    if not git_dir.is_symlink():
        return
    try:
        with os.scandir(git_dir) as entries:
            if next(entries, None) is None:
                return
    except OSError:  # a dangling link: the creation says so
        return
    if read_bounded(git_dir / ".gitignore", STAMP_BYTES) == SELF_IGNORE.encode():
        check_belongs(git_dir)
        return
    raise UntrustedRepositoryError(
        f"{git_dir} is a symlink to {os.path.realpath(git_dir)}, which holds files but is not a history "
        f"code-trajectory made (a link that came with the project could lead to another repository), so "
        f"code-trajectory will not use it: remove the link (`rm '{git_dir}'`), or point it at an empty directory, "
        f"and code-trajectory creates a new history at the next start")


def check_tree(git_dir: Path) -> None:
    """Refuse ``git_dir`` when anything in it, at any depth, is a symlink or neither a regular file nor a directory:
    code-trajectory and git only ever write those there, and git follows a link when it writes (a ``logs/HEAD``
    linked to a file outside gets a line appended, a linked ``refs/heads/shadow`` or ``objects`` gets files
    created where it leads) and waits forever on a FIFO.

    Raises:
        UntrustedRepositoryError: one such entry was found; the message names it and says how to re-create.
    """
    pending = [git_dir]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:  # unreadable: git fails on it with its own error
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                    continue
                plain = entry.is_file(follow_symlinks=False)
            except OSError:
                continue
            if not plain:
                kind = "a symlink" if entry.is_symlink() else "not a regular file"
                raise UntrustedRepositoryError(f"{entry.path} is {kind}, which code-trajectory never writes (git "
                                               f"would follow it or wait on it): {recreate_hint(git_dir)}")


def check_owner(git_dir: Path) -> None:
    """Refuse ``git_dir`` (or its config file) when another user owns it (POSIX only).

    Raises:
        UntrustedRepositoryError: the owner's uid is not this process's effective uid.
    """
    if not hasattr(os, "geteuid"):
        return
    uid = os.geteuid()
    for path in (git_dir, git_dir / "config"):
        try:
            owner = path.stat().st_uid
        except FileNotFoundError:
            continue
        if owner != uid:
            raise UntrustedRepositoryError(f"{path} belongs to another user (uid {owner}, you are {uid}), so "
                                           f"code-trajectory will not use it: {recreate_hint(git_dir)}")


def check_not_tracked(git_dir: Path) -> None:
    """Refuse ``git_dir`` when the project's git tracks it: it came with a clone or a pull of the project.

    A project git that cannot answer (a damaged index) is logged and the check skipped: a clone's index is
    git's own, so an attack cannot hide this way, and the config is reduced whatever the answer.

    Raises:
        UntrustedRepositoryError: ``git ls-files`` in the project lists ``git_dir`` or a file under it.
    """
    root = git_dir.parent
    project = ProjectRepo.discover(root)
    try:
        tracked = project.tracks(git_dir.name)
    except GitError as exc:  # a broken index is the user's, not a clone's: the config is still reduced
        log.warning("cannot tell whether the project's git tracks %s: %s", git_dir, exc)
        return
    if tracked:
        raise UntrustedRepositoryError(
            f"{git_dir} is tracked by the project's git (it came with the repository, not from this machine), so "
            f"code-trajectory will not use it: " + recreate_hint(git_dir, f"untrack it (`git rm -r -q --cached "
                                                                          f"{git_dir.name}`), "))


def wanted_config() -> dict[str, tuple[str, str]]:
    """``{lower-case key: (key as written, value)}`` of :data:`SHADOW_REPO_CONFIG`."""
    return {normalize(key): (key, value) for key, value in SHADOW_REPO_CONFIG}


def normalize(key: str) -> str:
    """A config key as ``git config --list`` names it: section and name lower-case, a subsection as written."""
    section, _, rest = key.partition(".")
    middle, _, name = rest.rpartition(".")
    return f"{section.lower()}.{middle + '.' if middle else ''}{name.lower()}"


def reduce_config(git_dir: Path) -> list[str]:
    """Rewrite ``git_dir/config`` to hold only our keys; return the keys removed.

    Kept: every key of :data:`SHADOW_REPO_CONFIG` (with its value from that table, whatever the file said)
    and the keys of :data:`INIT_KEYS` whose value is allowed. A file git cannot parse is replaced the same
    way (reported as ``<unreadable config>``). The file is only rewritten when it differs from that.

    Raises:
        LockContentionError: another process held ``config.lock`` for :data:`LOCK_WAIT_SECONDS`.
        OSError: the file cannot be written.
    """
    config = git_dir / "config"
    entries, readable = _entries(git_dir, config)
    wanted = wanted_config()
    kept: dict[str, tuple[str, str]] = {}
    removed: list[str] = [] if readable else ["<unreadable config>"]
    for key, value in entries:
        low = normalize(key)
        if low in wanted:
            if value != wanted[low][1] and low not in removed and low not in INIT_KEYS:
                removed.append(low)  # a wrong value of ours (core.bare of git init is not news): ours written below
            continue
        if low in INIT_KEYS and value in INIT_KEYS[low] and low not in kept:
            kept[low] = (low.partition(".")[2], value)
            continue
        if low not in removed and not (low in kept and kept[low][1] == value):
            removed.append(low)
    text = _render(kept, wanted)
    if readable and not removed and _canonical(entries) == _canonical_wanted(kept, wanted):
        return []
    try:
        current = config.read_bytes()
    except FileNotFoundError:
        current = b""
    if current != text.encode():
        _replace_config(config, text)
    return removed


def _entries(git_dir: Path, config: Path) -> tuple[list[tuple[str, str]], bool]:
    """The file's ``(key, value)`` pairs as git reads them, includes not followed; ``([], False)`` when git
    cannot parse it, ``([], True)`` when it is missing."""
    if not config.exists():
        return [], True
    proc = Git(git_dir, None, isolated=True).run(["config", "--file", str(config), "--no-includes", "--list",
                                                  "-z"], check=False)
    if proc.returncode != 0:
        return [], False
    pairs = []
    for entry in split_z(proc.stdout):
        key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        pairs.append((key, value))
    return pairs, True


def _canonical(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted((normalize(key), value) for key, value in entries)


def _canonical_wanted(kept: dict[str, tuple[str, str]], wanted: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted([(low, value) for low, (_, value) in kept.items()] +
                  [(low, value) for low, (_, value) in wanted.items()])


def _render(kept: dict[str, tuple[str, str]], wanted: dict[str, tuple[str, str]]) -> str:
    """The config file holding ``kept`` then ``wanted``, grouped by section in git's syntax (git-config(1),
    "Syntax"): every value double-quoted with ``\\``, ``"``, newline and tab escaped."""
    sections: dict[tuple[str, str], list[str]] = {}
    for low, (written, value) in [*kept.items(), *wanted.items()]:
        section, _, rest = low.partition(".")
        subsection, _, _ = rest.rpartition(".")
        name = written.rpartition(".")[2]
        sections.setdefault((section, subsection), []).append(f"\t{name} = {_quote(value)}\n")
    out = []
    for (section, subsection), lines in sections.items():
        out.append(f"[{section} {_quote(subsection)}]\n" if subsection else f"[{section}]\n")
        out += lines
    return "".join(out)


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _replace_config(config: Path, text: str) -> None:
    """Write ``config`` through ``config.lock`` (created exclusively, then renamed: git's lock protocol)."""
    lock = config.with_name(config.name + ".lock")
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise LockContentionError(f"{lock} stayed held for {LOCK_WAIT_SECONDS:g} s: another process "
                                          "writes the shadow repository's config") from None
            time.sleep(0.05)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode())
            out.flush()
            os.fsync(out.fileno())
        os.replace(lock, config)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        raise


def _stamp(config: Path) -> str:
    """The config file's identity and state (inode, ctime, mtime, size) and the keys wanted; ``""`` if missing."""
    identity = file_identity(config)
    if not identity:
        return ""
    wanted = hashlib.sha1(repr((SHADOW_REPO_CONFIG, INIT_KEYS)).encode()).hexdigest()
    return f"{identity} {wanted}\n"


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        replace_file(path, data)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
