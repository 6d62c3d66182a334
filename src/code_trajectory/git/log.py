"""Reading the shadow history: commits, their trailers and file changes, sessions.

Everything here is read-only and goes through :class:`~code_trajectory.git.gitcmd.Git`
with ``-z`` output. Facts come from trailers (``Trajectory-*``), never from the
prose of the first line.

A file's versions across renames, whole or a page at a time, are read in :mod:`.file_versions` (on top of
:func:`read_log`); the indexes that list them faster live beside it (:mod:`.indexed_log`, :mod:`.file_index`), the
snapshot messages in :mod:`.messages`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from code_trajectory.core.dirgroups import ELSEWHERE, TOP_LEVEL, Group, group_by_directory
from code_trajectory.core.when import from_unix
from code_trajectory.git import messages
from code_trajectory.git.diffs import MAX_COUNTED_FILES, is_commit_id, parse_records
from code_trajectory.git.gitcmd import split_z
from code_trajectory.git.messages import FileChange, display_path
from code_trajectory.git.shadow import ShadowRepo

#: Files listed per commit by :func:`describe_files` unless told (the global trajectory, a checkpoint's answer).
FILES_PER_COMMIT = 25

#: ``git log`` format: commit, parents, committer time (unix s), subject, trailers.
LOG_FORMAT = "%x1e%H%x1f%P%x1f%ct%x1f%s%x1f%(trailers:unfold,separator=%x1d)"


@dataclass
class CommitRecord:
    """One shadow commit.

    Attributes:
        oid: commit id.
        parents: parent commit ids.
        time: commit time, aware, in the machine's local zone.
        subject: first line of the message.
        trailers: ``Trajectory-*`` trailers by key.
        changes: file changes against the first parent, when read with them.
        files_not_read: for a root commit whose changes were not read (:func:`read_root_changes`: too many to
            read for a heading), how many files its tree holds; None otherwise.
    """

    oid: str
    parents: list[str]
    time: datetime
    subject: str
    trailers: dict[str, str]
    changes: list[FileChange] = field(default_factory=list)
    files_not_read: int | None = None

    @property
    def change_count(self) -> int:
        """How many files the commit changed: its changes read, or the files of a root commit not read."""
        return self.files_not_read if self.files_not_read is not None else len(self.changes)

    @property
    def is_consolidation(self) -> bool:
        kind = self.trailers.get(messages.TRAILER_KIND)
        return kind == messages.KIND_CONSOLIDATE if kind else self.subject.startswith(messages.CONSOLIDATE_PREFIX)

    @property
    def is_snapshot(self) -> bool:
        return self.subject.startswith(messages.SNAPSHOT_PREFIX)

    @property
    def intent(self) -> str | None:
        return self.trailers.get(messages.TRAILER_INTENT)

    @property
    def branch(self) -> str | None:
        return self.trailers.get(messages.TRAILER_BRANCH)

    @property
    def kind(self) -> str:
        return self.trailers.get(messages.TRAILER_KIND, "consolidate" if self.is_consolidation else "snapshot")

    @property
    def is_import(self) -> bool:
        """The first snapshot of the repository: the existing tree, not work of a session."""
        return self.trailers.get(messages.TRAILER_KIND) == messages.KIND_IMPORT

    @property
    def is_git_operation(self) -> bool:
        """A snapshot of what a git command did (``[CHECKOUT] ...``), not of the agent's work."""
        return self.trailers.get(messages.TRAILER_KIND) == messages.KIND_GIT

    @property
    def git_operation(self) -> str | None:
        """The git operation (``checkout``, ``stash``...) of a git-operation snapshot, else None."""
        return self.trailers.get(messages.TRAILER_GIT_OPERATION)

    @property
    def origin(self) -> dict[str, str] | None:
        """Who made the change when an agent's hook recorded it: ``{"client", "tool", "session"}``, else None."""
        text = self.trailers.get(messages.TRAILER_ORIGIN)
        if not text:
            return None
        parts = [p.strip() for p in text.split(";")]
        found = {"client": parts[0]}
        for part in parts[1:]:
            key, _, value = part.partition("=")
            if value:
                found[key.strip()] = value.strip()
        return found

    @property
    def checkpoint_note(self) -> str | None:
        return self.trailers.get(messages.TRAILER_CHECKPOINT)


#: The head of one commit's record in :data:`LOG_FORMAT`'s output, after its RS: its id, parents and time.
_RECORD_HEAD = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\x1f[0-9a-f ]*\x1f[0-9]+\x1f")


def split_records(out: bytes) -> list[bytes]:
    """The commits' records, each without its RS (0x1e), of ``git log -p --format=%x1e%H%x1f%P%x1f%ct%x1f...``
    output (not ``-z``): a record starts at an RS that begins the output or a line and is followed by a commit id,
    parents and a time. A patch's lines begin with their mark (``+``, ``-``, a space, ``diff``...) and git quotes a
    line break in a path, so an RS in a file's content (JSON text sequences separate records with RS) or in a
    message (``git fsck`` accepts any control character in a planted or pulled commit) stays in its record: splitting
    at every RS made a forged record of what followed, and a time that was not a number failed the answer.
    """
    records: list[list[bytes]] = []
    for n, chunk in enumerate(out.split(b"\n\x1e")):
        if n == 0:
            if not chunk.startswith(b"\x1e"):
                continue  # nothing before the first record
            chunk = chunk[1:]
        if _RECORD_HEAD.match(chunk):
            records.append([chunk])
        elif records:
            records[-1].append(chunk)
    return [b"\n\x1e".join(parts) for parts in records]


def _record(header: bytes) -> CommitRecord | None:
    """The commit of one header of :data:`LOG_FORMAT` (RS, id, parents, time, subject, trailers), or None when it is
    not one. The subject is what precedes the trailers' last US (a hand-made message may hold one)."""
    if not header.startswith(b"\x1e") or not _RECORD_HEAD.match(header, 1):
        return None
    oid, parents, ctime, tail = header[1:].decode("utf-8", "replace").split("\x1f", 3)
    subject, _, trailers = tail.rpartition("\x1f")
    return CommitRecord(oid, parents.split(), from_unix(int(ctime)).astimezone(), subject,
                        messages.parse_trailers(trailers))


def _parse_log(out: bytes) -> list[CommitRecord]:
    """The commits of ``git log -z --format=<LOG_FORMAT> [--raw]`` output: each a header (no NUL in it) and the raw
    records after it, read by their structure (a path is the token after its record, whatever it holds: a file named
    with an RS and a header's fields forged a commit when the output was split at every RS)."""
    tokens = [t for t in split_z(out) if t]
    records = []
    pos = 0
    while pos < len(tokens):
        record = _record(tokens[pos].lstrip(b"\n"))
        pos += 1
        if record is None:
            continue  # nothing git writes here
        if pos < len(tokens):
            tokens[pos] = tokens[pos].lstrip(b"\n")  # git puts a line break before a commit's records
            record.changes, pos = parse_records(tokens, pos)
        records.append(record)
    return records


#: The C escapes git writes in a quoted path (``"a\\"b.py"``, ``"t\\tb.py"``), but for octal ones.
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_path(name: str) -> str:
    """A path as git writes it in a patch's headers (``+++ b/x.py``, ``rename from x.py``): as it is, or in double
    quotes with C escapes when it holds a quote, a backslash or a control character (``"b/a\\"b.py"``), undone;
    an escape git does not write is kept as it is. Returns the path as Python holds file names (its bytes read as
    UTF-8, an undecodable one a ``surrogateescape`` surrogate, which
    :func:`~code_trajectory.git.messages.display_path` shows as ``\\xNN``)."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    out, body, i = bytearray(), name[1:-1], 0
    while i < len(body):
        if body[i] == "\\" and re.fullmatch("[0-7]{3}", body[i + 1:i + 4]):
            out.append(int(body[i + 1:i + 4], 8) & 0xFF)
            i += 4
        elif body[i] == "\\" and body[i + 1:i + 2] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            out += body[i].encode("utf-8", "surrogateescape")
            i += 1
    return out.decode("utf-8", "surrogateescape")


def literal(paths: Sequence[str]) -> list[str]:
    """``paths`` as pathspecs that name exactly those paths (and what is under them): ``:(literal)`` keeps git from
    reading a recorded name as pathspec magic (``:x.py`` is ``x.py`` to git) or as a glob."""
    return [f":(literal){path}" for path in paths]


def read_log(repo: ShadowRepo, revs: list[str], *, limit: int | None = None, paths: tuple[str, ...] = (),
             follow: bool = False, first_parent: bool = False, with_changes: bool = True,
             date_order: bool = False, line_counts: bool = True, root_changes: bool = True,
             since: int | None = None, until: int | None = None) -> list[CommitRecord]:
    """Return commits reachable from ``revs``, newest first.

    Args:
        repo: the shadow repository.
        revs: refs or commit ids to start from (an empty list gives ``[]``).
        limit: at most this many commits.
        paths: only commits touching these paths (relative to the root).
        follow: follow renames of a single path.
        first_parent: follow only first parents.
        with_changes: read each commit's file changes (``--raw``, renames detected; with ``paths``, line counts).
        date_order: order by commit date across several refs.
        line_counts: False: the ``--raw`` records alone, neither line counts nor rename detection (both read
            blobs; with ``paths`` naming one file, rename detection finds nothing anyway: the old path is outside).
        root_changes: read the changes of root commits too (``log.showRoot``); False leaves a root commit's
            changes empty: the import of a 500,000-file project lists every file (0.5 GB in Python objects).
        since, until: only commits made at or after (before) this time, epoch seconds.
    """
    if not revs:
        return []
    args = ["log", "-z", "--no-abbrev", f"--format={LOG_FORMAT}"]
    if not root_changes:
        args[:0] = ["-c", "log.showRoot=false"]
    if with_changes and not line_counts:
        args.append("--raw")
    elif with_changes:
        args += ["--raw", "-M"] + (["--numstat"] if paths else [])  # line counts are cheap for a few paths
    if limit is not None:
        args.append(f"-n{int(limit)}")
    if follow:
        args.append("--follow")
    if first_parent:
        args.append("--first-parent")
    if date_order:
        args.append("--date-order")
    args += [f"--{option}=@{int(value)}" for option, value in (("since", since), ("until", until)) if value is not None]
    args += ["--end-of-options", *revs, "--"]
    args += literal(paths)
    return _parse_log(repo.git.out(args))


def read_commits(repo: ShadowRepo, oids: list[str], path: str) -> list[CommitRecord]:
    """The commits ``oids`` (as given, without walking) that changed ``path``, with their ``--raw`` records of it,
    as :func:`read_log` reads them with ``paths=(path,)`` and ``line_counts=False``; a commit that did not change
    it is left out.

    Raises:
        GitError: git failed (e.g. an id that is not a commit here).
    """
    if not oids:
        return []
    return _parse_log(repo.git.out(["log", "-z", "--no-abbrev", f"--format={LOG_FORMAT}", "--raw",
                                    "--no-walk=unsorted", "--stdin", "--", *literal([path])],
                                   input="".join(f"{oid}\n" for oid in oids).encode()))


#: A root commit (the start of recording) whose tree holds more files than this is not read file by file for the
#: recent log (:func:`read_root_changes`): at 500,000 files its changes took 0.5 GB of Python objects.
ROOT_CHANGES_READ = 1000


def read_root_changes(repo: ShadowRepo, records: list[CommitRecord]) -> None:
    """Fill in, in place, the changes of the root commits among ``records`` read with ``root_changes=False``:
    read when the commit's tree holds at most :data:`ROOT_CHANGES_READ` files, else only counted
    (:attr:`CommitRecord.files_not_read`, from one ``git ls-tree -r``, whose output is counted, not parsed).

    Raises:
        GitError: git failed.
    """
    for record in records:
        if record.parents or record.changes or record.files_not_read is not None:
            continue
        listing = repo.git.out(["ls-tree", "-r", "-z", "--name-only", "--full-tree", f"{record.oid}^{{tree}}"])
        count = listing.count(b"\0")
        del listing
        if count > ROOT_CHANGES_READ:
            record.files_not_read = count
        elif count:
            found = read_log(repo, [record.oid], limit=1)
            record.changes = found[0].changes if found else []


def add_line_counts(repo: ShadowRepo, records: list[CommitRecord]) -> None:
    """Fill in line counts for commits with at most :data:`MAX_COUNTED_FILES` changes (in place)."""
    wanted = [r for r in records if 0 < len(r.changes) <= MAX_COUNTED_FILES]
    if not wanted:
        return
    feed = "".join(f"{r.oid}\n" for r in wanted).encode()
    out = repo.git.out(["diff-tree", "--stdin", "-r", "-z", "--no-abbrev", "-M", "--root", "--raw", "--numstat"],
                       input=feed)
    tokens = split_z(out)
    by_oid = {r.oid: r for r in wanted}
    pos = 0
    while pos < len(tokens):
        token = tokens[pos].strip(b"\n")
        pos += 1
        if is_commit_id(token) and token.decode() in by_oid:
            changes, pos = parse_records(tokens, pos)
            by_oid[token.decode()].changes = changes


def sessions(records: list[CommitRecord], gap_seconds: float) -> list[list[CommitRecord]]:
    """Split commits (newest first) into sessions at gaps longer than ``gap_seconds``; newest session first."""
    result: list[list[CommitRecord]] = []
    for record in records:
        if result and (result[-1][-1].time - record.time).total_seconds() <= gap_seconds:
            result[-1].append(record)
        else:
            result.append([record])
    return result


def blob_text(repo: ShadowRepo, oid: str, limit: int = 200_000) -> str | None:
    """Return a blob's text (at most ``limit`` bytes), or None for missing or binary content."""
    found = repo.read_blob_or_none(oid)
    if found is None:
        return None
    data = found[:limit]
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", "replace")


def describe_files(changes: Sequence[FileChange], limit: int = FILES_PER_COMMIT,
                   symbols: dict[str, str] | None = None, *, bare: bool = False, rest_by_directory: bool = False) -> list[str]:
    """Markdown bullet lines for file changes, ``... and N more`` past ``limit``; with ``symbols`` (by path), each
    line ends with the symbols that changed in that file (``: modified Auth.login; added Auth.retry``); ``bare``:
    without the bullet and the paths' backquotes (``M src/a.py (+3 -1)``, the recent log's lines);
    ``rest_by_directory``: the files past ``limit`` said by directory (``... and 60 more: `src/` (12), `tests/`
    (48)``, :func:`~code_trajectory.core.dirgroups.group_by_directory`)."""
    lines = []
    quote, bullet = ("", "") if bare else ("`", "  - ")
    for change in changes[:limit]:
        counts = change.counts()
        named = (symbols or {}).get(change.path)
        lines.append(f"{bullet}{change.status} {change.where(quote)}{' ' + counts if counts else ''}{': ' + named if named else ''}")
    if len(changes) > limit:
        where = ""
        if rest_by_directory:
            groups = group_by_directory([change.path for change in changes[limit:]])
            where = ": " + ", ".join(_group_said(group, quote) + (f" ({group.files})" if group.files > 1 else "")
                                     for group in groups)
        lines.append(f"{bullet}... and {len(changes) - limit} more{where}")
    return lines


def _group_said(group: Group, quote: str) -> str:
    """A group of :func:`~code_trajectory.core.dirgroups.group_by_directory` as a list of files says it: a path in
    ``quote``, the two labels that are no path without (``top level``, ``elsewhere in `pkg/```): a file may be named
    ``elsewhere``."""
    if group.kind == TOP_LEVEL:
        return "top level"
    where = f"{quote}{display_path(group.path)}{quote}" if group.path else ""
    if group.kind == ELSEWHERE:
        return f"elsewhere in {where}" if where else "elsewhere"
    return where
