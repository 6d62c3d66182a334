"""Diffs for the page: git's unified patch parsed into hunks, each line highlighted by Pygments, server-side.

Highlighting works on whole files, not on the patch: the old and the new blob are each tokenised once and split
into lines, so a line inside a multi-line string or comment is coloured as such; each diff line then takes its
highlighted twin by line number. Everything returned is escaped HTML (:class:`markupsafe.Markup`); code never
reaches the page unescaped. Files past :data:`MAX_HIGHLIGHT_BYTES` are shown escaped but not coloured.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from code_trajectory.git.diffs import HUNK_HEADER

#: Files larger than this are not highlighted (tokenising them would delay the page), bytes.
MAX_HIGHLIGHT_BYTES = 400_000
#: Diff lines shown per file before the rest is cut (with a note saying how many were left out).
MAX_DIFF_LINES = 2000
#: Characters of one diff line shown before the rest is cut (a minified bundle's line is megabytes), with a note
#: saying how many were left out.
MAX_LINE_CHARS = 2000
#: CSS class of the element the Pygments rules are scoped to.
CSS_SCOPE = ".hl"



@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a diff.

    Attributes:
        kind: ``ctx`` (unchanged), ``add``, ``del``, or ``note`` (``\\ No newline at end of file``).
        old_no, new_no: the line's number in the old / new file (1-based), None on the side it is absent from.
        html: the line's content, escaped and highlighted (no trailing newline).
    """

    kind: str
    old_no: int | None
    new_no: int | None
    html: Markup


@dataclass(slots=True)
class Hunk:
    """A hunk: git's header (``@@ -12,7 +12,9 @@``), the enclosing function git named, and its lines."""

    header: str
    heading: str
    lines: list[DiffLine] = field(default_factory=list)


@dataclass(slots=True)
class FileDiff:
    """The diff of one file version, ready for a template.

    Attributes:
        hunks: the hunks in file order.
        binary: git called the content binary (no hunks then).
        cut: lines left out past :data:`MAX_DIFF_LINES`.
        note: a remark shown instead of (or after) the hunks, e.g. a mode change; '' when none.
    """

    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    cut: int = 0
    note: str = ""

    @property
    def empty(self) -> bool:
        """True when there is no line to show (binary, mode-only or identical)."""
        return not self.hunks


@dataclass(frozen=True, slots=True)
class SplitRow:
    """One row of a side-by-side diff: a hunk header (``hunk`` set) or a pair of lines (either side may be None)."""

    hunk: Hunk | None = None
    left: DiffLine | None = None
    right: DiffLine | None = None


# -- highlighting ----------------------------------------------------------------------------------------------------


def warm_up() -> None:
    """Load Pygments' lexer table once (the first lookup by file name compiles ~1,000 patterns, ~0.5 s)."""
    _lexer_for("warm-up.py")


@functools.lru_cache(maxsize=256)
def _lexer_for(path: str):
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    name = path.rsplit("/", 1)[-1]
    options: dict[str, Any] = {"stripnl": False, "stripall": False, "ensurenl": False}
    try:
        return get_lexer_for_filename(name, None, **options)
    except ClassNotFound:
        return TextLexer(**options)
    except Exception:  # noqa: BLE001 - a lexer plugin that fails to load must not break the page
        return TextLexer(**options)


@functools.lru_cache(maxsize=1024)
def _css_class(token_type) -> str:
    from pygments.token import STANDARD_TYPES

    while token_type is not None:
        short = STANDARD_TYPES.get(token_type)
        if short is not None:
            return short
        token_type = token_type.parent
    return ""


def highlight_lines(text: str, path: str) -> list[Markup]:
    """Split ``text`` into lines (on ``\\n``; a final newline makes no extra line) as highlighted HTML.

    Args:
        text: the whole file's content.
        path: its path relative to the project root; the file name picks the Pygments lexer (plain text when none
            matches).

    Returns:
        One escaped HTML string per line, tokens wrapped in ``<span class="k">`` etc. (Pygments' short class
        names; see :func:`stylesheet`). Past :data:`MAX_HIGHLIGHT_BYTES`, or with a line longer than
        :data:`MAX_LINE_CHARS` (minified code: its tokens would be most of the work, and the diff cuts the line), the
        lines are escaped only.
    """
    if text.endswith("\n"):
        text = text[:-1]
    if len(text) > MAX_HIGHLIGHT_BYTES or max(map(len, text.split("\n"))) > MAX_LINE_CHARS:
        return [Markup(escape(line)) for line in text.split("\n")]
    text = text.replace("\r\n", "\n")
    if "\r" in text:  # Pygments would turn a lone CR into a line break that git does not see
        return [Markup(escape(line)) for line in text.split("\n")]
    lexer = _lexer_for(path)
    lines: list[list[str]] = [[]]
    try:
        tokens = list(lexer.get_tokens(text))
    except Exception:  # noqa: BLE001 - a lexer bug must not break the page: fall back to plain lines
        return [Markup(escape(line)) for line in text.split("\n")]
    for token_type, value in tokens:
        css = _css_class(token_type)
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if piece:
                lines[-1].append(f'<span class="{css}">{escape(piece)}</span>' if css and css != "w"
                                 else str(escape(piece)))
    plain_count = text.count("\n") + 1
    if len(lines) > plain_count and lines[-1] == []:  # a newline the lexer added at the end
        lines.pop()
    return [Markup("".join(parts)) for parts in lines]


@functools.lru_cache(maxsize=4)
def stylesheet(light: str = "default", dark: str = "github-dark") -> str:
    """The CSS of the highlighting: ``light`` style, and ``dark`` under ``prefers-color-scheme: dark``."""
    from pygments.formatters import HtmlFormatter
    from pygments.styles import get_all_styles

    styles = set(get_all_styles())
    dark = dark if dark in styles else "monokai"
    light_css = HtmlFormatter(style=light).get_style_defs(CSS_SCOPE)
    dark_css = HtmlFormatter(style=dark).get_style_defs(CSS_SCOPE)
    keep = lambda css: "\n".join(line for line in css.splitlines()
                                 if line.startswith(CSS_SCOPE + " .") and "linenos" not in line)
    return (f"/* Pygments styles {light} and {dark} */\n{keep(light_css)}\n"
            f"@media (prefers-color-scheme: dark) {{\n{keep(dark_css)}\n}}\n")


# -- patches ---------------------------------------------------------------------------------------------------------


def parse_patch(patch: str, path: str, old_text: str | None, new_text: str | None, *,
                max_lines: int = MAX_DIFF_LINES) -> FileDiff:
    """Turn git's unified patch of one file into a :class:`FileDiff` with highlighted lines.

    Args:
        patch: ``git diff-tree -p`` output for the file (headers included; ``diff --git`` onwards).
        path: the file's path (new path of a rename), relative to the project root: picks the lexer.
        old_text, new_text: the whole old / new content, when readable as text (else the patch's own lines are
            shown escaped, uncoloured).
        max_lines: diff lines shown before the rest is cut (counted in :attr:`FileDiff.cut`).
    """
    diff = FileDiff()
    old_upto, new_upto = _last_lines(patch, max_lines)
    old_lines = highlight_lines(_head(old_text, old_upto), path) if old_text is not None else None
    new_lines = highlight_lines(_head(new_text, new_upto), path) if new_text is not None else None
    notes: list[str] = []
    hunk: Hunk | None = None
    old_no = new_no = 0
    shown = 0
    for raw in patch.split("\n"):
        match = HUNK_HEADER.match(raw)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            hunk = Hunk(raw[: raw.index("@@", 2) + 2], match.group(5).strip())
            if shown < max_lines:
                diff.hunks.append(hunk)
            continue
        if hunk is None:  # file header
            if raw.startswith("Binary files") or raw.startswith("GIT binary patch"):
                diff.binary = True
            elif raw.startswith(("old mode", "new mode", "new file mode", "deleted file mode", "similarity index",
                                 "rename from", "rename to")):
                notes.append(raw)
            continue
        if not raw:
            continue
        sign, body = raw[0], raw[1:]
        if sign == "\\":
            line = DiffLine("note", None, None, Markup(escape(body.strip())))
        elif sign == "+":
            line = DiffLine("add", None, new_no, _pick(new_lines, new_no, body))
            new_no += 1
        elif sign == "-":
            line = DiffLine("del", old_no, None, _pick(old_lines, old_no, body))
            old_no += 1
        elif sign == " ":
            line = DiffLine("ctx", old_no, new_no, _pick(new_lines, new_no, body))
            old_no += 1
            new_no += 1
        else:
            continue
        if shown >= max_lines:
            diff.cut += 1
            continue
        hunk.lines.append(line)
        shown += 1
    if not diff.hunks and not diff.binary:
        mode = [n for n in notes if "mode" in n]
        diff.note = "; ".join(mode) if mode else "no change in content"
    return diff


def _last_lines(patch: str, max_lines: int) -> tuple[int, int]:
    """The last old and new line numbers the first ``max_lines`` lines of ``patch`` show (from its hunk headers)."""
    old_upto = new_upto = shown = 0
    for match in HUNK_HEADER.finditer(patch):
        if shown >= max_lines:
            break
        old_start, old_count = int(match.group(1)), int(match.group(2) or 1)
        new_start, new_count = int(match.group(3)), int(match.group(4) or 1)
        old_upto = max(old_upto, old_start + old_count)
        new_upto = max(new_upto, new_start + new_count)
        shown += old_count + new_count
    return old_upto, new_upto


def _head(text: str, lines: int) -> str:
    """The first ``lines`` lines of ``text``: only they are highlighted (the lexer needs what comes before them,
    not what comes after), which keeps a change near the top of a long file cheap."""
    end = -1
    for _ in range(lines):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[: end + 1]


def _pick(lines: list[Markup] | None, number: int, fallback: str) -> Markup:
    """Line ``number`` of the highlighted ``lines``, else ``fallback`` (the patch's line) escaped; a line longer than
    :data:`MAX_LINE_CHARS` is its start, escaped and uncoloured, and a note of how many characters were left out."""
    if len(fallback) > MAX_LINE_CHARS:
        rest = len(fallback.rstrip("\r")) - MAX_LINE_CHARS
        return Markup(escape(fallback[:MAX_LINE_CHARS])) + Markup(' <span class="muted">… {} more characters</span>'
                                                                  ).format(f"{rest:,}")
    if lines is not None and 0 < number <= len(lines):
        return lines[number - 1]
    return Markup(escape(fallback.rstrip("\r")))


def split_rows(diff: FileDiff) -> list[SplitRow]:
    """The rows of a side-by-side view of ``diff``: a header per hunk, context on both sides, and each run of
    deletions paired line by line with the run of additions that follows it."""
    rows: list[SplitRow] = []
    dels: list[DiffLine] = []
    adds: list[DiffLine] = []

    def flush() -> None:
        for i in range(max(len(dels), len(adds))):
            rows.append(SplitRow(left=dels[i] if i < len(dels) else None,
                                 right=adds[i] if i < len(adds) else None))
        dels.clear()
        adds.clear()

    for hunk in diff.hunks:
        rows.append(SplitRow(hunk=hunk))
        for line in hunk.lines:
            if line.kind == "del":
                if adds:
                    flush()
                dels.append(line)
            elif line.kind == "add":
                adds.append(line)
            else:
                flush()
                if line.kind == "ctx":
                    rows.append(SplitRow(left=line, right=line))
                else:
                    rows.append(SplitRow(left=line, right=None))
        flush()
    return rows
