"""Answers a replay of real Rust and Java histories found wrong (rust-lang/log, 70 merges; square/javapoet, 70
merges; the CLI as a subprocess on real git in temp dirs), each reduced to the edit that showed it."""

from __future__ import annotations

from pathlib import Path

from support import cli_stdout, write

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
    write(project, "src/key.rs", _KEY_RS % "")
    cli_stdout(project, "checkpoint")
    write(project, "src/key.rs", _KEY_RS % "#[allow(clippy::should_implement_trait)] // Part of the public API now.")
    cli_stdout(project, "checkpoint")
    last = cli_stdout(project, "log").splitlines()[-1]
    assert last == "M src/key.rs (+1 -1): modified Key::from_str", last
    symbol = cli_stdout(project, "symbol", "src/key.rs", "Key::from_str")
    assert "· modified" in symbol and "doc comment" not in symbol, symbol
    assert "+    #[allow(clippy::should_implement_trait)] // Part of the public API now." in symbol, symbol
