"""Atomic file replacement: the one way this package writes a small file that readers may read at any moment.

:func:`replace_file` writes the new content to a temporary file beside the target (same directory, hence same
file system), created exclusively and never through a link (``O_EXCL | O_NOFOLLOW``), fsyncs it, renames it over
the target (``rename(2)``/``os.replace``: atomic on POSIX and on NTFS), then fsyncs the directory so that the
rename survives a crash (POSIX only; Windows has no directory fsync). A reader sees the old file or the new one,
never half of one; on any failure the temporary file is removed and the target is left as it was.

The temporary name is fixed-length, ``.ct-<12 hex digits>.tmp`` (20 bytes): it never nears the 255-byte name
limit however long the target's name is, and a random part keeps two writers of the same file apart.

Not for: git objects and packs (:mod:`code_trajectory.git.shadow`, :mod:`code_trajectory.git.packs` follow git's
own object protocol: ``tmp_obj_``/``tmp_pack_`` names that ``git prune`` clears, a hard link for loose objects),
git's config (written through ``config.lock``, git's lock protocol, :mod:`code_trajectory.git.untrusted`), and
files restored into the work tree (:mod:`code_trajectory.restore.apply`: temp names from the restore's journal,
cleared after a kill, and no fsync per file, as ``git checkout``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

#: Prefix and suffix of the temporary file :func:`replace_file` writes beside its target.
TEMP_PREFIX = ".ct-"
TEMP_SUFFIX = ".tmp"

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def is_temp_name(name: str) -> bool:
    """True when ``name`` (a file name, no directory) is one of :func:`replace_file`'s temporary files."""
    return (len(name) == len(TEMP_PREFIX) + 12 + len(TEMP_SUFFIX) and name.startswith(TEMP_PREFIX)
            and name.endswith(TEMP_SUFFIX))


def new_file_mode() -> int:
    """0o666 less the process's umask: the bits ``open(2)`` would give a new file.

    Read from ``/proc/self/status`` (``Umask:``, Linux 4.7+) where it exists: the portable way, setting the umask to
    learn it, changes it for a moment for every thread of the process, and a file another thread creates in that
    moment would get no umask at all.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o077)  # the moment's umask is the strictest, not none
    os.umask(umask)
    return 0o666 & ~umask


def replace_file(path: Path | str, data: bytes | str, *, mode: int | None = None, fsync: bool = True) -> None:
    """Replace the file ``path`` with ``data`` atomically (or create it); the parent directory must exist.

    Args:
        path: the file; a symlink at ``path`` is replaced by the file (not followed: resolve it first to write
            through a link).
        data: the new content; ``str`` is encoded as UTF-8 (lone surrogates as ``surrogateescape``, as
            undecodable file names read by Python).
        mode: the new file's permission bits (e.g. ``0o600``), applied as given (no umask); None keeps the
            replaced regular file's bits, or :func:`new_file_mode` when there is none (a symlink or a FIFO at
            ``path`` lends nothing).
        fsync: False skips the two fsyncs (the rename is still atomic, but a crash may lose it), for files
            that are cheap to lose and written often.

    Raises:
        OSError: the file cannot be written or renamed (the target is unchanged, the temporary file removed).
    """
    target = Path(path)
    body = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if mode is None:
        try:
            st = target.lstat()  # not stat(): a symlink to /dev/zero would lend its 0o666
            mode = st.st_mode & 0o7777 if stat.S_ISREG(st.st_mode) else new_file_mode()
        except FileNotFoundError:
            mode = new_file_mode()
    while True:
        # os.urandom is what the secrets module reads; imported without it (hmac, hashlib): every hook writes here
        tmp = target.with_name(f"{TEMP_PREFIX}{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            fd = os.open(tmp, _CREATE, 0o600)
            break
        except FileExistsError:  # 2**-48 per try: another writer's
            continue
    try:
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view):]
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        fsync_dir(target.parent)


def fsync_dir(directory: Path | str) -> None:
    """Make a rename or creation in ``directory`` durable; best effort (not on Windows; a file system that
    cannot fsync a directory is ignored: the rename itself has happened, only its durability is weaker)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
