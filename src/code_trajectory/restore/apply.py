"""Writing recorded content back into the work tree: atomically, mode and symlinks kept, never outside the project.

Every file is written to a temporary file beside it (a short fixed-length name of the restore's journal,
:mod:`code_trajectory.git.worktemp`: never past the 255-byte name limit, cleared after a kill), created exclusively (``O_EXCL``, ``O_NOFOLLOW``: never
through a link) with the recorded executable bit (less the umask, as ``git checkout``; a file replaced keeps its
own read and write bits), and renamed over the old one (``os.replace``), so a reader or a crash never sees half a
file; as ``git checkout``, there is no fsync per file. Blobs are streamed from one ``git cat-file --batch`` and files written by a few threads. A recorded
symlink is recreated as a link (its target string, never followed). A path whose existing parent directory is
a symlink is refused: writing through it could land outside the project. A write that fails part-way raises
:class:`PartialWriteError` naming what was written, for the caller to put it back (:func:`put_back`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections import deque
from collections.abc import Callable, Generator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, suppress
from pathlib import Path

from code_trajectory.core.errors import InvalidArgumentError, StorageError
from code_trajectory.git.blob_stream import stream_blobs
from code_trajectory.git.oversize import OVERSIZE_MARKER, oversize_size
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import MODE_EXECUTABLE, MODE_SYMLINK, TreeEntry
from code_trajectory.git.worktemp import Journal

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
#: Threads writing files in a restore (file creation waits on the file system, not on Python).
WRITE_WORKERS = 8
_IN_FLIGHT = 256  # files read but not yet written, at most
_STREAM_FROM = 16  # from this many blobs on, one streamed cat-file beats a round trip per blob


class PartialWriteError(StorageError):
    """A restore's write failed after others succeeded.

    Attributes:
        done: paths (relative to the root) already written or removed, to put back.
        failed: the path whose write failed.
    """

    def __init__(self, message: str, done: list[str], failed: str) -> None:
        super().__init__(message)
        self.done = done
        self.failed = failed


def _safe_parent(root: Path, rel: str, checked: set[str] | None = None) -> str:
    """The directory ``rel`` goes into, created if needed, after checking no component is a symlink or a file.

    ``checked`` remembers directories already checked in this restore (each is checked once).

    Raises:
        InvalidArgumentError: a parent component is a symlink or not a directory.
    """
    parent = os.fspath(root)
    for part in rel.split("/")[:-1]:
        parent = f"{parent}/{part}"
        if checked is not None and parent in checked:
            continue
        try:
            st = os.lstat(parent)
        except FileNotFoundError:
            os.mkdir(parent)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise InvalidArgumentError(f"refusing to write {rel}: {os.path.relpath(parent, root)} is a symlink "
                                       "(writing through it could leave the project)")
        if not stat.S_ISDIR(st.st_mode):
            raise InvalidArgumentError(f"refusing to write {rel}: {os.path.relpath(parent, root)} is a file now")
        if checked is not None:
            checked.add(parent)
    return parent


def blob_bytes(repo: ShadowRepo, oid: str) -> bytes:
    """The content of a recorded blob.

    Raises:
        StorageError: the blob is missing (a damaged shadow repository).
    """
    found = repo.read_object(oid)
    if found is None or found[0] != "blob":
        raise StorageError(f"blob {oid} is missing from the shadow repository")
    return found[1]


def read_blobs(repo: ShadowRepo, oids: list[str]) -> Generator[bytes, None, None]:
    """The contents of the blobs ``oids``, in order, read from one ``git cat-file --batch`` fed by a thread (no
    round trip per blob).

    Raises:
        StorageError: a blob is missing (a damaged shadow repository).
    """
    if len(oids) < _STREAM_FROM:
        for oid in oids:
            yield blob_bytes(repo, oid)
        return
    with stream_blobs(repo, oids) as blobs:
        for oid, size, stream in blobs:
            if size > repo.max_object_bytes:
                raise StorageError(f"blob {oid} is {size:,} bytes, more than the {repo.max_object_bytes:,} read at "
                                   "most (a damaged or planted .trajectory?)")
            data = stream.read(size)
            if len(data) != size:
                raise StorageError(f"blob {oid} could not be read from the shadow repository")
            yield data


def write_entry(repo: ShadowRepo, root: Path, rel: str, entry: TreeEntry, checked: set[str] | None = None, *,
                data: bytes | None = None, tmp_name: str) -> None:
    """Put the recorded ``entry`` at ``rel`` (relative to ``root``), atomically, replacing what is there.

    ``data`` is the blob's content when the caller read it already. The file is written to ``tmp_name`` beside
    it (:meth:`code_trajectory.git.worktemp.Journal.temp_name`), created exclusively (never through a link) with
    the recorded mode (0666 or 0777 less the umask, as ``git checkout``; in place of a regular file, that file's
    read and write bits: :func:`replaced_file_mode`), then renamed over the target, so a reader never sees half a
    file. A directory in the way holding only empty directories (the caller removed
    its files) is removed.

    Raises:
        InvalidArgumentError: the path goes through a symlink, or a non-empty directory is in the way.
        StorageError: the file cannot be written (permissions, disk full).
    """
    parent = _safe_parent(root, rel, checked)
    name = rel.rsplit("/", 1)[-1]
    target = f"{parent}/{name}"
    if data is None:
        data = blob_bytes(repo, entry.oid)
    tmp = f"{parent}/{tmp_name}"
    kept: int | None = None  # the permission bits of the regular file being replaced
    try:
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISDIR(st.st_mode):
                try:
                    _remove_empty_dirs(target)
                except OSError:
                    raise InvalidArgumentError(f"refusing to replace the directory {rel} (it holds files that are "
                                               "not restored) with a file") from None
            elif stat.S_ISREG(st.st_mode):
                kept = st.st_mode & 0o777
        if entry.mode == MODE_SYMLINK:
            _unlink_stale(tmp)
            os.symlink(os.fsdecode(data), tmp)
            os.replace(tmp, target)
            return
        mode = 0o777 if entry.mode == MODE_EXECUTABLE else 0o666
        if kept is not None:
            mode = replaced_file_mode(kept, executable=entry.mode == MODE_EXECUTABLE)
        try:
            fd = os.open(tmp, _CREATE, mode)
        except FileExistsError:  # left by a restore that was killed
            _unlink_stale(tmp)
            fd = os.open(tmp, _CREATE, mode)
        try:
            if kept is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # exactly the file's bits (a group-writable file under umask 022 stays so)
            with open(fd, "wb", closefd=True) as f:  # no fsync per file, as git checkout: the rename is atomic
                f.write(data)
            os.replace(tmp, target)
        except BaseException:
            _unlink_stale(tmp)
            raise
    except OSError as exc:
        raise StorageError(f"cannot write {rel}: {exc}") from exc


def replaced_file_mode(kept: int, *, executable: bool) -> int:
    """The permission bits a restored file gets in place of a regular file whose bits are ``kept``: the same read
    and write bits (a private ``0600`` file stays private: git's checkout, which writes a new file, would leave it
    ``0644``), with the execute bits the snapshot records (for an executable file, one wherever a read bit is, as
    ``chmod +x`` under the file's own bits); set-user-ID, set-group-ID and sticky bits are never carried over to
    content they were not set for."""
    bits = kept & 0o666
    return bits | ((bits & 0o444) >> 2) if executable else bits


def _remove_empty_dirs(path: str) -> None:
    """Remove the directory ``path`` and the empty directories under it (symlinks not followed).

    Raises:
        OSError: a directory under it is not empty.
    """
    for dirpath, dirs, _files in os.walk(path, topdown=False):
        for name in dirs:
            full = os.path.join(dirpath, name)
            if not os.path.islink(full):
                os.rmdir(full)
    os.rmdir(path)


def _unlink_stale(path: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


#: What :func:`current_oid` says of a file that is there but cannot be read (no permission, an I/O error).
UNREADABLE = "unreadable"


def _through_link(root: Path, rel: str) -> bool:
    """True when a parent directory of ``rel`` (relative to ``root``) is a symlink."""
    parent = str(root)
    for part in rel.split("/")[:-1]:
        parent = f"{parent}/{part}"
        if os.path.islink(parent):
            return True
    return False


def current_oid(root: Path, rel: str) -> str | None:
    """The git blob id of what is at ``rel`` (relative to ``root``) now, read as what it is (a symlink's target
    string, a regular file's bytes, hashed a chunk at a time; a link is never followed); None when nothing is
    there or a directory is, :data:`UNREADABLE` when something is there that cannot be read or is no file (a FIFO,
    a socket, a device: never opened, a FIFO would block). What a symlinked directory of the project leads to is not
    at ``rel``: None (a restore removes the link before it writes the files its snapshot held there)."""
    path = f"{root}/{rel}"
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) or _through_link(root, rel):
            return None
        if stat.S_ISLNK(st.st_mode):
            target = os.fsencode(os.readlink(path))
            return hashlib.sha1(b"blob %d\0" % len(target) + target).hexdigest()
        if not stat.S_ISREG(st.st_mode):
            return UNREADABLE
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_BINARY", 0))
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                return UNREADABLE
            digest = hashlib.sha1(b"blob %d\0" % opened.st_size)
            size = 0
            while chunk := os.read(fd, 1 << 20):
                digest.update(chunk)
                size += len(chunk)
            if size != opened.st_size:  # written to while read: what it holds is not known
                return UNREADABLE
            return digest.hexdigest()
        finally:
            os.close(fd)
    except OSError as exc:  # a name too long for the file system names nothing that can be there
        return None if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG) else UNREADABLE


def write_entries(repo: ShadowRepo, root: Path, entries: list[tuple[str, TreeEntry]],
                  recorded: Mapping[str, TreeEntry], journal: Journal, *,
                  vouch: Callable[[str, TreeEntry], bool] | None = None, workers: int = WRITE_WORKERS,
                  notes: list[str] | None = None, unrecorded: list[str] | None = None,
                  present: list[str] | None = None) -> list[str]:
    """Write every ``(path, entry)`` (paths relative to ``root``) with :func:`write_entry`, blobs streamed from
    the shadow repository and files written by ``workers`` threads (creating a file is a slow system call that
    runs in parallel: about 2x faster than one thread on ext4, measured by ``bench/restore.py``).

    A file whose content no longer matches ``recorded[path]`` (a save landed after the safety snapshot) is
    not written: it is returned, for the caller to record it and then write it. Files are hashed to tell, unless
    ``vouch(path, recorded[path])`` says the file still holds it (the recorder's
    :meth:`~code_trajectory.recording.recorder.Recorder.unchanged_checker`: a ``lstat`` instead of a read).

    A file whose content is in no snapshot (none in ``recorded`` and something else there now: an ignored file, a
    secret, a file the recorder could not read; or one that cannot be read now) is never written over: its path is
    added to ``unrecorded`` (overwriting it could not be undone). One that holds the entry's content already, with
    none in ``recorded``, is not written either (putting a failed restore back would remove it): added to
    ``present``.

    A blob that is the recorder's size-cap note (:func:`~code_trajectory.git.oversize.oversize_size`: the file's
    content was not recorded) is never written: its path is added to ``notes`` (told here, from the blob read for
    the write anyway, rather than by reading every small blob beforehand).

    Temporary names come from ``journal`` (whose directories must hold every parent written into).

    Raises:
        InvalidArgumentError: a path goes through a symlink (checked for every path before anything is written).
        PartialWriteError: a file could not be written; no further file is started, and the error names the files
            written so far (``done``) for the caller to put back.
    """
    checked: set[str] = set()
    for rel, _entry in entries:
        _safe_parent(root, rel, checked)
    skipped: list[str] = []
    done: list[str] = []
    errors: list[tuple[str, BaseException]] = []

    def write(rel: str, entry: TreeEntry, data: bytes, index: int) -> None:
        if entry.mode != MODE_SYMLINK and data.startswith(OVERSIZE_MARKER) and oversize_size(data) is not None:
            if notes is not None:
                notes.append(rel)
            return
        before = recorded.get(rel)
        if before is None or not (vouch is not None and vouch(rel, before)):
            now = current_oid(root, rel)
            if now == UNREADABLE or before is None and now not in (None, entry.oid):
                if unrecorded is not None:
                    unrecorded.append(rel)
                return
            if before is None and now == entry.oid:  # already there, and in no snapshot: left as it is
                if present is not None:
                    present.append(rel)
                return
            if before is not None and now not in (before.oid, None):
                skipped.append(rel)
                return
        try:
            write_entry(repo, root, rel, entry, checked, data=data, tmp_name=journal.temp_name(index))
        except BaseException as exc:
            errors.append((rel, exc))
            raise
        done.append(rel)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="restore-write") as pool, \
            closing(read_blobs(repo, [entry.oid for _rel, entry in entries])) as blobs:
        in_flight: deque[Future] = deque()
        for (rel, entry), data in zip(entries, blobs):
            if errors:
                break  # no new file once one failed: fewer to put back
            in_flight.append(pool.submit(write, rel, entry, data, journal.next_index()))
            if len(in_flight) >= _IN_FLIGHT:  # bounds the blob bytes held in memory
                in_flight.popleft().exception()
        for future in in_flight:
            future.exception()
    if errors:
        rel, exc = min(errors, key=lambda item: item[0])
        raise PartialWriteError(str(exc), sorted(done), rel) from exc
    return sorted(skipped)


def put_back(repo: ShadowRepo, root: Path, paths: list[str], before: Mapping[str, TreeEntry],
             journal: Journal) -> list[str]:
    """Put ``paths`` (relative to ``root``) back as ``before`` records them (the safety snapshot's entries): the
    recorded file written, or the path removed when ``before`` has none. Returns the paths that could not be put
    back (each failure is kept going past)."""
    failed = []
    for rel in paths:
        try:
            entry = before.get(rel)
            if entry is None:
                remove_entry(root, rel)
            else:
                write_entry(repo, root, rel, entry, tmp_name=journal.temp_name(journal.next_index()))
        except (OSError, StorageError, InvalidArgumentError):
            failed.append(rel)
    return failed


def remove_entry(root: Path, rel: str) -> None:
    """Delete the file or symlink at ``rel`` (not following it), then its parent directories that became empty.

    Raises:
        StorageError: it cannot be removed.
    """
    target = root / rel
    try:
        if os.path.lexists(target) and not (os.path.isdir(target) and not os.path.islink(target)):
            os.unlink(target)
    except OSError as exc:
        raise StorageError(f"cannot remove {rel}: {exc}") from exc
    parent = target.parent
    while parent != root:
        try:
            parent.rmdir()  # only when empty
        except OSError:
            break
        parent = parent.parent
