"""install/uninstall of the server entry, for every client, on real files in temp dirs."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from code_trajectory.clients import install as inst
from code_trajectory.clients import jsontext
from code_trajectory.clients.registry import CLIENTS, client
from code_trajectory.core.errors import InvalidArgumentError, TrajectoryError
from support import server_command, subprocess_env

EXE = "/opt/ct/bin/code-trajectory"
NEW_EXE = "/opt/ct2/bin/code-trajectory"
#: The clients whose file is JSON with ``{"command", "args"}`` entries (the others: test_clients_formats.py).
ALL = [n for n, c in CLIENTS.items() if c.file_format == "json" and n != "zed"]
NOW = dt.datetime(2025, 3, 4, 5, 6, 7)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment the per-user files are located from (claude-desktop): a temp HOME only."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home)}


def path_of(name: str, proj: Path, env: dict[str, str]) -> Path:
    return client(name).config_path(proj, env, "linux")


def run_install(name: str, proj: Path, env: dict[str, str], exe: str = EXE, **kw) -> list[inst.Change]:
    return inst.install(name, proj, exe=exe, env=env, platform="linux", now=NOW, **kw)


def run_uninstall(name: str, proj: Path, env: dict[str, str], **kw) -> list[inst.Change]:
    return inst.uninstall(name, proj, env=env, platform="linux", now=NOW, **kw)


def expected_entry(name: str, proj: Path, exe: str = EXE) -> dict:
    """The entry install writes: shared files name the project as the client expands it (or not at all)."""
    project = client(name).project_arg if client(name).shared else str(proj)
    entry = {"command": exe, "args": ["serve", *(["--project", project] if project else [])]}
    return {"type": "stdio", **entry} if name in ("claude-code", "vscode") else entry


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for directories)."""
    return {str(p): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


@pytest.mark.parametrize("name", ALL)
def test_created_from_nothing(name: str, proj: Path, env: dict[str, str]) -> None:
    changes = run_install(name, proj, env)
    path = path_of(name, proj, env)
    assert [c.action for c in changes] == ["created"]
    assert changes[0].path == path and changes[0].backup is None
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "')  # indent 2, final newline
    data = json.loads(text)
    assert data == {client(name).servers_key: {"code-trajectory": expected_entry(name, proj)}}
    assert "+      \"command\": \"/opt/ct/bin/code-trajectory\"" in changes[0].diff.replace("  \"type", "XX")


def test_expected_locations(proj: Path, env: dict[str, str]) -> None:
    assert path_of("claude-code", proj, env) == proj / ".mcp.json"
    assert path_of("cursor", proj, env) == proj / ".cursor" / "mcp.json"
    assert path_of("vscode", proj, env) == proj / ".vscode" / "mcp.json"
    assert client("vscode").servers_key == "servers"
    assert {client(n).servers_key for n in ("claude-code", "cursor", "claude-desktop")} == {"mcpServers"}


@pytest.mark.parametrize("name", ALL)
def test_merged_keeps_other_servers_and_keys_in_order(name: str, proj: Path, env: dict[str, str]) -> None:
    key = client(name).servers_key
    path = path_of(name, proj, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = {"first": {"x": [1, 2, {"y": None}]},
              key: {"alpha": {"command": "npx", "args": ["-y", "alpha"], "env": {"TOKEN": "ü"}},
                    "omega": {"url": "https://example.invalid/mcp"}},
              "last": "kept"}
    path.write_text(json.dumps(before, indent=2, ensure_ascii=False) + "\n")
    changes = run_install(name, proj, env)
    assert changes[0].action == "updated" and changes[0].backup is None
    after = json.loads(path.read_text())
    assert list(after) == ["first", key, "last"]
    assert list(after[key]) == ["alpha", "omega", "code-trajectory"]
    assert after["first"] == before["first"] and after["last"] == "kept"
    assert after[key]["alpha"] == before[key]["alpha"] and after[key]["omega"] == before[key]["omega"]
    assert "ü" in path.read_text()  # non-ASCII is not escaped into \\u sequences
    assert backups(path) == []


@pytest.mark.parametrize("name", ALL)
def test_second_install_writes_nothing(name: str, proj: Path, env: dict[str, str]) -> None:
    run_install(name, proj, env)
    path = path_of(name, proj, env)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    raw = path.read_bytes()
    changes = run_install(name, proj, env)
    assert [c.action for c in changes] == ["unchanged"] and changes[0].diff == ""
    assert path.read_bytes() == raw
    assert path.stat().st_mtime_ns == 1_000_000_000
    assert "already installed" in inst.render(changes)
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("name", ALL)
def test_new_exe_updates_in_place(name: str, proj: Path, env: dict[str, str]) -> None:
    key = client(name).servers_key
    path = path_of(name, proj, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: {"a": {"command": "a"}}}, indent=2) + "\n")
    run_install(name, proj, env)
    data = json.loads(path.read_text())
    data[key]["z"] = {"command": "z"}  # a server added by the user after ours
    path.write_text(json.dumps(data, indent=2) + "\n")
    changes = run_install(name, proj, env, exe=NEW_EXE)
    assert changes[0].action == "updated"
    after = json.loads(path.read_text())
    assert list(after[key]) == ["a", "code-trajectory", "z"]
    assert after[key]["code-trajectory"] == expected_entry(name, proj, NEW_EXE)
    assert f'-      "command": "{EXE}",' in changes[0].diff and f'+      "command": "{NEW_EXE}",' in changes[0].diff


@pytest.mark.parametrize("name", ALL)
def test_a_new_install_keeps_what_the_user_added_to_our_entry(name: str, proj: Path, env: dict[str, str]) -> None:
    """The README suggests an ``env`` in the server's entry (``CODE_TRAJECTORY_HOME``); running install again (to
    add ``--hooks``, or after an upgrade) rewrote the entry and dropped it, with no backup: the server then read
    another home (recaps, journal, config)."""
    key = client(name).servers_key
    path = path_of(name, proj, env)
    run_install(name, proj, env)
    data = json.loads(path.read_text())
    data[key]["code-trajectory"].update(env={"CODE_TRAJECTORY_HOME": "/home/me/ct-state"}, timeout=30)
    path.write_text(json.dumps(data, indent=2) + "\n")
    changes = run_install(name, proj, env, exe=NEW_EXE)
    assert changes[0].action == "updated"
    after = json.loads(path.read_text())[key]["code-trajectory"]
    assert after == {**expected_entry(name, proj, NEW_EXE), "env": {"CODE_TRAJECTORY_HOME": "/home/me/ct-state"},
                     "timeout": 30}
    raw = path.read_bytes()
    assert [c.action for c in run_install(name, proj, env, exe=NEW_EXE)] == ["unchanged"]
    assert path.read_bytes() == raw


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("content,reason", [
    ('{"mcpServers": {"a": ', "is not valid JSON"),
    ('[{"command": "x"}]\n', "holds a list at the top level"),
    (b'{"a": "\xff\xfe"}', "is not UTF-8 text"),
])
def test_unparseable_file_backed_up_then_rewritten(name: str, content: str | bytes, reason: str, proj: Path,
                                                   env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = content if isinstance(content, bytes) else content.encode()
    path.write_bytes(raw)
    path.chmod(0o600)
    changes = run_install(name, proj, env)
    change = changes[0]
    assert change.action == "updated"
    assert change.backup == path.with_name(path.name + ".bak-20250304-050607")
    assert change.backup.read_bytes() == raw
    assert reason in change.note
    assert json.loads(path.read_text()) == {client(name).servers_key: {"code-trajectory": expected_entry(name, proj)}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the file's mode is kept
    text = inst.render(changes)
    assert str(change.backup) in text and reason in text
    # uninstall puts the very bytes back (nothing else was added since), not an empty servers object
    assert run_uninstall(name, proj, env)[0].action == "removed"
    assert path.read_bytes() == raw


@pytest.mark.parametrize("name", ALL)
def test_key_holding_non_object_is_backed_up_and_replaced(name: str, proj: Path, env: dict[str, str]) -> None:
    key = client(name).servers_key
    path = path_of(name, proj, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps({"before": 1, key: ["not", "an", "object"], "after": 2}, indent=2) + "\n"
    path.write_text(original)
    change = run_install(name, proj, env)[0]
    assert change.backup is not None and change.backup.read_text() == original
    assert f'"{key}" held a list' in change.note
    data = json.loads(path.read_text())
    assert list(data) == ["before", key, "after"]
    assert data[key] == {"code-trajectory": expected_entry(name, proj)}
    # the file is what install wrote: uninstall gives back the very bytes (it left "servers": {} before)
    assert run_uninstall(name, proj, env)[0].action == "removed"
    assert path.read_text() == original and backups(path) == []


def test_hooks_holding_a_non_object_come_back_as_they_were(proj: Path, env: dict[str, str]) -> None:
    settings = proj / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{\n  "hooks": "todo",\n  "model": "x"\n}\n'
    settings.write_text(original)
    run_install("claude-code", proj, env, hooks=True)
    assert json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert run_uninstall("claude-code", proj, env)[0].action == "removed"
    assert settings.read_text() == original and backups(settings) == []
    # changed by hand since install: only our hooks go, the rest stays as the user left it
    run_install("claude-code", proj, env, hooks=True)
    data = json.loads(settings.read_text())
    data["model"] = "y"
    settings.write_text(json.dumps(data, indent=2) + "\n")
    assert run_uninstall("claude-code", proj, env)[0].action == "removed"
    assert json.loads(settings.read_text()) == {"model": "y"}


def test_backup_never_overwrites_an_existing_one(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".mcp.json"
    path.write_text("not json")
    taken = path.with_name(".mcp.json.bak-20250304-050607")
    taken.write_text("an older backup")
    change = run_install("claude-code", proj, env)[0]
    assert taken.read_text() == "an older backup"
    assert change.backup == path.with_name(".mcp.json.bak-20250304-050607-1")
    assert change.backup.read_text() == "not json"


def test_vscode_jsonc_keeps_its_comments_and_layout(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".vscode" / "mcp.json"
    path.parent.mkdir()
    original = """// workspace MCP servers
{
  /* inputs first */
  "inputs": [
    {"type": "promptString", "id": "key", "description": "a // not a comment", "password": true,},
  ],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch", "/*x*/"],}, // trailing
  },
}
"""
    path.write_text(original)
    changes = run_install("vscode", proj, env)
    change = changes[0]
    assert change.action == "updated"
    assert change.backup is None and change.note is None and backups(path) == []
    text = path.read_text()
    # every line of the original is still there, in order: the entry is spliced in, nothing is rewritten (the
    # comment after the last server, too: ours goes below it)
    lines = iter(text.splitlines())
    assert all(any(line == mine for mine in lines) for line in original.splitlines())
    assert "/* inputs first */" in text and text.startswith("// workspace MCP servers\n")
    data, _ = jsontext.loads(text)
    assert list(data) == ["inputs", "servers"]
    assert data["inputs"][0]["description"] == "a // not a comment"
    assert data["servers"]["fetch"]["args"] == ["mcp-server-fetch", "/*x*/"]
    assert list(data["servers"]) == ["fetch", "code-trajectory"]
    assert data["servers"]["code-trajectory"] == expected_entry("vscode", proj)
    run_uninstall("vscode", proj, env)
    assert path.read_text() == original


def test_repeated_key_is_backed_up_before_a_rewrite(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".mcp.json"
    original = '{"mcpServers": {"a": {"command": "one"}, "a": {"command": "two"}}}\n'
    path.write_text(original)
    change = run_install("claude-code", proj, env)[0]
    assert change.backup is not None and change.backup.read_text() == original
    assert "repeats the key 'a'" in change.note
    assert json.loads(path.read_text())["mcpServers"]["a"] == {"command": "two"}


def test_jsonc_already_holding_our_entry_is_left_alone(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".vscode" / "mcp.json"
    path.parent.mkdir()
    entry = json.dumps(expected_entry("vscode", proj))
    path.write_text('{\n  // mine\n  "servers": {"code-trajectory": ' + entry + ",},\n}\n")
    raw = path.read_bytes()
    change = run_install("vscode", proj, env)[0]
    assert change.action == "unchanged" and change.backup is None
    assert path.read_bytes() == raw and backups(path) == []


@pytest.mark.parametrize("name", ALL)
def test_dry_run_writes_nothing_and_shows_a_diff(name: str, proj: Path, env: dict[str, str],
                                                 tmp_path: Path) -> None:
    path = path_of(name, proj, env)
    before = tree(tmp_path)
    changes = run_install(name, proj, env, dry_run=True, hooks=name == "claude-code")
    assert tree(tmp_path) == before  # not a file nor a directory created
    assert all(c.dry_run for c in changes)
    assert changes[0].action == "created"
    assert changes[0].diff.startswith("--- /dev/null\n+++ " + str(path))
    text = inst.render(changes)
    assert "would create" in text and "dry run: nothing written" in text and '+      "args": [' in text
    # On an existing unparseable file: no backup either.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{oops")
    changes = run_install(name, proj, env, dry_run=True)
    assert path.read_text() == "{oops" and backups(path) == []
    assert changes[0].backup is None and "would back up" in inst.render(changes)
    assert "-{oops" in changes[0].diff


@pytest.mark.parametrize("name", ALL)
def test_uninstall_removes_only_our_entry(name: str, proj: Path, env: dict[str, str]) -> None:
    key = client(name).servers_key
    path = path_of(name, proj, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = {"top": True, key: {"a": {"command": "npx", "args": ["a"]}, "b": {"command": "b"}}, "z": [1]}
    path.write_text(json.dumps(before, indent=2) + "\n")
    original = path.read_bytes()
    run_install(name, proj, env)
    changes = run_uninstall(name, proj, env)
    assert changes[0].action == "removed" and changes[0].backup is None
    assert path.read_bytes() == original  # byte-identical to before the install
    again = run_uninstall(name, proj, env)
    assert again[0].action == "absent" and path.read_bytes() == original
    assert "nothing to remove" in inst.render(again)


@pytest.mark.parametrize("name", ["claude-code", "cursor", "vscode"])
def test_foreign_server_named_like_ours_is_kept(name: str, proj: Path, env: dict[str, str]) -> None:
    key = client(name).servers_key
    path = path_of(name, proj, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    foreign = {"command": "node", "args": ["/srv/other/index.js", "serve"]}
    path.write_text(json.dumps({key: {"code-trajectory": foreign}}, indent=2) + "\n")
    raw = path.read_bytes()
    assert run_uninstall(name, proj, env)[0].action == "absent"
    assert path.read_bytes() == raw
    with pytest.raises(InvalidArgumentError, match="already has a server named 'code-trajectory' that runs node"):
        run_install(name, proj, env)
    assert path.read_bytes() == raw


def test_hand_written_entry_with_workspace_variable_is_ours(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"servers": {"code-trajectory": {
        "type": "stdio", "command": "code-trajectory", "args": ["serve", "--project", "${workspaceFolder}"]}}}))
    assert run_install("vscode", proj, env)[0].action == "updated"
    assert json.loads(path.read_text())["servers"] == {"code-trajectory": expected_entry("vscode", proj)}
    assert run_uninstall("vscode", proj, env)[0].action == "removed"
    assert json.loads(path.read_text()) == {"servers": {}}


def test_uninstall_leaves_unparseable_file_untouched(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text("{broken")
    changes = run_uninstall("cursor", proj, env)
    assert changes[0].action == "unchanged" and "left untouched" in changes[0].note
    assert path.read_text() == "{broken" and backups(path) == []
    assert "nothing done" in inst.render(changes)


def test_uninstall_without_file_creates_nothing(proj: Path, env: dict[str, str]) -> None:
    changes = run_uninstall("cursor", proj, env)
    assert changes[0].action == "absent" and not (proj / ".cursor").exists()


def test_existing_indent_crlf_and_bom_are_kept(proj: Path, env: dict[str, str]) -> None:
    path = proj / ".mcp.json"
    path.write_bytes(b'\xef\xbb\xbf{\r\n    "mcpServers": {}\r\n}\r\n')
    run_install("claude-code", proj, env)
    raw = path.read_bytes()
    assert raw.startswith(b'\xef\xbb\xbf{\r\n    "mcpServers": {\r\n        "code-trajectory": {')
    assert b"\n" not in raw.replace(b"\r\n", b"") and raw.endswith(b"}\r\n")
    assert run_install("claude-code", proj, env)[0].action == "unchanged"


def test_symlinked_config_inside_the_project_is_written_through(proj: Path, env: dict[str, str]) -> None:
    real = proj / "config" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}\n')
    (proj / ".mcp.json").symlink_to("config/mcp.json")
    run_install("claude-code", proj, env)
    assert (proj / ".mcp.json").is_symlink()
    assert "code-trajectory" in json.loads(real.read_text())["mcpServers"]


def test_uninstall_deletes_the_file_created_through_a_dangling_link_and_keeps_the_link(proj: Path,
                                                                                     env: dict[str, str]) -> None:
    """``.mcp.json -> config/mcp.json`` with no such file yet: install creates the link's target; uninstall
    deletes that file (our entry with it), not the user's link."""
    (proj / "config").mkdir()
    (proj / ".mcp.json").symlink_to("config/mcp.json")
    assert run_install("claude-code", proj, env)[0].action == "created"
    assert "code-trajectory" in json.loads((proj / "config" / "mcp.json").read_text())["mcpServers"]
    assert run_uninstall("claude-code", proj, env)[0].action == "removed"
    assert not (proj / "config" / "mcp.json").exists()
    assert os.readlink(proj / ".mcp.json") == "config/mcp.json"  # as before install: a link to no file


def test_a_project_config_linked_out_of_the_project_is_refused(proj: Path, env: dict[str, str],
                                                              tmp_path: Path) -> None:
    """A cloned repository's ``.mcp.json -> ../.bashrc`` or ``.claude -> ~/.claude``: install would replace a file
    of the user's outside the project (or set up hooks for every project). Refused, dry run and uninstall too, and
    nothing is written anywhere."""
    outside = tmp_path / "outside"
    outside.mkdir()
    bashrc = outside / "bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n")
    user_claude = outside / "claude"
    user_claude.mkdir()
    (user_claude / "settings.json").write_text('{"theme": "dark"}\n')
    (proj / ".mcp.json").symlink_to(os.path.relpath(bashrc, proj))
    before = sorted(p.name for p in proj.iterdir())
    for dry_run in (True, False):
        with pytest.raises(InvalidArgumentError, match=r"\.mcp\.json resolves to .*outside the project"):
            run_install("claude-code", proj, env, dry_run=dry_run)
    with pytest.raises(InvalidArgumentError, match="outside the project"):
        inst.uninstall("claude-code", proj, env=env, platform="linux", now=NOW)
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH\n" and sorted(p.name for p in proj.iterdir()) == before
    (proj / ".mcp.json").unlink()
    (proj / ".claude").symlink_to(user_claude)
    with pytest.raises(InvalidArgumentError, match=r"settings\.json resolves to .*outside the project"):
        run_install("claude-code", proj, env, hooks=True)
    assert (user_claude / "settings.json").read_text() == '{"theme": "dark"}\n'
    assert not (proj / ".mcp.json").exists()  # refused before the server's file was written
    run_install("claude-code", proj, env)  # the hooks' directory is not written without --hooks
    assert "code-trajectory" in json.loads((proj / ".mcp.json").read_text())["mcpServers"]


def test_project_must_exist(tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(InvalidArgumentError, match="does not exist; pass --project"):
        run_install("cursor", tmp_path / "nowhere", env)
    (tmp_path / "file").write_text("")
    with pytest.raises(InvalidArgumentError, match="not a directory"):
        run_install("cursor", tmp_path / "file", env)


def test_project_defaults_to_cwd_and_is_absolute(proj: Path, env: dict[str, str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(proj)
    changes = inst.install("cursor", None, exe=EXE, env=env, platform="linux")
    assert changes[0].path == proj / ".cursor" / "mcp.json"
    (proj / "sub").mkdir()
    monkeypatch.chdir(proj / "sub")
    changes = inst.install("cursor", "..", exe=EXE, env=env, platform="linux")
    assert changes[0].action == "unchanged" and changes[0].path == proj / ".cursor" / "mcp.json"
    # the shared file names the project as Cursor expands it, not by this machine's path
    assert json.loads((proj / ".cursor" / "mcp.json").read_text())["mcpServers"]["code-trajectory"]["args"][-1] \
        == "${workspaceFolder}"


def test_run_in_a_subdirectory_it_sets_up_the_project_at_the_top(proj: Path, env: dict[str, str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``install claude-code`` run in ``src/click`` of a clone wrote ``src/click/.mcp.json`` and
    ``src/click/.claude/settings.json``, which Claude Code started at the top never reads (and the server records
    the top anyway); every other command takes the project as git finds its repository."""
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    (proj / "src" / "click").mkdir(parents=True)
    monkeypatch.chdir(proj / "src" / "click")
    changes = inst.install("claude-code", None, exe=EXE, env=env, platform="linux", hooks=True)
    assert [c.path for c in changes] == [proj / ".mcp.json", proj / ".claude" / "settings.json"]
    assert not (proj / "src" / "click" / ".mcp.json").exists()
    changes = inst.uninstall("claude-code", None, env=env, platform="linux")
    assert [c.action for c in changes] == ["removed", "removed"] and not (proj / ".mcp.json").exists()



def test_an_explicit_subdirectory_is_set_up_as_asked_with_one_line_on_the_top(proj: Path) -> None:
    """``install --project packages/app`` in a monorepo writes packages/app's files (a package may be its own
    project) but said nothing of the top of the work tree, whose files a client started there reads instead, and
    which a server started in packages/app records (serve takes a directory's project, the git top)."""
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    app = proj / "packages" / "app"
    app.mkdir(parents=True)
    done = run_cli("install", "claude-code", "--hooks", "--project", str(app))
    assert done.returncode == 0, done.stderr
    assert (app / ".mcp.json").is_file() and (app / ".claude" / "settings.json").is_file()
    assert not (proj / ".mcp.json").exists()
    notes = [line for line in done.stdout.splitlines() if "note:" in line]
    assert notes == [f"  note: {app} is inside the git work tree {proj}: a client started there reads "
                     f"{proj / '.mcp.json'}, not this file, and one started here records {proj} too (unless this "
                     f"directory has its own .trajectory/); for the whole repository: install --project '{proj}'"], \
        done.stdout
    for project in (proj, None):  # the top itself, or found from a subdirectory: no note
        args = ["--project", str(project)] if project else []
        done = subprocess.run([*server_command(), "install", "claude-code", *args], capture_output=True, text=True,
                              timeout=120, env=subprocess_env(), cwd=app)
        assert done.returncode == 0 and "note:" not in done.stdout, done.stdout + done.stderr
    assert (proj / ".mcp.json").is_file()


def test_a_local_install_says_what_the_local_scope_needs(proj: Path, env: dict[str, str]) -> None:
    """``install claude-code --local`` said Claude Code would ask to approve the servers of ``.mcp.json``, a file
    it had not written (local-scope servers need no approval); Codex's said to trust the project's ``.codex/``."""
    for name in ("claude-code", "codex"):
        text = inst.render(run_install(name, proj, env, local=True))
        assert ".mcp.json" not in text and "trust the project" not in text, text
        assert client(name).local_hint in text  # type: ignore[attr-defined]
        assert "--local" in text.splitlines()[-1]
        shared = inst.render(run_install(name, proj, env))
        assert client(name).hint in shared


def test_unknown_client_lists_valid_names(proj: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="unknown client 'emacs'; choose one of: claude-code, "
                                                   "claude-desktop, cursor, vscode, gemini, codex, windsurf, zed, "
                                                   "cline, continue, goose"):
        inst.install("emacs", proj, exe=EXE)


def test_hooks_only_for_clients_with_hooks(proj: Path, env: dict[str, str]) -> None:
    with pytest.raises(InvalidArgumentError, match="--hooks applies to claude-code, gemini, codex only"):
        run_install("cursor", proj, env, hooks=True)
    assert not (proj / ".cursor").exists()


def test_exe_as_argument_list(proj: Path, env: dict[str, str]) -> None:
    run_install("cursor", proj, env, exe=["/usr/bin/python3", "-m", "code_trajectory"])
    entry = json.loads((proj / ".cursor" / "mcp.json").read_text())["mcpServers"]["code-trajectory"]
    assert entry == {"command": "/usr/bin/python3",
                     "args": ["-m", "code_trajectory", "serve", "--project", "${workspaceFolder}"]}
    assert run_install("cursor", proj, env, exe=["/usr/bin/python3", "-m", "code_trajectory"])[0].action == "unchanged"
    assert run_uninstall("cursor", proj, env)[0].action == "removed"


def test_config_path_that_is_a_directory_is_an_error(proj: Path, env: dict[str, str]) -> None:
    (proj / ".mcp.json").mkdir()
    with pytest.raises(TrajectoryError, match="is a directory"):
        run_install("claude-code", proj, env)


def test_config_directory_that_is_a_file_is_an_error(proj: Path, env: dict[str, str]) -> None:
    (proj / ".cursor").write_text("a file")
    with pytest.raises(TrajectoryError, match="part of its directory path is a file"):
        run_install("cursor", proj, env)
    assert (proj / ".cursor").read_text() == "a file"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_directory_is_a_clear_error(proj: Path, env: dict[str, str]) -> None:
    (proj / ".cursor").mkdir()
    (proj / ".cursor").chmod(0o500)
    try:
        with pytest.raises(TrajectoryError, match="cannot write .*check the permissions"):
            run_install("cursor", proj, env)
    finally:
        (proj / ".cursor").chmod(0o700)


# --- issue 21, part 7: values we do not own keep their text, through the CLI -----------------------------------------

FOREIGN = ('{\n  "big": 1e400,\n  "one": 1.0,\n  "exp": 1E5,\n  "neg": -0,\n  "esc": "\\u00e9\\/x",\n'
           '  "lone": "\\udc00 and \\uD800",\n  "mcpServers": {\n    "other": {"command": "x", "args": ["\\ud83d\\ude00"]}\n'
           '  },\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine", "timeout": 1e1}]}]}\n}\n')
TOKENS = ("1e400", "1.0", "1E5", "-0", '"\\u00e9\\/x"', '"\\udc00 and \\uD800"', '"\\ud83d\\ude00"', "1e1")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*server_command(), *args], capture_output=True, text=True, timeout=120,
                          env=subprocess_env())


def test_install_and_uninstall_keep_the_text_of_values_they_do_not_own(proj: Path) -> None:
    mcp, settings = proj / ".mcp.json", proj / ".claude" / "settings.json"
    settings.parent.mkdir()
    for path in (mcp, settings):
        path.write_text(FOREIGN)
    done = run_cli("install", "claude-code", "--hooks", "--project", str(proj))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    for path in (mcp, settings):
        text = path.read_text()
        assert "Infinity" not in text and all(token in text for token in TOKENS), text
        assert not list(path.parent.glob(path.name + ".bak-*"))  # nothing lost, so nothing to back up
    assert "code-trajectory" in json.loads(mcp.read_text())["mcpServers"]
    done = run_cli("uninstall", "claude-code", "--project", str(proj))
    assert done.returncode == 0, done.stderr
    assert json.loads(mcp.read_text()) == json.loads(FOREIGN)
    assert all(token in mcp.read_text() for token in TOKENS)


def test_json5_beyond_jsonc_is_refused_in_one_line_and_left_as_it_was(proj: Path) -> None:
    mcp = proj / ".mcp.json"
    mcp.write_text("{'mcpServers': {}, n: 0x10}\n")
    done = run_cli("install", "claude-code", "--project", str(proj))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "JSON5" in done.stderr
    assert mcp.read_text() == "{'mcpServers': {}, n: 0x10}\n"


@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_a_config_that_is_a_fifo_or_too_large_is_an_error_not_a_hang(proj: Path, env: dict[str, str], kind: str) -> None:
    """A cloned repository's ``.mcp.json`` as a FIFO blocked install for ever; a huge one was read whole."""
    path = proj / ".mcp.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        with open(path, "wb") as handle:
            handle.truncate(jsonfile_limit() + 1)
    for dry_run in (True, False):
        with pytest.raises(TrajectoryError, match="not a regular file" if kind == "fifo" else "larger than"):
            run_install("claude-code", proj, env, dry_run=dry_run)


def jsonfile_limit() -> int:
    from code_trajectory.clients.jsonfile import MAX_CONFIG_BYTES

    return MAX_CONFIG_BYTES
