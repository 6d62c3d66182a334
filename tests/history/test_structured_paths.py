"""The paths in tools' structured content (item 25.1): the name as the text shows it (``core/text.path_field``),
which every path argument takes back. A name holding ESC went into the structured content with ESC
made ``\\u241b`` (the control picture of every answer's strings, ``core/terminal.visible``): neither the name nor
what the text shows, so a client that passed the field back named no file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import git_repo, mcp_client

pytestmark = pytest.mark.anyio

#: The names, and what a path field holds for each: a right-to-left override, an undecodable byte and a control
#: character as the text shows them (a raw override reorders what a model or a person reads).
NAMES = {"evil\u202etxt.py": "evil\\u202etxt.py", os.fsdecode(b"bad\xff.py"): "bad\\xff.py",
         "esc\x1b[2J.py": "esc\\x1b[2J.py"}


async def test_path_fields_are_names_a_client_can_pass_back(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "p", {"a.py": "x = 1\n"})
    async with mcp_client(root) as client:
        for name in NAMES:
            (root / name).write_text("def f():\n    return 1\n")
        await client.call_tool("checkpoint", {"message": "one"})
        for name in NAMES:
            (root / name).write_text("def f():\n    return 2\n")
        await client.call_tool("checkpoint", {"message": "two"})
        compared = (await client.call_tool("compare", {"from_snapshot": "one"})).structured_content
        summary = (await client.call_tool("get_session_summary", {})).structured_content
        restore = (await client.call_tool("restore", {"snapshot": "one", "dry_run": True})).structured_content
        fields = {"compare": sorted(row[1] for row in compared["files"]),
                  "compare diffs": sorted(compared["diffs"]),
                  "summary": sorted(row[0] for row in summary["last"]["branches"][0]["files"]),
                  "restore": sorted(restore["written"])}
        for where, paths in fields.items():
            assert paths == sorted(NAMES.values()), (where, paths)
        for shown in NAMES.values():
            history = await client.call_tool("get_file_trajectory", {"filepath": shown})
            assert not history.is_error and "modified" in history.content[0].text, (shown, history.content)
            assert history.structured_content["path"] == shown
            symbol = await client.call_tool("get_symbol_trajectory", {"filepath": shown, "symbol": "f"})
            assert not symbol.is_error and symbol.structured_content["path"] == shown, (shown, symbol.content)
