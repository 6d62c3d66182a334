"""Docstrings, doc comments and comments as changes of their symbols (issue 23.3), and ``@N`` names read as ordinals
(issue 23.5), on real grammars."""

from __future__ import annotations

import pytest

from code_trajectory.symbols import compare, language_for, readable
from code_trajectory.symbols.comments import documented_start

PY = b'''"""Tools."""


def echo(text):
    """Print TEXT."""
    if text:
        """Not a docstring: a string statement in a block."""
    # say it
    return text
'''


@pytest.mark.parametrize(("path", "old", "new", "kind", "summary"), [
    ("m.py", PY, PY.replace(b"Print TEXT.", b"Print TEXT, then a newline."), "doc-only",
     "docstring of `echo` changed"),
    ("m.py", PY, PY.replace(b'"""Tools."""', b'"""Small tools."""'), "doc-only", "module docstring changed"),
    ("m.py", PY, PY.replace(b"Not a docstring", b"Still not a docstring"), "comment-only",
     'comment-only; comment in `echo`: `"""Not a docstring: a string statement in a block."""` → '
     '`"""Still not a docstring: a string statement in a block."""`'),
    ("m.py", PY, PY.replace(b"# say it", b"# say it\n    # twice"), "comment-only",
     "comment-only; comment added in `echo`: `# twice`"),
    ("m.py", PY, PY.replace(b"Print TEXT.", b"Print it.").replace(b"return text", b"return text * 2"), "code",
     "modified echo"),  # a modified symbol is said once
    ("a.js", b"/**\n * Greets.\n */\nexport function greet(n) {\n  return n;\n}\n",
     b"/**\n * Greets warmly.\n */\nexport function greet(n) {\n  return n;\n}\n", "doc-only",
     "doc comment of `greet` changed"),
    ("a.ts", b"class A {\n  /** Runs. */\n  run(): number { return 1; }\n}\n",
     b"class A {\n  /** Runs fast. */\n  run(): number { return 1; }\n}\n", "doc-only",
     "doc comment of `A.run` changed"),
    ("a.go", b"package m\n\n// Add adds.\n// Twice.\nfunc Add(a int) int { return a }\n",
     b"package m\n\n// Add adds.\n// Once.\nfunc Add(a int) int { return a }\n", "doc-only",
     "doc comment of `Add` changed"),
    ("a.go", b"package m\n\n// stray\n\nfunc Add(a int) int { return a }\n",
     b"package m\n\n// strayed\n\nfunc Add(a int) int { return a }\n", "comment-only",
     "comment-only; comment: `// stray` → `// strayed`"),  # a blank line between: not Add's doc
    ("a.rs", b"/// Adds.\n#[inline]\nfn add(a: i32) -> i32 { a }\n",
     b"/// Adds one.\n#[inline]\nfn add(a: i32) -> i32 { a }\n", "doc-only", "doc comment of `add` changed"),
    ("A.java", b"class A {\n  /** Runs. */\n  @Override\n  public int run() { return 1; }\n  // c\n  int x() { return 2; }\n}\n",
     b"class A {\n  /** Runs now. */\n  @Override\n  public int run() { return 1; }\n  // c\n  int x() { return 2; }\n}\n",
     "doc-only", "doc comment of `A.run` changed"),
])
def test_doc_and_comment_changes_are_said_as_their_symbols(path: str, old: bytes, new: bytes, kind: str,
                                                            summary: str) -> None:
    changes = compare(path, old, new)
    assert changes is not None
    assert (changes.kind, changes.summary()) == (kind, summary)


THREE = b'def a():\n    return 1\n\n\ndef b():\n    """B."""\n    return 2\n\n\ndef c():\n    """C."""\n    return 3\n'
GO_DOC = b"package m\n\n// Add adds.\n// Twice.\nfunc Add(a int) int { return a }\n\nfunc Sub(a int) int { return a }\n"


@pytest.mark.parametrize(("path", "old", "new", "summary"), [
    # click's replay: a docstring given to `_split_opt` read "docstring of `_split_opt` changed"
    ("m.py", THREE, THREE.replace(b"def a():\n", b'def a():\n    """A."""\n').replace(b'    """B."""\n', b"")
     .replace(b"C.", b"C, now."), "docstring of `c` changed; docstring of `a` added; docstring of `b` removed"),
    ("m.py", THREE, THREE.replace(b"def a():\n", b'def a():\n    """A."""\n').replace(b"B.", b"Bee.")
     .replace(b"C.", b"See."), "docstrings of `b`, `c` changed; docstring of `a` added"),
    ("m.py", b"X = 1\n", b'"""Mod."""\nX = 1\n', "module docstring added"),
    ("m.py", b'"""Mod."""\nX = 1\n', b"X = 1\n", "module docstring removed"),
    # a line added to a run of `//` lines changes the doc comment; a first one adds it, the last one gone removes it
    ("a.go", GO_DOC, GO_DOC.replace(b"// Twice.\n", b"// Twice.\n// Thrice.\n")
     .replace(b"\nfunc Sub", b"\n// Sub subtracts.\nfunc Sub"), "doc comment of `Add` changed; doc comment of `Sub` added"),
    ("a.go", GO_DOC, GO_DOC.replace(b"// Twice.\n", b""), "doc comment of `Add` changed"),
    ("a.go", GO_DOC, GO_DOC.replace(b"// Add adds.\n// Twice.\n", b""), "doc comment of `Add` removed"),
])
def test_a_docstring_added_or_removed_is_said_so(path: str, old: bytes, new: bytes, summary: str) -> None:
    changes = compare(path, old, new)
    assert changes is not None and changes.summary() == summary


def test_a_long_comment_edit_is_named_not_quoted_and_a_moved_symbol_keeps_its_comments() -> None:
    long_comment = "    # " + " ".join(f"word{i}" for i in range(60))  # over 200 characters
    old = f"def f():\n{long_comment}\n    return 1\n".encode()
    changes = compare("m.py", old, old.replace(b"word30", b"thirty"))
    assert changes is not None and changes.summary() == "comment-only; comments changed in `f`"
    two = b"def a():\n    # same words\n    return 1\n\n\ndef b():\n    # same words\n    return 2\n"
    moved = b"def b():\n    # same words\n    return 2\n\n\ndef a():\n    # same words\n    return 1\n"
    changes = compare("m.py", two, moved)
    assert changes is not None and changes.comment_edits == () and "comment" not in changes.summary()


ADAPTER = b"""/** The adapter. */
public abstract class Adapter<T> {
  /** Writes one value. */
  public abstract void write(T value);

  /**
   * Null-safe wrapper.
   */
  public final Adapter<T> nullSafe() {
    return this;
  }

  /** Reads one value. */
  public abstract T read();
}
"""
NULL_SAFE = b"""
  /**
   * Null-safe wrapper.
   */
  public final Adapter<T> nullSafe() {
    return this;
  }
"""


def test_a_method_moved_with_its_doc_comment_leaves_its_class_comments_unchanged() -> None:
    # gson 5187808 (Error Prone's UngroupedOverloads) moved TypeAdapter.nullSafe below read: the file history said
    # 'comments changed in `TypeAdapter`; moved TypeAdapter.nullSafe' (a Javadoc lies in its class's own text)
    moved = ADAPTER.replace(NULL_SAFE, b"").replace(b"  public abstract T read();\n",
                                                    b"  public abstract T read();\n" + NULL_SAFE)
    changes = compare("Adapter.java", ADAPTER, moved)
    assert changes is not None and changes.comments_changed == () and changes.moved == ("Adapter.read",)
    assert changes.summary() == "moved Adapter.read"
    # a comment of the class that changed beside the move is still said
    edited = moved.replace(b"/** Reads one value. */", b"/** Reads the next value. */")
    changes = compare("Adapter.java", ADAPTER, edited)
    assert changes is not None and changes.docs_changed == ("Adapter.read",), changes
    in_class = moved.replace(b"  public abstract T read();\n", b"  // reading\n  public abstract T read();\n", 1)
    changes = compare("Adapter.java", ADAPTER, in_class.replace(b"/** Reads one value. */", b""))
    assert changes is not None and "Adapter" in changes.comments_changed, changes


def test_occurrence_suffixes_read_as_ordinals() -> None:
    assert readable("Context.invoke@3") == "3rd definition of Context.invoke"
    assert readable("f@2", quote=True) == "2nd definition of `f`"
    assert readable("x@11") == "11th definition of x" and readable("x@21") == "21st definition of x"
    assert readable("Foo.bar(int)") == "Foo.bar(int)" and readable("a@b.c") == "a@b.c"
    src = b"def f():\n    return 1\n\n\ndef f():\n    return 2\n"
    changes = compare("m.py", src, src.replace(b"return 2", b"return 3"))
    assert changes is not None and changes.modified == ("f@2",) and changes.summary() == "modified 2nd definition of f"


def test_a_docstring_changed_with_the_imports_is_code_not_a_one_line_import_change() -> None:
    src = b'import os\n\n\ndef f():\n    """Doc."""\n    return os.sep\n'
    changes = compare("m.py", src, src.replace(b"import os", b"import os, sys").replace(b"Doc.", b"Docs."))
    assert changes is not None and changes.kind == "code"
    assert changes.summary() == "docstring of `f` changed; imports changed"


def test_a_docstring_and_a_comment_of_one_function_are_told_apart() -> None:
    src = b'def f():\n    """Doc."""\n    return 1\n'
    new = b'def f():\n    """Doc, longer."""\n    # then a comment\n    return 1\n'
    changes = compare("m.py", src, new)
    assert changes is not None
    assert [(e.doc, e.old, e.new) for e in changes.comment_edits] == [
        (True, '"""Doc."""', '"""Doc, longer."""'), (False, None, "# then a comment")]
    assert changes.summary() == "docstring of `f` changed; comment added in `f`: `# then a comment`"
    # a docstring and a comment of one function both changed: each is paired with its own kind
    src = b'def f():\n    """Doc."""\n    # old note\n    return 1\n'
    new = b'def f():\n    """Docs."""\n    # new note\n    return 1\n'
    changes = compare("m.py", src, new)
    assert changes is not None
    assert changes.summary() == "docstring of `f` changed; comment in `f`: `# old note` → `# new note`"


#: A doc-style comment a blank line above a nested definition, in each language: ``(path, source, enclosing symbol)``.
SEPARATED = [
    ("a.rb", b"module Billing\n  # Invoices.\n\n  class Invoice\n    def total\n      1\n    end\n  end\nend\n",
     "Billing"),
    ("A.java", b"class A {\n  /** Invoices. */\n\n  int run() { return 1; }\n}\n", "A"),
    ("a.ts", b"namespace N {\n  /** Invoices. */\n\n  export class A { run() { return 1; } }\n}\n", "N"),
    ("a.php", b"<?php\nnamespace N;\nclass A {\n  /** Invoices. */\n\n  function run() { return 1; }\n}\n", "A"),
    ("a.cs", b"namespace N {\n  /// Invoices.\n\n  class A { int Run() { return 1; } }\n}\n", "N"),
    ("a.cpp", b"namespace n {\n/// Invoices.\n\nclass A { int run() { return 1; } };\n}\n", "n"),
    ("m.py", b"class A:\n    # Invoices.\n\n    def run(self):\n        return 1\n", "A"),
]


@pytest.mark.parametrize(("path", "source", "owner"), SEPARATED)
def test_a_comment_a_blank_line_above_a_definition_is_the_enclosing_symbols_in_every_language(
        path: str, source: bytes, owner: str) -> None:
    """Ruby as the others (RDoc and YARD take only the comment directly above): a blank line between makes it a
    comment of the enclosing symbol, not the definition's doc comment. (Rust differs by rustdoc's rule: a ``///``
    is an attribute of the next item, blank line or not.)"""
    changes = compare(path, source, source.replace(b"Invoices.", b"Bills."))
    assert changes is not None and changes.kind == "comment-only"
    assert [(e.symbol, e.doc) for e in changes.comment_edits] == [(owner, False)], changes.summary()
    if path != "m.py":  # Python's doc is its docstring: a comment above is never one
        glued = source.replace(b"Invoices. */\n\n", b"Invoices. */\n").replace(b"Invoices.\n\n", b"Invoices.\n")
        changes = compare(path, glued, glued.replace(b"Invoices.", b"Bills."))
        assert changes is not None and changes.kind == "doc-only", changes.summary() if changes else path


PHP_LOGGER = b'''<?php
namespace Monolog;

/**
 * A logger.
 */
class Logger
{
    /**
     * Adds a log record.
     *
     * @param  int     $level   The logging level
     * @return bool Whether the record has been processed
     */
    public function addRecord(int $level): bool
    {
        return true;
    }

    /**
     * @param string|int $level Level number
     */
    public static function toMonologLevel($level): int
    {
        return (int) $level;
    }
}

/**
 * @param  int   $x the value
 */
function helper(int $x): int
{
    return $x;
}
'''


@pytest.mark.parametrize(("old", "new", "kind", "reformatted", "docs"), [
    # a code style fixer realigning a method's docblock (monolog's "CS fixes"): the method's, not the class's
    (PHP_LOGGER, PHP_LOGGER.replace(b"int     $level   The", b"int $level The"), "whitespace-only",
     ("Logger::addRecord",), ()),
    # with a doc comment's text changed beside it: both methods named, the class not
    (PHP_LOGGER, PHP_LOGGER.replace(b"int     $level   The", b"int $level The").replace(b"Level number",
                                                                                      b"Level number or name"),
     "doc-only", ("Logger::addRecord",), ("Logger::toMonologLevel",)),
    # a file-level function's docblock, outside every symbol
    (PHP_LOGGER, PHP_LOGGER.replace(b"int   $x the", b"int $x the"), "whitespace-only", ("helper",), ()),
    # the class's own text realigned too: both
    (PHP_LOGGER, PHP_LOGGER.replace(b"int     $level   The", b"int $level The").replace(b"class Logger\n{",
                                                                                      b"class Logger\n{\n"),
     "whitespace-only", ("Logger", "Logger::addRecord"), ()),
])
def test_a_realigned_doc_comment_is_its_symbols_change(old: bytes, new: bytes, kind: str,
                                                       reformatted: tuple[str, ...], docs: tuple[str, ...]) -> None:
    changes = compare("src/Logger.php", old, new)
    assert changes is not None
    assert (changes.kind, changes.reformatted, changes.docs_changed) == (kind, reformatted, docs)


#: A comment at the end of a line of code directly above a definition, in each language: ``(path, source, owner)``.
TRAILING = [
    ("a.rb", b"module Rack\n  class HeaderHash < Hash # :nodoc:\n    def initialize(h = {})\n      super()\n    end\n"
             b"  end\nend\n", "Rack::HeaderHash"),
    ("a.go", b"package m\n\nvar x = 1 // :nodoc:\nfunc Add(a int) int { return a }\n", None),
    ("A.java", b"class A {\n  int x = 1; /** :nodoc: */\n  int run() { return 1; }\n}\n", "A"),
]


@pytest.mark.parametrize(("path", "source", "owner"), TRAILING)
def test_a_comment_ending_a_line_of_code_is_no_doc_comment_of_the_definition_below(
        path: str, source: bytes, owner: str | None) -> None:
    """Rack's ``class HeaderHash < Hash # :nodoc:`` right above ``def initialize``: the comment is the class line's,
    so adding it is no "doc comment of `HeaderHash#initialize` changed", and the method's own lines (its history's
    diff) start at its ``def``."""
    bare = source.replace(b" # :nodoc:", b"").replace(b" // :nodoc:", b"").replace(b" /** :nodoc: */", b"")
    changes = compare(path, bare, source)
    assert changes is not None and changes.kind == "comment-only", changes.summary() if changes else path
    assert [(e.symbol, e.doc) for e in changes.comment_edits] == [(owner, False)], changes.summary()
    language = language_for(path)
    assert language is not None
    method = [s for s in language.extract(source) if s.kind in ("method", "function")][0]
    assert documented_start(method) == method.start_line


def test_the_names_said_otherwise_are_one_set_for_both_wordings_of_comments() -> None:
    """The full and the lean wording of comment changes each built the set of names whose comments go unsaid (said
    added, removed or modified, or a constant said changed): one property now, which both leave out."""
    from code_trajectory.history.versions import lean_comment_parts

    old = (b"TIMEOUT = 5  # seconds\n\n\ndef gone():\n    # old note\n    return 1\n\n\n"
           b"def kept():\n    # keep me\n    return 2\n\n\ndef quiet():\n    # hush\n    return 3\n")
    new = (b"\n\ndef kept():\n    # keep me, changed\n    return 20\n\n\n"
           b"def quiet():\n    # hush, changed\n    return 3\n")
    changes = compare("m.py", old, new)
    assert changes is not None
    assert changes.said_otherwise == frozenset({"gone", "kept", "TIMEOUT"}), changes
    for parts in (changes.comment_parts(), lean_comment_parts(changes)):
        assert [p for p in parts if "quiet" in p] and not [p for p in parts if "kept" in p or "gone" in p], parts
