"""The server as the MCP Inspector CLI sees it (an independent, TypeScript MCP client).

The Inspector is found, in order:

1. ``$MCP_INSPECTOR``: path of an ``mcp-inspector`` executable;
2. ``.ci/node/node_modules/.bin/mcp-inspector``: the pinned local install made by ``.ci/run``::

       npm install --prefix .ci/node --save-exact --no-audit --no-fund \\
           @modelcontextprotocol/inspector@2.12.0

3. ``npx -y @modelcontextprotocol/inspector@2.12.0`` with its npm cache in ``.ci/node/npm-cache``
   (gitignored): about 17 s the first time (download), about 3.5 s afterwards.

The test is skipped when none is available (no ``npx`` on PATH). The Inspector
2.12 declares ``node >= 22.19`` but works on Node 20 (npm prints EBADENGINE
warnings). It writes its catalog under ``$HOME/.mcp-inspector``, so it runs with
a temporary HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import REPO_ROOT, server_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # the Inspector (Node) starts per test: 8-20 s each

INSPECTOR_VERSION = "2.12.0"
INSPECTOR_PACKAGE = f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
REPO = REPO_ROOT
LOCAL_INSPECTOR = REPO / ".ci" / "node" / "node_modules" / ".bin" / "mcp-inspector"
NPM_CACHE = REPO / ".ci" / "node" / "npm-cache"
TRAJECTORY_TOOLS = {"configure_project", "set_trajectory_intent", "get_file_trajectory", "get_global_trajectory",
                    "get_session_summary", "consolidate", "checkpoint"}


def _inspector() -> list[str] | None:
    override = os.environ.get("MCP_INSPECTOR")
    if override:
        return [override]
    if LOCAL_INSPECTOR.is_file() and os.access(LOCAL_INSPECTOR, os.X_OK):
        return [str(LOCAL_INSPECTOR)]
    npx = shutil.which("npx")
    if npx:
        return [npx, "-y", INSPECTOR_PACKAGE]
    return None




def _git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    command = _inspector()
    if command is None:
        pytest.skip("MCP Inspector unavailable: npx is not on PATH and .ci/node has no mcp-inspector "
                    f"(install with `npm install --prefix .ci/node {INSPECTOR_PACKAGE}`)")
    return command


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("inspector")
    project = base / "project"
    project.mkdir()
    _git(project, "init", "-q", "-b", "main")
    _git(project, "config", "user.name", "Inspector Tester")
    _git(project, "config", "user.email", "inspector@example.invalid")
    (project / "app.py").write_text("def main():\n    return 1\n")
    _git(project, "add", "app.py")
    _git(project, "commit", "-q", "-m", "initial")
    home = base / "home"
    home.mkdir()
    return {"project": project.resolve(), "home": home, "state": base / "state"}


def run_inspector(inspector: list[str], workspace: dict[str, Path], *method_args: str,
                  timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("CODE_TRAJECTORY_CONFIG", None)
    env.update(HOME=str(workspace["home"]), XDG_CONFIG_HOME=str(workspace["home"] / ".config"),
               npm_config_cache=str(NPM_CACHE), npm_config_update_notifier="false", npm_config_fund="false",
               npm_config_audit="false", NO_COLOR="1")
    command = [*inspector, "--cli", "--format", "json",
               "-e", f"CODE_TRAJECTORY_HOME={workspace['state']}", "-e", f"HOME={workspace['home']}",
               *method_args, "--",
               *server_command(), "serve", "--project", str(workspace["project"]), "--debounce", "0.3"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=workspace["home"])


def _json(done: subprocess.CompletedProcess[str]) -> dict:
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"inspector printed no JSON (exit {done.returncode}):\nstdout:\n{done.stdout}\n"
                    f"stderr:\n{done.stderr[-3000:]}")


def test_inspector_lists_our_tools(inspector: list[str], workspace: dict[str, Path]) -> None:
    # --strict: the Inspector checks the tool schemas' portability and exits 6 on an error-severity problem
    done = run_inspector(inspector, workspace, "--method", "tools/list", "--strict")
    assert done.returncode == 0, done.stderr[-3000:]
    tools = {tool["name"]: tool for tool in _json(done)["result"]["tools"]}
    assert set(tools) >= TRAJECTORY_TOOLS, sorted(tools)
    schema = tools["get_file_trajectory"]["inputSchema"]
    assert schema["required"] == ["filepath"]
    assert schema["properties"]["depth"]["default"] == 5
    assert tools["get_global_trajectory"]["annotations"]["readOnlyHint"] is True
    assert tools["consolidate"]["annotations"]["readOnlyHint"] is False


def test_inspector_calls_tools(inspector: list[str], workspace: dict[str, Path]) -> None:
    done = run_inspector(inspector, workspace, "--method", "tools/call", "--tool-name", "get_file_trajectory",
                         "--tool-arg", "filepath=app.py", "depth=2")
    assert done.returncode == 0, done.stderr[-3000:]
    result = _json(done)["result"]
    assert result["isError"] is False
    assert result["content"][0]["text"].startswith("# Trajectory of `app.py`")
    assert "+    return 1" in result["content"][0]["text"]

    # a tool error: the Inspector reports it and exits non-zero; the server answered with isError
    done = run_inspector(inspector, workspace, "--method", "tools/call", "--tool-name", "get_file_trajectory",
                         "--tool-arg", "filepath=../../etc/passwd")
    assert done.returncode == 5, (done.returncode, done.stderr[-3000:])  # the Inspector's exit for isError
    result = _json(done)["result"]
    assert result["isError"] is True
    assert "outside the project" in result["content"][0]["text"]


def test_inspector_lists_and_reads_resources_and_prompts(inspector: list[str], workspace: dict[str, Path]) -> None:
    """Issue 16.5: the session summary, the recap and a file's trajectory as resources; catch-up and explain-file
    as prompts, seen by the Inspector CLI."""
    done = run_inspector(inspector, workspace, "--method", "resources/list")
    assert done.returncode == 0, done.stderr[-3000:]
    uris = {r["uri"] for r in _json(done)["result"]["resources"]}
    assert {"trajectory://session", "trajectory://recap"} <= uris
    done = run_inspector(inspector, workspace, "--method", "resources/templates/list")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "trajectory://file/{+path}" in {t["uriTemplate"] for t in _json(done)["result"]["resourceTemplates"]}
    done = run_inspector(inspector, workspace, "--method", "resources/read", "--uri", "trajectory://file/app.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _json(done)["result"]["contents"][0]["text"].startswith("# Trajectory of `app.py`")
    done = run_inspector(inspector, workspace, "--method", "prompts/list")
    assert done.returncode == 0, done.stderr[-3000:]
    assert {"catch-up", "explain-file"} <= {p["name"] for p in _json(done)["result"]["prompts"]}
    done = run_inspector(inspector, workspace, "--method", "prompts/get", "--prompt-name", "explain-file",
                         "--prompt-args", "path=app.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "get_file_trajectory" in _json(done)["result"]["messages"][0]["content"]["text"]


def test_inspector_calls_the_symbol_and_search_tools(inspector: list[str], workspace: dict[str, Path]) -> None:
    """Issue 12: get_symbol_trajectory and search_trajectory through the Inspector CLI."""
    done = run_inspector(inspector, workspace, "--method", "tools/call", "--tool-name", "get_symbol_trajectory",
                         "--tool-arg", "filepath=app.py", "symbol=main")
    assert done.returncode == 0, done.stderr[-3000:]
    result = _json(done)["result"]
    assert result["isError"] is False and "# Trajectory of `main` in `app.py`" in result["content"][0]["text"]
    assert result["structuredContent"]["symbol"] == "main"
    done = run_inspector(inspector, workspace, "--method", "tools/call", "--tool-name", "search_trajectory",
                         "--tool-arg", "query=return 1")
    assert done.returncode == 0, done.stderr[-3000:]
    hits = _json(done)["result"]["structuredContent"]["hits"]
    assert hits and hits[0][2].endswith("\n`app.py`: +return 1")  # rows: time, id, the hit: why, then its lines
