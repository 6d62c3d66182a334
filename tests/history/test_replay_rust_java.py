"""Answers a replay of real Rust and Java histories found wrong (rust-lang/log, 70 merges; square/javapoet, 70
merges; the CLI as a subprocess on real git in temp dirs), each reduced to the edit that showed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.history import service
from code_trajectory.recording.session import ProjectSession
from support import cli_stdout, write


def recorded(project: Path, rel: str, *versions: str) -> str:
    """Write each of ``versions`` to ``rel`` with a checkpoint after each (the CLI); the log's last line."""
    for text in versions:
        write(project, rel, text)
        cli_stdout(project, "checkpoint")
    return cli_stdout(project, "log").splitlines()[-1]

_KEY_RS = """pub struct Key<'k> {
    key: &'k str,
}

impl<'k> Key<'k> {
    /// Get a key from a borrowed string.
    %s
    pub fn from_str(key: &'k str) -> Self {
        Key { key }
    }
}
"""


def test_a_rust_attribute_with_a_trailing_comment_belongs_to_its_method(project: Path) -> None:
    # log #713 added `#[allow(clippy::should_implement_trait)] // Part of the public API now.` between the doc
    # comment and `fn from_str`: the comment cut the method's span, so the change was "impl Key" modified and
    # "doc comment of Key::from_str changed -1" (its doc had left its span), though the doc was untouched
    last = recorded(project, "src/key.rs", _KEY_RS % "",
                    _KEY_RS % "#[allow(clippy::should_implement_trait)] // Part of the public API now.")
    assert last == "M src/key.rs (+1 -1): modified Key::from_str", last
    symbol = cli_stdout(project, "symbol", "src/key.rs", "Key::from_str")
    assert "· modified" in symbol and "doc comment" not in symbol, symbol
    assert "+    #[allow(clippy::should_implement_trait)] // Part of the public API now." in symbol, symbol


_SUPPORT_RS = """pub struct Key;

mod serde_support {
    use super::*;

%s

    impl Serialize for Key {
        fn serialize(&self) {}
    }
}
"""


def test_a_use_changed_in_a_rust_mod_is_no_whitespace_only_change(project: Path) -> None:
    # log #580 and #712 changed only `use` lines inside `mod serde_support`: its history said "reformatted
    # (whitespace only)" (a namespace's imports are left out of its code keys, its bytes differed)
    last = recorded(project, "src/key.rs", _SUPPORT_RS % "    extern crate serde;\n\n    use self::serde::Serialize;",
                    _SUPPORT_RS % "    use serde_core::Serialize;")
    assert "reformatted" not in last and "modified serde_support" in last, last
    symbol = cli_stdout(project, "symbol", "src/key.rs", "serde_support")
    assert "whitespace only" not in symbol and "· modified" in symbol, symbol
    assert "+    use serde_core::Serialize;" in symbol, symbol


_OP_JAVA = """package calc;

public enum Op {
  PLUS {
    @Override int apply(int a, int b) { return a + b; }
  },
  MINUS {
    @Override int apply(int a, int b) { return %s; }
  };

  abstract int apply(int a, int b);
}
"""


def test_java_enum_constant_bodies_name_their_methods_by_constant(project: Path) -> None:
    # an enum whose constants override a method (javapoet's TypeSpec.Kind, Modifier-like enums): both methods were
    # `Op.apply(int,int)` and `Op.apply(int,int)@2`, so an edit of MINUS's said "modified 2nd definition of ..."
    last = recorded(project, "src/Op.java", _OP_JAVA % "a - b",
                    _OP_JAVA % "Math.subtractExact(a, b)")
    assert last == "M src/Op.java (+1 -1): modified Op.MINUS.apply", last
    symbol = cli_stdout(project, "symbol", "src/Op.java", "Op.MINUS.apply")
    assert "· modified" in symbol and "+    @Override int apply(int a, int b) { return Math.subtractExact(a, b); }" \
        in symbol, symbol
    plus = cli_stdout(project, "symbol", "src/Op.java", "Op.PLUS.apply")
    assert "modified" not in plus and "as first recorded" in plus, plus


_VALUE_RS = """pub struct Value<'v> {
    inner: Inner<'v>,
}

impl<'v> Value<'v> {
    /// Try convert this value into a string.
    pub fn %s(&self) -> Option<Cow<'v, str>> {
        self.inner.to_str()
    }
}
"""


def test_a_pure_rename_whose_body_names_its_old_name_is_followed(project: Path) -> None:
    # log #592 renamed Value::to_str to to_cow_str, a method that delegates to `self.inner.to_str()`: the body
    # key's name placeholder took the call for the old name, so the rename was "removed to_str, added to_cow_str"
    # and the method's history began at the rename
    last = recorded(project, "src/value.rs", _VALUE_RS % "to_str",
                    _VALUE_RS % "to_cow_str")
    assert last == "M src/value.rs (+1 -1): renamed Value::to_str -> Value::to_cow_str", last
    symbol = cli_stdout(project, "symbol", "src/value.rs", "Value::to_cow_str")
    assert "renamed from Value::to_str" in symbol and "as first recorded" in symbol and "added" not in symbol, symbol


def test_a_java_methods_qualified_name_without_its_overloads_suggests_them(session: ProjectSession) -> None:
    # javapoet: `symbol CodeWriter.java CodeWriter.emit` answered "no symbol 'CodeWriter.emit' ...; did you mean
    # CodeWriter.emitName, CodeWriter.emitType" though emit(String), emit(String,Object...) and emit(CodeBlock)
    # were there (closest by spelling); the overloads are now what it suggests. (An old `Foo.bar` that became
    # `Foo.bar(String)` is still found in the older versions: tests/history/test_answer_edges.py)
    write(session.root, "src/W.java", "class W {\n  void emit(String s) {}\n  void emit(int i) {}\n"
                                      "  void emitName() {}\n}\n")
    assert session.recorder.record_paths(["src/W.java"]) is not None
    with pytest.raises(InvalidArgumentError, match=r"no symbol 'W\.emit' .*; did you mean W\.emit\(String\), "
                                                   r"W\.emit\(int\)\?"):
        service.symbol_trajectory(session, "src/W.java", "W.emit")
    assert "# Trajectory of `W.emit(int)`" in service.symbol_trajectory(session, "src/W.java", "W.emit(int)")


def test_a_java_c_style_array_parameter_is_an_array_in_the_overload_name(session: ProjectSession) -> None:
    # `void f(String a[])` beside `void f(String a)` were `f(String)` and `f(String)@2`: the brackets after the
    # parameter's name were left out of its type
    source = "class W {\n  void f(String a[]) {}\n  void f(String a) { %s }\n}\n"
    for body in ("", "a.trim();"):
        write(session.root, "src/W.java", source % body)
        assert session.recorder.record_paths(["src/W.java"]) is not None
    text = service.symbol_trajectory(session, "src/W.java", "W.f(String)")
    assert "+  void f(String a) { a.trim(); }" in text and "@2" not in text and "2nd" not in text, text
    assert "# Trajectory of `W.f(String[])`" in service.symbol_trajectory(session, "src/W.java", "W.f(String[])")


_FROM_RS = """pub enum Inner {
    Bool(bool),
    U8(u8),
}

impl From<bool> for Inner {
    fn from(v: bool) -> Self {
        Inner::Bool(v)
    }
}

impl From<u8> for Inner {
    fn from(v: u8) -> Self {
        %s
    }
}
"""


def test_rust_impls_of_one_generic_trait_are_told_apart_by_its_arguments(project: Path) -> None:
    # log's kv/value.rs has `impl From<bool> for Inner`, `impl From<u8> for Inner` ... 19 of them: they were
    # `impl From for Inner@7` and `<Inner as From>::from@7`, so an edit of one said "modified 7th definition of
    # <Inner as From>::from", which does not say which conversion changed
    bool_impl = _FROM_RS[_FROM_RS.index("impl From<bool>"):_FROM_RS.index("impl From<u8>")]
    added = recorded(project, "src/value.rs", (_FROM_RS % "Inner::U8(v)").replace(bool_impl, ""),
                     _FROM_RS % "Inner::U8(v)")  # the second impl: the first is named apart now
    assert added == "M src/value.rs (+6): added impl From<bool> for Inner (<Inner as From<bool>>::from)", added
    write(project, "src/value.rs", _FROM_RS % "Inner::U8(v.min(127))")
    cli_stdout(project, "checkpoint")
    last = cli_stdout(project, "log").splitlines()[-1]
    assert last == "M src/value.rs (+1 -1): modified <Inner as From<u8>>::from", last
    symbol = cli_stdout(project, "symbol", "src/value.rs", "<Inner as From<u8>>::from")
    assert "· modified" in symbol and "+        Inner::U8(v.min(127))" in symbol and "added" not in symbol, symbol
    impl = cli_stdout(project, "symbol", "src/value.rs", "impl From<bool> for Inner")
    assert "modified" not in impl and "1 change(s)" in impl and "· added" in impl, impl


def test_a_java_method_whose_overload_takes_its_body_keeps_its_history(session: ProjectSession) -> None:
    # javapoet #209: `superclass(Type)` became `superclass(TypeName)` (same body) and a new `superclass(Type)`
    # delegates to it: both were "added" and `superclass` "removed", so `superclass(Type)`'s history began there
    # though the method with that signature had been edited before
    one = "class B {\n  public B superclass(Type superclass) {\n    %s\n    return this;\n  }\n}\n"
    two = ("class B {\n  public B superclass(TypeName superclass) {\n    this.superclass = superclass;\n"
           "    return this;\n  }\n\n  public B superclass(Type superclass) {\n"
           "    return superclass(TypeName.get(superclass));\n  }\n}\n")
    for text in (one % "this.superclass = null;", one % "this.superclass = superclass;", two):
        write(session.root, "src/B.java", text)
        assert session.recorder.record_paths(["src/B.java"]) is not None
    answer = service.symbol_trajectory(session, "src/B.java", "B.superclass(Type)", diffs=0)
    whats = [line.split(" · ")[2] for line in answer.splitlines() if line.startswith("## ")]
    assert [w.split(" (")[0] for w in whats] == ["as first recorded", "modified", "modified"], answer
    added = service.symbol_trajectory(session, "src/B.java", "B.superclass(TypeName)", diffs=0)
    assert [line.split(" · ")[2] for line in added.splitlines() if line.startswith("## ")] == ["added"], added
