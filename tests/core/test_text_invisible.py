"""An ``old → new`` pair that looks the same though it changed (httpx's "Drop NBSP characters": a comment's U+00A0
made a space was said `X` → `X`) shows the invisible characters escaped."""

from __future__ import annotations

from code_trajectory.core.text import shown_pair
from code_trajectory.symbols import compare

# httpx/_models.py, cut down: a comment whose no-break space became a plain space
MODELS = "class Response:\n    def read(self):\n        # Read\u00a0the response content.\n        return b''\n"


def test_a_comment_whose_no_break_space_became_a_space_shows_it_escaped():
    changes = compare("httpx/_models.py", MODELS.encode(), MODELS.replace("\u00a0", " ").encode())
    assert changes is not None
    assert changes.summary() == ("comment-only; comment in `Response.read`: `# Read\\u00a0the response content.` → "
                                 "`# Read the response content.`")


def test_a_pair_is_escaped_only_when_it_looks_the_same():
    assert shown_pair("a\u200bb", "ab") == ("a\\u200bb", "ab")  # a zero-width space
    assert shown_pair("a\tb", "a b", lambda t: " ".join(t.split())) == ("a\\x09b", "a b")
    assert shown_pair("a\u00a0b", "a c") == ("a\u00a0b", "a c")  # they differ to the eye: as they are
