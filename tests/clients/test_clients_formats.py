"""install/uninstall for the clients whose file is TOML (codex), YAML (goose, continue) or JSONC with their own
entry shape (zed), on real files in temp dirs: the entry's schema, everything else kept byte for byte, a second
install writes nothing, uninstall gives the original bytes back, dry runs write nothing, hostile files are refused
in one line (never a traceback) and left as they were."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from code_trajectory.clients import install as inst
from code_trajectory.clients import jsontext
from code_trajectory.clients.registry import client
from code_trajectory.core.errors import TrajectoryError
from support import server_command, subprocess_env

EXE = "/opt/ct/bin/code-trajectory"
NOW = dt.datetime(2025, 3, 4, 5, 6, 7)

#: A realistic existing file per client: comments, other keys and servers, the client's own layout.
ORIGINAL = {
    "codex": ('# Codex settings\nmodel = "gpt-5"   # the default model\napproval_policy = "on-request"\n\n'
              '[projects."/home/me/work"]\ntrust_level = "trusted"\n\n'
              '# docs lookups\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]  # pinned\n'
              'env = { TOKEN = "x" }\n'),
    "goose": ("# goose config\nGOOSE_PROVIDER: openai   # chosen in goose configure\nGOOSE_MODEL: 'gpt-4o'\n"
              "extensions:\n  developer:\n    enabled: true\n    name: developer\n    type: builtin\n"
              "    timeout: 300\n  fetch:\n    args: [-y, \"@mcp/fetch\"]\n    cmd: npx\n    enabled: false\n"
              "    envs: {}\n    name: fetch\n    type: stdio\nGOOSE_MODE: smart_approve\n"),
    "continue": ("# our block, with a hand edit\nname: code-trajectory\nversion: 0.0.1\nschema: v1\n"
                 "mcpServers:\n- name: other\n  type: stdio\n  command: uvx\n  args:\n  - other-mcp\n"),
    "zed": ('// Zed settings\n{\n  "theme": "One Dark",\n  "ui_font_size": 16, // points\n  "context_servers": {\n'
            '    "docs": {"source": "custom", "command": "npx", "args": ["-y", "docs"]},\n  },\n}\n'),
}
NAMES = list(ORIGINAL)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "my proj"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


#: Clients whose per-user TOML file (``--local``) these tests edit: Codex's ``~/.codex/config.toml``, a file that is
#: the user's whole configuration (its shared ``.codex/config.toml`` is tested in test_clients_agent_hooks.py).
LOCAL = {"codex"}


def path_of(name: str, proj: Path, env: dict[str, str]) -> Path:
    if name in LOCAL:
        return client(name).local_config(proj, env, "linux")[0]  # type: ignore[attr-defined]
    return client(name).config_path(proj, env, "linux")


def run_install(name: str, proj: Path, env: dict[str, str], **kw) -> list[inst.Change]:
    kw.setdefault("local", name in LOCAL)
    return inst.install(name, proj, exe=kw.pop("exe", EXE), env=env, platform="linux", now=NOW, **kw)


def run_uninstall(name: str, proj: Path, env: dict[str, str], **kw) -> list[inst.Change]:
    kw.setdefault("local", name in LOCAL)
    return inst.uninstall(name, proj, env=env, platform="linux", now=NOW, **kw)


def load(name: str, text: str) -> dict:
    if name == "codex":
        return tomllib.loads(text)
    if name == "zed":
        return jsontext.loads(text)[0]  # JSONC, as Zed reads it
    return YAML(typ="rt", pure=True).load(text)  # as goose/continue would, but tolerant of unknown tags


def our_entry(name: str, text: str, proj: Path, key: str = "code-trajectory") -> dict:
    """Our entry as the client reads it, checked against the client's schema."""
    data = load(name, text)
    # Continue's block file and Zed's .zed/settings.json live in the project and are shared: no machine path, the
    # server follows the client's working directory
    args = ["serve"] if name in ("continue", "zed") else ["serve", "--project", str(proj)]
    if name == "codex":
        entry = data["mcp_servers"][key]
        assert entry == {"command": EXE, "args": args}
    elif name == "goose":
        entry = data["extensions"][key]
        assert {k: entry[k] for k in ("enabled", "type", "name", "cmd", "args", "timeout")} == {
            "enabled": True, "type": "stdio", "name": key, "cmd": EXE, "args": args, "timeout": 300}
    elif name == "continue":
        assert (data["name"], data["schema"]) == ("code-trajectory", "v1") and data["version"]
        [entry] = [s for s in data["mcpServers"] if s["name"] == key]
        assert entry == {"name": key, "type": "stdio", "command": EXE, "args": args}
    else:
        entry = data["context_servers"][key]
        assert entry == {"source": "custom", "command": EXE, "args": args}
    return entry


def only_additions(before: str, after: str) -> bool:
    """Whether ``after`` is ``before`` with lines inserted and none removed or changed."""
    diff = difflib.ndiff(before.splitlines(keepends=True), after.splitlines(keepends=True))
    return not any(line.startswith("- ") for line in diff)


def write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def test_locations_per_os(proj: Path) -> None:
    unix = {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}
    win = {"USERPROFILE": r"C:\Users\me", "APPDATA": r"C:\Users\me\AppData\Roaming"}
    expect = {
        "gemini": [proj / ".gemini/settings.json"] * 3,
        "codex": [proj / ".codex/config.toml"] * 3,
        "windsurf": [Path("/h/.codeium/windsurf/mcp_config.json")] * 2
        + [Path(win["USERPROFILE"]) / ".codeium" / "windsurf" / "mcp_config.json"],
        "zed": [proj / ".zed/settings.json"] * 3,
        "cline": [Path("/x/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
                  Path("/h/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/"
                       "cline_mcp_settings.json"),
                  Path(win["APPDATA"]) / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
                  / "cline_mcp_settings.json"],
        "continue": [proj / ".continue/mcpServers/code-trajectory.yaml"] * 3,
        "goose": [Path("/x/goose/config.yaml")] * 2 + [Path(win["APPDATA"]) / "Block" / "goose" / "config"
                                                        / "config.yaml"],
    }
    for name, (linux, mac, windows) in expect.items():
        c = client(name)
        assert (c.config_path(proj, unix, "linux"), c.config_path(proj, unix, "darwin"),
                c.config_path(proj, win, "win32")) == (linux, mac, windows), name
    codex_user = client("codex").local_config  # type: ignore[attr-defined]  # install codex --local
    assert [codex_user(proj, env, plat)[0] for env, plat in ((unix, "linux"), (unix, "darwin"), (win, "win32"))] == \
        [Path("/h/.codex/config.toml")] * 2 + [Path(win["USERPROFILE"]) / ".codex" / "config.toml"]
    assert codex_user(proj, {"CODEX_HOME": "/c", "HOME": "/h"}, "linux")[0] == Path("/c/config.toml")
    zed_user = client("zed").local_config  # type: ignore[attr-defined]  # install zed --local: the user's file
    assert [zed_user(proj, env, plat)[0] for env, plat in ((unix, "linux"), (unix, "darwin"), (win, "win32"))] == \
        [Path("/x/zed/settings.json")] * 2 + [Path(win["APPDATA"]) / "Zed" / "settings.json"]
    assert zed_user(proj, {"HOME": "/h"}, "linux") == (Path("/h/.config/zed/settings.json"), ("context_servers",))


@pytest.mark.parametrize("name", NAMES)
def test_created_from_nothing_then_removed(name: str, proj: Path, env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    [change] = run_install(name, proj, env)
    assert (change.action, change.path, change.backup) == ("created", path, None)
    our_entry(name, path.read_text(), proj)
    [change] = run_uninstall(name, proj, env)
    assert change.action == "removed"
    assert not path.exists()  # a file install created goes (Continue's block file is ours alone anyway)


@pytest.mark.parametrize("name", NAMES)
def test_install_keeps_everything_else_byte_for_byte(name: str, proj: Path, env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    original = ORIGINAL[name]
    write(path, original)
    [change] = run_install(name, proj, env)
    assert (change.action, change.backup, change.note) == ("updated", None, None)
    after = path.read_text()
    our_entry(name, after, proj)
    assert only_additions(original, after), after
    assert not list(path.parent.glob(path.name + ".bak-*"))

    # a second install changes no byte (nor the mtime)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    [again] = run_install(name, proj, env)
    assert again.action == "unchanged" and path.read_text() == after
    assert path.stat().st_mtime_ns == 1_000_000_000

    # uninstall removes only our entry: the original bytes come back
    [removed] = run_uninstall(name, proj, env)
    assert removed.action == "removed"
    assert path.read_bytes() == original.encode("utf-8")
    [nothing] = run_uninstall(name, proj, env)
    assert nothing.action == "absent" and path.read_bytes() == original.encode("utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_crlf_and_final_newlines_kept(name: str, proj: Path, env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    original = ORIGINAL[name].replace("\n", "\r\n") + "\r\n"
    write(path, original)
    run_install(name, proj, env)
    after = path.read_bytes().decode()
    assert "\n" not in after.replace("\r\n", "")
    our_entry(name, after.replace("\r\n", "\n"), proj)
    assert after.endswith("\r\n\r\n") and not after.endswith("\r\n\r\n\r\n")
    run_uninstall(name, proj, env)
    assert path.read_bytes().decode() == original


@pytest.mark.parametrize("name", NAMES)
def test_new_exe_updates_entry_in_place(name: str, proj: Path, env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    write(path, ORIGINAL[name])
    run_install(name, proj, env, exe="/old/code-trajectory")
    [change] = run_install(name, proj, env)
    assert change.action == "updated"
    our_entry(name, path.read_text(), proj)
    assert path.read_text().count("code-trajectory serve") == 0 and "/old/" not in path.read_text()


@pytest.mark.parametrize("name", NAMES)
def test_dry_run_prints_a_diff_and_writes_nothing(name: str, proj: Path, env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    write(path, ORIGINAL[name])
    before = {p: p.read_bytes() for p in path.parent.iterdir()}
    changes = run_install(name, proj, env, dry_run=True)
    assert changes[0].action == "updated" and changes[0].dry_run
    assert f"+++ {path}" in changes[0].diff and EXE in changes[0].diff
    assert "dry run: nothing written" in inst.render(changes)
    assert {p: p.read_bytes() for p in path.parent.iterdir()} == before
    run_install(name, proj, env)
    installed = path.read_bytes()
    changes = run_uninstall(name, proj, env, dry_run=True)
    assert changes[0].action == "removed" and path.read_bytes() == installed
    assert any(line.startswith("-") and EXE in line for line in changes[0].diff.splitlines())


def test_foreign_server_with_our_name_is_kept(proj: Path, env: dict[str, str]) -> None:
    """A per-user file whose ``code-trajectory`` runs something else: ours gets the project's name beside it."""
    path = path_of("goose", proj, env)
    foreign = "extensions:\n  code-trajectory:\n    cmd: /usr/bin/other\n    args: [serve]\n    type: stdio\n"
    write(path, foreign)
    [change] = run_install("goose", proj, env)
    assert change.what == 'server "code-trajectory-my-proj"'
    our_entry("goose", path.read_text(), proj, key="code-trajectory-my-proj")
    run_uninstall("goose", proj, env)
    assert path.read_text() == foreign


def test_zed_old_shape_is_recognised_and_rewritten(proj: Path, env: dict[str, str]) -> None:
    path = path_of("zed", proj, env)
    old = {"command": {"path": "/old/code-trajectory", "args": ["serve", "--project", str(proj)], "env": {}}}
    original = "// Zed settings\n" + json.dumps({"vim_mode": True, "context_servers": {"code-trajectory": old}},
                                                indent=2) + "\n"
    write(path, original)
    [change] = run_install("zed", proj, env)
    assert change.action == "updated" and change.backup is None
    text = path.read_text()
    assert text.startswith("// Zed settings\n") and "/old/" not in text
    data = load("zed", text)
    assert data["vim_mode"] is True and list(data["context_servers"]) == ["code-trajectory"]
    our_entry("zed", text, proj)


def install_over_a_backup(name: str, original: str, proj: Path, env: dict[str, str], note: str) -> tuple[Path, str]:
    """Install ``name`` over its file holding ``original``, which cannot be kept as it is; checks that the file was
    backed up first, that the change's note says ``note`` and that our entry is in. Returns the file and the note."""
    path = path_of(name, proj, env)
    write(path, original)
    [change] = run_install(name, proj, env)
    assert change.backup is not None and change.backup.read_text() == original
    assert note in change.note
    our_entry(name, path.read_text(), proj)
    return path, change.note


def test_json_that_cannot_be_spliced_is_rewritten_after_a_backup(proj: Path, env: dict[str, str]) -> None:
    """A repeated key: the text cannot be edited in place, so the whole file is written anew, after a backup."""
    path, note = install_over_a_backup("zed", '// mine\n{"theme": "a", "theme": "b"}\n', proj, env,
                                       "repeats the key 'theme'")
    assert "comments" in note
    assert load("zed", path.read_text())["theme"] == "b"


def test_lossy_yaml_layout_is_backed_up_first(proj: Path, env: dict[str, str]) -> None:
    """YAML that ruamel.yaml lays out differently (4-space sequence indent, a document marker): backup, then write."""
    original = "---\nextensions:\n    fetch:\n        args:\n            - -y\n        cmd: npx\n"
    path, _ = install_over_a_backup("goose", original, proj, env, "round-tripping")
    assert load("goose", path.read_text())["extensions"]["fetch"] == {"args": ["-y"], "cmd": "npx"}


def test_servers_key_of_the_wrong_type_is_replaced_with_a_backup(proj: Path, env: dict[str, str]) -> None:
    path, _ = install_over_a_backup("codex", 'model = "o3"\nmcp_servers = 3\n', proj, env,
                                    '"mcp_servers" held a int')
    assert tomllib.loads(path.read_text())["model"] == "o3"


HOSTILE = [
    ("codex", 'model = "o3"\n[mcp_servers.a\ncommand = "x"\n', "is not valid TOML"),
    ("codex", 'a = 1\na = 2\n', "is not valid TOML"),
    ("codex", "x = " + "[" * 5000 + "]" * 5000 + "\n", "is not valid TOML"),
    ("codex", b"model = \"\xff\"\n", "is not UTF-8 text"),
    ("goose", "extensions: [unclosed\n", "is not valid YAML"),
    ("goose", "a: 1\n---\nb: 2\n", "several documents"),
    ("goose", "a: 1\na: 2\n", "is not valid YAML"),
    ("goose", "- just\n- a list\n", "not a mapping"),
    ("goose", "a: &a [x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\n"
              "other: !!python/object/apply:os.system [echo hi]\n", "YAML"),
    ("continue", "name: x\nmcpServers: {a: [\n", "is not valid YAML"),
    # a "billion laughs": 9^12 values once expanded (comparing the rewrite's meaning walked them for hours)
    ("continue", "name: x\na0: &a0 [" + ", ".join(["lol"] * 9) + "]\n"
     + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 12))
     + "mcpServers:\n  - name: other\n    command: other\n    args: *a11\n", "once its aliases are expanded"),
]


@pytest.mark.parametrize("name,content,reason", HOSTILE)
def test_hostile_files_are_refused_in_one_line_and_left_alone(name: str, content: str | bytes, reason: str,
                                                              proj: Path, env: dict[str, str]) -> None:
    path = path_of(name, proj, env)
    write(path, content)
    raw = path.read_bytes()
    try:
        changes = run_install(name, proj, env)
    except TrajectoryError as exc:
        message = str(exc)
        assert "\n" not in message and reason in message and str(path) in message
        assert "left as it was" in message
    else:  # well-formed YAML with aliases and a python tag: kept as text (never expanded nor run), our entry added
        assert changes[0].action == "updated"
        after = path.read_text()
        assert only_additions(raw.decode(), after) and "!!python/object/apply:os.system [echo hi]" in after
        our_entry(name, after, proj)
        run_uninstall(name, proj, env)
        assert path.read_bytes() == raw  # as it was before install (the ledger's bytes), aliases and tag as text
        return
    assert path.read_bytes() == raw and not list(path.parent.glob(path.name + ".bak-*"))
    [change] = run_uninstall(name, proj, env)  # uninstall never touches it either
    assert change.action == "unchanged" and reason in change.note and path.read_bytes() == raw


def test_toml_the_editor_would_corrupt_is_refused(proj: Path, env: dict[str, str]) -> None:
    """Dotted keys defining the servers table: tomlkit would attach ``docs.args`` to our table; checked with
    tomllib, refused, file untouched."""
    path = path_of("codex", proj, env)
    original = 'model = "o3"\nmcp_servers.docs.command = "npx"\nmcp_servers.docs.args = ["-y"]\n\n[tui]\nx = 1\n'
    write(path, original)
    with pytest.raises(TrajectoryError, match="would change what other settings mean") as exc:
        run_install("codex", proj, env)
    assert "\n" not in str(exc.value) and path.read_text() == original


def test_two_projects_in_one_per_user_file(tmp_path: Path, env: dict[str, str]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    path = path_of("codex", one, env)
    write(path, ORIGINAL["codex"])
    assert run_install("codex", one, env)[0].what == 'server "code-trajectory"'
    assert run_install("codex", two, env)[0].what == 'server "code-trajectory-two"'
    servers = tomllib.loads(path.read_text())["mcp_servers"]
    assert [servers[n]["args"][-1] for n in ("code-trajectory", "code-trajectory-two")] == [str(one), str(two)]
    assert run_uninstall("codex", two, env)[0].what == 'server "code-trajectory-two"'
    run_uninstall("codex", one, env)
    assert path.read_text() == ORIGINAL["codex"]


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*server_command(), *args], capture_output=True, text=True, timeout=120,
                          env=subprocess_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config")))


def test_cli_install_codex_and_goose_then_refuse_a_broken_file(proj: Path, tmp_path: Path) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    config = home / ".codex" / "config.toml"
    write(config, ORIGINAL["codex"])
    proc = run_cli("install", "codex", "--local", "--project", str(proj), "--dry-run", home=home)
    assert proc.returncode == 0 and "+[mcp_servers.code-trajectory]" in proc.stdout
    assert config.read_text() == ORIGINAL["codex"]
    proc = run_cli("install", "codex", "--local", "--project", str(proj), home=home)
    assert proc.returncode == 0, proc.stderr
    assert f'codex server "code-trajectory": created in {config}' not in proc.stdout  # the file existed
    assert f"updated in {config}" in proc.stdout and "codex mcp list" in proc.stdout
    assert tomllib.loads(config.read_text())["mcp_servers"]["code-trajectory"]["args"][-1] == str(proj)

    goose = home / ".config" / "goose" / "config.yaml"
    write(goose, "extensions: {broken\n")
    proc = run_cli("install", "goose", "--project", str(proj), home=home)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "is not valid YAML" in proc.stderr and goose.read_text() == "extensions: {broken\n"


def test_a_toml_config_changed_while_being_edited_is_edited_again(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """As for JSON (test_clients_jsonfile.py): Codex rewriting its config.toml between our read and our write keeps
    its change, and ours is added to it."""
    from code_trajectory.clients import docfile

    path = tmp_path / "config.toml"
    path.write_text('model = "a"\n')
    real_diff = docfile.unified_diff
    writes = iter(['model = "b"\n'])

    def diff_while_the_client_writes(*args: object) -> str:
        text = next(writes, None)
        if text is not None:
            path.write_text(text)
        return real_diff(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(docfile, "unified_diff", diff_while_the_client_writes)
    result = docfile.edit(path, docfile.TOML, lambda doc: doc.update(mcp_servers={"x": {"command": "y"}}))
    assert result.action == "updated"
    assert tomllib.loads(path.read_text()) == {"model": "b", "mcp_servers": {"x": {"command": "y"}}}


@pytest.mark.parametrize("content,where", [('model = "o3"\nmcp_servers = [\n', "at end of document"),
                                           ('[mcp_servers.a\ncommand = "x"\n', "at line 1, column 15")])
def test_invalid_toml_is_placed_where_it_is(content: str, where: str, proj: Path, env: dict[str, str]) -> None:
    """Reported: an array left open at the end of config.toml was refused with tomlkit's "Unexpected character:
    '\\x00' at line 1 col 0", which points at neither the character nor the line."""
    path = path_of("codex", proj, env)
    write(path, content)
    with pytest.raises(TrajectoryError) as caught:
        run_install("codex", proj, env)
    message = str(caught.value)
    assert "is not valid TOML" in message and where in message and "\\x00" not in message, message
    assert path.read_text() == content
