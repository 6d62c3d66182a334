"""Test blocks as symbols: how a ``describe``/``it``/``test`` block is named (no grammar is imported here).

A call of a test keyword (Jest, Mocha, Vitest, RSpec, minitest's ``test "..." do``) whose first argument is a string
literal and which is given a function or a block is a ``test`` symbol named by its keyword and its string:
``it parses empty input``. A focused or skipped variant is named by the keyword it varies (``fit``, ``xit``,
``it.only``, ``it.skip``, ``describe.each(table)`` -> ``it``, ``describe``): focusing a test does not rename it.
A test block and what is nested in it are joined by :data:`TEST_SEPARATOR`:
``describe Parser > it parses empty input``, ``describe Parser > helper`` (a function in a ``describe``).
"""

from __future__ import annotations

import re
from typing import Any

#: Joins a test block and what is nested in it (or a test block and the class or function it is in).
TEST_SEPARATOR = " > "

#: The test keywords, as a test block's name begins: Jest/Mocha/Vitest ``describe``, ``it``, ``test``, ``context``,
#: ``suite``, ``specify``; RSpec ``describe``, ``context``, ``it``, ``specify``; minitest ``test``.
TEST_KEYWORDS = frozenset({"describe", "context", "it", "test", "suite", "specify"})

#: A keyword as written: the keyword itself or its focused/skipped variant (``fit``, ``xit``, ``fdescribe``).
KEYWORD_PATTERN = "^[fx]?(describe|context|it|test|suite|specify)$"

_VARIANT = re.compile(KEYWORD_PATTERN)


def keyword_of(written: str) -> str | None:
    """The keyword a test call's callee names (``xit`` -> ``it``), or ``None`` for no test keyword."""
    found = _VARIANT.match(written)
    return found.group(1) if found else None


def block_name(keyword: str, literal: str) -> str:
    """A test block's own name from its keyword and its first argument as written: ``it parses "x"`` for ``it`` and
    ``'parses "x"'`` (see :func:`said`)."""
    return f"{keyword} {said(literal)}".rstrip()


#: What a :data:`TEST_SEPARATOR` in a test's own string is written as in its name: the space after ``>`` a no-break
#: space (U+00A0), so that ``it("returns a > b")`` is no test ``it returns a`` holding ``b`` (its short name was
#: ``b``); a name typed with a plain space is still found (:func:`~.lookup.find` compares names without spaces).
SEPARATOR_IN_STRING = " >\u00a0"


def said(literal: str) -> str:
    """What a test block's first argument says: the text between its quotes (Ruby's ``%q(...)`` too; a constant,
    ``Parser``, as written), whitespace runs collapsed to one space, a :data:`TEST_SEPARATOR` written as
    :data:`SEPARATOR_IN_STRING`."""
    text = literal
    if text[:1] == "%" and len(text) >= 4:  # %q(...), %(...), %Q{...}
        text = text[2:-1] if text[1:2] in "([{<" else text[3:-1]
    elif text[:1] in "'\"`" and len(text) >= 2:
        text = text[1:-1]
    return " ".join(text.split()).replace(TEST_SEPARATOR, SEPARATOR_IN_STRING)


def nests_in_test(d: Any) -> bool:
    """``d`` (an :class:`~code_trajectory.symbols.engine.Def`) is a test block in something, or something in a test
    block: its qualified name joins its parent's with :data:`TEST_SEPARATOR`."""
    parent = d.parent
    return parent is not None and (d.kind == "test" or parent.kind == "test")


def block_tail(qualified: str) -> str | None:
    """The last component of a qualified name when it is a test block's own name (``it parses 1.5`` in ``describe
    Parser > it parses 1.5``: dots and ``#`` in a test's string are no separators), else ``None``."""
    tail = qualified.rsplit(TEST_SEPARATOR, 1)[-1]
    keyword, _, rest = tail.partition(" ")
    return tail if rest and keyword in TEST_KEYWORDS else None


def block_said(qualified: str) -> str | None:
    """What a test block named ``qualified`` says (``parses numbers`` for ``describe P > it parses numbers``), or
    ``None`` when it names no test block."""
    tail = block_tail(qualified) if " " in qualified else None
    return None if tail is None else tail.partition(" ")[2]
