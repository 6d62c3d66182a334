"""The README documents every MCP tool, CLI command and setting the code has, and nothing that is gone.

README.md is parsed as CommonMark with GitHub's tables (markdown-it-py): the first column of the tables under
"Tool reference" and "CLI reference" (its code spans), and the ``toml`` example under "Configuration". The live
registries are the tools ``tools/list`` returns from :func:`code_trajectory.server.build_server` (through the MCP
SDK's in-memory client), :data:`code_trajectory.cli.COMMANDS` and the fields of the settings dataclasses.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from code_trajectory import cli
from code_trajectory.core.config import TrajectorySettings
from code_trajectory.share.settings import ShareSettings
from support import REPO_ROOT

README = REPO_ROOT / "README.md"
NAME = re.compile(r"[a-z][a-z0-9_-]*")


def sections() -> dict[str, list[Token]]:
    """README's tokens by second-level heading (``## Tool reference`` -> ``"Tool reference"``), subsections included."""
    tokens = MarkdownIt("commonmark").enable("table").parse(README.read_text(encoding="utf-8"))
    found: dict[str, list[Token]] = {}
    current: list[Token] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            current = found.setdefault(tokens[i + 1].content, [])
        current.append(token)
    return found


def first_column_code(tokens: list[Token]) -> list[str]:
    """The code spans in the first cell of every body row of the tables among ``tokens``."""
    spans: list[str] = []
    first_cell = False
    for token in tokens:
        if token.type == "tr_open":
            first_cell = True
        elif token.type == "td_open":
            continue
        elif token.type == "inline" and first_cell and token.level > 0:
            spans += [child.content for child in token.children or [] if child.type == "code_inline"]
            first_cell = False
        elif token.type in ("th_close", "td_close"):
            first_cell = False
    return spans


def section(title: str) -> list[Token]:
    found = sections()
    assert title in found, f"README.md has no '## {title}' section (sections: {sorted(found)})"
    return found[title]


def documented_tools() -> set[str]:
    """Tool names in the first column of the Tool reference (``get_file_trajectory``, ``set_goal`` ...)."""
    return {span for span in first_column_code(section("Tool reference")) if NAME.fullmatch(span)}


def documented_commands() -> set[str]:
    """Command names in the first column of the CLI reference: ``code-trajectory install CLIENT`` -> ``install``,
    and a second span of the same cell without the program name (``uninstall CLIENT``) -> ``uninstall``."""
    names = set()
    for span in first_column_code(section("CLI reference")):
        words = span.split()
        if words and words[0] == "code-trajectory":
            words = words[1:]
        if words and NAME.fullmatch(words[0]):
            names.add(words[0])
    return names


def documented_settings() -> dict[str, set[str]]:
    """The keys of each table of the ``toml`` examples in the Configuration section."""
    tables: dict[str, set[str]] = {}
    for token in section("Configuration"):
        if token.type == "fence" and token.info.strip() == "toml":
            for table, values in tomllib.loads(token.content).items():
                tables.setdefault(table, set()).update(values)
    return tables


def missing(kind: str, where: str, expected: set[str], documented: set[str]) -> str:
    return f"README.md's {where} lacks the {kind} {sorted(expected - documented)}: add a row for each"


@pytest.mark.anyio
async def test_every_mcp_tool_is_in_the_tool_reference() -> None:
    from mcp import Client

    from code_trajectory.recording.service import TrajectoryService
    from code_trajectory.server import build_server

    service = TrajectoryService(TrajectorySettings.load)
    try:
        async with Client(build_server(service)) as client:
            registered = {tool.name for tool in (await client.list_tools()).tools}
    finally:
        service.close()
    documented = documented_tools()
    assert registered, "the server lists no tools"
    assert registered <= documented, missing("tools", "Tool reference", registered, documented)
    assert documented <= registered, f"README.md's Tool reference lists tools the server does not have: " \
                                     f"{sorted(documented - registered)}"


def test_every_cli_command_is_in_the_cli_reference() -> None:
    registered = set(cli.COMMANDS)
    documented = documented_commands()
    assert registered <= documented, missing("commands", "CLI reference", registered, documented)
    assert documented <= registered, f"README.md's CLI reference lists commands the CLI does not have: " \
                                     f"{sorted(documented - registered)}"


def test_every_trajectory_setting_is_in_the_configuration_example() -> None:
    keys = {f.name for f in fields(TrajectorySettings)}
    documented = documented_settings().get("trajectory", set())
    assert keys <= documented, f"README.md's Configuration example lacks the [trajectory] settings " \
                               f"{sorted(keys - documented)}: add a line for each"
    assert documented <= keys, f"README.md's Configuration example names [trajectory] settings that do not exist: " \
                               f"{sorted(documented - keys)}"


def test_the_configuration_example_is_a_valid_config(ct_home: Path, tmp_path: Path) -> None:
    """The example, saved as the user's ``config.toml``, loads with the values it shows."""
    example = "".join(token.content for token in section("Configuration")
                      if token.type == "fence" and token.info.strip() == "toml")
    ct_home.mkdir(parents=True, exist_ok=True)
    (ct_home / "config.toml").write_text(example, encoding="utf-8")
    settings = TrajectorySettings.load(tmp_path)
    for key, value in tomllib.loads(example)["trajectory"].items():
        got = getattr(settings, key)
        assert (tuple(value) if isinstance(value, list) else value) == got, (key, value, got)


def test_every_share_setting_is_in_the_sharing_section() -> None:
    text = "".join(token.content for token in section("Sharing trajectories") if token.type == "inline")
    absent = [f.name for f in fields(ShareSettings) if f"`{f.name}`" not in text]
    assert not absent, f"README.md's Sharing trajectories section lacks the [share] settings {absent}"


def test_the_parsers_see_the_tables() -> None:
    """The checks above parse what is there: known rows are found (a guard against a parser reading nothing)."""
    assert {"configure_project", "get_file_trajectory", "set_goal", "journal_write"} <= documented_tools()
    assert {"serve", "watch", "install", "uninstall", "hook"} <= documented_commands()
    assert {"debounce_seconds", "retention_days"} <= documented_settings()["trajectory"]
