"""A symbol's history at the edges a real history's replay found (Go and Python, the CLI as a subprocess): a symbol
asked by its old name ends with its rename, a second definition of one name is told apart in the log and the first
one's answer says there are others, and a whitespace-only change of a function is in its history as the log says,
also in the history of the class or struct around it (leveldb's ``DBImpl::CompactionStats`` when clang-format made
its constructor's ``{ }`` ``{}``). Real git in temp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cli_stdout, write
from support.ui import record_edit


def headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("## ")]


def test_a_symbol_asked_by_its_old_name_ends_with_its_rename(project: Path) -> None:
    write(project, "a.go", "package a\n\ntype S struct{}\n\nfunc (s *S) usage() int {\n\treturn 1\n}\n")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "a.go", "package a\n\ntype S struct{}\n\nfunc (s *S) usage() int {\n\treturn 2\n}\n")
    cli_stdout(project, "checkpoint", "-m", "v2")
    write(project, "a.go", "package a\n\ntype S struct{}\n\nfunc (s *S) printUsage() int {\n\treturn 2\n}\n")
    cli_stdout(project, "checkpoint", "-m", "v3")
    old = headings(cli_stdout(project, "symbol", "a.go", "S.usage"))
    new = headings(cli_stdout(project, "symbol", "a.go", "S.printUsage"))
    assert len(old) == len(new) == 3
    assert "renamed to S.printUsage" in old[-1] and "renamed from S.usage" in new[-1]
    assert "modified" in old[1] and "modified" in new[1]


def test_the_second_of_two_definitions_of_one_name_is_told_apart(project: Path) -> None:
    first, second = "func init() {\n\tx = 1\n}\n", "func init() {\n\ty = 1\n}\n"
    write(project, "a.go", f"package a\n\nvar x, y int\n\n{first}\n{second}")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "a.go", f"package a\n\nvar x, y int\n\n{first}\n{second.replace('y = 1', 'y = 2')}")
    cli_stdout(project, "checkpoint", "-m", "v2")
    assert "modified 2nd definition of init" in cli_stdout(project, "log")
    answer = cli_stdout(project, "symbol", "a.go", "init")
    assert "`init` is the first of 2 definitions of that name in this file: `init@2` names the next." in answer
    assert len(headings(answer)) == 1  # the first one never changed
    assert "modified" in headings(cli_stdout(project, "symbol", "a.go", "init@2"))[-1]


def test_a_whitespace_only_change_is_in_the_symbols_history(project: Path) -> None:
    write(project, "a.py", "def f(x):\n    y = x + 1\n\n    return y\n\n\ndef g():\n    return 0\n")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "a.py", "def f(x):\n    y = x + 1\n    return y\n\n\ndef g():\n    return 0\n")
    cli_stdout(project, "checkpoint", "-m", "v2")
    assert "reformatted f" in cli_stdout(project, "log")
    shown = headings(cli_stdout(project, "symbol", "a.py", "f"))
    assert len(shown) == 2 and "reformatted (whitespace only) · checkpoint: v2" in shown[-1], shown
    assert len(headings(cli_stdout(project, "symbol", "a.py", "g"))) == 1


STATS = """namespace leveldb {

class DBImpl {
 public:
  int Get();

 private:
  struct CompactionStats {
    int64_t micros;

    CompactionStats() : micros(0) { }

    void Add(const CompactionStats& c) {
      this->micros += c.micros;
    }
  };

  CompactionStats stats_[7];
};

}  // namespace leveldb
"""


def test_a_member_reformatted_alone_is_in_its_containers_history(project: Path) -> None:
    write(project, "db_impl.h", STATS)
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "db_impl.h", STATS.replace("micros(0) { }", "micros(0) {}"))
    cli_stdout(project, "checkpoint", "-m", "Format all files")
    assert "reformatted leveldb::DBImpl::CompactionStats::CompactionStats" in cli_stdout(project, "log")
    inner = headings(cli_stdout(project, "symbol", "db_impl.h", "leveldb::DBImpl::CompactionStats::CompactionStats"))
    assert "reformatted (whitespace only) · checkpoint: Format all files" in inner[-1], inner
    for container in ("leveldb::DBImpl::CompactionStats", "leveldb::DBImpl"):  # git log -L lists it for both
        shown = headings(cli_stdout(project, "symbol", "db_impl.h", container))
        assert len(shown) == 2, (container, shown)
        assert ("reformatted (whitespace only) in leveldb::DBImpl::CompactionStats::CompactionStats · checkpoint: "
                "Format all files") in shown[-1], shown
    assert len(headings(cli_stdout(project, "symbol", "db_impl.h", "leveldb::DBImpl::CompactionStats::Add"))) == 1


def test_a_function_moved_unchanged_to_another_file_is_said_so_on_both_sides(project: Path) -> None:
    body = "def strip(x):\n    # drop the blanks\n    return x.strip()\n"
    write(project, "a.py", f"def keep():\n    return 0\n\n\n{body}")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "a.py", "def keep():\n    return 0\n")
    write(project, "b.py", body)
    cli_stdout(project, "checkpoint", "-m", "v2")
    there = cli_stdout(project, "symbol", "b.py", "strip")
    here = cli_stdout(project, "symbol", "a.py", "strip")
    assert "moved from a.py (body unchanged)" in headings(there)[-1] and "```diff" not in there, there
    assert "moved to b.py (body unchanged)" in headings(here)[-1] and "```diff" not in here, here
    # moved with a comment changed on the way (same code): the move shows its lines
    write(project, "b.py", "def keep2():\n    return 1\n")
    write(project, "c.py", body.replace("drop the blanks", "trim"))
    cli_stdout(project, "checkpoint", "-m", "v3")
    moved = cli_stdout(project, "symbol", "c.py", "strip")
    assert "moved from b.py · checkpoint: v3" in headings(moved)[-1] and "+    # trim" in moved, moved


@pytest.mark.parametrize("removed_first", [True, False])
def test_a_function_moved_to_another_file_in_two_edits_is_said_so_on_both_sides(project: Path,
                                                                               removed_first: bool) -> None:
    """Claude Code moves a function with two tools (an Edit of one file, a Write of the other): its hooks record a
    snapshot each, of the same intent. The move is followed either way round, and said once on each side."""
    xtob = "// xtob converts hex characters into a byte.\nfunc xtob(x1, x2 byte) byte {\n\treturn x1<<4 | x2\n}\n"
    util, uuid = "package uuid\n\nfunc keep() int {\n\treturn 0\n}\n", "package uuid\n\ntype UUID [16]byte\n"
    record_edit(project, "util.go", util + "\n" + xtob)
    record_edit(project, "util.go", util.replace("0", "1") + "\n" + xtob, intent="before the move")
    steps = [("util.go", util.replace("0", "1")), ("uuid.go", uuid + "\n" + xtob)]
    for rel, text in steps if removed_first else steps[::-1]:
        record_edit(project, rel, text, intent="Move xtob from util.go to uuid.go")
    there = headings(cli_stdout(project, "symbol", "uuid.go", "xtob"))
    assert len(there) == 2, there
    assert "moved from util.go (body unchanged) · Intent: Move xtob from util.go to uuid.go" in there[1], there
    assert "as first recorded" in there[0], there
    here = headings(cli_stdout(project, "symbol", "util.go", "xtob"))
    assert "moved to uuid.go (body unchanged)" in here[-1] and len(here) == 2, here


def test_a_function_removed_from_one_file_while_another_task_added_its_twin_is_no_move(project: Path) -> None:
    """The other half of a move in two snapshots is looked for within the same intent only."""
    body = "func twin() int {\n\treturn 42\n}\n"
    record_edit(project, "a.go", "package a\n\n" + body)
    record_edit(project, "b.go", "package a\n\nfunc other() {}\n\n" + body.replace("twin", "twin2"))
    record_edit(project, "a.go", "package a\n", intent="drop twin")
    record_edit(project, "c.go", "package a\n\n" + body, intent="add a twin")
    shown = headings(cli_stdout(project, "symbol", "c.go", "twin"))
    assert len(shown) == 1 and "as first recorded" in shown[0] and "moved" not in shown[0], shown


def test_a_changed_typescript_overload_signature_modifies_its_function(project: Path) -> None:
    source = ("export function parse(x: string): number;\nexport function parse(x: number): string;\n"
              "export function parse(x: any): any {\n  return x;\n}\n\nfunction other(): void {}\n")
    write(project, "a.ts", source)
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "a.ts", source.replace("parse(x: number): string", "parse(x: number, radix?: number): string"))
    cli_stdout(project, "checkpoint", "-m", "v2")
    assert "modified parse" in cli_stdout(project, "log")  # was "code outside symbols"
    answer = cli_stdout(project, "symbol", "a.ts", "parse")
    assert "modified · checkpoint: v2" in headings(answer)[-1] and "+export function parse(x: number, radix" in answer
    assert len(headings(cli_stdout(project, "symbol", "a.ts", "other"))) == 1


@pytest.mark.parametrize("above", ["/// Adds one.\n", "#[inline]\n"])
def test_a_line_removed_above_a_symbol_stays_in_its_history_after_later_edits(project: Path, above: str) -> None:
    """An attribute or doc line removed right above a function, after a blank line, then another function of the
    file edited: the removal vanished from the symbol's history (the version was taken as leaving it alone, the
    blank line's break matching the end of the removed line)."""
    base = "fn a() {}\n\n" + above + "fn foo(x: u32) -> u32 { x + 1 }\n\nfn bar() {}\n"
    write(project, "a.rs", base)
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "a.rs", base.replace(above, ""))
    cli_stdout(project, "checkpoint", "-m", "remove the line")
    write(project, "a.rs", base.replace(above, "").replace("fn bar() {}", "fn bar() { let _ = 1; }"))
    cli_stdout(project, "checkpoint", "-m", "touch bar")
    history = cli_stdout(project, "symbol", "a.rs", "foo")
    assert "remove the line" in history and "-" + above.strip() in history, history
    assert "1 change(s) since it was first recorded" in history  # the baseline is not counted as a change


def test_a_symbol_asked_by_its_files_old_path_ends_where_the_file_went(project: Path) -> None:
    """``mv a.rs b.rs``: asked by the old path, the symbol was "removed" with a removal diff; it went with its file."""
    write(project, "a.rs", "fn foo() -> u32 {\n    1\n}\n\nfn other() {}\n")
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "a.rs", "fn foo() -> u32 {\n    2\n}\n\nfn other() {}\n")
    cli_stdout(project, "checkpoint", "-m", "modify")
    (project / "a.rs").rename(project / "b.rs")
    cli_stdout(project, "checkpoint", "-m", "rename file")
    history = cli_stdout(project, "symbol", "a.rs", "foo")
    assert "moved to b.rs (body unchanged) · checkpoint: rename file" in history and "removed" not in history, history



def test_a_name_asked_exactly_wins_over_a_newer_symbol_that_ends_with_it(project: Path) -> None:
    # the older versions have `Value.to_str` at the top; the newer ones only another one, `compat.Value.to_str` (not a
    # rename: other code, other members): asked `Value.to_str`, the answer is the one so named, not the newest symbol
    # whose name ends with it (Rust's `Value::to_cow_str` answered for `std_support::Value::to_cow_str`)
    write(project, "v.py", "class Value:\n    def to_str(self):\n        return 'a'\n")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "v.py", "class Value:\n    def to_str(self):\n        return 'b'\n")
    cli_stdout(project, "checkpoint", "-m", "v2")
    compat = ("class compat:\n    class Value:\n        def to_str(self):\n            return str(self.x)\n\n"
              "        def first(self):\n            return 0\n\n        def second(self):\n            return 1\n")
    write(project, "v.py", compat)
    cli_stdout(project, "checkpoint", "-m", "v3")
    write(project, "v.py", compat.replace("str(self.x)", "repr(self.x)"))
    cli_stdout(project, "checkpoint", "-m", "v4")
    exact = cli_stdout(project, "symbol", "v.py", "Value.to_str")
    assert exact.startswith("# Trajectory of `Value.to_str` in `v.py`"), exact
    assert "repr" not in exact and "· removed ·" in headings(exact)[-1]
    assert "modified · checkpoint: v2" in exact
    short = cli_stdout(project, "symbol", "v.py", "first")  # no symbol is named so exactly: the newest ending with it
    assert short.startswith("# Trajectory of `compat.Value.first` in `v.py`"), short


def test_a_method_moved_within_its_file_has_the_move_in_its_history(project: Path) -> None:
    # gson 5187808 moved TypeAdapter.nullSafe below read: the log said "moved", git log -L listed the commit, and
    # the method's own history skipped it
    first, second = "    def first(self):\n        return 1\n", "    def second(self):\n        return 2\n"
    write(project, "a.py", f"class C:\n{first}\n{second}")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "a.py", f"class C:\n{second}\n{first}")
    cli_stdout(project, "checkpoint", "-m", "v2")
    assert "1 symbol(s) moved" in cli_stdout(project, "log")
    shown = {name: headings(cli_stdout(project, "symbol", "a.py", name)) for name in ("C.first", "C.second")}
    moved = [name for name, lines in shown.items() if len(lines) == 2]
    assert len(moved) == 1, shown
    assert "moved within the file (body unchanged) · checkpoint: v2" in shown[moved[0]][-1], shown


def test_a_function_moved_between_blank_lines_has_the_move_in_its_history(project: Path) -> None:
    # gin 3ac729d moved (*Engine).Run below parseIP: blank lines above and below it both before and after, so its
    # text with a line of context each side was the same, the walk passed the version over as one that left it
    # alone, and its history lost the move the file's history said
    def func(name: str) -> str:
        return f"// {name} does it.\nfunc (e *Engine) {name}() error {{\n\treturn nil\n}}\n"

    write(project, "gin.go", "package gin\n\n" + "\n".join(func(n) for n in ("Run", "prepare", "parseIP", "RunTLS")))
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "gin.go", "package gin\n\n" + "\n".join(func(n) for n in ("prepare", "parseIP", "Run", "RunTLS")))
    cli_stdout(project, "checkpoint", "-m", "v2")
    later = "package gin\n\n" + "\n".join(func(n) for n in ("prepare", "parseIP", "Run", "RunTLS"))
    write(project, "gin.go", later.replace("return nil\n}\n\n// RunTLS", "return nil\n}\n\n// RunTLS, later"))
    cli_stdout(project, "checkpoint", "-m", "v3")  # a later version that leaves it alone: the walk skips it
    assert "moved Engine.Run" in cli_stdout(project, "file", "gin.go")
    shown = headings(cli_stdout(project, "symbol", "gin.go", "Engine.Run"))
    assert len(shown) == 2 and "moved within the file (body unchanged) · checkpoint: v2" in shown[-1], shown
