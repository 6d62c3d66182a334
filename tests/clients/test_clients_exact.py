"""Issue 24: uninstall is the exact inverse of install (created files go, edited files get their bytes back), and
install's own writes in a recorded project are recorded as set-up, not as the agent's work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from code_trajectory.clients import install as inst
from code_trajectory.clients.registry import CLIENTS, client
from code_trajectory.git import log
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.history.headings import why
from support import shadow_count, wait_for, watching, write

EXE = "/opt/ct/bin/code-trajectory"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home)}


def tree(*roots: Path) -> dict[str, bytes | None]:
    """Every path under ``roots`` with its bytes (None for directories), ``.trajectory`` left out."""
    return {str(p): (None if p.is_dir() else p.read_bytes()) for root in roots for p in sorted(root.rglob("*"))
            if ".trajectory" not in p.parts}


def both(name: str, proj: Path, env: dict[str, str], **kw) -> None:
    hooks = {"hooks": True} if name == "claude-code" else {}
    changes = inst.install(name, proj, exe=EXE, env=env, platform="linux", **hooks, **kw)
    assert all(c.action in ("created", "updated") for c in changes), changes
    changes = inst.uninstall(name, proj, env=env, platform="linux", **kw)
    assert all(c.action == "removed" for c in changes), changes


@pytest.mark.parametrize("name", list(CLIENTS))
def test_created_files_go_away_with_their_directories(name: str, project: Path, env: dict[str, str]) -> None:
    before = tree(project, Path(env["HOME"]))
    both(name, project, env)
    assert tree(project, Path(env["HOME"])) == before


#: Files in styles a rewrite would change: compact, tabs, CRLF without final newline, odd key order, JSONC.
STYLES = {
    "compact": b'{"z":1,"mcpServers":{"other":{"command":"x","args":["1e5"]}},"a":[1,2]}',
    "tabs": b'{\n\t"mcpServers": {\n\t\t"other": {"command": "x"}\n\t},\n\t"n": 1.50\n}\n',
    "crlf": b'{\r\n    "b": "\\u00e9",\r\n    "mcpServers": {}\r\n}',
    "jsonc": b'// team servers\n{\n  "mcpServers": {\n    "other": {"command": "x",}, // trailing\n  },\n}\n',
}


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("name", ["claude-code", "cursor", "vscode", "claude-desktop"])
def test_edited_files_get_their_bytes_back(name: str, style: str, project: Path, env: dict[str, str]) -> None:
    path = client(name).config_path(project, env, "linux")
    path.parent.mkdir(parents=True, exist_ok=True)
    content = STYLES[style].replace(b"mcpServers", client(name).servers_key.encode())
    path.write_bytes(content)
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_bytes(b'{"permissions":{"allow":["Bash(ls)"]},\n "hooks": {"Stop": []}}')
    before = tree(project, Path(env["HOME"]))
    both(name, project, env)
    assert tree(project, Path(env["HOME"])) == before  # backups made by install removed below, if any
    assert path.read_bytes() == content


def test_a_file_changed_since_install_keeps_the_change(project: Path, env: dict[str, str]) -> None:
    inst.install("cursor", project, exe=EXE, env=env, platform="linux")
    path = project / ".cursor" / "mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["mine"] = {"command": "mine"}
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert inst.uninstall("cursor", project, env=env, platform="linux")[0].action == "removed"
    assert json.loads(path.read_text()) == {"mcpServers": {"mine": {"command": "mine"}}}


def test_local_scope_is_per_user_and_undone_exactly(project: Path, env: dict[str, str]) -> None:
    claude_json = Path(env["HOME"]) / ".claude.json"
    original = b'{\n  "numStartups": 3,\n  "projects": {\n    "/elsewhere": {\n      "mcpServers": {}\n    }\n  }\n}'
    claude_json.write_bytes(original)
    before = tree(project, Path(env["HOME"]))
    changes = inst.install("claude-code", project, exe=EXE, env=env, platform="linux", hooks=True, local=True)
    assert [c.path for c in changes] == [claude_json, project / ".claude" / "settings.local.json"]
    entry = json.loads(claude_json.read_text())["projects"][str(project)]["mcpServers"]["code-trajectory"]
    assert entry == {"type": "stdio", "command": EXE, "args": ["serve", "--project", str(project)]}
    assert not (project / ".mcp.json").exists() and not (project / ".claude" / "settings.json").exists()
    assert "to undo: code-trajectory uninstall claude-code" in inst.render(changes) and "--local" in inst.render(
        changes)
    changes = inst.uninstall("claude-code", project, env=env, platform="linux", local=True)
    assert [c.action for c in changes] == ["removed", "removed"]
    assert tree(project, Path(env["HOME"])) == before


def test_local_applies_to_claude_code_and_zed_only(project: Path, env: dict[str, str]) -> None:
    from code_trajectory.core.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="--local applies to claude-code, codex and zed only"):
        inst.install("cursor", project, exe=EXE, env=env, platform="linux", local=True)


def newest(root: Path, limit: int = 10) -> list[log.CommitRecord]:
    with ShadowRepo(root) as repo:
        return log.read_log(repo, ["refs/heads/shadow/main"], limit=limit)


def test_install_in_a_watched_project_is_recorded_as_set_up(project: Path, env: dict[str, str]) -> None:
    with watching(project) as session:
        session.set_intent("Fix the login bug")
        base = shadow_count(project)
        inst.install("claude-code", project, exe=EXE, env=env, platform="linux", hooks=True)
        write(project, "src/app.py", "def main():\n    return 2\n")  # the agent's work, after the set-up
        wait_for(lambda: shadow_count(project) >= base + 2, timeout=30)  # the set-up, then the work
        inst.uninstall("claude-code", project, env=env, platform="linux")
        write(project, "src/app.py", "def main():\n    return 3\n")
        wait_for(lambda: shadow_count(project) >= base + 4, timeout=30)
    records = newest(project, limit=shadow_count(project) - base)
    setup = [r for r in records if any(c.path in (".mcp.json", ".claude/settings.json") for c in r.changes)]
    assert [r.origin for r in setup] == [{"client": "code-trajectory", "tool": "uninstall claude-code"},
                                         {"client": "code-trajectory", "tool": "install claude-code"}]
    assert all(r.intent is None for r in setup)
    work = [r for r in records if r not in setup]
    assert work and all(r.intent == "Fix the login bug" and r.origin is None for r in work)
    assert all(c.path == "src/app.py" for r in work for c in r.changes)
    # the log and the session summary said "no intent set" for it: they say whose write it is
    assert [why(r) for r in setup] == ["edited by code-trajectory (uninstall claude-code)",
                                       "edited by code-trajectory (install claude-code)"]


#: TOML and YAML files install must rewrite beyond our entry (after a backup): a value that is not a table, a
#: layout ruamel.yaml does not reproduce (4-space indents, spaces after a colon).
REWRITTEN = {
    "codex": ("codex", b'mcp_servers = "none"  # later\n'),
    "goose": ("goose", b'extensions:\n    developer:\n        enabled: true\n        type: builtin\n'
                       b'GOOSE_MODEL:   "gpt"\n'),
}


@pytest.mark.parametrize("case", list(REWRITTEN))
def test_a_toml_or_yaml_file_install_rewrote_gets_its_bytes_back(case: str, project: Path,
                                                                 env: dict[str, str]) -> None:
    """Reported: uninstall gave back the rewritten layout (YAML) or an empty file (``mcp_servers = "none"``: the
    value install replaced was gone), with install's backup left beside it, though the file held exactly what
    install wrote and the ledger had its bytes."""
    name, content = REWRITTEN[case]
    env = {**env, "XDG_CONFIG_HOME": str(Path(env["HOME"]) / ".config")}
    path = client(name).config_path(project, env, "linux")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    before = tree(project, Path(env["HOME"]))
    changes = inst.install(name, project, exe=EXE, env=env, platform="linux")
    assert changes[0].backup is not None, changes  # a lossy rewrite, backed up first
    assert inst.uninstall(name, project, env=env, platform="linux")[0].action == "removed"
    assert path.read_bytes() == content
    assert tree(project, Path(env["HOME"])) == before  # the backups went with the exact bytes


def test_uninstall_of_one_project_keeps_another_projects_entry_in_a_rewritten_yaml(tmp_path: Path, project: Path,
                                                                                    env: dict[str, str]) -> None:
    env = {**env, "XDG_CONFIG_HOME": str(Path(env["HOME"]) / ".config")}
    path = client("goose").config_path(project, env, "linux")
    path.parent.mkdir(parents=True)
    path.write_bytes(REWRITTEN["goose"][1])
    other = tmp_path / "other"
    other.mkdir()
    inst.install("goose", other, exe=EXE, env=env, platform="linux")
    inst.install("goose", project, exe=EXE, env=env, platform="linux")
    inst.uninstall("goose", project, env=env, platform="linux")
    text = path.read_text()
    assert str(other) in text and str(project) not in text and "developer" in text
