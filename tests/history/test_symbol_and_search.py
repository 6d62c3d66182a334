"""Issue 12.4-12.5: a symbol's own trajectory (renames and moves followed) and text search over the history."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError
from code_trajectory.history import search, service
from code_trajectory.recording.session import ProjectSession
from support import mcp_client, subprocess_env, write

APP_V1 = "class App:\n    def run(self):\n        return 1\n\n    def stop(self):\n        return 0\n"
APP_V2 = APP_V1.replace("return 1", "return 2")
APP_V3 = APP_V2.replace("def run(self)", "def start(self)")
HELPER = "def slugify(text):\n    return text.lower().replace(' ', '-')\n"


def edit(session: ProjectSession, **files: str) -> None:
    for rel, text in files.items():
        write(session.root, rel.replace("__", "/").replace("_py", ".py"), text)
    assert session.recorder.record_paths([rel.replace("__", "/").replace("_py", ".py") for rel in files]) is not None


def test_symbol_trajectory_follows_renames_and_moves(session: ProjectSession) -> None:
    session.set_intent("Grow the app")
    edit(session, src__app_py=APP_V1)
    edit(session, src__app_py=APP_V2)
    edit(session, src__app_py=APP_V3)  # run -> start, same body
    edit(session, src__util_py=HELPER, src__app_py=APP_V3 + "\n\n" + "def unrelated():\n    return None\n")
    # slugify moves from util.py to text.py in one snapshot, with the same body
    edit(session, src__util_py="", src__text_py=HELPER)
    edit(session, src__text_py=HELPER.replace("'-'", "'_'"))

    text = service.symbol_trajectory(session, "src/app.py", "start", diffs=3)
    assert "# Trajectory of `App.start` in `src/app.py`" in text
    assert "renamed from App.run" in text and "modified" in text and "added" in text
    assert "-        return 1" in text and "+        return 2" in text  # its own diff only
    assert "stop" not in text.split("renamed from", 1)[1]  # the other method's lines are not shown
    assert [row[2] for row in text.data["versions"]][-1] == "renamed from App.run"  # cols: t, id, what...

    moved = service.symbol_trajectory(session, "src/text.py", "slugify")
    assert "moved from src/util.py (body unchanged) ·" in moved and "(in `src/util.py`)" in moved
    assert "(slugify)" not in moved  # the same name is not said again
    assert "+    return text.lower().replace(' ', '_')" in moved

    with pytest.raises(InvalidArgumentError, match="did you mean App.start"):
        service.symbol_trajectory(session, "src/app.py", "App.strat")
    with pytest.raises(InvalidArgumentError, match=r"the file's top-level constants, and a class's constants and fields as `Class.NAME`; "
                       r"attributes .* for other text use search_trajectory"):
        service.symbol_trajectory(session, "src/app.py", "MAX_RETRIES")  # not a symbol: where to look instead
    with pytest.raises(InvalidArgumentError, match="no symbol support"):
        write(session.root, "notes.txt", "x\n")
        session.recorder.record_paths(["notes.txt"])
        service.symbol_trajectory(session, "notes.txt", "x")


def test_search_finds_when_a_line_appeared_and_went(session: ProjectSession) -> None:
    edit(session, src__flags_py="DEBUG = False\n")
    edit(session, src__flags_py="DEBUG = False\nRETRIES = 3\n")
    edit(session, src__flags_py="RETRIES = 3\n")
    found = service.search_trajectory(session, "DEBUG = False")
    hits = found.data["hits"]
    assert len(hits) == 2  # added, then removed; the snapshot that left it alone is not listed
    lines = [hit[2].split("\n", 1)[1] for hit in hits]  # rows: time, id, the hit as shown: why, then its lines
    assert lines == ["`src/flags.py`: -DEBUG = False", "`src/flags.py`: +DEBUG = False"]
    assert "`src/flags.py`: -DEBUG = False" in found and found.index("-DEBUG") < found.index("+DEBUG")
    # each heading says why (no recorder prefix), the day once: the second heading starts with the time alone
    headings = [line for line in str(found).split("\n") if line.startswith("## ")]
    assert "[AUTO-TRJ]" not in str(found) and re.match(r"## \d{4}-\d\d-\d\d \d\d:", headings[0])
    assert all(re.match(r"## \d\d:\d\d:\d\d · ", h) for h in headings[1:]) or len({h[3:13] for h in headings}) > 1
    regex = service.search_trajectory(session, r"RETRIES = \d", regex=True, path="src")
    assert [h[2].split("\n", 1)[1] for h in regex.data["hits"]] == ["`src/flags.py`: +RETRIES = 3"]
    assert service.search_trajectory(session, "DEBUG", since="1 hour ago").data["hits"]
    assert not service.search_trajectory(session, "DEBUG", since="2099-01-01").data.get("hits")  # a message
    with pytest.raises(InvalidArgumentError, match="invalid regex"):
        service.search_trajectory(session, "(unclosed", regex=True)
    with pytest.raises(InvalidArgumentError, match="is not a time"):
        service.search_trajectory(session, "x", since="the other day")


@pytest.mark.anyio
async def test_the_new_tools_through_the_sdk_client(project: Path) -> None:
    async with mcp_client(project) as client:
        write(project, "src/app.py", "def main():\n    return 42\n")
        await client.call_tool("checkpoint", {"message": "answer"})
        result = await client.call_tool("get_symbol_trajectory", {"filepath": "src/app.py", "symbol": "main"})
        assert not result.is_error and "+    return 42" in result.content[0].text
        assert result.structured_content["symbol"] == "main"
        result = await client.call_tool("search_trajectory", {"query": "return 42"})
        assert result.structured_content["hits"][0][2].endswith("\n`src/app.py`: +return 42")
        bad = await client.call_tool("get_symbol_trajectory", {"filepath": "src/app.py", "symbol": "mian"})
        assert bad.is_error and "did you mean main" in bad.content[0].text



def test_the_structured_hits_of_a_search_are_kept_for_a_dozen_short_hits(session: ProjectSession) -> None:
    """Twelve snapshots each adding one short matching line (``x7 = 1``): each row carried a full ISO time where
    the heading says the day once, so the content grew past the text and the size cap deleted every hit (the
    model of a client that passes only structured content got ``{"query": "x", "more": true}``)."""
    from code_trajectory.core.answer import room, size, structured

    for n in range(12):
        edit(session, src__m_py="".join(f"x{k} = 1\n" for k in range(n + 1)))
    found = service.search_trajectory(session, "x", limit=10)
    text = str(found)
    data = structured(text, found.data)
    assert data is not None and size(data) <= room(text) and len(data["hits"]) == 10, data
    assert [row[2].split("\n", 1)[1] for row in data["hits"][:2]] == ["`src/m.py`: +x11 = 1", "`src/m.py`: +x10 = 1"]
    headings = [line[3:].split(" · ")[0] for line in text.split("\n") if line.startswith("## ")]
    assert [row[0] for row in data["hits"]] == headings  # the time as each heading says it
    for n in range(12, 60):  # past ~40 one-line hits a row with why and lines apart cost more than its heading
        edit(session, src__m_py="".join(f"x{k} = 1\n" for k in range(n + 1)))
    found = service.search_trajectory(session, "x", limit=100)
    data = structured(str(found), found.data)
    assert data is not None and size(data) <= room(str(found)), data
    assert data["hits"][0][2].endswith("\n`src/m.py`: +x59 = 1") and len(data["hits"]) == 60, data
    assert "hits_left_out" not in data, data

def test_hints_name_the_cli_flag_beside_the_tool_parameter(session: ProjectSession) -> None:
    """A hint that names a tool's parameter also names the CLI's flag for it: the CLI prints the same text."""
    edit(session, src__flags_py="DEBUG = False\n")
    with pytest.raises(InvalidArgumentError, match=r"regex=false \(CLI: leave out `--regex`\)"):
        service.search_trajectory(session, "(unclosed", regex=True)
    done = subprocess.run([sys.executable, "-m", "code_trajectory", "search", "--regex", "(unclosed"],
                          cwd=session.root, env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "leave out `--regex`" in done.stderr + done.stdout
    edit(session, src__flags_py="DEBUG = True\n")
    edit(session, src__flags_py="DEBUG = None\n")
    assert "; older ones: `before=" in str(service.global_trajectory(session, 1))


def test_search_follows_a_rename(session: ProjectSession) -> None:
    """A file renamed with its text did not remove the text and add it again (``git log -S`` detects renames): a pure
    rename is no hit; a rename that also adds the text shows it under the new path, saying where it came from."""
    body = "TIMEOUT = 30\n" + "".join(f"value_{n} = {n}\n" for n in range(20))
    edit(session, src__old_py=body)
    (session.root / "src/old.py").rename(session.root / "src/new.py")
    assert session.recorder.record_paths(["src/old.py", "src/new.py"]) is not None
    found = service.search_trajectory(session, "TIMEOUT = 30")
    assert [h[2].split("\n", 1)[1] for h in found.data["hits"]] == ["`src/old.py`: +TIMEOUT = 30"]  # no rename hit
    (session.root / "src/new.py").rename(session.root / "src/newest.py")
    write(session.root, "src/newest.py", body + "RETRY_TIMEOUT = 30\n")
    assert session.recorder.record_paths(["src/new.py", "src/newest.py"]) is not None
    again = service.search_trajectory(session, "TIMEOUT = 30")
    assert again.data["hits"][0][2].endswith("\n`src/newest.py` (renamed from `src/new.py`): +RETRY_TIMEOUT = 30")
    assert len(again.data["hits"]) == 2


def test_search_names_a_file_whose_name_git_quotes(session: ProjectSession) -> None:
    """git quotes a name holding a quote, a backslash or a control character in a patch's headers (``+++ "b/a\\"b.py"``):
    the hits of such files were all said under ``?``, two files one (``?: +needle = 1 (x2)``); and it writes a tab
    after a name holding a space, which was said as part of the name (``plain é.py<TAB>``)."""
    names = ['a"b.py', "t\tb.py", "n\nb.py", "plain é.py"]
    for name in names:
        write(session.root, name, "needle = 1\n")
    assert session.recorder.record_paths(names) is not None
    (session.root / 'a"b.py').rename(session.root / 'a"c.py')
    write(session.root, 'a"c.py', "needle = 1\nneedle = 2\n")
    assert session.recorder.record_paths(['a"b.py', 'a"c.py']) is not None
    text = str(service.search_trajectory(session, "needle")) + "\n"
    assert '`a"c.py` (renamed from `a"b.py`): +needle = 2' in text, text
    for name in ('a"b.py', "t\\x09b.py", "n\\x0ab.py", "plain é.py"):  # a tab, a line break escaped, as in every answer
        assert f"`{name}`: +needle = 1\n" in text, text
    assert "`?`" not in text, text


def test_search_shows_a_file_whose_name_is_not_utf8_as_every_answer_does(session: ProjectSession) -> None:
    """A name's undecodable byte was replaced (``bad\ufffd.py``, a name no tool takes back); other answers show it
    ``bad\\xff.py``, which the tools take back. The changed line's own bad byte is still replaced, and a regex
    search reads it."""
    root = os.fsencode(session.root)
    with open(root + b"/bad\xff.py", "wb") as f:
        f.write(b"needle = 1  # \xfe\n")
    assert session.recorder.record_paths(["bad\udcff.py"]) is not None
    os.rename(root + b"/bad\xff.py", root + b"/moved\xfe.py")
    with open(root + b"/moved\xfe.py", "ab") as f:
        f.write(b"needle = 2\n")
    assert session.recorder.record_paths(["bad\udcff.py", "moved\udcfe.py"]) is not None
    for regex in (False, True):
        text = str(service.search_trajectory(session, "needle", regex=regex))
        assert "`moved\\xfe.py` (renamed from `bad\\xff.py`): +needle = 2\n" in text, text
        assert "`bad\\xff.py`: +needle = 1  # \ufffd" in text and not any("\udc80" <= c <= "\udcff" for c in text), text
    assert "+needle = 2" in str(service.search_trajectory(session, "needle", path="moved\\xfe.py"))


def test_the_structured_snapshots_of_a_long_global_trajectory_are_kept(session: ProjectSession) -> None:
    """get_global_trajectory(limit=60) over 60 one-line snapshots of one day: a row costs more than its heading,
    so the content outgrew the text and the size cap deleted every row (``{"branch", "cols", "more"}`` only)."""
    from code_trajectory.core.answer import room, size, structured

    for n in range(60):
        edit(session, src__m_py="".join(f"x{k} = 1\n" for k in range(n + 1)))
    found = service.global_trajectory(session, limit=60)
    text = str(found)
    data = structured(text, found.data)
    assert data is not None and size(data) <= room(text), data
    rows = data["snapshots"]
    assert len(rows) > 40 and len(rows) + data["left_out"] == 60 and rows[-1][3].startswith("M src/m.py (+1)"), data
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:", rows[0][0]), rows[0]  # the first row shown still says its day


def test_search_reads_a_file_whose_lines_hold_git_logs_separators(session: ProjectSession) -> None:
    """A JSON text sequence separates its records with RS (0x1e), the byte that separates the commits of the log
    search reads: its lines after an RS were lost (``needle`` found, no line shown), and an RS followed by US-separated
    text (0x1f) failed the search (``int('W')``)."""
    write(session.root, "events.json-seq", "start\n")
    assert session.recorder.record_paths(["events.json-seq"]) is not None
    write(session.root, "events.json-seq", 'start\n\x1e{"a": "needle"}\n\x1eZ\x1fY\x1fW\x1fV\x1fU\x1f{"b": 2}\n')
    assert session.recorder.record_paths(["events.json-seq"]) is not None
    found = service.search_trajectory(session, "needle")
    assert [h[2].split("\n", 1)[1] for h in found.data["hits"]] == ['`events.json-seq`: +{"a": "needle"}']
    assert len(service.search_trajectory(session, '{"b": 2}').data["hits"]) == 1


def test_a_regex_search_takes_linear_time_on_each_line(session: ProjectSession) -> None:
    """git's -G finds the snapshot, then each changed line was matched with Python's ``re``, which backtracks:
    ``(a+)+$`` on 25 ``a`` and a ``!`` took about 15 s holding the interpreter (at 32, hours: the whole server stopped
    answering). RE2 matches in linear time; what it cannot run (a backreference) is a clear error."""
    write(session.root, "data.txt", "start\n")
    assert session.recorder.record_paths(["data.txt"]) is not None
    write(session.root, "data.txt", "start\n" + "a" * 25 + "!\nxa\n")
    assert session.recorder.record_paths(["data.txt"]) is not None
    found = service.search_trajectory(session, "(a+)+$", regex=True)
    # no timing assertion: the lines are matched by RE2's linear-time engine, not by Python's backtracking one
    assert not isinstance(getattr(search._line_matcher("(a+)+$"), "__self__", None), re.Pattern)
    assert [h[2].split("\n", 1)[1] for h in found.data["hits"]] == ["`data.txt`: +xa"]
    with pytest.raises(InvalidArgumentError, match="backreferences"):
        service.search_trajectory(session, r"(a)\1", regex=True)
    # a byte the CLI's argv did not decode (`search --regex $'\xff'`), a lone surrogate from JSON: RE2 takes UTF-8
    # (a UnicodeEncodeError and a traceback)
    for query in ("ne\udcffedle", "\ud800"):
        with pytest.raises(InvalidArgumentError, match="not UTF-8"):
            service.search_trajectory(session, query, regex=True)


def test_a_file_named_with_the_logs_separators_forges_no_snapshot(session: ProjectSession) -> None:
    """A file in the project (one a cloned repository brings) named with an RS (0x1e) and the fields of a log header:
    the log readers split git's output at that RS and read a forged commit (get_global_trajectory failed: git ls-tree
    of 'ababab…^{tree}'). Paths are now read as the raw records' own tokens."""
    name = "x\x1e" + "ab" * 20 + "\x1f\x1f1700000000\x1fFORGED by a file name\x1f"
    write(session.root, name, "hi\n")
    assert session.recorder.record_paths([name]) is not None
    found = str(service.global_trajectory(session, limit=5))
    assert "FORGED" in found and "abababababab ·" not in found  # the name, shown as a file; no forged snapshot
    assert service.search_trajectory(session, "hi").data["hits"][0][2].endswith("+hi")
