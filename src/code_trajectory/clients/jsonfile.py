"""Safe edits of a client's JSON config file: tolerant read, backup, atomic write, diff.

The one entry point for callers is :func:`edit`: it reads the file, hands the parsed object to a
``mutate`` callback, and writes the result back only when something changed.

Guarantees:

- *No change, no write*: when ``mutate`` leaves the object equal to what was read, the file is not
  touched (same bytes, same mtime).
- *Order kept*: objects keep their key order (``json`` keeps insertion order both ways).
- *Values kept as written*: every string and number of the file keeps its text (``1e400``, ``1E5``, ``1.0``,
  ``"\\u00e9"``, a lone surrogate's ``"\\udc00"``): only our own entries are serialized anew
  (:mod:`code_trajectory.clients.jsontext`). A file using JSON5 syntax beyond JSONC (single quotes, hex
  numbers, ``NaN``), whose values a rewrite would change, is never rewritten: :func:`edit` raises one line.
- *Tolerant read*: comments (``//``, ``/* */``) and trailing commas are accepted (JSONC, as VS Code
  writes; read with the ``json5`` package); an empty file reads as ``{}``; a UTF-8 byte-order mark is kept.
- *Edits, not rewrites*: a change is spliced into the file's text (:mod:`code_trajectory.clients.jsonsplice`), so
  comments, trailing commas and layout outside the changed values keep their bytes; only when that cannot be done
  exactly (a repeated key, reordered keys, an unparsable file) is the whole document written in the layout below.
- *Backups*: a file whose content a rewrite would lose in part (invalid JSON, a top level that is
  not an object, comments, a repeated key, or a value ``mutate`` had to discard) is first copied to
  ``<name>.bak-<YYYYmmdd-HHMMSS>`` beside it (``-1``, ``-2``... when that exists; never overwritten).
- *Atomic write*: :func:`code_trajectory.core.atomic.replace_file`; the file's mode
  is kept (new files get ``0o666 & ~umask``); parent directories are created; a symlinked config
  is written through to its target; the text ends with a newline and keeps the file's indent
  (two spaces by default) and line endings.
- *Dry run*: the same result with its unified diff, and nothing written (no backup either).
- *No lost update*: a file changed between the read and the write is edited again (:mod:`.changed`).
"""

from __future__ import annotations

import copy
import datetime as _dt
import difflib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from code_trajectory.clients import jsonsplice, jsontext
from code_trajectory.clients.changed import Changed, retried
from code_trajectory.core.atomic import replace_file
from code_trajectory.core.bounded_read import read_bounded
from code_trajectory.core.errors import TrajectoryError

_BOM = "\ufeff"


@dataclass(frozen=True)
class Loaded:
    """A config file as read.

    Attributes:
        exists: whether the file existed.
        text: its decoded text (``""`` when absent or undecodable).
        data: the parsed top-level object, or None when the file was unusable.
        problem: why a rewrite would lose something, or None: ``"is not valid JSON (...)"``,
            ``"holds comments or trailing commas..."``, ``"holds a list at the top level..."``.
        indent: the indent to write with (spaces count, or ``"\\t"``).
        newline: ``"\\n"`` or ``"\\r\\n"``, as the file had.
        bom: whether the file began with a UTF-8 byte-order mark.
        refuse: why the file must not be rewritten (JSON5 syntax beyond JSONC, whose values a rewrite would write
            differently), or None; :func:`edit` then changes nothing and raises.
        duplicates: whether an object repeats a key (then the text is never spliced, see :func:`edit`).
    """

    exists: bool
    text: str
    data: dict[str, Any] | None
    problem: str | None
    indent: int | str = 2
    newline: str = "\n"
    bom: bool = False
    refuse: str | None = None
    duplicates: bool = False


class _Style(TypedDict):
    """How a file is written, as read from it: :class:`Loaded`'s ``indent``, ``newline`` and ``bom``."""

    indent: int | str
    newline: str
    bom: bool


@dataclass(frozen=True)
class Edit:
    """What :func:`edit` did (or, in a dry run, would do) to one file.

    Attributes:
        path: the file.
        action: ``created``, ``updated``, ``deleted`` (left holding nothing, see :func:`edit`), ``unchanged``
            (nothing to do, nothing written) or ``absent`` (no file and nothing to write).
        backup: the backup made before rewriting, or None (always None in a dry run).
        backup_reason: why the previous content needed a backup (also set in a dry run), or None.
        diff: unified diff of the change (``""`` when nothing changed).
        dry_run: whether nothing was written on purpose.
    """

    path: Path
    action: str
    backup: Path | None
    backup_reason: str | None
    diff: str
    dry_run: bool


def detect_indent(text: str) -> int | str:
    """The indent unit of a pretty-printed JSON text: the first indented line's leading
    whitespace (``"\\t"`` for tabs, else its width, 1 to 8); 2 when none is found."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if not stripped or stripped == line:
            continue
        lead = line[: len(line) - len(stripped)]
        if lead.startswith("\t"):
            return "\t"
        if " " * len(lead) == lead and 1 <= len(lead) <= 8:
            return len(lead)
        break
    return 2


#: Largest client config file read, bytes (a real one is a few kilobytes; ``~/.claude.json`` grows to megabytes).
MAX_CONFIG_BYTES = 64 * 1024 * 1024


def read_bytes(path: Path) -> bytes | None:
    """The bytes of config file ``path`` (a symlink followed), or None when it does not exist.

    Raises:
        TrajectoryError: the path is a directory, not a regular file (a FIFO would block the read for ever, a
            device such as ``/dev/zero`` never end it), larger than :data:`MAX_CONFIG_BYTES`, or cannot be read
            (permissions, I/O error), in one line.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise TrajectoryError(f"cannot read {path}: part of its directory path is a file, not a directory; "
                              "move that file away and run again") from None
    except OSError as exc:
        raise TrajectoryError(f"cannot read {path}: {exc.strerror or exc}; check its permissions") from None
    if stat.S_ISDIR(st.st_mode):
        raise TrajectoryError(f"{path} is a directory, not a config file; move it away and run again")
    if not stat.S_ISREG(st.st_mode):
        raise TrajectoryError(f"{path} is not a regular file (a FIFO, a device or a socket); move it away and run "
                              "again")
    if st.st_size > MAX_CONFIG_BYTES:
        raise TrajectoryError(f"{path} is {st.st_size:,} bytes, larger than a client's config file can be "
                              f"({MAX_CONFIG_BYTES:,}); move it away and run again")
    data = read_bounded(path, MAX_CONFIG_BYTES, follow_symlinks=True)
    if data is None:
        why = "check its permissions" if not os.access(path, os.R_OK) else "it changed while being read; run again"
        raise TrajectoryError(f"cannot read {path}: {why}")
    return data


def read(path: Path) -> Loaded:
    """Read and parse ``path`` tolerantly (see the module docstring).

    Raises:
        TrajectoryError: the path is a directory or cannot be read (permissions, I/O error).
    """
    return _parse(read_bytes(path))


def _parse(raw: bytes | None) -> Loaded:
    """:func:`read`'s answer for the bytes ``raw`` of a file (None: no file)."""
    if raw is None:
        return Loaded(exists=False, text="", data={}, problem=None)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Loaded(exists=True, text="", data=None, problem=f"is not UTF-8 text ({exc.reason} at byte {exc.start})")
    bom = text.startswith(_BOM)
    body = text[1:] if bom else text
    style = _Style(indent=detect_indent(body), newline="\r\n" if "\r\n" in body else "\n", bom=bom)
    if not body.strip():
        return Loaded(exists=True, text=text, data={}, problem=None, **style)
    problem = None
    duplicates: list[str] = []
    try:
        data, extensions = jsontext.loads(body, duplicates)
    except jsontext.JSONTextError as exc:
        try:  # JSON5 beyond JSONC (single quotes, hex numbers...): readable, but a rewrite would change its text
            data = _json5_loads(body)
        except (ValueError, RecursionError):
            return Loaded(exists=True, text=text, data=None, problem=f"is not valid JSON ({exc})", **style)
        return Loaded(exists=True, text=text, data=data if isinstance(data, dict) else None, problem=None,
                      refuse=f"uses JSON5 syntax that is not JSON ({exc}), which a rewrite would change", **style)
    if extensions:
        problem = "holds comments or trailing commas, which a rewrite drops"
    if duplicates:
        dup = f"repeats the key {duplicates[0]!r}, of which a rewrite keeps only the last value"
        problem = f"{problem}; {dup}" if problem else dup
    if not isinstance(data, dict):
        return Loaded(exists=True, text=text, data=None, problem=f"holds {kind_of(data)} at the top level, not an object",
                      **style)
    return Loaded(exists=True, text=text, data=data, problem=problem, duplicates=bool(duplicates), **style)


def kind_of(value: Any) -> str:
    """How a JSON value is named in messages: ``a list``, ``null``, ``a str``, ``a dict``..."""
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else f"a {jsontext.type_name(value)}"


def _json5_loads(text: str) -> Any:
    """``json5.loads``: JSON5, a superset of JSONC (values as Python reads them: no source text kept).

    Raises:
        ValueError: the text is not valid JSON5.
    """
    import json5

    return json5.loads(text)


def dumps(data: dict[str, Any], loaded: Loaded) -> str:
    """``data`` as text in the style of ``loaded``: its indent, line endings and BOM, a final newline; every value
    read from the file keeps its text as written (:func:`code_trajectory.clients.jsontext.dumps`)."""
    text = jsontext.dumps(data, loaded.indent) + "\n"
    if loaded.newline != "\n":
        text = text.replace("\n", loaded.newline)
    return (_BOM + text) if loaded.bom else text


def unified_diff(path: Path, old: str | None, new: str | None) -> str:
    """A unified diff from ``old`` to ``new`` text (None: the file does not exist), labelled with ``path``."""
    def lines(text: str | None) -> list[str]:
        if not text:
            return []
        out = text.splitlines(keepends=True)
        if not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    return "".join(difflib.unified_diff(lines(old), lines(new),
                                        fromfile=str(path) if old is not None else "/dev/null",
                                        tofile=str(path) if new is not None else "/dev/null"))


def backup(path: Path, now: _dt.datetime | None = None) -> Path:
    """Copy ``path`` to ``<name>.bak-<YYYYmmdd-HHMMSS>`` beside it, never overwriting a backup.

    The copy keeps the file's permission bits. Returns the backup's path.

    Raises:
        TrajectoryError: the copy cannot be written.
    """
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    data = path.read_bytes()
    mode = path.stat().st_mode & 0o7777
    for n in range(1000):
        target = path.with_name(f"{path.name}.bak-{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
        except FileExistsError:
            continue
        except OSError as exc:
            raise TrajectoryError(f"cannot back up {path} to {target}: {exc.strerror or exc}; "
                                  "check the directory's permissions") from None
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return target
    raise TrajectoryError(f"cannot back up {path}: 1000 backups from {stamp} already exist; remove old ones")


def atomic_write(path: Path, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (UTF-8; bytes as they are) atomically, keeping its mode; create parents.

    A symlink is followed: its target is replaced, the link stays.

    Raises:
        TrajectoryError: the directory or file cannot be written (the old file is left as it was).
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # keeps the mode; a new file gets 0o666 & ~umask
        replace_file(target, text.encode("utf-8") if isinstance(text, str) else text)
    except OSError as exc:
        raise TrajectoryError(f"cannot write {path}: {exc.strerror or exc}; check the permissions of "
                              f"{target.parent}") from None


#: ``mutate(data)`` changes ``data`` in place; it returns why it had to discard part of what was
#: there (then the file is backed up first), or None.
Mutator = Callable[[dict[str, Any]], "str | None"]


def hollow(value: Any) -> bool:
    """Whether a JSON value holds nothing: an object or array whose members are all hollow (``{}``,
    ``{"mcpServers": {}}``, ``{"hooks": {}}``)."""
    if isinstance(value, dict):
        return all(hollow(v) for v in value.values())
    if isinstance(value, list):
        return all(hollow(v) for v in value)
    return False


#: ``previous`` of :func:`edit` when nothing is known of the file before install.
UNKNOWN: Any = object()


def edit(path: Path, mutate: Mutator, *, dry_run: bool = False, replace_unreadable: bool = True,
         now: _dt.datetime | None = None, previous: bytes | None = UNKNOWN, as_installed: bool = False) -> Edit:
    """Apply ``mutate`` to the object in ``path`` and write the result back if it changed.

    Args:
        path: the config file (may be absent: it is created only if ``mutate`` adds something).
        mutate: see :data:`Mutator`.
        dry_run: compute the result and its diff, write nothing (no backup either).
        replace_unreadable: for a file that cannot be parsed into an object, True (install) starts
            from ``{}`` after backing it up; False (uninstall) leaves it untouched and answers
            ``unchanged`` with ``backup_reason`` telling why.
        now: the time used in a backup's name (default: now).
        previous: for an uninstall, the file's bytes before install (None: install created it; default
            :data:`UNKNOWN`). When ``mutate`` leaves what ``previous`` held (empty objects and arrays aside),
            those bytes are written back exactly, unless the file changed since install (not ``as_installed``)
            and only ours can be cut out of its text (then the change, a comment or the layout, stays); when it
            leaves a :func:`hollow` object and install created the file (or nothing is known), the file is
            deleted (``deleted``).
        as_installed: the file holds exactly the bytes install last wrote (the ledger's ``after``): a member that
            ``previous`` held and ``mutate`` left out can only be one install replaced (``"hooks": "todo"``, not an
            object), so ``previous`` comes back also when it differs from what ``mutate`` left by such members.

    Raises:
        TrajectoryError: the file cannot be read, backed up, written or deleted, or it kept changing while being
            edited (a running client rewriting it: its change is never written over; each try starts again).
    """
    return retried(path, lambda: _edit_once(path, mutate, dry_run=dry_run, replace_unreadable=replace_unreadable,
                                            now=now, previous=previous, as_installed=as_installed))


def write_if_unchanged(path: Path, raw: bytes | None, new: bytes | str | None) -> None:
    """Replace ``path`` by ``new`` (None: delete it) if it still holds ``raw`` (None: no file), else raise
    :class:`Changed`. A symlink is followed, as :func:`atomic_write` does: the file it leads to is deleted, the link
    stays (install wrote through it)."""
    if read_bytes(path) != raw:
        raise Changed
    _unlink(Path(os.path.realpath(path)) if path.is_symlink() else path) if new is None else atomic_write(path, new)


def _edit_once(path: Path, mutate: Mutator, *, dry_run: bool, replace_unreadable: bool, now: _dt.datetime | None,
               previous: bytes | None, as_installed: bool) -> Edit:
    """One try of :func:`edit`; raises :class:`Changed` when the file changed between its read and its write."""
    raw = read_bytes(path)
    loaded = _parse(raw)
    if loaded.data is None and not replace_unreadable:
        return Edit(path, "unchanged", None, f"{path} {loaded.problem}; left untouched", "", dry_run)
    data = loaded.data if loaded.data is not None else {}
    before = copy.deepcopy(data)
    discarded = mutate(data)
    reason = loaded.problem if loaded.exists else None
    if discarded:
        reason = f"{reason}; {discarded}" if reason else discarded
    changed = data != before or loaded.data is None
    if not changed:
        return Edit(path, "unchanged" if loaded.exists else "absent", None, None, "", dry_run)
    if loaded.refuse:
        raise TrajectoryError(f"{path} {loaded.refuse}; left as it was: make it plain JSON (or JSONC) and run "
                              "again, or add the entry by hand")
    old_for_diff = (loaded.text.removeprefix(_BOM) if loaded.text else "") if loaded.exists else None
    spliced = None
    if loaded.exists and loaded.data is not None and not loaded.duplicates:
        spliced = jsonsplice.splice(loaded.text.removeprefix(_BOM), before, data, loaded.indent, loaded.newline)
    if loaded.exists and previous is not UNKNOWN:
        restored = restore_previous(data, previous, as_installed)
        if restored is not None and restored is not _DELETE and not as_installed and spliced is not None:
            restored = None  # changed since install (comments, layout): the change stays, only ours comes out
        if restored is not None:
            new_text = None if restored is _DELETE else bytes(restored).decode("utf-8", "replace")
            diff = unified_diff(path, old_for_diff, None if new_text is None else new_text.removeprefix(_BOM))
            if not dry_run:
                write_if_unchanged(path, raw, None if restored is _DELETE else restored)
            return Edit(path, "deleted" if restored is _DELETE else "updated", None, None, diff, dry_run)
    if spliced is not None:  # only the changed values are new text: comments and layout stay, nothing is lost
        new_text = (_BOM + spliced) if loaded.bom else spliced
        reason = discarded or None
    else:
        new_text = dumps(data, loaded)
    if loaded.exists and new_text == loaded.text:
        return Edit(path, "unchanged", None, None, "", dry_run)
    action = "updated" if loaded.exists else "created"
    diff = unified_diff(path, old_for_diff, new_text.removeprefix(_BOM))
    if dry_run:
        return Edit(path, action, None, reason, diff, True)
    saved = backup(path, now) if loaded.exists and reason else None
    write_if_unchanged(path, raw, new_text)
    return Edit(path, action, saved, reason, diff, False)


_DELETE: Any = object()  # restore_previous's answer "delete the file"


def restore_previous(data: dict[str, Any], previous: bytes | None, as_installed: bool = False,
                     parse: Callable[[str], Any] = lambda text: jsontext.loads(text)[0]) -> Any:
    """What to put back for an uninstall's result ``data``: ``previous`` when it parses (``parse``: JSON; a
    ``ValueError`` is no object) to ``data`` (with ``as_installed``: but for members ``data`` lacks, which install
    replaced), or when it does not parse to an object and ``data`` is :func:`hollow` (install replaced a file it
    could not use, after a backup, and nothing else was added since); :data:`_DELETE` when the file was ours
    (``previous`` None) and ``data`` is :func:`hollow`; else None. (:mod:`.docfile` passes its TOML/YAML parser.)"""
    if previous is None:
        return _DELETE if hollow(data) else None
    try:
        text = previous.decode("utf-8").removeprefix(_BOM)
        before = parse(text) if text.strip() else {}
    except (UnicodeDecodeError, ValueError):
        before = None
    if not isinstance(before, dict):  # install replaced it (not an object), after a backup
        return previous if hollow(data) else None
    # equal but for empty objects and lists (an event whose only hook was ours is dropped, with its list)
    if _pruned(before) == _pruned(data):
        return previous
    return previous if as_installed and _pruned(_kept_in(before, data)) == _pruned(data) else None


def _kept_in(before: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``before`` without its members that are not objects and that ``data`` lacks or holds as an object (at any
    depth of objects both hold): those install replaced, when the file is what install wrote (an object ``data``
    lacks stays: uninstall removed it, one of ours)."""
    return {k: _kept_in(v, data[k]) if isinstance(v, dict) and isinstance(data.get(k), dict) else v
            for k, v in before.items() if isinstance(v, dict) or (k in data and not isinstance(data[k], dict))}


def _pruned(value: Any) -> Any:
    """``value`` without its :func:`hollow` members (objects and arrays that hold nothing)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if not (isinstance(v, (dict, list)) and hollow(v))}
    if isinstance(value, list):
        return [_pruned(v) for v in value if not (isinstance(v, (dict, list)) and hollow(v))]
    return value


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise TrajectoryError(f"cannot remove {path}: {exc.strerror or exc}; remove it by hand") from None
