"""Test blocks are symbols: Jest/Mocha/Vitest ``describe``/``it``/``test`` (JavaScript, TypeScript) and RSpec/minitest
(Ruby) blocks named by their string, nested with `` > ``; a change to a test file names the test that changed, not
"top-level code changed"."""

from __future__ import annotations

import pytest

from code_trajectory.history.versions import describe_symbols
from code_trajectory.symbols import compare, find, language_for

JS = '''import { parse } from "./parser";

describe("Parser", () => {
  it("parses empty input", () => {
    expect(parse("")).toBe(null);
  });

  it("parses numbers", () => {
    const n = parse("1");
    expect(n).toBe(1);
  });
});
'''

RB = '''require "parser"

RSpec.describe Parser do
  it "parses empty input" do
    expect(parse("")).to be_nil
  end

  it "parses numbers" do
    n = parse("1")
    expect(n).to eq 1
  end
end
'''

NUMBERS_JS = '''  it("parses numbers", () => {
    const n = parse("1");
    expect(n).toBe(1);
  });
'''
NUMBERS_RB = '''  it "parses numbers" do
    n = parse("1")
    expect(n).to eq 1
  end
'''

#: (path, base source, the test "parses numbers" as written, its expected value as written)
CASES = [
    ("parser.test.js", JS, NUMBERS_JS, "toBe(1)"),
    ("parser.test.ts", JS, NUMBERS_JS, "toBe(1)"),
    ("parser_spec.rb", RB, NUMBERS_RB, "eq 1"),
]
NESTED_RB = 'context "with errors" do\n    it "raises" do\n      expect { parse("(") }.to raise_error\n    end\n  end\n'
NESTED_JS = ('describe("errors", () => {\n    it("throws", () => {\n      expect(() => parse("(")).toThrow();\n    });\n'
             '  });\n')


@pytest.mark.parametrize(("path", "base", "numbers", "one"), CASES, ids=[c[0] for c in CASES])
def test_a_change_to_a_test_names_the_test(path: str, base: str, numbers: str, one: str) -> None:
    ruby = path.endswith(".rb")
    words = numbers.replace("numbers", "words").replace("1", "2")
    nested = base.replace(numbers, f"{numbers}\n  {NESTED_RB if ruby else NESTED_JS}")
    group, inner = ("context with errors", "it raises") if ruby else ("describe errors", "it throws")
    two = one.replace("1", "2")
    edits = [
        (base, base.replace(one, two), "modified describe Parser > it parses numbers"),
        (base, base.replace(numbers, numbers + "\n" + words), "added describe Parser > it parses words"),
        (base, base.replace("\n" + numbers, ""), "removed describe Parser > it parses numbers"),
        (base, base.replace("parses numbers", "parses integers"),
         "renamed describe Parser > it parses numbers -> describe Parser > it parses integers"),
        (base, base.replace("parses numbers", "parses integers").replace(one, two),
         "modified describe Parser > it parses integers; "
         "renamed describe Parser > it parses numbers -> describe Parser > it parses integers"),
        (base, nested, f"added describe Parser > {group}"),
        (nested, nested.replace('"("', '"(("'), f"modified describe Parser > {group} > {inner}"),
        (nested, base, f"removed describe Parser > {group}"),
        (base, base.replace('"Parser"', '"Reader"').replace("describe Parser", "describe Reader").replace(one, two),
         "modified describe Reader > it parses numbers; renamed describe Parser -> describe Reader"),
    ]
    for old, new, said in edits:
        assert compare(path, old.encode(), new.encode()).summary() == said, (path, said)


@pytest.mark.parametrize("path", ["parser.test.js", "parser.test.ts", "parser.test.tsx"])
def test_javascript_test_blocks_are_named_by_their_keyword_and_string(path: str) -> None:
    source = b'''describe("Parser", () => {
  const setup = () => parse("");
  beforeEach(() => {});
  it.only('parses 1.5 "x"', async function () {}, 5000);
  describe.each([1, 2])("add %i", (a) => {
    test("works", () => {});
  });
  xit("skipped", () => {});
  it.todo("later");
});
console.log("not a test", () => 1);
test.concurrent.each([1])(`each ${1}`, () => {});
'''
    got = [(s.name, s.kind, s.start_line, s.end_line, s.parent) for s in language_for(path).extract(source)]
    assert got == [
        ("describe Parser", "test", 1, 10, None),
        ("describe Parser > setup", "function", 2, 2, "describe Parser"),
        ('describe Parser > it parses 1.5 "x"', "test", 4, 4, "describe Parser"),
        ("describe Parser > describe add %i", "test", 5, 7, "describe Parser"),
        ("describe Parser > describe add %i > test works", "test", 6, 6, "describe Parser > describe add %i"),
        ("describe Parser > it skipped", "test", 8, 8, "describe Parser"),
        ("test each ${1}", "test", 12, 12, None),
    ]


def test_ruby_test_blocks_are_named_by_their_keyword_and_string() -> None:
    source = b'''RSpec.describe Billing::Invoice do
  let(:x) { 1 }
  def helper; end
  describe "#total", :focus do
    specify("sums 1.5") { 1 }
    xit %q(pending one) do
    end
  end
  it { is_expected.to be_ok }
end
class UserTest < Minitest::Test
  test "saves" do
  end
  def test_old; end
end
'''
    got = [(s.name, s.kind, s.start_line, s.end_line) for s in language_for("invoice_spec.rb").extract(source)]
    assert got == [
        ("describe Billing::Invoice", "test", 1, 10),
        ("describe Billing::Invoice > helper", "function", 3, 3),
        ("describe Billing::Invoice > describe #total", "test", 4, 8),
        ("describe Billing::Invoice > describe #total > specify sums 1.5", "test", 5, 5),
        ("describe Billing::Invoice > describe #total > it pending one", "test", 6, 7),
        ("UserTest", "class", 11, 15),
        ("UserTest > test saves", "test", 12, 13),
        ("UserTest#test_old", "method", 14, 14),
    ]


def test_a_test_is_found_by_its_own_name_or_its_full_name() -> None:
    symbols = language_for("parser.test.ts").extract(JS.encode())
    for asked in ("describe Parser > it parses numbers", "it parses numbers", " it parses numbers "):
        found = find(symbols, asked)
        assert found is not None and found.name == "describe Parser > it parses numbers", asked
    assert find(symbols, "describe Parser").name == "describe Parser"
    assert find(symbols, "parses nothing") is None


def test_the_tests_of_an_added_test_file_are_listed_under_their_describe() -> None:
    changes = compare("parser.test.ts", None, JS.encode())
    assert changes is not None
    assert describe_symbols(changes) == "added describe Parser (it parses empty input, it parses numbers)"


@pytest.mark.parametrize("path", ["order.test.js", "order_spec.rb"])
def test_a_tests_string_holding_the_separator_is_the_tests_own_name(path: str) -> None:
    """`it("returns a > b")` was named `describe Order > it returns a > b`, whose short name read as `b` (a symbol
    `b` in a test `it returns a`): the log's list of an added file's tests said `b`. The separator in a test's string
    is written with a no-break space after `>`; the name is found as typed with a plain space too."""
    source = ('describe("Order", () => {\n  it("returns a > b", () => {});\n  it("x", () => {\n'
              '    function helper() {}\n  });\n});\n') if path.endswith(".js") else \
        'describe "Order" do\n  it "returns a > b" do\n  end\n  it "x" do\n    def helper; end\n  end\nend\n'
    symbols = language_for(path).extract(source.encode())
    test = symbols[1]
    assert test.short_name == "it returns a >\u00a0b" and test.parent == "describe Order", test.name
    assert symbols[-1].short_name == "helper"  # a function in a test is still named after it
    for asked in ("describe Order > it returns a > b", "it returns a > b", test.name, "it returns a >\u00a0b"):
        found = find(symbols, asked)
        assert found is not None and found.name == test.name, asked
    changes = compare(path, None, source.encode())
    assert changes is not None and "it returns a >\u00a0b" in describe_symbols(changes), describe_symbols(changes)
