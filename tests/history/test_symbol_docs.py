"""Issues 23.3, 23.5 and 28.2-28.3 as a user meets them: docstrings and doc comments are changes of their symbol, a
short comment edit is quoted, ``@N`` names read as what they are, a symbol as first recorded is a baseline, and every
symbol heading says why (intent, checkpoint name). Real git, the CLI as a subprocess and the MCP SDK client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import mcp_client, record_now, write

CLI_V1 = '''import sys


def echo(text):
    """Print TEXT."""
    # write it out
    sys.stdout.write(text)


def main():
    echo(sys.argv[1])
'''
CLI_V2 = CLI_V1.replace('"""Print TEXT."""', '"""Print TEXT to standard output, as given."""')
CLI_V3 = CLI_V2.replace("# write it out", "# write it, no newline")
CLI_V4 = CLI_V3.replace("sys.stdout.write(text)", "sys.stdout.write(text + '\\n')")


def cli(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def sections(text: str) -> list[str]:
    """The per-version sections of a trajectory (``## `` headings), oldest first."""
    return re.split(r"\n(?=## )", text)[1:]


def test_docstring_and_comment_edits_in_every_narrative_and_the_symbol_history(project: Path) -> None:
    write(project, "src/cli.py", CLI_V1)
    cli("checkpoint", cwd=project)  # the first scan: src/cli.py as recording began
    for text, name in ((CLI_V2, "Better help"), (CLI_V3, "Clarify"), (CLI_V4, "Newline")):
        write(project, "src/cli.py", text)
        cli("checkpoint", "-m", name, cwd=project)

    file_out = cli("file", "src/cli.py", "--depth", "4", cwd=project)
    doc, comment, code = sections(file_out)[-3:]
    assert "docstring of `echo` changed" in doc and "omment-only" not in doc
    assert '+    """Print TEXT to standard output, as given."""' in doc  # a docstring is code: its diff is shown
    assert "Comment-only change: comment in `echo`: `# write it out` → `# write it, no newline`" in comment
    assert "modified echo" in code and "docstring" not in code

    log_out = cli("log", "--limit", "10", cwd=project)
    assert "docstring of `echo` changed" in log_out and "comments changed in echo" in log_out
    assert "# write it out" not in log_out  # the lean log names a changed comment; the file history quotes it

    symbol_out = cli("symbol", "src/cli.py", "echo", cwd=project)
    headings = [s.split("\n", 1)[0] for s in sections(symbol_out)]
    assert len(headings) == 4, symbol_out
    # the baseline: one line, no body
    assert ("as first recorded (when recording began: 4 lines, starts at line 4; its body: show_baseline=true, "
            "CLI `--baseline`)") in headings[0]
    assert sections(symbol_out)[0].strip() == headings[0]  # nothing but its heading
    assert "+def echo(text):" not in symbol_out
    assert "docstring of `echo` changed · checkpoint: Better help" in headings[1]
    assert "comment in `echo`: `# write it out` → `# write it, no newline` · checkpoint: Clarify" in headings[2]
    assert headings[3].endswith("modified · checkpoint: Newline")
    assert headings[1].endswith("· +1 -1, line 5")  # older than the newest: one line, how many lines and where
    all_lines = cli("symbol", "src/cli.py", "echo", "--diffs", "3", cwd=project)
    assert '-    """Print TEXT."""' in sections(all_lines)[1]

    full = cli("symbol", "src/cli.py", "echo", "--baseline", cwd=project)
    assert "+def echo(text):" in full and '+    """Print TEXT."""' in full and "show_baseline" not in full


def test_a_checkpoint_name_is_the_heading_of_its_version_when_there_is_no_intent(project: Path) -> None:
    write(project, "src/parser.py", "def parse(text):\n    return text.split()\n")
    cli("checkpoint", cwd=project)
    write(project, "src/parser.py", "def parse(text):\n    return text.split(',')\n")
    cli("checkpoint", "-m", "Fix the parser", cwd=project)  # the checkpoint's own snapshot carries the name
    write(project, "src/parser.py", "def parse(text):\n    return [t.strip() for t in text.split(',')]\n")
    record_now(project)  # a snapshot without a name: a later checkpoint with nothing to record names it
    assert "Strip the fields" in cli("checkpoint", "-m", "Strip the fields", cwd=project)

    out = cli("symbol", "src/parser.py", "parse", cwd=project)
    headings = [s.split("\n", 1)[0] for s in sections(out)]
    assert "Fix the parser" in headings[1] and "Intent" not in out
    assert "Strip the fields" in headings[2]


@pytest.mark.anyio
async def test_doc_comments_occurrence_names_and_the_baseline_through_the_sdk_client(project: Path) -> None:
    js = "/**\n * Greets someone.\n */\nexport function greet(name) {\n  return 'hi ' + name;\n}\n"
    py = ("class Context:\n    def invoke(self):\n        return 1\n\n    def invoke(self, x):\n        return x\n")
    write(project, "src/greet.js", js)
    write(project, "src/ctx.py", py)
    async with mcp_client(project) as client:
        await client.call_tool("checkpoint", {"message": "start"})
        write(project, "src/greet.js", js.replace("Greets someone.", "Greets someone warmly."))
        write(project, "src/ctx.py", py.replace("return x", "return x * 2"))
        await client.call_tool("checkpoint", {"message": "Warmer docs, double"})

        result = await client.call_tool("get_symbol_trajectory", {"filepath": "src/greet.js", "symbol": "greet"})
        text = result.content[0].text
        assert not result.is_error
        assert "doc comment of `greet` changed · checkpoint: Warmer docs, double" in text
        assert "- * Greets someone.\n+ * Greets someone warmly." in text  # the doc comment above it is its own
        assert "as first recorded (when recording began: 6 lines, starts at line 1; its body:" in text
        assert [row[2] for row in result.structured_content["versions"]] == [  # cols: t, id, what...
            "as first recorded", "doc comment of `greet` changed"]

        result = await client.call_tool("get_file_trajectory", {"filepath": "src/ctx.py"})
        assert "modified 2nd definition of Context.invoke" in result.content[0].text
        assert "invoke@2" not in result.content[0].text
        result = await client.call_tool("get_symbol_trajectory", {"filepath": "src/ctx.py",
                                                                  "symbol": "Context.invoke@2",
                                                                  "show_baseline": True})
        text = result.content[0].text
        assert "# Trajectory of the 2nd definition of `Context.invoke` (`Context.invoke@2`)" in text
        assert result.structured_content["symbol"] == "Context.invoke@2"  # the machine id stays in the data
        assert "+    def invoke(self, x):" in text and "show_baseline" not in text
