"""The real Gemini CLI and Codex CLI list the server that ``code-trajectory install`` wrote.

These run only where the CLIs are installed (on ``PATH``), and skip with the reason otherwise. To run them:
``npm install --prefix /tmp/clis @google/gemini-cli @openai/codex`` then put ``/tmp/clis/node_modules/.bin`` first
on ``PATH`` (README, "Set up your MCP client"). Each test gets a temp ``HOME``: the CLIs read and write only there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support import git_repo, server_command, subprocess_env


def cli_env(home: Path) -> dict[str, str]:
    return subprocess_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                          CODE_TRAJECTORY_HOME=str(home / "ct-home"))


def install(client: str, project: Path, home: Path) -> None:
    proc = subprocess.run([*server_command(), "install", client, "--project", str(project)], capture_output=True,
                          text=True, timeout=120, env=cli_env(home))
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "proj", {"app.py": "x = 1\n"}, commit="init").resolve()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "cli-home"
    path.mkdir()
    return path


def test_codex_mcp_list_sees_the_server(project: Path, home: Path) -> None:
    codex = shutil.which("codex")
    if codex is None:
        pytest.skip("codex is not on PATH (npm install --prefix /tmp/clis @openai/codex)")
    install("codex", project, home)
    proc = subprocess.run([codex, "mcp", "list", "--json"], capture_output=True, text=True, timeout=120,
                          env=cli_env(home), cwd=project)
    assert proc.returncode == 0, proc.stderr
    [server] = [s for s in json.loads(proc.stdout) if s["name"] == "code-trajectory"]
    assert server["enabled"] is True and server["transport"]["type"] == "stdio"
    assert server["transport"]["args"][-2:] == ["--project", str(project)]
    assert Path(server["transport"]["command"]).name.startswith(("code-trajectory", "python"))


def test_gemini_mcp_list_sees_the_server_in_a_trusted_folder(project: Path, home: Path) -> None:
    gemini = shutil.which("gemini")
    if gemini is None:
        pytest.skip("gemini is not on PATH (npm install --prefix /tmp/clis @google/gemini-cli)")
    install("gemini", project, home)
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    proc = subprocess.run([gemini, "mcp", "list"], capture_output=True, text=True, timeout=180,
                          env=cli_env(home), cwd=project)
    assert proc.returncode == 0, proc.stderr
    # Gemini CLI prints the list through its logger, on stderr
    [line] = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "code-trajectory:" in ln]
    assert f"serve --project {project} (stdio)" in line
    # Trusted, so Gemini CLI tries to connect: Connected, or Disconnected when a loaded machine misses its 5 s
    # connect-and-ping budget; never "Disabled" (what an untrusted folder shows).
    assert line.rstrip().endswith(("Connected", "Disconnected")), line
