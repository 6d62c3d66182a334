"""The real Gemini CLI and Codex CLI see what ``code-trajectory install gemini|codex --hooks`` wrote.

They run where the CLIs are installed and skip, saying how to install them, otherwise. The CLIs are looked up in
the directory ``CODE_TRAJECTORY_TEST_CLIS`` names (e.g. a ``node_modules/.bin``), else on ``PATH``:

    npm install --prefix /tmp/clis @google/gemini-cli @openai/codex
    CODE_TRAJECTORY_TEST_CLIS=/tmp/clis/node_modules/.bin pytest tests/clients/test_clients_cli_list.py

Each test gets a temp ``HOME``: the CLIs read and write only there. ``code-trajectory`` is put on ``PATH`` as the
README asks, so the shared entry (run by name) starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import git_repo, server_command, subprocess_env

INSTALL_HINT = ("npm install --prefix /tmp/clis @google/gemini-cli @openai/codex, then run with "
                "CODE_TRAJECTORY_TEST_CLIS=/tmp/clis/node_modules/.bin")


def find_cli(name: str) -> str:
    """The CLI ``name`` from ``$CODE_TRAJECTORY_TEST_CLIS``, else from ``PATH``; skips the test when absent."""
    where = os.environ.get("CODE_TRAJECTORY_TEST_CLIS")
    if where:
        candidate = Path(where) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"the {name} CLI is not installed (not in CODE_TRAJECTORY_TEST_CLIS={where or '(unset)'} nor on "
                    f"PATH): {INSTALL_HINT}")
    return found


def cli_env(home: Path) -> dict[str, str]:
    env = subprocess_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                         CODE_TRAJECTORY_HOME=str(home / "ct-home"))
    env["PATH"] = os.pathsep.join([str(Path(server_command()[0]).parent), env.get("PATH", "")])
    return env


def install(client: str, project: Path, home: Path) -> str:
    proc = subprocess.run([*server_command(), "install", client, "--hooks", "--project", str(project)],
                          capture_output=True, text=True, timeout=120, env=cli_env(home))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "proj", {"app.py": "x = 1\n"}, branch="main", commit="init").resolve()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "cli-home"
    path.mkdir()
    return path


def trust(project: Path, home: Path) -> None:
    """What accepting Codex's trust prompt for ``project`` writes into the user's config.toml."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    with config.open("a") as out:
        out.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')


def codex_servers(codex: str, cwd: Path, home: Path) -> list[dict]:
    proc = subprocess.run([codex, "mcp", "list", "--json"], capture_output=True, text=True, timeout=120,
                          env=cli_env(home), cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return [s for s in json.loads(proc.stdout) if s["name"].startswith("code-trajectory")]


def test_codex_mcp_list_sees_the_server(project: Path, home: Path) -> None:
    codex = find_cli("codex")
    install("codex", project, home)
    (project / "sub").mkdir()
    assert codex_servers(codex, project / "sub", home) == []  # an untrusted project's .codex/ is not read
    trust(project, home)
    [server] = codex_servers(codex, project / "sub", home)  # the project's file, seen from a subdirectory
    assert server["enabled"] is True and server["transport"]["type"] == "stdio"
    assert (server["transport"]["command"], server["transport"]["args"]) == ("code-trajectory", ["serve"])


def test_codex_mcp_list_sees_the_local_server_anywhere(project: Path, home: Path, tmp_path: Path) -> None:
    codex = find_cli("codex")
    proc = subprocess.run([*server_command(), "install", "codex", "--local", "--project", str(project)],
                          capture_output=True, text=True, timeout=120, env=cli_env(home))
    assert proc.returncode == 0, proc.stderr
    [server] = codex_servers(codex, tmp_path, home)  # the user's file: every session, wherever it runs
    assert server["transport"]["args"][-2:] == ["--project", str(project)]  # it names the project
    assert Path(server["transport"]["command"]).name.startswith(("code-trajectory", "python"))


def codex_hooks(codex: str, project: Path, home: Path) -> dict:
    """Codex's own view of the hooks for ``project`` (its app server's ``hooks/list``, what ``/hooks`` shows)."""
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "ct-test",
                                                                                              "version": "1"}}},
                {"jsonrpc": "2.0", "method": "initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {}}]
    with subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, env=cli_env(home), cwd=project) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for request in requests:
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
            for line in proc.stdout:
                message = json.loads(line)
                if message.get("id") == 2:
                    return message["result"]
            raise AssertionError("codex app-server ended without answering hooks/list")
        finally:
            proc.kill()


def test_codex_reads_the_project_hooks_once_the_project_is_trusted(project: Path, home: Path) -> None:
    codex = find_cli("codex")
    install("codex", project, home)
    [listing] = codex_hooks(codex, project, home)["data"]
    assert listing["hooks"] == []  # an untrusted project's .codex/ is not read
    trust(project, home)
    [listing] = codex_hooks(codex, project, home)["data"]
    assert listing["warnings"] == [] and listing["errors"] == []
    hooks = {h["eventName"]: h for h in listing["hooks"]}
    assert {e: (h["command"], h["matcher"], h["timeoutSec"]) for e, h in hooks.items()} == {
        "userPromptSubmit": ("code-trajectory hook prompt --project .", None, 10),
        "postToolUse": ("code-trajectory hook edit --project .", "apply_patch", 10),
        "stop": ("code-trajectory hook stop --project .", None, 30)}
    # new project hooks wait for the user's review (/hooks) before they run: install never marks them trusted
    assert {h["source"] for h in hooks.values()} == {"project"}
    assert {h["trustStatus"] for h in hooks.values()} == {"untrusted"}


def test_gemini_mcp_list_sees_the_server_in_a_trusted_folder(project: Path, home: Path) -> None:
    gemini = find_cli("gemini")
    install("gemini", project, home)
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    proc = subprocess.run([gemini, "mcp", "list"], capture_output=True, text=True, timeout=180,
                          env=cli_env(home), cwd=project)
    assert proc.returncode == 0, proc.stderr
    # Gemini CLI prints the list through its logger, on stderr
    [line] = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "code-trajectory:" in ln]
    assert "code-trajectory serve (stdio)" in line and str(project) not in line  # shared: no --project
    # Trusted, so Gemini CLI starts it (by name, from PATH) and pings it: Connected, or Disconnected when a loaded
    # machine misses its 5 s connect-and-ping budget; never "Disabled" (what an untrusted folder shows).
    assert line.rstrip().endswith(("Connected", "Disconnected")), line
