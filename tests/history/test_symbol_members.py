"""A class's fields and an interface's methods, named in the answers: a field of a ``@dataclass``, an enum, a
TypeScript interface, a Go/Rust struct, a Java/C#/PHP class changed is ``modified Config (field `timeout` changed)``,
not ``modified Config`` alone; a method without a body (an interface's, an abstract one) is a symbol whose history
can be asked. Real git in temp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.symbols import compare
from support import cli_stdout, write


def test_a_changed_dataclass_field_is_named_in_the_log_the_files_and_the_classs_history(project: Path) -> None:
    write(project, "cfg.py", "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n"
                             "    timeout: float = 5.0\n    name: str = 'x'\n\n    def url(self):\n        return 1\n")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "cfg.py", "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n"
                             "    timeout: float = 10.0\n    retries: int = 3\n\n    def url(self):\n        return 1\n")
    cli_stdout(project, "checkpoint", "-m", "v2")
    said = "modified Config (field `timeout` changed; field `retries` added; field `name` removed)"
    assert said in cli_stdout(project, "log", "--limit", "1")
    assert f"- Symbols: {said}" in cli_stdout(project, "file", "cfg.py")
    history = cli_stdout(project, "symbol", "cfg.py", "Config")
    assert "modified (field `timeout` changed; field `retries` added; field `name` removed)" in history, history


@pytest.mark.parametrize(("path", "old", "new", "said"), [
    ("b.py", "class C(A):\n    x = 1\n", "class C(B):\n    x = 2\n",
     "modified C (field `x` changed; other code too)"),  # its base class changed too: not a field's change alone
    ("a.js", "class C {\n  x = 1;\n  m() {}\n}\n", "class C {\n  x = 2;\n  m() {}\n}\n", "modified C (field `x` changed)"),
    ("e.py", "class Color(Enum):\n    RED = 1\n    BLUE = 2\n", "class Color(Enum):\n    RED = 1\n    BLUE = 3\n",
     "modified Color (field `BLUE` changed)"),
    ("a.ts", "interface I {\n  a: number;\n  b: string;\n}\n", "interface I {\n  a: number;\n  b: number;\n}\n",
     "modified I (field `b` changed)"),
    ("b.ts", "enum E { A, B = 2 }\n", "enum E { A, B = 3, C }\n", "modified E (field `B` changed; field `C` added)"),
    ("a.go", "package p\n\ntype S struct {\n\tA int\n\tB int\n}\n", "package p\n\ntype S struct {\n\tA int\n"
     "\tB string\n}\n", "modified S (field `B` changed)"),
    ("a.rs", "struct S {\n    a: i32,\n}\n", "struct S {\n    a: i64,\n    b: u8,\n}\n",
     "modified S (field `a` changed; field `b` added)"),
    ("A.java", "class C {\n    int a = 1, b;\n    void f() {}\n}\n", "class C {\n    int a = 2, b;\n    void f() {}\n}\n",
     "modified C (field `a` changed)"),
    ("a.cs", "class C {\n    public int Q { get; set; }\n}\n", "class C {\n    public long Q { get; set; }\n}\n",
     "modified C (field `Q` changed)"),
    ("a.php", "<?php\nclass C {\n    public int $x = 1;\n}\n", "<?php\nclass C {\n    public int $x = 2;\n}\n",
     "modified C (field `$x` changed)"),
])
def test_a_changed_field_is_named_in_every_language_that_declares_fields(path: str, old: str, new: str,
                                                                           said: str) -> None:
    changes = compare(path, old.encode(), new.encode())
    assert changes is not None and changes.summary() == said, changes


def test_a_declaration_of_many_fields_is_read_once() -> None:
    """A class declaring 2,000 names in one statement: each name's tokens were the statement's less every other
    name's, compared against all of them (400 names took 15 s, 2,000 names hours: the log and every history of
    the file hung); the fields are still told apart (the swap of two names changes both)."""
    names = ", ".join(f"a{i}" for i in range(2000))
    changes = compare("m.py", f"class C:\n    {names} = range(2000)\n".encode(),
                      f"class C:\n    {names} = range(2001)\n".encode())
    assert changes is not None and changes.summary().startswith("modified C (fields `a0`, `a1`")
    # ten names a group, then a count (all 2,000 made a log line of ~16,000 characters)
    assert "`a9` and 1990 more changed" in changes.summary() and len(changes.summary()) < 200, changes.summary()
    swapped = compare("m.py", b"class C:\n    a, b = 1, 2\n    c = 3\n", b"class C:\n    b, a = 1, 2\n    c = 3\n")
    assert swapped is not None and swapped.summary() == "modified C (fields `b`, `a` changed)"


def test_an_interface_method_without_a_body_is_a_symbol_with_a_history(project: Path) -> None:
    write(project, "Repo.java", "interface Repo {\n    void load();\n    int size();\n}\n")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "Repo.java", "interface Repo {\n    void load(String key);\n    int size();\n    void clear();\n}\n")
    cli_stdout(project, "checkpoint", "-m", "v2")
    assert "modified Repo.load; added Repo.clear" in cli_stdout(project, "log", "--limit", "1")
    history = cli_stdout(project, "symbol", "Repo.java", "Repo.load")
    assert "modified" in history and "+    void load(String key);" in history, history


@pytest.mark.parametrize(("path", "old", "new", "said"), [
    ("a.ts", "interface I {\n  m(x: number): void;\n}\n", "interface I {\n  m(x: string): void;\n  n(): void;\n}\n",
     "modified I.m; added I.n"),
    ("b.ts", "abstract class D {\n  abstract f(): void;\n  g() {}\n}\n",
     "abstract class D {\n  abstract f(): number;\n  g() {}\n}\n", "modified D.f"),
    ("a.cs", "interface IFoo {\n    void Bar();\n}\n", "interface IFoo {\n    void Bar(int x);\n}\n", "modified IFoo.Bar"),
    ("a.php", "<?php\ninterface I {\n    function f(int $x): void;\n}\n",
     "<?php\ninterface I {\n    function f(string $x): void;\n}\n", "modified I::f"),
    ("a.go", "package p\n\ntype R interface {\n\tRead(p []byte) (int, error)\n}\n",
     "package p\n\ntype R interface {\n\tRead(p []byte) (int64, error)\n\tWrite(p []byte)\n}\n",
     "modified R.Read; added R.Write"),
    ("a.rs", "trait T {\n    fn f(&self);\n}\n", "trait T {\n    fn f(&self) -> i32;\n}\n", "modified T::f"),
])
def test_a_method_without_a_body_is_named_when_it_changes(path: str, old: str, new: str, said: str) -> None:
    changes = compare(path, old.encode(), new.encode())
    assert changes is not None and changes.summary() == said, changes


def test_a_module_constants_history_is_asked_as_a_functions(project: Path) -> None:
    write(project, "m.py", '"""Pkg."""\n__version__ = "1.0"\nTIMEOUT = 5\n\n\ndef get():\n    return TIMEOUT\n')
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "m.py", '"""Pkg."""\n__version__ = "1.1"\nTIMEOUT = 5\n\n\ndef get():\n    return TIMEOUT\n')
    cli_stdout(project, "checkpoint", "-m", "v2")
    write(project, "m.py", '"""Pkg."""\n__version__ = "1.1"\nTIMEOUT = 10\n\n\ndef get():\n    return TIMEOUT\n')
    cli_stdout(project, "checkpoint", "-m", "v3")
    version = cli_stdout(project, "symbol", "m.py", "__version__")
    assert "as first recorded" in version and "modified · checkpoint: v2" in version, version
    assert '+__version__ = "1.1"' in version and "v3" not in version, version
    timeout = cli_stdout(project, "symbol", "m.py", "TIMEOUT")
    assert "modified · checkpoint: v3" in timeout and "+TIMEOUT = 10" in timeout and "v2" not in timeout, timeout
    write(project, "m.py", '"""Pkg."""\n__version__ = "1.1"\n\n\ndef get():\n    return 10\n')
    cli_stdout(project, "checkpoint", "-m", "v4")
    assert "removed · checkpoint: v4" in cli_stdout(project, "symbol", "m.py", "TIMEOUT")  # asked once it is gone


@pytest.mark.parametrize(("path", "v1", "name", "old_line", "new_line"), [
    ("a.rb", "class Foo\n  LIMIT = 3\n  OTHER = 1\n\n  def x\n    1\n  end\nend\n", "Foo::LIMIT",
     "  LIMIT = 3", "  LIMIT = 4"),
    ("a.rs", "struct S;\n\nimpl S {\n    const MAX: u32 = 3;\n    const OTHER: u32 = 1;\n\n"
             "    fn f(&self) -> u32 {\n        1\n    }\n}\n", "S::MAX", "    const MAX: u32 = 3;", "    const MAX: u32 = 4;"),
    ("a.py", "class C:\n    LIMIT = 3\n    OTHER = 1\n\n    def f(self):\n        return 1\n", "C.LIMIT",
     "    LIMIT = 3", "    LIMIT = 4"),
])
def test_a_class_members_constant_named_in_the_log_is_traced_by_its_qualified_name(
        project: Path, path: str, v1: str, name: str, old_line: str, new_line: str) -> None:
    """A Ruby class's or a Rust impl's constant, a Python class attribute: the log said `modified Foo (constant
    `LIMIT` changed)`, but `symbol a.rb Foo::LIMIT` answered "no symbol"; the member is traced as a top-level
    constant is, only the versions that changed it listed."""
    write(project, path, v1)
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, path, v1.replace(old_line, new_line))
    cli_stdout(project, "checkpoint", "-m", "v2")
    other = old_line.replace("LIMIT", "OTHER").replace("MAX", "OTHER").replace("3", "1")
    write(project, path, v1.replace(old_line, new_line).replace(other, other.replace("1", "2")))
    cli_stdout(project, "checkpoint", "-m", "v3")
    history = cli_stdout(project, "symbol", path, name)
    assert "as first recorded" in history and "modified · checkpoint: v2" in history, history
    assert f"-{old_line}\n+{new_line}" in history and "v3" not in history, history
