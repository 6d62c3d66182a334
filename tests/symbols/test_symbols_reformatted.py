"""``reformatted``: a container's own text changed in whitespace, not the layout a member brought or took."""

from __future__ import annotations

import pytest

from code_trajectory.symbols import compare

#: (path, the container before, the container with one member added after its field, the member's name)
ADDED = [
    ("A.java", "class C {\n    int x;\n}\n", "class C {\n    int x;\n    void q() {}\n}\n", "C.q"),
    ("A.cs", "class C {\n    int x;\n}\n", "class C {\n    int x;\n    void q() {}\n}\n", "C.q"),
    ("A.ts", "class C {\n    x = 1;\n}\n", "class C {\n    x = 1;\n    q() {}\n}\n", "C.q"),
    ("A.js", "class C {\n    x = 1;\n}\n", "class C {\n    x = 1;\n    q() {}\n}\n", "C.q"),
    ("A.cpp", "class C {\n    int x;\n};\n", "class C {\n    int x;\n    void q() {}\n};\n", "C::q"),
    ("A.rs", "mod m {\n    const X: i32 = 1;\n}\n", "mod m {\n    const X: i32 = 1;\n    fn q() {}\n}\n", "m::q"),
    ("A.php", "<?php\nclass C {\n    public $x;\n}\n", "<?php\nclass C {\n    public $x;\n    function q() {}\n}\n",
     "C::q"),
    ("A.rb", "class C\n  X = 1\nend\n", "class C\n  X = 1\n  def q; end\nend\n", "C#q"),
    ("A.py", "def f():\n    y = 1\n    return y\n", "def f():\n    y = 1\n    def g():\n        pass\n    return y\n",
     "f.g"),
]


@pytest.mark.parametrize(("path", "old", "new", "member"), ADDED, ids=[case[0] for case in ADDED])
def test_a_member_added_or_removed_does_not_reformat_its_container(path, old, new, member):
    added = compare(path, old.encode(), new.encode())
    assert added.added == (member,) and added.reformatted == (), added.summary()
    removed = compare(path, new.encode(), old.encode())
    assert removed.removed == (member,) and removed.reformatted == (), removed.summary()


@pytest.mark.parametrize("new", [
    "class C {\n    void q() {}\n    int x;\n}\n",  # before the field
    "class C {\n    void q() {}\n\n    int x;\n}\n",
    "class C {\n    int x;\n\n    /** Does q. */\n    void q() {}\n}\n",
])
def test_a_member_added_anywhere_does_not_reformat_its_container(new):
    changes = compare("A.java", b"class C {\n    int x;\n}\n", new.encode())
    assert changes.summary() == "added C.q"


@pytest.mark.parametrize(("old", "new"), [
    ("class C {}\n", "class C {\n    void q() {}\n}\n"),
    ("class C {\n}\n", "class C {\n    void q() {}\n}\n"),
])
def test_a_first_member_does_not_reformat_an_empty_container(old, new):
    assert compare("A.java", old.encode(), new.encode()).summary() == "added C.q"
    assert compare("A.java", new.encode(), old.encode()).summary() == "removed C.q"


def test_a_member_moved_across_a_field_does_not_reformat_its_container():
    old = b"class C {\n    int x;\n    void q() {}\n    void r() {}\n}\n"
    new = b"class C {\n    void r() {}\n    int x;\n    void q() {}\n}\n"
    assert compare("A.java", old, new).summary() == "moved C.r"


@pytest.mark.parametrize("new", [
    "class C {\n  int x;\n    void q() {}\n}\n",  # the field re-indented
    "class C {\r\n    int x;\r\n    void q() {}\r\n}\r\n",  # CRLF
    "class C  {\n    int x;\n    void q() {}\n}\n",  # spaces before the brace
    "class C {\n    int x;\n    void q() {}\n  }\n",  # the closing brace re-indented, next to the new member
    "class C {  \n    int x;\n    void q() {}\n}\n",  # trailing spaces after the brace
])
def test_a_real_reformat_with_a_member_added_is_still_reported(new):
    changes = compare("A.java", b"class C {\n    int x;\n}\n", new.encode())
    assert changes.added == ("C.q",) and changes.reformatted == ("C",), changes.summary()
    back = compare("A.java", new.encode(), b"class C {\n    int x;\n}\n")
    assert back.removed == ("C.q",) and back.reformatted == ("C",), back.summary()


#: (path, two top-level statements, the same with a function between them, the function's name)
BETWEEN = [
    ("a.c", "int x = 1;\nint y = 2;\n", "int x = 1;\nint g(void) { return 2; }\nint y = 2;\n", "g"),
    ("a.py", "x = 1\ny = 2\n", "x = 1\n\n\ndef g():\n    pass\n\n\ny = 2\n", "g"),
    ("a.js", "const x = 1;\nconst y = 2;\n", "const x = 1;\nfunction g() {}\nconst y = 2;\n", "g"),
    ("a.go", "package a\n\nvar x = 1\n", "package a\n\nfunc g() {}\n\nvar x = 1\n", "g"),
    ("a.rb", "X = 1\nY = 2\n", "X = 1\ndef g; end\nY = 2\n", "g"),
]


@pytest.mark.parametrize(("path", "old", "new", "name"), BETWEEN, ids=[case[0] for case in BETWEEN])
def test_a_function_added_or_removed_between_top_level_statements_does_not_change_them(path, old, new, name):
    added = compare(path, old.encode(), new.encode())
    assert added.summary() == f"added {name}" and not added.top_level_changed
    removed = compare(path, new.encode(), old.encode())
    assert removed.summary() == f"removed {name}" and not removed.top_level_changed


def test_top_level_code_changed_beside_an_added_function_or_moved_across_a_kept_one_is_still_said():
    changed = compare("a.c", b"int x = 1;\nint y = 2;\n", b"int x = 1;\nint g(void) { return 2; }\nint y = y + 2;\n")
    assert changed.added == ("g",) and changed.top_level_changed
    moved = compare("a.c", b"int x = 1;\nint f(void) { return 1; }\nint y = 2;\n",
                    b"int x = 1;\nint y = 2;\nint f(void) { return 1; }\n")
    assert moved.top_level_changed


#: (path, a function with a comment, the same with spaces inside the comment's text changed, the function's name)
COMMENT_SPACES = [
    ("a.py", "def f():\n    # keep  it   simple\n    return 1\n", "def f():\n    # keep it simple\n    return 1\n", "f"),
    ("a.js", "function f() {\n  // keep  it   simple\n  return 1;\n}\n",
     "function f() {\n  //keep it simple\n  return 1;\n}\n", "f"),
    ("a.go", "package p\n\nfunc f() int {\n\t/* keep\n\t   it */\n\treturn 1\n}\n",
     "package p\n\nfunc f() int {\n\t/* keep\n\t      it */\n\treturn 1\n}\n", "f"),
]


@pytest.mark.parametrize(("path", "old", "new", "name"), COMMENT_SPACES, ids=[case[0] for case in COMMENT_SPACES])
def test_spaces_inside_a_comment_do_not_reformat_its_function(path, old, new, name):
    """A whitespace-only edit inside a comment's text was said ``reformatted f``: no line of ``f``'s code was laid
    out anew. It is what comments count it as (whitespace inside a comment does not count): the file's change is
    whitespace only, and no symbol is named."""
    for a, b in ((old, new), (new, old)):
        changes = compare(path, a.encode(), b.encode())
        assert changes.kind == "whitespace-only" and changes.touched == (), changes.summary()
        assert changes.summary() == "whitespace-only"
    respaced = compare(path, old.encode(), old.replace("return", "return ", 1).encode())  # the code's own spaces
    assert respaced.reformatted == (name,), respaced.summary()
