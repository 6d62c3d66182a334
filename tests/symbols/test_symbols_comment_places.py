"""Where a comment outside every symbol is said to be: in the top-level constant whose declaration holds it (zod's
util.ts: ``/* @__PURE__*/`` inserted in ``const EVALUATING = Symbol(...)`` was "comments changed outside symbols")."""

from __future__ import annotations

from code_trajectory.history.versions import describe_symbols
from code_trajectory.symbols import compare

# zod's packages/zod/src/v4/core/util.ts, cut down
UTIL = b'''export function getter(obj: any) {
  return obj;
}

const EVALUATING = Symbol("evaluating");

export function defineLazy(object: any, key: string) {
  return EVALUATING; // the marker
}
'''
PURE = UTIL.replace(b'= Symbol("evaluating")', b'= /* @__PURE__*/ Symbol("evaluating")')


def test_a_comment_in_a_top_level_constant_names_the_constant():
    for path in ("src/util.ts", "src/util.js"):
        changes = compare(path, UTIL, PURE)
        assert changes is not None and changes.kind == "comment-only"
        assert changes.summary() == "comment-only; comment added in constant `EVALUATING`: `/* @__PURE__*/`"
        assert describe_symbols(changes, lean=True) == "comments changed in constant `EVALUATING`"
    many = PURE.replace(b"return obj;", b"return obj; // a\n  // b\n  // c\n  // d")  # too many to quote: named
    changes = compare("src/util.ts", UTIL, many)
    assert changes is not None
    assert changes.summary() == "comment-only; comments changed in `getter`, constant `EVALUATING`"


def test_a_comment_outside_symbols_and_constants_is_still_said_so():
    old = b"const A = 1;\n\n// about B\nconst B = 2;\n"
    changes = compare("src/a.ts", old, old.replace(b"about B", b"all about B"))
    assert changes is not None
    assert changes.summary() == "comment-only; comment: `// about B` → `// all about B`"
    assert describe_symbols(changes, lean=True) == "comments outside symbols"
    python = b"TIMEOUT = 5  # seconds\n"
    changes = compare("a.py", python, python.replace(b"# seconds", b"# in seconds"))
    assert changes is not None
    assert changes.summary() == "comment-only; comment in constant `TIMEOUT`: `# seconds` → `# in seconds`"


def test_a_constant_removed_with_its_comment_is_said_once():
    """``TIMEOUT = 5  # seconds`` removed is the constant's removal, not also its comment's (as a removed or modified
    symbol's comments are left out); a comment changed alone in a constant is still said in it."""
    old = b"import os\nTIMEOUT = 5  # seconds\nX = 1\n"
    for new, said in ((b"import os\nX = 1\n", "constant `TIMEOUT` removed"),
                      (old.replace(b"5  # seconds", b"6  # minutes"), "constant `TIMEOUT` changed")):
        changes = compare("conf.py", old, new)
        assert changes is not None and changes.summary() == said
        assert describe_symbols(changes, lean=True) == said
    changes = compare("conf.py", old, old.replace(b"# seconds", b"# minutes"))
    assert changes is not None
    assert changes.summary() == "comment-only; comment in constant `TIMEOUT`: `# seconds` → `# minutes`"
