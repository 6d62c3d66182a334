"""Searching the shadow history for text: when did this line appear, and when did it go (git's pickaxe).

``git log -S<text>`` lists the snapshots where the number of occurrences of the text changed (it was added or
removed); ``-G<regex>`` those whose diff has a line matching the regex. For each, the matching added (``+``)
and removed (``-``) lines are shown, newest first, with the snapshot's time, intent and message. Renames are
detected (``-M``, as ``git log`` does by default since git 2.9; see :data:`RENAME_LIMIT`): a file renamed with its
text is not a snapshot that removed the text from one path and added it to another; a renamed file's lines are
shown under its new path, with where it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from code_trajectory.core.answer import Answer, message, sections, short, shown
from code_trajectory.core.errors import GitError, InvalidArgumentError
from code_trajectory.core.when import from_unix
from code_trajectory.git import log, messages, search_index
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history import fields
from code_trajectory.history.headings import why
from code_trajectory.history.narrative import day_once, fit

#: Matching lines shown per snapshot.
LINES_PER_HIT = 12
MAX_QUERY_CHARS = 1000
#: git's ``-l``: a snapshot with more added and more removed files than this looks for exact renames only (the same
#: blob), not for renames with edits, which compare every pair (a branch switch of thousands of files, walked by a
#: regex search of a long history, would otherwise cost seconds).
RENAME_LIMIT = 200
_FORMAT = "%x1e%H%x1f%P%x1f%ct%x1f%s%x1f%(trailers:unfold,separator=%x1d)%x1f"


def posix_regex(pattern: str) -> str:
    """``pattern`` for git's POSIX extended regular expressions (glibc knows ``\\w``, ``\\s``, ``\\b``, not
    ``\\d``): ``\\d`` becomes ``[0-9]``, ``\\D`` ``[^0-9]``; the lines are then matched with Python's ``re``."""
    return re.sub(r"(?<!\\)((?:\\\\)*)\\([dD])", lambda m: m.group(1) + ("[0-9]" if m.group(2) == "d" else "[^0-9]"),
                  pattern)


def _line_matcher(query: str) -> Callable[[str], object]:
    """What tells a changed line matching the regex ``query``: RE2 (google-re2, linear in the line's length, as the
    secret rules run). Python's ``re`` backtracks: ``(a+)+$`` on a line of 32 ``a`` and a ``!`` ran for hours,
    holding the interpreter, and the whole server stopped answering.

    Raises:
        InvalidArgumentError: ``query`` is no regex RE2 runs (a syntax error, a backreference, a lookaround, text
            that is not UTF-8).
    """
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True  # only whether a line matches is asked
    try:
        return re2.compile(query, options).search
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise InvalidArgumentError(f"invalid regex {query!r}: {reason} (backreferences and lookarounds are not "
                                   "supported); pass regex=false (CLI: leave out `--regex`) to search for the text as "
                                   "it is") from None
    except UnicodeEncodeError:  # RE2 takes UTF-8: a byte the CLI's argv did not decode, a lone surrogate from JSON
        raise InvalidArgumentError(f"invalid regex {query!r}: it is not UTF-8 text; pass regex=false (CLI: leave "
                                   "out `--regex`) to search for the text as it is") from None


@dataclass
class Hit:
    """A snapshot that added or removed matching text: its record, the matching lines by path, and the earlier path
    of those paths that the snapshot renamed."""

    record: log.CommitRecord
    lines: dict[str, list[str]] = field(default_factory=dict)
    renamed_from: dict[str, str] = field(default_factory=dict)


def search(repo: ShadowRepo, ref: str, query: str, *, regex: bool = False, path: str | None = None,
           since: datetime | None = None, limit: int = 20, index_ref: str | None = None) -> list[Hit]:
    """The snapshots reachable from ``ref`` that added or removed text matching ``query``, newest first.

    ``index_ref``: the shadow ref whose commit ``ref`` is; its search index (:mod:`code_trajectory.git.search_index`)
    then narrows a text search to the snapshots that can match, and git checks those alone.

    Raises:
        InvalidArgumentError: an empty or oversized query, or an invalid regex.
    """
    if not isinstance(query, str) or not query.strip() or "\0" in query:
        raise InvalidArgumentError("query must be the text (or with regex=true, CLI `--regex`, the regular expression) "
                                   "to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgumentError(f"query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
    matches: Callable[[str], object]  # truthy when the line matches
    if regex:
        matches = _line_matcher(query)
    else:
        def matches(line: str) -> bool:
            return query in line
    args = ["log", f"--format={_FORMAT}", "-p", "-U0", "--no-color", "--no-ext-diff", "-M", f"-l{RENAME_LIMIT}",
            ("-G" + posix_regex(query)) if regex else ("-S" + query)]
    if since is not None:
        args.append(f"--since={since.isoformat()}")
    paths = ["--"] + (log.literal([path]) if path else [])
    indexed = search_index.plan(repo, index_ref, ref, query) if index_ref and not regex else None
    try:
        if indexed is None:
            out = repo.git.out(args + [f"-n{int(limit)}", "--end-of-options", ref, *paths])
        else:  # what the index does not cover yet, then only the snapshots it says can match
            out = repo.git.out(args + [f"-n{int(limit)}", "--end-of-options", *indexed.newer, *paths]) \
                if indexed.newer else b""
            left = int(limit) - len(log.split_records(out))
            if left > 0 and indexed.candidates:
                out += repo.git.out(args + [f"-n{left}", "--no-walk=unsorted", "--stdin", *paths],
                                    input="".join(f"{oid}\n" for oid in indexed.candidates).encode())
    except GitError as exc:
        raise InvalidArgumentError(f"git could not search for {query!r}: {exc.stderr or exc}") from exc
    hits = []
    for chunk in (record.decode("utf-8", "surrogateescape") for record in log.split_records(out)):
        # a file name keeps its undecodable bytes (shown ``bad\\xff.py`` as every answer shows it; replaced, it was
        # ``bad\ufffd.py``, a name no tool takes back); the message and the changed lines have them replaced
        header, _, patch = chunk.partition("\x1f\n")
        header = _replaced(header)
        fields = header.split("\x1f", 3)
        if len(fields) < 4:
            continue
        oid, parents, ctime, tail = fields
        subject, _, trailers = tail.rpartition("\x1f")  # the trailers follow the last US (a subject may hold one)
        record = log.CommitRecord(oid, parents.split(), from_unix(int(ctime)).astimezone(), subject,
                                  messages.parse_trailers(trailers))
        hit = Hit(record)
        current = renamed_from = None
        for line in patch.split("\n"):
            if line.startswith(("+++ ", "--- ")):  # a name git quotes (`+++ "b/a\\"b.py"`): unquoted; one
                name = log.unquote_path(line[4:].removesuffix("\t"))  # with a space: a tab after it, as diff writes
                if name.startswith("b/" if line[0] == "+" else "a/") and (line[0] == "+" or current is None):
                    current = name[2:]
                continue
            if line.startswith("diff --git "):
                current = renamed_from = None
                continue
            if line.startswith("rename from ") and current is None:
                renamed_from = log.unquote_path(line[len("rename from "):])
                continue
            if line[:1] not in "+-":
                continue
            line = _replaced(line)
            if matches(line[1:]):
                where = current or "?"
                if renamed_from is not None:
                    hit.renamed_from[where] = renamed_from
                shown = hit.lines.setdefault(where, [])
                if len(shown) < LINES_PER_HIT:
                    shown.append(line[:300])
        hits.append(hit)
    return hits


def _replaced(text: str) -> str:
    """``text`` decoded with ``surrogateescape`` as if decoded with ``replace``: each undecodable byte U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if not text.isascii() else text


def _shown_lines(lines: list[str]) -> list[str]:
    """The matching lines of one file, each once (``(x3)`` when repeated), indentation stripped."""
    counts: dict[str, int] = {}
    for line in lines:
        text = line[:1] + line[1:].strip()
        counts[text] = counts.get(text, 0) + 1
    return [text + (f" (x{n})" if n > 1 else "") for text, n in counts.items()]


def reason(record: log.CommitRecord) -> str:
    """Why a hit's snapshot was taken, as its heading says it: :func:`~code_trajectory.history.headings.why` (the
    intent, the checkpoint's name, the git operation), without the recorder's own ``[AUTO-TRJ]`` prefix; a
    consolidation's first line."""
    return record.subject if record.is_consolidation else why(record)


def render(query: str, branch: str, hits: list[Hit], budget_tokens: int, *, regex: bool,
           more: bool = False) -> Answer:
    """Markdown of the hits, newest first, within the budget; ``more``: older snapshots past the limit match too
    (said, with how to see them, and ``more`` in the data).

    Each hit is one heading (time, its day said once; snapshot id; why: :func:`reason`) and per file the matching ``+``/``-`` lines,
    indentation stripped and each said once; nothing else (no diff headers, no context lines): ``git log -p -S``
    shows the same facts in five to ten times the tokens (``bench/answers.py``).
    """
    what = f"regex `{query}`" if regex else f"`{query}`"
    if not hits:
        return message(f"# Search for {what} (shadow branch `{branch}`)\n\nNo snapshot added or removed it.")
    count = len(hits)
    out = [f"# {what} on `{branch}`: " + (f"the newest {count} snapshot(s) that added or removed it; older ones "
                                         "did too (raise limit, or narrow with path or since)" if more else
                                         "1 snapshot added or removed it" if count == 1 else
                                         f"{count} snapshots added or removed it, newest first")]
    previous_day = None
    for hit in hits:
        record = hit.record
        stamp, previous_day = day_once(record.time, previous_day)
        block = [f"## {stamp} · `{record.oid[:12]}` · {reason(record)}"]
        for path, lines in hit.lines.items():
            shown = _shown_lines(lines)
            named = f"`{messages.display_path(path)}`" + (
                f" (renamed from `{messages.display_path(hit.renamed_from[path])}`)" if path in hit.renamed_from else "")
            if len(shown) == 1:
                block.append(f"{named}: {shown[0]}")
            else:
                block.append(f"{named}:")
                block += [f"  {line}" for line in shown]
        out.append("\n".join(block))
    text = fit("\n".join(out), budget_tokens)
    return Answer(text, search_data(text, query, regex, branch, hits, more=more))


def search_data(text: str, query: str, regex: bool, branch: str, hits: list[Hit], *, more: bool = False) -> dict:
    """The structured content of a search (see :mod:`code_trajectory.core.answer`): ``query``, ``regex`` (when
    true) and the ``hits`` shown, newest first as the text, each a row ``[time, snapshot id, hit]``: the time and
    id as the heading says them, and the hit as the text shows it after its id: why (as the heading says it:
    :func:`reason`), then, a line each after a line break, its lines (per file its path in backquotes, then the
    added ``+`` and removed ``-`` lines). As lean as the text (the row's columns are fixed here, not repeated in
    every answer); ``more`` as :func:`render` says it. Why and lines are one string, as the text has them on
    consecutive lines: apart, a row cost a character more than its heading (JSON's quotes and commas), and past
    about 40 one-line hits the oldest rows were left out; now a row is a character shorter than its heading. Were
    the content still larger than the text, the oldest rows would be left out (counted in ``hits_left_out``) rather
    than the size cap dropping every hit."""
    entries = shown(text, [{"id": short(h.record.oid), "t": h.record.time, "msg": reason(h.record)} for h in hits])
    rows = []
    previous_day = None
    for entry, part in zip(entries, sections(text, [f"`{e['id']}`" for e in entries])):  # a budget cut shows fewer
        body = part.split("\n", 1)[1].split("\n## ", 1)[0].strip("\n") if "\n" in part else ""
        # the time as the heading says it (its day once): a full ISO time in every row made the content larger
        # than the text from about 10 hits of one day, and the cap then dropped every hit
        stamp, previous_day = day_once(entry["t"], previous_day)
        rows.append([stamp, entry["id"], entry["msg"] + (f"\n{body}" if body else "")])
    data: dict = {"query": query, "regex": regex or None, "hits": rows, "more": more or None}
    return fields.rows_within_text(text, data, "hits", "hits_left_out", newest_first=True)
