"""A test file's history names its tests: the log says which ``describe``/``it`` block changed and ``symbol FILE
NAME`` gives one test's history (Jest in TypeScript, RSpec in Ruby)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cli_stdout, write

TS = '''import { parse } from "./parser";

describe("Parser", () => {
  it("parses empty input", () => {
    expect(parse("")).toBe(null);
  });

  it("parses numbers", () => {
    expect(parse("1")).toBe(1);
  });
});
'''

RB = '''require "parser"

RSpec.describe Parser do
  it "parses empty input" do
    expect(parse("")).to be_nil
  end

  it "parses numbers" do
    expect(parse("1")).to eq 1
  end
end
'''


@pytest.mark.parametrize(("path", "source", "empty", "added"), [
    ("tests/parser.test.ts", TS, "toBe(null)",
     '\n  it("parses words", () => {\n    expect(parse("a")).toBe("a");\n  });\n'),
    ("spec/parser_spec.rb", RB, "be_nil", '\n  it "parses words" do\n    expect(parse("a")).to eq "a"\n  end\n'),
], ids=["typescript", "ruby"])
def test_the_log_and_the_symbol_history_name_the_test(project: Path, path: str, source: str, empty: str,
                                                    added: str) -> None:
    write(project, path, source)
    cli_stdout(project, "checkpoint", "-m", "Parser tests")
    changed = source.replace(empty, empty.replace("null", "undefined").replace("be_nil", "be_empty"))
    changed = changed.replace("  });\n});\n", "  });\n" + added + "});\n").replace("  end\nend\n", "  end\n" + added + "end\n")
    write(project, path, changed)
    cli_stdout(project, "checkpoint", "-m", "Empty input is empty")
    log = cli_stdout(project, "log")
    assert "modified describe Parser > it parses empty input; added describe Parser > it parses words" in log, log
    assert "top-level code changed" not in log, log
    out = cli_stdout(project, "symbol", path, "it parses empty input")
    assert "`describe Parser > it parses empty input`" in out, out
    assert "-" + source.splitlines()[4] in out and "+" + changed.splitlines()[4] in out, out
    assert "parses numbers" not in out, out
