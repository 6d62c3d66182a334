"""The journal's operations as the MCP tools and the CLI both use them.

Each operation returns ``(text, structured)``: readable markdown and a JSON
object in the shape of ``journal-design.md`` (lists are wrapped in an object,
since MCP structured content is an object). The MCP layer
(:mod:`code_trajectory.journal.tools`) adds the per-session write protection;
the CLI (:mod:`code_trajectory.journal.commands`) writes without it.
"""

from __future__ import annotations

import shlex
import threading
from typing import Any

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.journal import SALIENCE_RANGE
from code_trajectory.journal.model import UNCHECKED
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.text import ID_SHA_LEN, iso, normalize_path, parse_id
from code_trajectory.journal.toc import table_of_contents

MAX_TEXT_ENTRY_CHARS = 3000
#: Text of one search hit, and of all hits together, in a search answer (characters; ~4 a token).
MAX_TEXT_HIT_CHARS = 1500
MAX_TEXT_TOTAL_CHARS = 20000


def _short(text: str, limit: int = MAX_TEXT_ENTRY_CHARS) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "\n… (truncated; journal_read the id for all of it)"


def _int_arg(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name} must be a whole number")
    if isinstance(value, float):
        if value != int(value):
            raise InvalidArgumentError(f"{name} must be a whole number, got {value}")
        value = int(value)
    if not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be a whole number")
    return value


class Journal:
    """One journal: its store and its search index.

    Args:
        settings: resolved settings.
    """

    def __init__(self, settings: JournalSettings) -> None:
        self.settings = settings
        self.store = JournalStore(settings)
        self._index = None
        self._index_lock = threading.Lock()

    @property
    def index(self):
        from code_trajectory.journal.search import SearchIndex

        with self._index_lock:
            if self._index is None:
                self._index = SearchIndex(self.store, self.settings)
            return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    # -- operations

    def search(self, work_context: str, content: str, salience_threshold: float | None = None,
               max_results: int | None = None) -> tuple[str, dict]:
        """``journal_search``: entries matching the work context and the content."""
        if salience_threshold is not None and (isinstance(salience_threshold, bool)
                                               or not isinstance(salience_threshold, (int, float))):
            raise InvalidArgumentError(f"salience_threshold must be a number between {SALIENCE_RANGE[0]:g} and "
                                       f"{SALIENCE_RANGE[1]:g}")
        result = self.index.search(work_context, content, salience_threshold, max_results=max_results)
        data = result.as_dict()
        lines = [f"{len(result.hits)} of {result.considered} journal entries scored >= "
                 f"{result.threshold:g} ({result.note})."]
        if not result.hits:
            lines.append("\nNo entry passed the threshold; lower salience_threshold, rephrase, or browse "
                         "with journal_toc.")
        used = 0
        for n, hit in enumerate(data["results"], 1):
            lines.append(f"\n{n}. {hit['id']} ({hit['timestamp']}): combined {hit['combined_score']:.3f} = "
                         f"work_context {hit['work_context_score']:.3f}, content {hit['content_score']:.3f}, "
                         f"salience {hit['salience']:.3f}"
                         + ("; a long entry: only its beginning was searched" if hit["cut_for_search"] else ""))
            if used < MAX_TEXT_TOTAL_CHARS:
                body = _short(hit["content"], MAX_TEXT_HIT_CHARS)
                used += len(body)
            else:  # keep the answer within a model's budget: the rest by id only
                body = hit["content"].strip().split("\n", 1)[0][:120] + " … (journal_read the id)"
            lines.append(_indent(body))
        return "\n".join(lines), data

    def read(self, journal_id: str) -> tuple[str, dict, object]:
        """``journal_read``: an overview or an entry.

        Returns:
            ``(text, structured, version)``: ``version`` is the section version that was
            read (for the write protection), or :data:`UNCHECKED` for an entry read.
        """
        path, sha = parse_id(journal_id)
        if sha is not None:
            entry = self.store.read_entry(path, sha)
            data: dict[str, Any] = {"id": entry.id, "type": "entry", "path": path, "content": entry.text,
                    "timestamp": iso(entry.timestamp), "summary": entry.summary,
                    "work_context": None if f"work_context: {entry.work_context}" in entry.text else
                    entry.work_context, "author": entry.author}  # no second copy of a line of the content
            text = f"Journal entry {entry.id} ({iso(entry.timestamp)}, {entry.author or 'unknown author'})" \
                   f"{': ' + entry.summary if entry.summary else ''}\n\n{entry.text}"
            return text, data, UNCHECKED
        ov = self.store.read_overview(path)
        data = {"id": path, "type": "overview", "path": path, "content": ov.content, "exists": ov.exists,
                "version": ov.version[:ID_SHA_LEN] if ov.version else None, "entry_count": ov.entry_count,
                "last_updated": iso(ov.last_updated) if ov.last_updated else None,
                "pending_conflict": ov.pending_conflict}
        if not ov.exists and ov.entry_count == 0:
            text = (f"Section {path!r} does not exist yet. journal_write('{path}', entry, overview=...) creates "
                    "it (you have now read it, so the write is allowed; CLI: `code-trajectory journal write "
                    f"{shlex.quote(path)} --entry TEXT --overview TEXT`).")
            subsections = [s for s in self.store.sections() if s.startswith(path + "/")]
            if subsections:
                text += (f" It already groups {len(subsections)} subsection(s), e.g. {subsections[0]!r}; "
                         f"journal_toc('{path}', depth=2) lists them (CLI: `code-trajectory journal toc "
                         f"{shlex.quote(path)} --depth 2`).")
        else:
            head = f"Overview of {path} (version {data['version']}, {ov.entry_count} entries, " \
                   f"last updated {data['last_updated']}):"
            text = f"{head}\n\n{ov.content or '(the overview is empty)'}"
        if ov.pending_conflict:
            text += (f"\n\nA sync could not merge another overview of this section (local commit "
                     f"{ov.pending_conflict['local_commit']}). It reads:\n\n{ov.pending_conflict['local_version']}\n\n"
                     f"Merge the two (journal_synthesize_conflict helps), then journal_write with the merged "
                     "overview; that clears the conflict.")
        return text, data, ov.version

    def toc(self, journal_id: str = "", depth: int = 1) -> tuple[str, dict]:
        """``journal_toc``: the section tree."""
        depth = _int_arg("depth", depth)
        data = table_of_contents(self.store, journal_id or "", depth)
        lines: list[str] = []

        def walk(node: dict, indent: int) -> None:
            more = ""
            if node.get("subsection_count") and not node.get("subsections"):
                more = f", {node['subsection_count']} subsections (raise depth to see them)"
            label = node["id"] or "(journal root)"
            kind = "" if node["type"] == "section" else f" [{node['type']}]"
            lines.append(f"{'  ' * indent}- {label}{kind}: {node['entry_count']} entries, "
                         f"last updated {node['last_updated'] or 'never'}{more}")
            for child in node.get("subsections", []):
                walk(child, indent + 1)

        if data["type"] == "root":
            lines.append(f"Journal at {self.settings.journal_data_path}: {data['section_count']} sections, "
                         f"{data['entry_count']} entries, last updated {data['last_updated'] or 'never'}.")
            if not data["subsections"]:
                lines.append("The journal is empty: journal_read a new section path, then journal_write to it (CLI: "
                             "`code-trajectory journal write SECTION --entry TEXT`).")
            for child in data["subsections"]:
                walk(child, 0)
        else:
            walk(data, 0)
        return "\n".join(lines), data

    def list_entries(self, path: str, start: int = 0, length: int = 10) -> tuple[str, dict]:
        """``journal_list_entries``: a page of a section's entries, newest first."""
        start = _int_arg("start", start)
        length = _int_arg("length", length)
        total, entries = self.store.list_entries(path, start, length)
        path = normalize_path(path)
        items = [{"id": e.id, "timestamp": iso(e.timestamp), "summary": e.summary} for e in entries]
        data = {"path": path, "total": total, "start": start, "entries": items}
        lines = [f"Entries {start + 1}-{start + len(items)} of {total} in {path} (newest first):"]
        lines += [f"- {i['id']} ({i['timestamp']}): {i['summary']}" for i in items]
        if not items:
            lines = [f"No entries at index {start} or later; {path} has {total}."]
        elif start + len(items) < total:
            lines.append(f"More: journal_list_entries('{path}', start={start + len(items)}) (CLI: "
                         f"`code-trajectory journal list {shlex.quote(path)} --start {start + len(items)}`).")
        return "\n".join(lines), data

    def write(self, path: str, entry: str, overview: str | None = None, summary: str | None = None,
              expected_version: object = UNCHECKED) -> tuple[str, dict, str]:
        """``journal_write``: commit an entry (and optionally a new overview).

        Returns:
            ``(text, structured, version)``: ``version`` is the full sha of the new commit,
            the section's version after the write.
        """
        result = self.store.write(path, entry, overview, summary, expected_version=expected_version)
        data = {"id": result.id, "path": result.path, "version": result.version[:ID_SHA_LEN],
                "entry_count": result.entry_count, "overview_updated": result.overview_updated,
                "created": result.created, "timestamp": iso(result.timestamp)}
        if result.duplicate:
            data["duplicate"] = True
            return (f"Journal entry {result.id} of {result.path} ({data['timestamp']}) already says this: nothing "
                    "written.", data, result.version)
        what = "created section" if result.created else "added to"
        text = (f"Journal entry {result.id} {what} {result.path} at {data['timestamp']} (entry "
                f"{result.entry_count}{', overview updated' if result.overview_updated else ''}).")
        return text, data, result.version

    def sync(self, remote: str | None = None, branch: str | None = None) -> tuple[str, dict]:
        """``journal sync``: share the journal through a git remote."""
        from code_trajectory.journal.sync import sync_journal

        report = sync_journal(self.store, remote=remote, branch=branch)
        return report.text(), report.as_dict()


def _indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def merge_prompt(section: str, version_a: str, version_b: str, work_context: str) -> str:
    """The prompt that asks a model to synthesise two overviews of one section."""
    return (
        f"Two versions of the overview of journal section {section!r} diverged"
        f"{f' during: {work_context}' if work_context.strip() else ''}. Write ONE overview that keeps every "
        "insight, decision and open question of both, resolves contradictions in favour of the better-supported "
        "or more recent understanding (say so where it matters), drops repetition, and keeps the markdown "
        "structure. Answer with the merged overview only, no preamble.\n\n"
        f"<version_a>\n{version_a.strip()}\n</version_a>\n\n<version_b>\n{version_b.strip()}\n</version_b>"
    )


