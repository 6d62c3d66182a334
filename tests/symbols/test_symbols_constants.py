"""A changed top-level constant is named in every language that has them as plain declarations (Go ``const``/``var``,
JavaScript/TypeScript ``const``/``let``/``var``, Rust ``const``/``static``, Ruby ``CONSTANT = ...``), as Python's
module constants are: ``constant `X` changed``, not "top-level code changed". Real grammars, hand-written sources."""

from __future__ import annotations

import pytest

from code_trajectory.symbols import compare

GO = "package c\n\nimport \"io\"\n\nconst Timeout = 5\n\nvar (\n\tName    = \"x\"\n\tlimit   int\n\t_ io.Reader = nil\n)\n\n" \
     "func Run() {}\n"
JS = "import fs from 'fs';\n\nexport const TIMEOUT = 5;\nlet name = 'x', run = () => 1;\nvar LIMIT;\n\n" \
     "function go() {}\n"
TS = "export const TIMEOUT: number = 5;\ndeclare const VERSION: string;\nconst handlers = { a() {} };\n" \
     "export class Store {}\n"
RS = "use std::io;\n\nconst TIMEOUT: u64 = 5;\npub static NAME: &str = \"x\";\n\nfn run() {}\n"
RB = "require 'json'\n\nTIMEOUT = 5\nNAME, LIMIT = 'x', 3\nPoint = Struct.new(:x) do\n  def y; end\nend\n\n" \
     "def run; end\n"


def edit(source: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


@pytest.mark.parametrize(("path", "old", "new", "said"), [
    # Go: a single spec, a spec of a block, `var` -> `const` (the cobra replay's case), blank `_` is no name
    ("c.go", "package c\n\nvar x = 1\n", "package c\n\nconst x = 1\n", "constant `x` changed"),
    ("c.go", GO, edit(GO, ("Timeout = 5", "Timeout = 10"), ("limit   int", "limit   int64")),
     "constants `Timeout`, `limit` changed"),
    ("c.go", GO, edit(GO, ("\tlimit   int\n", ""), ("func Run", "const Retries = 3\n\nfunc Run")),
     "constant `Retries` added; constant `limit` removed"),
    ("c.go", GO, edit(GO, ("_ io.Reader = nil", "_ io.Reader = os.Stdin")), "top-level code changed"),
    ("c.go", GO, edit(GO, ("const Timeout = 5", "const Timeout = 5 // seconds")), "comment-only; comment added in constant `Timeout`: `// seconds`"),
    # JavaScript: `export const`, a declarator beside a function-valued one (a symbol of its own), bare `var`
    ("c.js", JS, edit(JS, ("TIMEOUT = 5", "TIMEOUT = 10"), ("name = 'x'", "name = 'y'")),
     "constants `TIMEOUT`, `name` changed"),
    ("c.js", JS, edit(JS, ("run = () => 1", "run = () => 2")), "modified run"),
    ("c.js", JS, edit(JS, ("var LIMIT;\n", ""), ("\nfunction", "const RETRIES = 3;\n\nfunction")),
     "constant `RETRIES` added; constant `LIMIT` removed"),
    # a re-export (`export {x} from "./y"`, `export * from`) is an import, as a CommonJS `require` is: it was
    # "top-level code changed"; a plain `export {x}` of the file's own names is not
    ("c.js", JS, edit(JS, ("\n\nexport const", "\nexport { a, b as c } from './y';\n\nexport const")),
     "import-only; imports changed"),
    ("c.ts", TS + "export * from './y';\n", edit(TS, ("number = 5", "number = 6")) + "export * from './z';\n",
     "constant `TIMEOUT` changed; imports changed"),
    # TypeScript: a typed `const`, `declare const`; an object literal is an object symbol, a class a class
    ("c.ts", TS, edit(TS, ("number = 5", "number = 6"), ("VERSION: string", "VERSION: number")),
     "constants `TIMEOUT`, `VERSION` changed"),
    ("c.ts", TS, edit(TS, ("{ a() {} }", "{ a() {}, b() {} }")), "modified handlers; added handlers.b"),
    # Rust: `const` and `static` items
    ("c.rs", RS, edit(RS, ("u64 = 5", "u64 = 10"), ("&str = \"x\"", "&str = \"y\"")),
     "constants `TIMEOUT`, `NAME` changed"),
    ("c.rs", RS, edit(RS, ("pub static NAME", "static mut NAME")), "constant `NAME` changed"),
    ("c.rs", RS, edit(RS, ("const TIMEOUT: u64 = 5;\n", "")), "constant `TIMEOUT` removed"),
    ("c.rs", RS, edit(RS, ("u64 = 5", "u64 = 6"), ("use std::io;", "use std::io;\nmod net;")),
     "constant `TIMEOUT` changed; imports changed"),  # `mod net;` is an import, no other top-level code
    # Ruby: top-level constants (one statement may assign several); a `Struct.new` with a block is a class
    ("c.rb", RB, edit(RB, ("TIMEOUT = 5", "TIMEOUT = 10")), "constant `TIMEOUT` changed"),
    ("c.rb", RB, edit(RB, ("'x', 3", "'x', 4")), "constant `LIMIT` changed"),  # each name with its own value
    # Python and Ruby: `A, B = 1, 2` pairs each name with its value: only the one whose value changed is named;
    # values that do not pair (one call, a splat) are both names'
    ("c.py", "A, B = 1, 2\n", "A, B = 1, 3\n", "constant `B` changed"),
    ("c.py", "(A, B) = (1, 2)\nC, D = [3], 4\n", "(A, B) = (1 + 1, 2)\nC, D = [3], 5\n", "constants `A`, `D` changed"),
    ("c.py", "A, B = f()\n", "A, B = g()\n", "constants `A`, `B` changed"),
    ("c.py", "A, B = 1, *rest\n", "A, B = 1, *other\n", "constants `A`, `B` changed"),
    ("c.rb", RB, edit(RB, ("def y; end", "def y; 1; end")), "modified Point#y"),
    ("c.rb", RB, edit(RB, ("require 'json'", "require 'yaml'"), ("TIMEOUT = 5\n", "")),
     "constant `TIMEOUT` removed; imports changed"),
])
def test_a_changed_top_level_constant_is_named(path: str, old: str, new: str, said: str) -> None:
    changes = compare(path, old.encode(), new.encode())
    assert changes is not None and changes.summary() == said, (changes and changes.summary(), changes)


@pytest.mark.parametrize(("path", "old", "new"), [
    ("c.go", "package c\n\nconst A = 1\n", "package c\n\nconst B = 1\n"),
    ("c.js", "const A = 1;\n", "const B = 1;\n"),
    ("c.ts", "export const A: number = 1;\n", "export const B: number = 1;\n"),
    ("c.rs", "const A: u8 = 1;\n", "const B: u8 = 1;\n"),
    ("c.rb", "A = 1\n", "B = 1\n"),
])
def test_a_renamed_constant_is_one_added_and_one_removed(path: str, old: str, new: str) -> None:
    changes = compare(path, old.encode(), new.encode())
    assert changes is not None and changes.constants == (("B", "added"), ("A", "removed"))
    assert changes.summary() == "constant `B` added; constant `A` removed" and not changes.top_level_changed


def test_a_block_of_many_constants_lists_ten_then_how_many_more() -> None:
    old = "package c\n\nconst (\n" + "".join(f"\tC{i} = {i}\n" for i in range(14)) + ")\n"
    changes = compare("c.go", old.encode(), old.replace(" = ", " = 1 + ").encode())
    assert changes is not None
    assert changes.summary() == "constants " + ", ".join(f"`C{i}`" for i in range(10)) + " and 4 more changed"


def test_other_top_level_code_beside_a_constant_is_still_said() -> None:
    old = "package c\n\nconst A = 1\n\nvar _ = register(A)\n"
    changes = compare("c.go", old.encode(), old.replace("A = 1", "A = 2").replace("register(A)", "register(A, 1)")
                      .encode())
    assert changes is not None and changes.constants == (("A", "changed"),) and changes.top_level_changed
    assert changes.summary() == "constant `A` changed; top-level code changed"
    reordered = compare("c.js", b"const A = 1;\nconst B = 2;\n", b"const B = 2;\nconst A = 1;\n")
    assert reordered is not None and reordered.constants == () and reordered.top_level_changed


@pytest.mark.parametrize(("path", "old", "new", "said"), [
    # Ruby: a class's or module's constants (rack's `VERSION`, `DEFAULT_SEP`) are the class's, named as constants
    ("a.rb", "module Rack\n  VERSION = '1'\n  SEP = '&'\n  def self.x; end\nend\n",
     "module Rack\n  VERSION = '2'\n  def self.x; end\n  LIMIT = 3\nend\n",
     "modified Rack (constant `VERSION` changed; constant `LIMIT` added; constant `SEP` removed)"),
    # `A, B = 1, 2` pairs each name with its value, as at the top level: only the one whose value changed is named
    ("a.rb", "class K\n  A, B = 1, 2\n  attr_reader :a\nend\n", "class K\n  A, B = 1, 3\n  attr_reader :b\nend\n",
     "modified K (constant `B` changed; other code too)"),
    ("a.rb", "class K\n  A, B = 1, 2\nend\n", "class K\n  A, B = 2, 1\nend\n", "modified K (constants `A`, `B` changed)"),
    ("a.rb", "class K\n  A, B = f\nend\n", "class K\n  A, B = g\nend\n", "modified K (constants `A`, `B` changed)"),
    ("a.py", "class K:\n    A, B = 1, 2\n", "class K:\n    A, B = 1, 3\n", "modified K (field `B` changed)"),
    ("a.py", "class K:\n    (A, B) = (1, 2)\n    C, D = [3], 4\n", "class K:\n    (A, B) = (1 + 1, 2)\n    C, D = [3], 5\n",
     "modified K (fields `A`, `D` changed)"),
    ("a.py", "class K:\n    A, B = 1, *r\n", "class K:\n    A, B = 1, *s\n", "modified K (fields `A`, `B` changed)"),
    ("a.rb", "class K\n  @@count = 0\n  def x; end\nend\n", "class K\n  @@count = 1\n  def x; end\nend\n",
     "modified K"),  # a class variable: no constant
    ("a.rb", "module M\n  OLD = 1\nend\n", "module M\n  NEW = 1\nend\n",
     "modified M (constant `NEW` added; constant `OLD` removed)"),
    # Rust: an `impl`'s or a `mod`'s `const`/`static` items
    ("a.rs", "struct S;\nimpl S {\n    const MAX: u8 = 1;\n    fn f() {}\n}\n",
     "struct S;\nimpl S {\n    const MAX: u8 = 2;\n    const MIN: u8 = 0;\n    fn f() {}\n}\n",
     "modified impl S (constant `MAX` changed; constant `MIN` added)"),
    ("a.rs", "mod m {\n    static N: &str = \"a\";\n    fn f() {}\n}\n", "mod m {\n    static N: &str = \"b\";\n    fn f() {}\n}\n",
     "modified m (constant `N` changed)"),
    # Java and C#: `static final` and `const` members were already named, as fields
    ("A.java", "class A {\n  static final int MAX = 1;\n  void m() {}\n}\n",
     "class A {\n  static final int MAX = 2;\n  void m() {}\n}\n", "modified A (field `MAX` changed)"),
    ("A.cs", "class A {\n  const int Max = 1;\n  static readonly string N = \"a\";\n}\n",
     "class A {\n  const int Max = 2;\n  static readonly string N = \"b\";\n}\n", "modified A (fields `Max`, `N` changed)"),
])
def test_a_constant_of_a_class_module_or_impl_is_named_as_its_member(path: str, old: str, new: str, said: str) -> None:
    changes = compare(path, old.encode(), new.encode())
    assert changes is not None and changes.summary() == said, (changes and changes.summary(), changes)
