"""A path as answers show it (``display_path``: ``bad\\xff.py`` for a name that is not UTF-8, ``\\u202e`` for a
right-to-left override) names, passed back by a client, the file it was shown for: ``confine`` reads it back, unless
a file of that literal name exists. An agent could not pass such a file back before (JSON carries no undecodable
byte): every tool said no snapshot had recorded it and suggested the same shown name again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_trajectory.core.text import display_path, shown_name
from code_trajectory.project import confine

NAMES = ["bad\udcff.py", "evil\u202etxt.py", "tab\there.py", "line\nfeed.py", "zw\u200b.py", "d\udcc3ir/\u00e9\udcff.py"]


@pytest.mark.parametrize("name", NAMES)
def test_a_shown_name_reads_back_as_the_name_it_shows(name: str) -> None:
    shown = display_path(name)
    assert shown != name and shown_name(shown) == name


@pytest.mark.parametrize("text", ["app.py", "a\\x41.py", "bad\\xFF.py", "x\\ud800.py", "\\xc3\\xa9.py", "a\\b.py",
                                  "bad\udcff.py"])
def test_text_that_is_not_a_shown_name_reads_as_nothing(text: str) -> None:
    """An ``A`` or an ``é`` is shown as itself, a byte in lower case, and no file name holds a lone surrogate: a
    backslash the name holds stays a backslash."""
    assert shown_name(text) is None


def test_confine_reads_a_shown_name_back_unless_the_literal_name_exists(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    with open(os.fsencode(root) + b"/bad\xff.py", "w") as f:
        f.write("x = 1\n")
    assert confine(root, "bad\\xff.py") == "bad\udcff.py"
    assert confine(root, str(root / "sub" / "evil\\u202etxt.py")) == "sub/evil\u202etxt.py"  # absolute, not on disk
    (root / "bad\\xff.py").write_text("literal\n")  # a file named with a backslash of its own comes first
    assert confine(root, "bad\\xff.py") == "bad\\xff.py"
    assert confine(root, "a\\x41.py") == "a\\x41.py"


def test_an_invisible_character_above_u_ffff_is_shown_as_one_escape_read_back() -> None:
    """A tag character (U+E0001) was shown as ``\\ue0001``: five hex digits after ``\\u``, which no reader takes as
    one escape, so the shown name named no file. It is ``\\U000e0001`` now."""
    name = "a\U000e0001.py"
    assert display_path(name) == "a\\U000e0001.py" and shown_name(display_path(name)) == name
