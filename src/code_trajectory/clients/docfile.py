"""Safe edits of a client's TOML or YAML config file, with the guarantees of :mod:`.jsonfile`.

The one entry point is :func:`edit` (same contract as :func:`code_trajectory.clients.jsonfile.edit`, same
:class:`~code_trajectory.clients.jsonfile.Edit` answer). The file is parsed with a round-trip library that keeps
comments, key order, quoting and layout: ``tomlkit`` for TOML (https://tomlkit.readthedocs.io: "preserves
comments, indentation, whitespace and internal element ordering") and ``ruamel.yaml``'s round-trip mode for YAML
(https://yaml.dev/doc/ruamel.yaml/detail/: comments, key order, flow/block style and quotes with
``preserve_quotes``). So a rewrite changes only what ``mutate`` changed.

Guarantees, shared with :mod:`.jsonfile` (its ``backup``, ``atomic_write`` and ``unified_diff`` are used here: one
implementation of each):

- *No change, no write*: when the text after ``mutate`` equals the file's, nothing is written.
- *Backup before a lossy rewrite*: the file is parsed and written back unchanged first; when that round trip does
  not give the same bytes (YAML that ``ruamel.yaml`` lays out differently: odd indents, ``---``/``...`` markers, long
  flow lines), the file is copied to ``<name>.bak-<YYYYmmdd-HHMMSS>`` before the rewrite.
- *Refusal, never a guess*: a file that does not parse (invalid TOML or YAML, several YAML documents, a repeated
  key, a top level that is not a mapping, not UTF-8) is left untouched and :func:`edit` raises one line saying
  what is wrong; these files are often a client's whole user configuration, so we never replace them.
- *Checked meaning*: before writing, the new text is read back (TOML by the standard library's ``tomllib``, an
  independent parser; YAML by ``ruamel.yaml``) and must mean exactly the edited document; otherwise :func:`edit`
  raises one line and writes nothing (tomlkit can attach dotted keys such as ``mcp_servers.a.args = ...`` to a
  table it inserts).
- *Atomic write, dry run, final newline*: as :mod:`.jsonfile`; the file's line endings, UTF-8 byte-order mark and
  number of final newlines are kept.
"""

from __future__ import annotations

import datetime as _dt
import io
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_trajectory.clients.changed import retried
from code_trajectory.clients.jsonfile import (
    Edit,
    backup,
    read_bytes,
    restore_previous,
    unified_diff,
    write_if_unchanged,
)
from code_trajectory.core.errors import TrajectoryError

_BOM = "\ufeff"


class FormatError(ValueError):
    """The text does not parse in the format; the message is one line."""


@dataclass(frozen=True)
class Format:
    """One file format: ``parse(text)`` gives a mutable mapping (raises :class:`FormatError`), ``dump(data)`` the
    text, ``new()`` an empty document."""

    name: str
    parse: Callable[[str], MutableMapping[str, Any]]
    dump: Callable[[Any], str]
    new: Callable[[], MutableMapping[str, Any]]
    #: ``same(text, data)``: whether ``text`` reads back as ``data`` (None: not checked).
    same: Callable[[str, Any], bool] | None = None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _toml_parse(text: str) -> MutableMapping[str, Any]:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except (TOMLKitError, ValueError, RecursionError) as exc:
        raise FormatError(f"is not valid TOML ({_toml_problem(text, exc)})") from None


def _toml_problem(text: str, exc: BaseException) -> str:
    """Why ``text`` is not TOML, in one line: the standard library's reading when it refuses the text too (tomlkit
    places an error at the end of the text at line 1 col 0: "Unexpected character: '\\x00'"), else tomlkit's."""
    import tomllib

    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as std:
        return _one_line(std)
    return _one_line(exc)


def _toml_dump(data: Any) -> str:
    import tomlkit

    return tomlkit.dumps(data)


def _toml_same(text: str, data: Any) -> bool:
    """Whether ``text`` means ``data``, read by the standard library's own TOML parser (an independent check of
    tomlkit's output: dotted keys such as ``mcp_servers.a.command = ...`` can come out attached to another table)."""
    import tomllib

    def pruned(value: Any) -> Any:  # an empty table and no table read the same to a client
        if isinstance(value, dict):
            return {k: pruned(v) for k, v in value.items() if not (isinstance(v, dict) and not pruned(v))}
        return value

    try:
        return bool(pruned(tomllib.loads(text)) == pruned(data.unwrap()))
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return False


def _toml_new() -> MutableMapping[str, Any]:
    import tomlkit

    return tomlkit.document()


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line that was on one line
    yaml.allow_duplicate_keys = False
    return yaml


def _yaml_parse(text: str) -> MutableMapping[str, Any]:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    try:
        data = _yaml().load(text)
    except (YAMLError, ValueError, RecursionError) as exc:
        raise FormatError(f"is not valid YAML, or holds several documents ({_one_line(exc)})") from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, MutableMapping):
        raise FormatError(f"holds {type(data).__name__} at the top level, not a mapping")
    _check_values(data)
    return data


#: Values a YAML file may hold, an alias counted each time it is used: nine aliases of nine, twelve deep (a "billion
#: laughs" in a project's .continue/mcpServers/code-trajectory.yaml) held 9^12, which comparing the rewrite's meaning
#: (:func:`_plain`) walked for hours; a client's config holds hundreds.
MAX_YAML_VALUES = 100_000


def _check_values(data: Any) -> None:
    """Raise :class:`FormatError` when ``data`` holds more than :data:`MAX_YAML_VALUES` values, aliases expanded (an
    alias of a node inside itself never ends)."""
    stack, count = [data], 0
    while stack:
        value = stack.pop()
        count += 1
        if count > MAX_YAML_VALUES:
            raise FormatError(f"holds more than {MAX_YAML_VALUES:,} values once its aliases are expanded")
        if isinstance(value, Mapping):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _yaml_dump(data: Any) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()


def _plain(value: Any) -> Any:
    """A loaded YAML value as plain Python, for comparing meaning (tagged values by tag and value)."""
    if isinstance(value, Mapping):
        return [(_plain(k), _plain(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__mro__[-2].__name__ if not isinstance(value, bool) else "bool", value)
    tag = getattr(value, "tag", None)
    return (str(getattr(tag, "value", tag)), _plain(getattr(value, "value", repr(value))))


def _yaml_same(text: str, data: Any) -> bool:
    """Whether ``text`` reads back (with ruamel.yaml) as ``data``: same keys in the same order, same values."""
    try:
        return bool(_plain(_yaml_parse(text)) == _plain(data))
    except (FormatError, ValueError, RecursionError):
        return False


def _yaml_new() -> MutableMapping[str, Any]:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap()


TOML = Format("TOML", _toml_parse, _toml_dump, _toml_new, _toml_same)
YAML = Format("YAML", _yaml_parse, _yaml_dump, _yaml_new, _yaml_same)
FORMATS = {"toml": TOML, "yaml": YAML}


def _styled(text: str, *, newline: str, bom: bool, finals: int | None) -> str:
    """``text`` (``\\n`` line ends) with the file's line endings, BOM and count of final newlines (None: one)."""
    text = text.rstrip("\n") + "\n" * max(finals or 1, 1) if text.strip() else ""
    if newline != "\n":
        text = text.replace("\n", newline)
    return (_BOM + text) if bom else text


#: ``mutate(data)`` changes ``data`` in place; returns a note worth telling (e.g. something replaced), or None.
Mutator = Callable[[MutableMapping[str, Any]], "str | None"]


def edit(path: Path, fmt: Format, mutate: Mutator, *, dry_run: bool = False, replace_unreadable: bool = True,
         remove_if: Callable[[MutableMapping[str, Any]], bool] | None = None,
         now: _dt.datetime | None = None, previous: bytes | None = None, as_installed: bool = False) -> Edit:
    """Apply ``mutate`` to the document in ``path`` and write the result back if its text changed.

    Args:
        path: the config file (may be absent: it is created only if ``mutate`` adds something).
        fmt: :data:`TOML` or :data:`YAML`.
        mutate: see :data:`Mutator`.
        dry_run: compute the result and its diff, write nothing (no backup either).
        replace_unreadable: True (install) raises on a file that does not parse; False (uninstall) answers
            ``unchanged`` with ``backup_reason`` telling why, and writes nothing.
        remove_if: when given and true for the mutated document, the file is deleted instead (a file that is
            all ours and holds nothing any more); the answer is ``updated`` with a diff to ``/dev/null``.
        now: the time used in a backup's name (default: now).
        previous, as_installed: uninstall's ledger (:mod:`.ledger`): the file's bytes before install, and whether
            it holds exactly what install wrote. Then, when ``mutate`` leaves what ``previous`` meant (but for a
            value install replaced, ``mcp_servers = "none"``), ``previous`` is written back byte for byte: the
            layout a lossy rewrite changed (after a backup) comes back too.

    Raises:
        TrajectoryError: the file does not parse (install), or cannot be read, backed up or written, or it kept
            changing while being edited (:func:`~.changed.retried`: a client's change is never written over).
    """
    return retried(path, lambda: _edit_once(path, fmt, mutate, dry_run=dry_run, replace_unreadable=replace_unreadable,
                                            remove_if=remove_if, now=now, previous=previous if as_installed else None))


def _as_dicts(value: Any) -> Any:
    """A parsed document as plain dicts and lists, the shape :func:`~.jsonfile.restore_previous` compares (a YAML
    file's aliases are bounded by :func:`_check_values`)."""
    if isinstance(value, Mapping):
        return {str(k): _as_dicts(v) for k, v in value.items()}
    return [_as_dicts(v) for v in value] if isinstance(value, list) else value


def _edit_once(path: Path, fmt: Format, mutate: Mutator, *, dry_run: bool, replace_unreadable: bool,
               remove_if: Callable[[MutableMapping[str, Any]], bool] | None, now: _dt.datetime | None,
               previous: bytes | None = None) -> Edit:
    """One try of :func:`edit`; raises :class:`~.changed.Changed` when the file changed before its write."""
    raw = read_bytes(path)
    exists = raw is not None
    text, newline, bom, finals = "", "\n", False, None
    if raw is not None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem = f"is not UTF-8 text ({exc.reason} at byte {exc.start})"
            return _unreadable(path, problem, replace_unreadable, dry_run)
        bom = text.startswith(_BOM)
        body = text[1:] if bom else text
        newline = "\r\n" if "\r\n" in body else "\n"
        body = body.replace("\r\n", "\n")
        finals = len(body) - len(body.rstrip("\n")) if body.strip() else None
    else:
        body = ""
    try:
        data = fmt.parse(body) if body.strip() else fmt.new()
    except FormatError as exc:
        return _unreadable(path, str(exc), replace_unreadable, dry_run)
    try:
        baseline = fmt.dump(data)
    except Exception as exc:  # noqa: BLE001 - a library error on odd input must end as one line, never a traceback
        return _unreadable(path, f"cannot be written back as {fmt.name} ({_one_line(exc)})", replace_unreadable,
                           dry_run)
    lossless = not body.strip() or baseline == body  # False also for a YAML file of comments only (loads as None)
    note = mutate(data)
    if previous is not None and raw is not None and raw != previous and restore_previous(
            _as_dicts(data), previous, True, lambda text: _as_dicts(fmt.parse(text))) is not None:
        diff = unified_diff(path, text.removeprefix(_BOM), previous.decode("utf-8", "replace").removeprefix(_BOM))
        if not dry_run:
            write_if_unchanged(path, raw, previous)
        return Edit(path, "updated", None, note, diff, dry_run)
    if remove_if is not None and exists and remove_if(data):
        diff = unified_diff(path, text.removeprefix(_BOM), None)
        if not dry_run:
            write_if_unchanged(path, raw, None)
        return Edit(path, "updated", None, note, diff, dry_run)
    try:
        dumped = fmt.dump(data)
    except Exception as exc:  # noqa: BLE001 - a library error on odd input must end as one line, never a traceback
        raise TrajectoryError(f"cannot write {fmt.name} to {path}: {_one_line(exc)}; add the entry by hand") from None
    if exists and dumped == baseline:
        return Edit(path, "unchanged", None, None, "", dry_run)
    if fmt.same is not None and not fmt.same(dumped, data):
        raise TrajectoryError(f"{path}: adding the entry would change what other settings mean (its layout, e.g. "
                              f"dotted keys under the same table, defeats the {fmt.name} editor); left as it was: "
                              "add the entry by hand")
    if not exists and not dumped.strip():
        return Edit(path, "absent", None, None, "", dry_run)
    new_text = _styled(dumped, newline=newline, bom=bom, finals=finals)
    if exists and new_text == text:
        return Edit(path, "unchanged", None, None, "", dry_run)
    reason = None if lossless else (f"is laid out in a way {fmt.name} round-tripping does not reproduce "
                                    "byte for byte (indents, comments or markers), which a rewrite changes")
    if note:
        reason = f"{reason}; {note}" if reason else note
    diff = unified_diff(path, text.removeprefix(_BOM) if exists else None, new_text.removeprefix(_BOM))
    action = "updated" if exists else "created"
    if dry_run:
        return Edit(path, action, None, reason if exists else None, diff, True)
    saved = backup(path, now) if exists and (not lossless or note) else None
    write_if_unchanged(path, raw, new_text)
    return Edit(path, action, saved, reason if exists else None, diff, False)


def _unreadable(path: Path, problem: str, replace_unreadable: bool, dry_run: bool) -> Edit:
    if not replace_unreadable:
        return Edit(path, "unchanged", None, f"{path} {problem}; left untouched", "", dry_run)
    raise TrajectoryError(f"{path} {problem}; left as it was: fix the file (or move it away) and run install again")
