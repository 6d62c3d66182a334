"""The file layer (JSONC stripping, indent, backup, atomic write) and the recognition of our entries."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from code_trajectory.clients import base, jsonfile
from code_trajectory.clients.changed import EDIT_TRIES
from code_trajectory.core.errors import InvalidArgumentError, TrajectoryError

# --- JSONC -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ('{"a": 1, // one\n"b": 2}', {"a": 1, "b": 2}),
    ('/* head */ {"a": /* in */ [1, 2,], }', {"a": [1, 2]}),
    ('{"url": "http://x//y", "c": "/* not */", "q": "say \\"//hi\\"", "z": 1,}',
     {"url": "http://x//y", "c": "/* not */", "q": 'say "//hi"', "z": 1}),
    ('{"s": "a,}", "t": "b\\\\", "u": [",]",],}', {"s": "a,}", "t": "b\\", "u": [",]"]}),
    ('{"a": {"b": [1, {"c": 2,},],},}', {"a": {"b": [1, {"c": 2}]}}),
    ('{"a": 1 , /* x */\n}', {"a": 1}),
])
def test_jsonc_is_read_and_needs_a_backup(tmp_path: Path, text: str, expected: object) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    loaded = jsonfile.read(path)
    assert loaded.data == expected
    assert loaded.problem is not None and "comments or trailing commas" in loaded.problem


def test_jsonc_repeated_key_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1, // one\n"a": 2}')
    loaded = jsonfile.read(path)
    assert loaded.data == {"a": 2} and "repeats the key 'a'" in loaded.problem


def test_unclosed_comment_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1 /* open')
    loaded = jsonfile.read(path)
    assert loaded.data is None and "is not valid JSON" in loaded.problem


def test_plain_json_needs_no_backup(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": "// b"}')
    loaded = jsonfile.read(path)
    assert loaded.data == {"a": "// b"} and loaded.problem is None


def test_empty_file_reads_as_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text("  \n")
    loaded = jsonfile.read(path)
    assert loaded.data == {} and loaded.problem is None and loaded.exists


@pytest.mark.parametrize("text,indent", [
    ('{\n  "a": 1\n}', 2), ('{\n    "a": 1\n}', 4), ('{\n\t"a": 1\n}', "\t"), ('{"a": 1}', 2), ("", 2),
])
def test_detect_indent(text: str, indent: int | str) -> None:
    assert jsonfile.detect_indent(text) == indent


# --- backup and atomic write --------------------------------------------------------------------


def test_backup_names_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("v1")
    path.chmod(0o640)
    now = dt.datetime(2024, 12, 31, 23, 59, 58)
    first = jsonfile.backup(path, now)
    path.write_text("v2")
    second = jsonfile.backup(path, now)
    assert first.name == "c.json.bak-20241231-235958" and first.read_text() == "v1"
    assert second.name == "c.json.bak-20241231-235958-1" and second.read_text() == "v2"
    assert stat.S_IMODE(first.stat().st_mode) == 0o640


def test_atomic_write_creates_parents_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c.json"
    jsonfile.atomic_write(path, "{}\n")
    assert path.read_text() == "{}\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    path.chmod(0o600)
    jsonfile.atomic_write(path, '{"x": 1}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == '{"x": 1}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == ["c.json"]


def test_edit_without_change_does_not_write(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a":1}')  # not in our style: still not rewritten when nothing changes
    os.utime(path, ns=(5_000_000_000, 5_000_000_000))
    result = jsonfile.edit(path, lambda data: None)
    assert result.action == "unchanged" and path.read_text() == '{"a":1}'
    assert path.stat().st_mtime_ns == 5_000_000_000


def test_edit_never_writes_over_a_change_made_between_its_read_and_its_write(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A running client rewrites its config (Claude Code its ``~/.claude.json``) while install edits it: the edit
    starts again from the client's text, so the client's change is kept (a client rewriting ``.mcp.json`` every 2 ms
    lost 156 of 3,000 keys to 15 installs and uninstalls); when it keeps changing, the edit gives up, writing nothing."""
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}\n')
    writes = iter(['{"a": 1, "client": 2}\n'])
    real_splice = jsonfile.jsonsplice.splice

    def splice_while_the_client_writes(*args: object, **kwargs: object) -> str | None:
        text = next(writes, None)
        if text is not None:
            path.write_text(text)
        return real_splice(*args, **kwargs)

    def add(data: dict) -> None:
        data["ours"] = True

    monkeypatch.setattr(jsonfile.jsonsplice, "splice", splice_while_the_client_writes)
    assert jsonfile.edit(path, add).action == "updated"
    assert json.loads(path.read_text()) == {"a": 1, "client": 2, "ours": True}
    writes = iter(f'{{"client": {n}}}\n' for n in range(EDIT_TRIES))
    with pytest.raises(TrajectoryError, match=f"changed {EDIT_TRIES} times while being edited"):
        jsonfile.edit(path, lambda data: data.update(more=True))
    assert json.loads(path.read_text()) == {"client": EDIT_TRIES - 1}


def test_edit_absent_and_unchanged_creates_nothing(tmp_path: Path) -> None:
    result = jsonfile.edit(tmp_path / "d" / "c.json", lambda data: None)
    assert result.action == "absent" and not (tmp_path / "d").exists()


def test_unified_diff_labels() -> None:
    diff = jsonfile.unified_diff(Path("/p/x.json"), None, "{}\n")
    assert diff.splitlines()[:3] == ["--- /dev/null", "+++ /p/x.json", "@@ -0,0 +1 @@"]
    diff = jsonfile.unified_diff(Path("/p/x.json"), "{}", '{"a": 1}\n')
    assert "\\ No newline at end of file" in diff


# --- which entries are ours ---------------------------------------------------------------------


@pytest.mark.parametrize("entry,ours", [
    ({"command": "/v/bin/code-trajectory", "args": ["serve", "--project", "/p"]}, True),
    ({"command": "code-trajectory", "args": ["serve"]}, True),
    ({"command": "C:\\venv\\Scripts\\code-trajectory.exe", "args": ["serve", "--project", "C:\\p"]}, True),
    ({"command": "/usr/bin/python3", "args": ["-m", "code_trajectory", "serve", "--project", "/p"]}, True),
    ({"command": "uvx", "args": ["--from", "code-trajectory-mcp", "code-trajectory", "serve"]}, True),
    ({"type": "stdio", "command": "/v/bin/code-trajectory", "args": ["serve"], "env": {"A": "1"}}, True),
    ({"command": "/v/bin/code-trajectory", "args": ["watch", "/p"]}, False),
    ({"command": "node", "args": ["code-trajectory.js", "serve"]}, False),
    ({"command": "npx", "args": ["-y", "other-server", "serve"]}, False),
    ({"url": "https://example.invalid/mcp"}, False),
    ({"command": "/v/bin/code-trajectory", "args": "serve"}, False),
    (["code-trajectory", "serve"], False),
])
def test_is_our_server(entry: object, ours: bool) -> None:
    assert base.is_our_server(entry) is ours


def test_server_project() -> None:
    assert base.server_project({"command": "code-trajectory", "args": ["serve", "--project", "/p"]}) == "/p"
    assert base.server_project({"command": "code-trajectory", "args": ["serve", "--project=/q"]}) == "/q"
    assert base.server_project({"command": "code-trajectory", "args": ["serve"]}) is None
    assert base.server_project({"command": "other", "args": ["serve", "--project", "/p"]}) is None


@pytest.mark.parametrize("command,kind", [
    ("/v/bin/code-trajectory hook prompt --project /p", "prompt"),
    ("'/my tools/code-trajectory' hook edit --project '/a b'", "edit"),
    ("/usr/bin/python3 -m code_trajectory hook stop --project /p", "stop"),
    ("/usr/bin/python3 -P -m code_trajectory hook stop --project /p", "stop"),
    ("/v/bin/code-trajectory hook other --project /p", None),
    ("/v/bin/code-trajectory serve --project /p", None),
    ("echo code-trajectory", None),
    ("unbalanced 'quote", None),
    (42, None),
])
def test_our_hook_kind(command: object, kind: str | None) -> None:
    assert base.our_hook_kind(command) == kind


def test_default_exe_prefers_the_script_beside_the_interpreter(tmp_path: Path) -> None:
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    python = bindir / "python"
    python.write_text("")
    assert base.default_exe(str(python), which=lambda name: "/elsewhere/code-trajectory") == \
        ["/elsewhere/code-trajectory"]
    (bindir / "code-trajectory").write_text("")
    assert base.default_exe(str(python), which=lambda name: None) == [str(bindir / "code-trajectory")]


def test_default_exe_falls_back_to_python_dash_m(tmp_path: Path) -> None:
    python = tmp_path / "python"
    assert base.default_exe(str(python), which=lambda name: None) == [str(python), "-P", "-m", "code_trajectory"]


def test_default_exe_of_this_environment_runs_this_installation() -> None:
    argv = base.default_exe()
    assert os.path.isabs(argv[0])
    script = Path(sys.executable).parent / "code-trajectory"
    if script.is_file():
        assert argv == [str(Path(os.path.abspath(sys.executable)).parent / "code-trajectory")]


def test_empty_exe_is_rejected() -> None:
    with pytest.raises(InvalidArgumentError, match="executable is empty"):
        base.exe_argv([])


def test_atomic_write_failure_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where a directory should be")
    with pytest.raises(TrajectoryError, match="cannot write .*blocker/c.json"):
        jsonfile.atomic_write(tmp_path / "blocker" / "c.json", "{}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


def test_jsontext_keeps_source_text_and_refuses_deep_nesting() -> None:
    from code_trajectory.clients import jsontext

    text = '{"a": 1e400, "b": [1E5, -0, 1.0], "c": "\\u00e9\\udc00", "a": 2}'
    dup: list[str] = []
    value, extensions = jsontext.loads(text, dup)
    assert dup == ["a"] and not extensions and list(value) == ["a", "b", "c"] and value["a"] == 2
    value["new"] = "\udc00 ours"  # a value created after reading, with a lone surrogate: escaped, never a crash
    out = jsontext.dumps(value)
    assert '"b": [\n    1E5,\n    -0,\n    1.0\n  ]' in out and '"\\u00e9\\udc00"' in out and '"\\udc00 ours"' in out
    out.encode("utf-8")
    with pytest.raises(jsontext.JSONTextError):
        jsontext.loads("[" * 100_000)
