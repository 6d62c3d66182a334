"""Symbol-level change detection on real sources (real grammars, no mocks)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from code_trajectory.symbols import compare

BASE = textwrap.dedent('''\
    import json
    import os


    class Serializer:
        """Serialises with a salt."""

        salt = b"itsdangerous"

        def loads(self, s):
            # parse the payload
            return json.loads(s)

        def dumps(self, obj):
            if obj is None:
                return "null"
            return json.dumps(obj)


    def make(path):
        return Serializer() if os.path.exists(path) else None
    ''').encode()


def edit(old: str, new: str, source: bytes = BASE) -> bytes:
    assert old.encode() in source, old
    return source.replace(old.encode(), new.encode(), 1)


def test_innermost_modified_and_added_method():
    new = edit("return json.loads(s)", "return json.loads(s.strip())")
    new = edit("        return json.dumps(obj)\n",
               "        return json.dumps(obj)\n\n    def iter_unsigners(self):\n        yield self.salt\n",
               new)
    changes = compare("pkg/serializer.py", BASE, new)
    assert changes.kind == "code"
    assert changes.modified == ("Serializer.loads",)
    assert changes.added == ("Serializer.iter_unsigners",)
    assert changes.removed == () and changes.renamed == ()
    assert changes.summary() == "modified Serializer.loads; added Serializer.iter_unsigners"


def test_class_attribute_and_decorator_changes_modify_the_class_only():
    changes = compare("s.py", BASE, edit('salt = b"itsdangerous"', 'salt = b"other"'))
    assert changes.modified == ("Serializer",)
    decorated = compare("s.py", BASE, edit("class Serializer:", "@dataclass\nclass Serializer:"))
    assert decorated.modified == ("Serializer",)


def test_nested_class_attribute_change_reports_the_nested_class():
    src = b"class Outer:\n    class Meta:\n        table = 'a'\n        def f(self):\n            return 1\n"
    changes = compare("m.py", src, src.replace(b"'a'", b"'b'"))
    assert changes.modified == ("Outer.Meta",)


def test_removed_function_and_deleted_file():
    new = edit("def make(path):\n    return Serializer() if os.path.exists(path) else None\n", "")
    changes = compare("s.py", BASE, new)
    assert changes.removed == ("make",) and changes.modified == () and changes.kind == "code"
    deleted = compare("s.py", BASE, None)
    assert deleted.kind == "deleted"
    assert deleted.removed == ("Serializer", "Serializer.loads", "Serializer.dumps", "make")
    assert deleted.summary() == "removed Serializer, make"


def test_added_file_lists_every_symbol():
    changes = compare("s.py", None, BASE)
    assert changes.kind == "added"
    assert changes.added == ("Serializer", "Serializer.loads", "Serializer.dumps", "make")


def test_rename_with_same_body_is_a_rename_and_container_renames_carry_children():
    renamed = compare("s.py", BASE, edit("def make(path)", "def build(path)"))
    assert renamed.renamed == (("make", "build"),)
    assert renamed.added == () and renamed.removed == () and renamed.modified == ()
    cls = compare("s.py", BASE, BASE.replace(b"Serializer", b"Codec"))
    assert cls.renamed == (("Serializer", "Codec"),)
    assert cls.added == () and cls.removed == ()
    assert cls.modified == ("make",)  # its body calls the class by its new name
    both = compare("s.py", BASE, edit("return json.loads(s)", "return json.loads(s or '{}')",
                                      BASE.replace(b"Serializer", b"Codec")))
    assert both.renamed == (("Serializer", "Codec"),) and both.modified == ("Codec.loads", "make")


def test_rename_is_detected_across_files_by_body_key():
    from code_trajectory.symbols import language_for

    a = language_for("a.py").extract(b"def helper(x):\n    return x * 2 + helper(x - 1)\n")
    b = language_for("b.py").extract(b"def twice(x):\n    return x * 2 + twice(x - 1)\n")
    c = language_for("c.py").extract(b"def twice(x):\n    return x * 3\n")
    assert a[0].body_key == b[0].body_key != c[0].body_key
    assert a[0].text_hash != b[0].text_hash


def test_whitespace_only_change_is_reported_as_reformatted():
    new = edit('            return "null"\n', '            return  "null"   \n\n')
    changes = compare("s.py", BASE, new)
    assert changes.kind == "whitespace-only"
    assert changes.modified == () and changes.reformatted == ("Serializer.dumps",)
    crlf = compare("s.py", BASE, BASE.replace(b"\n", b"\r\n"))
    assert crlf.kind == "whitespace-only" and crlf.modified == ()


def test_reindenting_into_a_block_is_code_not_whitespace():
    new = edit('            return "null"\n        return json.dumps(obj)',
               '            return "null"\n            return json.dumps(obj)')
    changes = compare("s.py", BASE, new)
    assert changes.kind == "code" and changes.modified == ("Serializer.dumps",)


def test_a_comment_change_is_comment_only_and_a_docstring_change_is_its_symbols():
    comment = compare("s.py", BASE, edit("# parse the payload", "# parse the JSON payload"))
    assert comment.kind == "comment-only"
    assert comment.comments_changed == ("Serializer.loads",) and comment.modified == ()
    assert comment.summary() == ("comment-only; comment in `Serializer.loads`: `# parse the payload` → "
                                 "`# parse the JSON payload`")
    doc = compare("s.py", BASE, edit('"""Serialises with a salt."""', '"""Serialises, salted."""'))
    assert doc.kind == "doc-only" and doc.docs_changed == ("Serializer",) and doc.comments_changed == ()
    assert doc.summary() == "docstring of `Serializer` changed"
    assert [(e.symbol, e.doc, e.old, e.new) for e in doc.comment_edits] == [
        ("Serializer", True, '"""Serialises with a salt."""', '"""Serialises, salted."""')]


def test_string_contents_are_code_even_when_only_spaces_differ():
    changes = compare("s.py", BASE, edit('return "null"', 'return "nu ll"'))
    assert changes.kind == "code" and changes.modified == ("Serializer.dumps",)


def test_import_only_change():
    changes = compare("s.py", BASE, edit("import os\n", "import os\nimport sys\n"))
    assert changes.kind == "import-only" and changes.imports_changed
    assert changes.modified == () and changes.summary() == "import-only; imports changed"
    c = compare("m.c", b"#include <stdio.h>\nint f(void) { return 1; }\n",
                b"#include <stdio.h>\n#include <string.h>\nint f(void) { return 1; }\n")
    assert c.kind == "import-only"
    rs = compare("m.rs", b"use std::fmt;\nfn f() {}\n", b"use std::io;\nfn f() {}\n")
    assert rs.kind == "import-only"


def test_local_import_inside_a_function_modifies_it():
    src = b"def f():\n    import os\n    return os.sep\n"
    changes = compare("s.py", src, src.replace(b"import os", b"import os, sys"))
    assert changes.kind == "code" and changes.modified == ("f",)


def test_top_level_code_outside_symbols():
    changes = compare("s.py", BASE, BASE + b"\nregister(make('.'))\n")
    assert changes.kind == "code" and changes.top_level_changed and changes.touched == ()
    assert changes.summary() == "top-level code changed"


def test_a_changed_constant_is_named_not_said_top_level_code():
    # `TIMEOUT = 5` -> `TIMEOUT = 10` says the constant (the name a model can ask about), not "top-level code
    # changed"; under a top-level `if sys.version_info` too; other code outside symbols is still said
    old = (b"import sys\n\nTIMEOUT = 5  # seconds\n__all__ = ['a']\nif sys.version_info >= (3, 11):\n"
           b"    LOADS = 1\nelse:\n    LOADS = 2\n\n\ndef a():\n    X = 1\n    return X\n")
    timeout = compare("c.py", old, old.replace(b"TIMEOUT = 5", b"TIMEOUT = 10"))
    assert timeout.constants == (("TIMEOUT", "changed"),) and not timeout.top_level_changed
    assert timeout.summary() == "constant `TIMEOUT` changed"
    assert compare("c.py", old, old.replace(b"5  # seconds", b"5  # s")).constants == ()  # a comment: not code
    more = old.replace(b"    LOADS = 2", b"    LOADS = 3").replace(b"['a']", b"['a', 'b']") + b"\nLIMIT = 3\n"
    found = compare("c.py", old, more.replace(b"TIMEOUT = 5  # seconds\n", b""))
    assert found.constants == (("__all__", "changed"), ("LOADS", "changed"), ("LIMIT", "added"),
                               ("TIMEOUT", "removed")) and not found.top_level_changed
    assert found.summary() == ("constants `__all__`, `LOADS` changed; constant `LIMIT` added; constant `TIMEOUT` "
                               "removed")  # its comment went with it: said once
    local = compare("c.py", old, old.replace(b"X = 1", b"X = 2"))  # a function's own variable: the function
    assert local.modified == ("a",) and local.constants == ()
    both = compare("c.py", old, old.replace(b"TIMEOUT = 5", b"TIMEOUT = 6").replace(b">= (3, 11)", b">= (3, 12)"))
    assert both.constants == (("TIMEOUT", "changed"),) and both.top_level_changed
    assert both.summary() == "constant `TIMEOUT` changed; top-level code changed"
    go = compare("c.go", b"package c\n\nvar x = 1\n", b"package c\n\nvar x = 2\n")
    assert go.constants == (("x", "changed"),) and not go.top_level_changed  # Go's too (test_symbols_constants.py)
    java = compare("C.java", b"class C {}\nint x = 1;\n", b"class C {}\nint x = 2;\n")
    assert java.constants == ()  # a language whose constants are class members: said as fields


def test_reordered_methods_are_moved():
    dumps = ('    def dumps(self, obj):\n        if obj is None:\n            return "null"\n'
             '        return json.dumps(obj)\n')
    new = edit("\n" + dumps, "")
    new = edit("    def loads(self, s):", dumps + "\n    def loads(self, s):", new)
    changes = compare("s.py", BASE, new)
    assert changes.moved == ("Serializer.dumps",) and changes.modified == () and changes.added == ()


def test_unchanged_unsupported_and_binary():
    assert compare("s.py", BASE, BASE).kind == "unchanged"
    assert compare("notes.txt", b"a", b"b") is None
    assert compare("Makefile", None, b"all:\n") is None
    binary = compare("s.py", BASE, b"\x00\x01\x02\x03")
    assert binary.kind == "skipped" and binary.skipped == "binary" and binary.touched == ()


def test_syntax_error_in_new_version_still_reports_what_it_can():
    new = edit("def make(path):", "def make(path:")
    changes = compare("s.py", BASE, new)
    assert changes.has_errors
    assert "Serializer.loads" not in changes.touched and "Serializer.dumps" not in changes.touched


def test_java_overloads_and_alias_when_a_second_overload_appears():
    old = b"class A {\n  void bar(int x) { run(x); }\n}\n"
    new = b"class A {\n  void bar(int x) { run(x); }\n  void bar(String s) { run(s); }\n}\n"
    changes = compare("A.java", old, new)
    assert changes.added == ("A.bar(String)",)
    assert changes.removed == () and changes.renamed == () and changes.modified == ()
    edited = compare("A.java", new, new.replace(b"run(s)", b"run(s.trim())"))
    assert edited.modified == ("A.bar(String)",)


def test_cpp_out_of_line_method_modified_and_go_method_added():
    old = b"namespace ns {\nvoid Server::start() { listen(); }\n}\n"
    changes = compare("s.cpp", old, old.replace(b"listen();", b"listen(80);"))
    assert changes.modified == ("ns::Server::start",)
    go_old = b"package s\n\ntype Server struct{}\n\nfunc (s *Server) Start() {}\n"
    go_new = go_old + b"\nfunc (s Server) Stop() { s.Start() }\n"
    go = compare("s.go", go_old, go_new)
    assert go.added == ("Server.Stop",) and go.modified == ()


def test_ruby_and_rust_and_typescript_modified_methods():
    rb = b"module M\n  class K\n    def run\n      1\n    end\n  end\nend\n"
    assert compare("k.rb", rb, rb.replace(b"      1", b"      2")).modified == ("M::K#run",)
    rs = b"struct S;\nimpl S {\n    fn go(&self) -> u8 { 1 }\n}\n"
    assert compare("s.rs", rs, rs.replace(b"{ 1 }", b"{ 2 }")).modified == ("S::go",)
    ts = b"export class Store {\n  load(k: string): number { return 1; }\n}\n"
    assert compare("s.ts", ts, ts.replace(b"return 1", b"return 2")).modified == ("Store.load",)


def test_importing_the_package_imports_no_grammar_and_one_language_only_its_own():
    code = textwrap.dedent("""
        import sys
        import code_trajectory.symbols as s
        assert not [m for m in sys.modules if m.startswith("tree_sitter")], "grammar imported eagerly"
        s.language_for("a.py").extract(b"def f(): pass\\n")
        loaded = sorted(m for m in sys.modules if m.startswith("tree_sitter_") and "." not in m)
        print(loaded)
        mods = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("code_trajectory.symbols.languages."))
        print(mods)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "['tree_sitter_python']"
    assert out[1] == "['python']"


def test_adding_a_function_is_not_a_top_level_change_but_a_new_statement_is() -> None:
    from code_trajectory.symbols.changes import compare

    old = b"def add(a, b):\n    return a + b\n\n\nclass Calc:\n    def mul(self, a, b):\n        return a * b\n"
    added = old + b"\n\ndef sub(a, b):\n    return a - b\n"
    found = compare("calc.py", old, added)
    assert found.added == ("sub",) and not found.top_level_changed
    assert "top-level" not in found.summary()
    statement = added + b"\nLIMIT = 10\n"
    assert compare("calc.py", added, statement).constants == (("LIMIT", "added"),)  # named, not "top-level code"
    assert compare("calc.py", added, added + b"\nprint(LIMIT)\n").top_level_changed


def test_repeated_definitions_are_paired_by_body_not_by_position():
    from code_trajectory.symbols import compare_blobs

    two = b'package main\n\nfunc init() {\n\tprintln("a")\n}\n\nfunc init() {\n\tprintln("b")\n}\n'
    first_gone = b'package main\n\nfunc init() {\n\tprintln("b")\n}\n'
    blobs = {"1": two, "2": first_gone, "3": first_gone.replace(b'"b"', b'"B"')}
    gone = compare_blobs("g.go", "1", "2", blobs.get)  # the first init deleted: the second one is unchanged
    assert (gone.removed, gone.modified, gone.added) == (("init",), (), ())
    edited = compare_blobs("g.go", "1", "3", blobs.get)  # ... and the survivor edited too: no body pairs, in order
    assert "init" in edited.modified or "init" in edited.removed


def test_overloads_whose_parameters_all_changed_are_the_same_overloads_in_order():
    # argparse's "Added support for custom prefix characters": both `Argument(std::array<...>&&, ...)`
    # constructors got a `std::string_view prefix_chars` first parameter and new initialisers; they were reported
    # removed and two new ones added, so their histories began there
    old = textwrap.dedent("""\
        class Argument {
          template <std::size_t N, std::size_t... I>
          explicit Argument(std::array<std::string_view, N> &&a, std::index_sequence<I...>)
              : m_optional((is_optional(a[I]) || ...)) {}
          template <std::size_t N>
          explicit Argument(std::array<std::string_view, N> &&a)
              : Argument(std::move(a), std::make_index_sequence<N>{}) {}
        };
        """)
    new = textwrap.dedent("""\
        class Argument {
          template <std::size_t N, std::size_t... I>
          explicit Argument(std::string_view p, std::array<std::string_view, N> &&a, std::index_sequence<I...>)
              : m_optional((is_optional(a[I], p) || ...)), m_prefix(p) {}
          template <std::size_t N>
          explicit Argument(std::string_view p, std::array<std::string_view, N> &&a)
              : Argument(p, std::move(a), std::make_index_sequence<N>{}) {}
        };
        """)
    changes = compare("argparse.hpp", old.encode(), new.encode())
    assert changes.added == () and changes.removed == (), changes.summary()
    assert changes.aliases == (
        ("Argument::Argument(std::array<std::string_view,N>&&,std::index_sequence<I...>)",
         "Argument::Argument(std::string_view,std::array<std::string_view,N>&&,std::index_sequence<I...>)"),
        ("Argument::Argument(std::array<std::string_view,N>&&)",
         "Argument::Argument(std::string_view,std::array<std::string_view,N>&&)")), changes.aliases


def test_a_rename_with_a_changed_body_is_a_rename() -> None:
    """commander.js #1613: ``_setOptionValueWithSource`` made public with a ``return this;`` added was removed and
    added, its history ending there; ``git log -L`` follows it by its lines. Unrelated code stays removed and added."""
    from code_trajectory.symbols.changes import compare

    old = (b"class Command {\n  _setOptionValueWithSource(key, value, source) {\n    this._optionValues[key] = value;\n"
           b"    this._optionValueSources[key] = source;\n  }\n}\n")
    new = (b"class Command {\n  setOptionValueWithSource(key, value, source) {\n    this._optionValues[key] = value;\n"
           b"    this._optionValueSources[key] = source;\n    return this;\n  }\n}\n")
    changes = compare("lib/command.js", old, new)
    assert changes is not None and not changes.added and not changes.removed
    assert changes.renamed == (("Command._setOptionValueWithSource", "Command.setOptionValueWithSource"),)
    assert changes.modified == ("Command.setOptionValueWithSource",)
    other = compare("m.py", b"def alpha(x):\n    y = x + 1\n    return y * 2\n",
                    b"def beta(path):\n    with open(path) as f:\n        return f.read()\n")
    assert other is not None and other.added == ("beta",) and other.removed == ("alpha",) and not other.renamed


def test_each_list_of_the_summary_names_ten_symbols_then_counts_the_rest() -> None:
    # click's replay: a file with 39 functions modified and 1 added named all 39 before the added one
    old = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(39)).encode()
    new = old.replace(b"    return ", b"    return 1 + ") + b"def g():\n    return 0\n"
    changes = compare("m.py", old, new)
    assert changes is not None and len(changes.modified) == 39 and changes.added == ("g",)
    listed = ", ".join(f"f{i}" for i in range(10))
    assert changes.summary() == f"modified {listed} and 29 more; added g"
    removed = compare("m.py", old, b"def g():\n    return 'g'\n")
    assert removed is not None and removed.summary() == f"added g; removed {listed} and 29 more"


def test_a_rename_to_a_name_that_looks_the_same_is_said_escaped() -> None:
    """``Ka<U+200C>b`` (a zero-width non-joiner) renamed ``Kab`` read ``renamed Ka‌b -> Kab``."""
    methods = "  run(x: number): number {\n    return x + 1;\n  }\n  stop(y: string): string {\n    return y;\n  }\n}\n"
    found = compare("k.ts", f"export class Ka\u200cb {{\n{methods}".encode(), f"export class Kab {{\n{methods}".encode())
    assert found is not None and "renamed Ka\\u200cb -> Kab" in found.summary(), found
    found = compare("k.ts", f"export class Kac {{\n{methods}".encode(), f"export class Kab {{\n{methods}".encode())
    assert found is not None and "renamed Kac -> Kab" in found.summary(), found  # they differ to the eye: as they are
