"""An answer of a query: markdown for the reader plus the same facts as fields for programs.

:class:`Answer` is a ``str`` (the markdown the CLI prints and a model reads) that also carries ``data``, a
JSON-ready dict of the facts (ids, times, paths, counts, symbols) that MCP tools return as structured content,
so the text is sent once and the fields are not a copy of it. Standard library only.
"""

from __future__ import annotations

from typing import Any


class Answer(str):
    """Markdown text with structured ``data`` alongside.

    Args:
        text: the markdown answer.
        data: JSON-ready fields (str, int, float, bool, None, lists and dicts of them).
    """

    data: dict[str, Any]

    def __new__(cls, text: str, data: dict[str, Any] | None = None) -> Answer:
        answer = super().__new__(cls, text)
        answer.data = dict(data or {})
        return answer

    @property
    def text(self) -> str:
        """The markdown, as a plain ``str``."""
        return str.__str__(self)
