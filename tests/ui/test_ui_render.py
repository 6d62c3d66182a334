"""Diff parsing and highlighting (code_trajectory.ui.render): line numbers, whole-file highlighting, escaping."""

from __future__ import annotations

from code_trajectory.ui import render

OLD = 'def f():\n    """one\n    two"""\n    return 1\n'
NEW = 'def f():\n    """one\n    two"""\n    return 2\n\n\ndef g():\n    return "<b>&</b>"\n'
PATCH = """diff --git a/m.py b/m.py
index 1111111..2222222 100644
--- a/m.py
+++ b/m.py
@@ -1,4 +1,8 @@ def f():
 def f():
     \"\"\"one
     two\"\"\"
-    return 1
+    return 2
+
+
+def g():
+    return "<b>&</b>"
"""


def test_lines_are_numbered_and_typed() -> None:
    diff = render.parse_patch(PATCH, "m.py", OLD, NEW)
    assert len(diff.hunks) == 1
    hunk = diff.hunks[0]
    assert hunk.header == "@@ -1,4 +1,8 @@" and hunk.heading == "def f():"
    kinds = [(line.kind, line.old_no, line.new_no) for line in hunk.lines]
    assert kinds[:5] == [("ctx", 1, 1), ("ctx", 2, 2), ("ctx", 3, 3), ("del", 4, None), ("add", None, 4)]
    assert kinds[-1] == ("add", None, 8)
    assert not diff.binary and diff.cut == 0 and not diff.empty


def test_a_line_inside_a_multiline_string_is_coloured_as_a_string() -> None:
    """Highlighting runs on the whole file: line 3 (inside a docstring) is a string token, not a name."""
    diff = render.parse_patch(PATCH, "m.py", OLD, NEW)
    third = diff.hunks[0].lines[2]
    assert 'class="sd"' in third.html  # String.Doc
    assert 'class="n"' not in third.html


def test_code_is_escaped() -> None:
    diff = render.parse_patch(PATCH, "m.py", OLD, NEW)
    last = str(diff.hunks[0].lines[-1].html)
    assert "<b>" not in last and "&lt;b&gt;&amp;&lt;/b&gt;" in last
    plain = render.parse_patch(PATCH, "m.py", None, None)  # no blob text: the patch's own lines, escaped
    assert "&lt;b&gt;" in str(plain.hunks[0].lines[-1].html)


def test_unknown_extension_is_plain_escaped_text() -> None:
    lines = render.highlight_lines("a <x>\nb\n", "notes.unknownext")
    assert [str(x) for x in lines] == ["a &lt;x&gt;", "b"]


def test_line_count_matches_the_file() -> None:
    for text in ("", "x", "x\n", "x\n\n", "\n\nx\n", "a\r\nb\r\n"):
        assert len(render.highlight_lines(text, "f.py")) == max(1, text.replace("\r\n", "\n").count("\n")
                                                                 + (0 if text.endswith("\n") else 1)), repr(text)


def test_a_lone_carriage_return_does_not_shift_lines() -> None:
    lines = render.highlight_lines("a = 1\rb = 2\nc = 3\n", "f.py")
    assert len(lines) == 2 and "c = 3" in str(lines[1])


def test_side_by_side_pairs_deletions_with_additions() -> None:
    diff = render.parse_patch(PATCH, "m.py", OLD, NEW)
    rows = render.split_rows(diff)
    assert rows[0].hunk is diff.hunks[0]
    pairs = [(r.left.kind if r.left else None, r.right.kind if r.right else None) for r in rows[1:]]
    assert pairs[:4] == [("ctx", "ctx"), ("ctx", "ctx"), ("ctx", "ctx"), ("del", "add")]
    assert pairs[4:] == [(None, "add")] * 4


def test_binary_mode_change_and_cut() -> None:
    binary = render.parse_patch("diff --git a/x.png b/x.png\nindex 1..2 100644\nBinary files a/x.png and b/x.png differ\n",
                                "x.png", None, None)
    assert binary.binary and binary.empty
    mode = render.parse_patch("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n", "run.sh", None, None)
    assert mode.empty and "new mode 100755" in mode.note
    long_patch = "@@ -0,0 +1,50 @@\n" + "".join(f"+line {i}\n" for i in range(50))
    cut = render.parse_patch(long_patch, "a.txt", None, None, max_lines=10)
    assert sum(len(h.lines) for h in cut.hunks) == 10 and cut.cut == 40


def test_no_newline_marker_is_a_note() -> None:
    patch = "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
    diff = render.parse_patch(patch, "a.txt", "a", "b")
    assert [line.kind for line in diff.hunks[0].lines] == ["del", "note", "add", "note"]


def test_stylesheet_has_light_and_dark_rules_scoped_to_hl() -> None:
    css = render.stylesheet()
    assert ".hl .k " in css and "@media (prefers-color-scheme: dark)" in css
    assert "http" not in css  # nothing fetched from elsewhere


def test_a_very_long_line_is_cut_with_a_note() -> None:
    """A minified bundle's one line of 4 MB was shown whole (five of them: a 21 MB pane, 14 s to open the page)."""
    old, new = "var a=0;" * 100_000 + "\n", "var a=1;<b>" * 100_000 + "\n"
    patch = f"@@ -1 +1 @@\n-{old}+{new}"
    for texts in ((old, new), (None, None)):
        diff = render.parse_patch(patch, "bundle.min.js", *texts)
        removed, added = diff.hunks[0].lines
        assert len(removed.html) < render.MAX_LINE_CHARS + 200 and len(added.html) < 2 * render.MAX_LINE_CHARS
        assert f"{len(new) - 1 - render.MAX_LINE_CHARS:,} more characters" in added.html
        assert "<b>" not in added.html and "&lt;b&gt;" in added.html
    # minified code is not highlighted: lexing its long line was most of the pane's time (6 s for five bundles)
    assert render.highlight_lines("var a=0;" * 1000 + "\nvar b;", "m.js") == ["var a=0;" * 1000, "var b;"]
    short = render.parse_patch(PATCH, "m.py", OLD, NEW)
    assert "more characters" not in "".join(line.html for h in short.hunks for line in h.lines)
