"""Issue 28, item 2: the recent log and the search answer, through the CLI, beside git's own answers.

The same four changes are recorded by code-trajectory (the CLI's ``intent`` and ``checkpoint``) and committed in
a plain git repository with the same subjects; each answer must hold every fact git's answer holds (why: the
intent or checkpoint name; where: the path; the matching lines), name the changed symbols, and cost fewer tokens
than ``git log --stat`` / ``git log -p -S``.
"""

from __future__ import annotations

import re
from pathlib import Path

from code_trajectory.history.narrative import estimate_tokens
from code_trajectory.history.versions import describe_symbols
from code_trajectory.symbols import CommentEdit, SymbolChanges
from code_trajectory.symbols.changes import compare
from support import checkpoint_with_why, cli_stdout, git, git_repo, write

BASE = '''"""Client for the billing API."""

import time


def fetch(url, attempts=3):
    """GET url, retrying."""
    for attempt in range(attempts):
        try:
            return _get(url)
        except OSError:
            time.sleep(2 ** attempt)
    raise RuntimeError(url)


def _get(url):
    return url


class Invoice:
    def __init__(self, total):
        self.total = total

    def tax(self, rate):
        return self.total * rate
'''

#: (subject, how it is recorded, changes): each step rewrites ``src/billing.py`` and maybe ``src/config.py``.
STEPS = [
    ("Cap the retry delay", "intent", [("time.sleep(2 ** attempt)", "time.sleep(min(2 ** attempt, RETRY_BUDGET))"),
                                       ('import time\n', 'import time\n\nRETRY_BUDGET = 30\n')]),
    ("Round taxes to cents", "name", [("return self.total * rate", "return round(self.total * rate, 2)")]),
    ("Invoices know their currency", "intent", [("def __init__(self, total):\n        self.total = total",
                                                 "def __init__(self, total, currency='EUR'):\n"
                                                 "        self.total = total\n        self.currency = currency")]),
    ("Drop the retry budget", "name", [("min(2 ** attempt, RETRY_BUDGET)", "2 ** attempt"),
                                       ('\nRETRY_BUDGET = 30\n', '')]),
]


def recorded_and_committed(project: Path, mirror: Path) -> None:
    """The four steps, recorded in ``project`` through the CLI and committed in ``mirror`` with git."""
    write(project, "src/billing.py", BASE)
    cli_stdout(project, "checkpoint", "-m", "start")
    text = BASE
    for subject, how, changes in STEPS:
        for old, new in changes:
            assert old in text
            text = text.replace(old, new, 1)
        for root in (project, mirror):
            write(root, "src/billing.py", text)
        checkpoint_with_why(project, subject, how)
        git(mirror, "commit", "-q", "-am", subject)


def test_recent_log_names_changed_symbols_and_costs_less_than_git_stat(project: Path, tmp_path: Path) -> None:
    mirror = git_repo(tmp_path / "mirror", {"src/billing.py": BASE}, branch="main", commit="start")
    recorded_and_committed(project, mirror)
    answer = cli_stdout(project, "log", "--limit", "4")
    stat = git(mirror, "log", "--stat", "-4")
    headings = [line for line in answer.splitlines() if line.startswith("## ")]
    assert len(headings) == 4
    assert re.search(r"the last 4 snapshot\(s\), oldest to newest; older ones: `before=\"[0-9a-f]{12}\"` "
                     r"\(CLI `--before [0-9a-f]{12}`\)$", answer.split("\n")[0]), answer.split("\n")[0]
    for (subject, how, _), heading in zip(STEPS, headings):  # oldest first; every heading says why
        assert (f'Intent: {subject}' if how == "intent" else f'checkpoint: {subject}') in heading, heading
        assert subject in stat
    sections = re.split(r"\n(?=## )", answer)[1:]
    assert "fetch" in sections[0] and "Invoice.tax" in sections[1] and "Invoice.__init__" in sections[2]
    assert "fetch" in sections[3] and all("src/billing.py (+" in s for s in sections)
    assert estimate_tokens(answer) <= estimate_tokens(stat), (answer, stat)


def test_search_holds_what_git_pickaxe_shows_in_fewer_tokens(project: Path, tmp_path: Path) -> None:
    mirror = git_repo(tmp_path / "mirror", {"src/billing.py": BASE}, branch="main", commit="start")
    recorded_and_committed(project, mirror)
    answer = cli_stdout(project, "search", "RETRY_BUDGET")
    pickaxe = git(mirror, "log", "-p", "-SRETRY_BUDGET")
    assert pickaxe.count("\ncommit ") + pickaxe.startswith("commit ") == 2
    assert answer.count("\n## ") == 2  # the snapshot that added it and the one that removed it, newest first
    assert answer.index('checkpoint: Drop the retry budget') < answer.index("Intent: Cap the retry delay")
    lines = [line for line in pickaxe.splitlines() if line[:1] in "+-" and "RETRY_BUDGET" in line]
    assert len(lines) == 4
    for line in lines:
        assert line[0] + line[1:].strip() in answer, line
    assert "`src/billing.py`" in answer
    assert estimate_tokens(answer) * 2 <= estimate_tokens(pickaxe), (answer, pickaxe)  # 5x+ on real histories


def test_repeated_names_of_one_change_are_said_once() -> None:
    changes = SymbolChanges(
        "test/retry.ts", "typescript", "code", modified=("fetch@4", "fetch@5", "Ky.create"),
        added=("Pager", "Pager.__init__", "Pager.wait", "delay", "delay@2", "customFetch@2", "customFetch.start@2",
               "customFetch@3", "customFetch.start@3"),
        renamed=(("a", "b"),), top_level_changed=True,
        parents={"Pager.__init__": "Pager", "Pager.wait": "Pager", "customFetch.start@2": "customFetch@2",
                 "customFetch.start@3": "customFetch@3"})
    assert describe_symbols(changes, lean=True) == (
        "modified fetch ×2, Ky.create; added Pager (__init__, wait), delay ×2, customFetch (start) ×2; "
        "renamed a -> b; code outside symbols")
    # the full form (file histories) tells a lone occurrence apart, and says repeated ones once with a count too
    assert describe_symbols(changes) == (
        "modified fetch ×2, Ky.create; added Pager (__init__, wait), delay ×2, customFetch (start) ×2; "
        "renamed a -> b; top-level code changed")
    lone = SymbolChanges("src/ctx.py", "python", "code", modified=("Context.invoke@2", "parse@3", "parse@4", "run"))
    assert describe_symbols(lone) == "modified 2nd definition of Context.invoke, parse ×2, run"


def test_members_of_nested_members_are_named_under_the_outermost_one() -> None:
    """A Ruby file's class sits in modules (``module Rack; module Session; class Pool``): deleting it said
    ``removed Rack (Rack::Session)``, the class and its methods neither named nor counted."""
    source = (b"module Rack\n  module Session\n    class Pool\n      def initialize(app)\n        @app = app\n"
              b"      end\n\n      def self.build\n        new(nil)\n      end\n    end\n  end\nend\n")
    removed = compare("lib/rack/session/pool.rb", source, None)
    assert removed is not None
    said = "removed Rack (Session, Session::Pool, Session::Pool#initialize, Session::Pool.build)"
    assert describe_symbols(removed) == said and describe_symbols(removed, lean=True) == said
    added = SymbolChanges("a.py", "python", "code", added=("Outer", "Outer.Inner", "Outer.Inner.run"),
                          parents={"Outer.Inner": "Outer", "Outer.Inner.run": "Outer.Inner"})
    assert describe_symbols(added) == "added Outer (Inner, Inner.run)"


def test_the_lean_line_names_comments_by_their_symbols_without_their_text() -> None:
    changes = SymbolChanges(
        "src/retry.py", "python", "code", modified=("fetch",), imports_changed=True, top_level_changed=True,
        comment_edits=(CommentEdit("Retry", False, "# old; text", "# new; text"), CommentEdit(None, False, None, "# x"),
                       CommentEdit("Retry.wait", True, None, '"""Wait."""'), CommentEdit("fetch", False, None, "# y")),
        moved=("a", "b"))
    full = describe_symbols(changes)
    assert "`# old; text` → `# new; text`" in full and "# x" in full
    assert describe_symbols(changes, lean=True) == (
        "modified fetch; imports, code, comments outside symbols; docstring of `Retry.wait` added; "
        "comments changed in Retry; 2 symbol(s) moved")
    # a change of comments only: quoted in the full form (file histories), named by its symbol in the lean one
    only = SymbolChanges("src/retry.py", "python", "comment-only", comment_edits=changes.comment_edits[:1])
    assert "`# old; text` → `# new; text`" in describe_symbols(only)
    assert describe_symbols(only, lean=True) == "comments changed in Retry"


def test_an_unnamed_checkpoint_is_not_said_twice_in_the_log_but_a_later_name_is(project: Path) -> None:
    write(project, "src/billing.py", BASE)
    cli_stdout(project, "intent", "Start billing")
    cli_stdout(project, "checkpoint")  # the snapshot's own point, named "checkpoint HH:MM:SS": its heading says the time
    answer = cli_stdout(project, "log")
    assert "Intent: Start billing" in answer and "automatic point" not in answer, answer
    assert "Named points" not in answer, answer
    out = cli_stdout(project, "checkpoint")  # nothing changed: a point named later on the same snapshot is news
    assert "no new snapshot" in out, out
    answer = cli_stdout(project, "log")
    assert answer.count('automatic point "checkpoint ') == 1, answer
    assert "automatic: 1 (1 without a name)" in answer, answer


def test_compare_holds_every_changed_line_of_git_diff_with_less_context(project: Path, tmp_path: Path) -> None:
    mirror = git_repo(tmp_path / "mirror", {"src/billing.py": BASE}, branch="main", commit="start")
    recorded_and_committed(project, mirror)
    answer = cli_stdout(project, "compare", "Round taxes to cents")  # the second step, by its name, to now
    diff = git(mirror, "diff", "HEAD~2", "HEAD")
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed and all(line in answer for line in changed), (answer, diff)
    assert "modified fetch, Invoice.__init__" in answer, answer  # the file's line names the changed symbols
    # one line of context around each change (git shows 3): two lines above the changed sleep is left out
    context = "             return _get(url)"
    assert f"\n{context}\n" in diff and context not in answer, answer
    assert estimate_tokens(answer) < estimate_tokens(diff) * 1.5, (answer, diff)


def test_small_older_diffs_are_shown_rather_than_named_by_a_longer_note(project: Path) -> None:
    """Older diffs are shown beside a big newest one (the budget is a cap, not a share), not named by a note."""
    body = BASE
    write(project, "src/billing.py", body)
    cli_stdout(project, "checkpoint", "-m", "start")
    for k in range(2):  # two one-line tunings
        body = body.replace(f"range(attempts{'' if not k else f' + {k - 1}'})", f"range(attempts + {k})")
        write(project, "src/billing.py", body)
        cli_stdout(project, "checkpoint", "-m", f"tune {k}")
    big = "".join(f"\ndef helper_{i:03}(value):\n    return value * {i} + len('{'x' * 30}')\n" for i in range(120))
    write(project, "src/billing.py", body + big)  # the newest: about 8,000 characters of diff
    cli_stdout(project, "checkpoint", "-m", "helpers")
    answer = cli_stdout(project, "file", "src/billing.py", "--depth", "5")
    for k in range(2):
        assert f"+    for attempt in range(attempts + {k}):" in answer, answer
    assert "+def helper_119(value):" in answer and "left out" not in answer, answer


def test_compare_names_what_a_deleted_file_took_away_as_the_log_does(project: Path) -> None:
    """A deleted PHP class file was listed by ``compare`` with its count alone (``D src/Exception/Gone.php (-5)``)
    while the recent log said ``removed Gone``."""
    write(project, "src/Exception/Gone.php", "<?php\n\nclass Gone extends Exception\n{\n}\n")
    write(project, "src/keep.py", "def keep():\n    return 1\n")
    cli_stdout(project, "checkpoint", "-m", "before")
    (project / "src/Exception/Gone.php").unlink()
    cli_stdout(project, "checkpoint", "-m", "after")
    line = "- D `src/Exception/Gone.php` (-5): removed Gone"
    assert line in cli_stdout(project, "compare", "before", "after").splitlines()
    assert "D src/Exception/Gone.php (-5): removed Gone" in cli_stdout(project, "log")


def test_a_ruby_classs_members_keep_whether_they_are_singleton_or_instance_methods() -> None:
    """``class Foo; def self.build; def build`` added: the log said ``added Foo (build, Foo#build)`` (the
    singleton stripped to a bare name, the instance method not stripped at all)."""
    source = b"class Foo\n  def self.build\n    1\n  end\n\n  def build\n    2\n  end\nend\n"
    added = compare("foo.rb", None, source)
    assert added is not None
    assert describe_symbols(added, lean=True) == describe_symbols(added) == "added Foo (.build, #build)"


def test_a_whitespace_only_change_outside_symbols_is_said() -> None:
    """The C++ replay (argparse's clang-format commit): ``M test/test_bool_operator.cpp (+3 -4)`` in the log and
    ``compare``, bare counts, nothing saying no token changed."""
    before = b"#include <x.h>\n\nint f(int a) {\n  return a;\n}\n\n#define X 1\n"
    after = b"#include <x.h>\n\n\nint f(int a) {\n  return a;\n}\n#define X   1\n"
    changes = compare("t.cpp", before, after)
    assert changes is not None and changes.kind == "whitespace-only"
    assert describe_symbols(changes) == describe_symbols(changes, lean=True) == "whitespace-only"


def test_each_group_of_the_symbols_line_names_ten_then_counts_the_rest() -> None:
    # click's replay: the session summary's "Net change" line named 39 modified functions before the one added
    modified = tuple(f"f{i}" for i in range(39))
    respaced = tuple(f"r{i}" for i in range(12))
    changes = SymbolChanges("m.py", "python", "code", modified=modified, added=("g",), reformatted=respaced)
    for lean in (False, True):
        assert describe_symbols(changes, lean=lean) == (
            f"modified {', '.join(modified[:10])} + 29 more; added g; reformatted {', '.join(respaced[:10])} + 2 more")
    members = SymbolChanges("m.py", "python", "code", added=("C", *(f"C.m{i}" for i in range(30))),
                            parents={f"C.m{i}": "C" for i in range(30)})
    assert describe_symbols(members) == f"added C ({', '.join(f'm{i}' for i in range(9))}, …) + 21 more"


def test_the_sessions_net_change_names_comments_by_their_symbols_as_the_log_does(project: Path) -> None:
    # click's replay (60 commits, one session): quoted comments made the net change most of the summary; the file
    # history quotes them, the summary names where they changed, as the recent log and compare's file list do
    write(project, "src/billing.py", BASE)
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "src/billing.py", BASE.replace("    return url\n", "    # Reserved storage name of the url\n"
                                                  "    return url\n").replace("import time\n", "import time\n# t\n"))
    cli_stdout(project, "checkpoint")
    net = cli_stdout(project, "session").split("Net change")[1]
    assert "M `src/billing.py` (+2): comments outside symbols; comments changed in _get" in net, net
    assert "Reserved storage" not in net and "# t" not in net, net
    assert "Reserved storage name of the url" in cli_stdout(project, "file", "src/billing.py")


def test_the_lean_line_counts_a_classs_fields_past_five_a_group() -> None:
    # click's replay: 27 annotated fields added to Context were 16% of its session's net change in names
    many = tuple((f"f{i}", "added") for i in range(27))
    changes = SymbolChanges("src/core.py", "python", "code", modified=("Context", "Error"),
                            fields=(("Context", (*many, ("timeout", "changed"))),
                                    ("Error", (("code", "changed"), *((f"e{i}", "added") for i in range(5))))))
    assert describe_symbols(changes, lean=True) == (
        "modified Context (field `timeout` changed; 27 fields added), "
        "Error (field `code` changed; fields `e0`, `e1`, `e2`, `e3`, `e4` added)")
    assert "fields `f0`, `f1`" in describe_symbols(changes) and "and 17 more added" in describe_symbols(changes)
