"""A new user's first session with code-trajectory, on a code tree nobody here wrote.

Reproduces what someone trying the tool would do, with the real server over stdio
and the official MCP SDK client:

1. download three consecutive releases of a small pure-Python package as sdists
   (``pip download --no-binary :all: --no-deps``), into a temporary directory;
2. unpack release N into a temporary project, ``git init`` and commit it;
3. start ``code-trajectory serve`` (no ``--project``: the client configures it),
   call ``configure_project`` and ``set_trajectory_intent``;
4. copy release N+1, then N+2, over the tree as edits (every file rewritten, files
   gone from the release deleted), waiting for the snapshot after each;
5. ask ``get_global_trajectory``, ``get_file_trajectory`` on a module that changed in
   both steps, and ``get_session_summary``.

The transcript (tool, arguments, answer) goes to stdout as markdown; progress and
the server's log summary go to stderr. Nothing is written inside the repository.

    python bench/new_user_trial.py > bench/new_user_trial.md
    python bench/new_user_trial.py --package attrs --versions 23.1.0 23.2.0 24.1.0
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

HEADING = re.compile(r"^### .* — `([0-9a-f]{12})`$", re.M)
KEEP = {".git", ".trajectory", ".gitignore"}  # the user's own files, never part of a release


def log(message: str) -> None:
    print(f"[trial] {message}", file=sys.stderr, flush=True)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git(cwd: Path, *args: str) -> str:
    env = clean_env()
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def download(package: str, version: str, dest: Path) -> Path:
    """Download and unpack one sdist; return the unpacked source tree."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                    "--disable-pip-version-check", f"{package}=={version}", "-d", str(dest)],
                   check=True, stdout=subprocess.DEVNULL)
    archives = [p for p in dest.iterdir() if p.name.endswith((".tar.gz", ".zip")) and version in p.name]
    if len(archives) != 1:
        raise SystemExit(f"expected one sdist of {package} {version} in {dest}, found {archives}")
    unpack = dest / "unpacked"
    if archives[0].name.endswith(".zip"):
        shutil.unpack_archive(archives[0], unpack)
    else:
        with tarfile.open(archives[0]) as tar:
            tar.extractall(unpack, filter="data")
    (tree,) = [p for p in unpack.iterdir() if p.is_dir()]
    return tree


def release_files(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()}


def apply_release(tree: Path, project: Path) -> tuple[int, list[str]]:
    """Make ``project`` hold ``tree`` (like copying a release over it); return (files written, files changed)."""
    new = release_files(tree)
    old = {p for p in release_files(project) if p.split("/", 1)[0] not in KEEP}
    changed = sorted(p for p in new if not (project / p).exists() or not filecmp.cmp(tree / p, project / p,
                                                                                         shallow=False))
    for rel in sorted(old - new):
        (project / rel).unlink()
        changed.append(f"(deleted) {rel}")
    for rel in sorted(new):
        target = project / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tree / rel, target)  # every file rewritten, fresh mtime: what `cp -r` does
    return len(new), changed


def pick_file(trees: list[Path]) -> str:
    """A Python module (not __init__.py when possible) that changed in as many steps as possible."""
    score: dict[str, int] = {}
    for before, after in zip(trees, trees[1:]):
        for rel in release_files(after):
            if rel.endswith(".py") and (not (before / rel).exists()
                                        or not filecmp.cmp(before / rel, after / rel, shallow=False)):
                score[rel] = score.get(rel, 0) + 1
    if not score:
        raise SystemExit("no Python module changed between these releases; pick other versions")
    return max(score, key=lambda rel: (score[rel], not rel.endswith("__init__.py"), rel.startswith("src/"), rel))


class Transcript:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def say(self, text: str) -> None:
        self.parts.append(text)

    def call(self, name: str, args: dict[str, Any], answer: str, is_error: bool, seconds: float) -> None:
        flag = " — **tool error**" if is_error else ""
        self.parts.append(f"### `{name}`{flag}\n\nArguments: `{json.dumps(args)}` — answered in "
                          f"{seconds * 1000:.0f} ms\n\n````markdown\n{answer}\n````")

    def render(self) -> str:
        return "\n\n".join(self.parts) + "\n"


async def call(client: Client, transcript: Transcript | None, name: str, args: dict[str, Any]) -> str:
    start = time.monotonic()
    result = await client.call_tool(name, args)
    seconds = time.monotonic() - start
    answer = "\n".join(block.text for block in result.content)
    if transcript is not None:
        transcript.call(name, args, answer, bool(result.is_error), seconds)
    if result.is_error:
        log(f"{name} answered with a tool error: {answer}")
    return answer


async def wait_for_snapshot(client: Client, seen: set[str], timeout: float) -> tuple[list[str], float]:
    """Poll get_global_trajectory (not shown in the transcript) until new commits appear and settle."""
    start = time.monotonic()
    new: list[str] = []
    while time.monotonic() - start < timeout:
        text = await call(client, None, "get_global_trajectory", {"limit": 1000})
        fresh = [sha for sha in HEADING.findall(text) if sha not in seen]
        if fresh:
            new += fresh
            seen.update(fresh)
            settle = time.monotonic()
            await anyio.sleep(1.0)  # a second burst (late events) would show up now
            text = await call(client, None, "get_global_trajectory", {"limit": 1000})
            late = [sha for sha in HEADING.findall(text) if sha not in seen]
            new += late
            seen.update(late)
            return new, settle - start
        await anyio.sleep(0.2)
    raise SystemExit(f"no snapshot within {timeout} s")


async def trial(args: argparse.Namespace, work: Path) -> str:
    package, versions = args.package, args.versions
    trees = []
    for version in versions:
        log(f"downloading {package} {version} (sdist)")
        trees.append(download(package, version, work / "downloads" / version))
    target = pick_file(trees)

    project = work / package
    shutil.copytree(trees[0], project)
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "New User")
    git(project, "config", "user.email", "new.user@example.invalid")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", f"{package} {versions[0]} as downloaded")
    n_files = len(release_files(trees[0]))

    env = clean_env()
    home = work / "home"
    (home / ".config").mkdir(parents=True)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), CODE_TRAJECTORY_HOME=str(home / "state"))
    env.pop("CODE_TRAJECTORY_CONFIG", None)
    script = Path(sys.executable).with_name("code-trajectory")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "code_trajectory"]
    server_args = [*command[1:], "serve"]
    if args.debounce is not None:
        server_args += ["--debounce", str(args.debounce)]

    out = Transcript()
    out.say(f"# A new user tries code-trajectory on {package} {versions[0]} → {' → '.join(versions[1:])}\n\n"
            f"Generated by `bench/new_user_trial.py` on {time.strftime('%Y-%m-%d %H:%M %Z')} "
            f"(Python {platform.python_version()}, git {git(work, 'version').split()[-1]}, "
            f"code-trajectory {_version()}).\n\n"
            f"Setup: the sdist of `{package}=={versions[0]}` ({n_files} files) unpacked into a fresh directory, "
            f"`git init` and one commit. The server is the real `code-trajectory serve` "
            f"(debounce {args.debounce if args.debounce is not None else 'default, 2'} s) started by the official "
            f"MCP Python SDK client over stdio; the client calls the tools below in this order. Releases "
            f"{', '.join(versions[1:])} are then copied over the tree (every file rewritten) as if the user edited "
            f"it. Paths under `{work}` are temporary.")
    server_log = work / "server.log"
    started = time.monotonic()
    with server_log.open("w") as errlog:
        params = StdioServerParameters(command=command[0], args=server_args, env=env, cwd=str(project))
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            out.say(f"Connected in {time.monotonic() - started:.2f} s; the server offers {len(tools)} tools: "
                    + ", ".join(f"`{t}`" for t in tools) + ".")
            out.say("## 1. Start recording")
            await call(client, out, "configure_project", {"path": str(project)})
            await call(client, out, "get_session_summary", {})
            seen = set(HEADING.findall(await call(client, None, "get_global_trajectory", {"limit": 1000})))

            out.say("## 2. Edits: the next releases copied over the tree")
            for version, tree in zip(versions[1:], trees[1:]):
                await call(client, out, "set_trajectory_intent",
                           {"intent": f"Upgrade {package} to {version} (upstream release)"})
                written, changed = apply_release(tree, project)
                new, waited = await wait_for_snapshot(client, seen, args.timeout)
                out.say(f"_Copied {package} {version} over the tree: {written} files written, {len(changed)} "
                        f"actually different ({', '.join(f'`{c}`' for c in changed)}). The snapshot appeared "
                        f"{waited:.1f} s after the copy ({len(new)} new commit(s))._")

            out.say("## 3. What does the tool tell the user?")
            await call(client, out, "get_global_trajectory", {"limit": 10})
            await call(client, out, "get_file_trajectory", {"filepath": target, "depth": 5})
            await call(client, out, "get_session_summary", {})
    total = time.monotonic() - started
    snapshots = [line for line in server_log.read_text().splitlines() if "snapshot kind=" in line]
    errors = [line for line in server_log.read_text().splitlines() if " ERROR " in line or "Traceback" in line]
    out.say(f"## Server log\n\nWhole session {total:.1f} s. The server logged {len(snapshots)} snapshot(s) on "
            f"stderr and {len(errors)} error line(s):\n\n```text\n" + "\n".join(
                re.sub(r"^\S+ \S+ ", "", line) for line in snapshots + errors) + "\n```")
    log(f"done in {total:.1f} s; project git untouched: "
        f"{git(project, 'rev-list', '--count', 'HEAD').strip()} commit(s)")
    return out.render()


def _version() -> str:
    try:
        from code_trajectory import __version__
    except ImportError:
        return "?"
    return __version__


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", default="itsdangerous")
    parser.add_argument("--versions", nargs=3, default=["2.1.0", "2.1.1", "2.1.2"], metavar=("N", "N+1", "N+2"))
    parser.add_argument("--debounce", type=float, default=None, help="server debounce (default: the server's, 2 s)")
    parser.add_argument("--timeout", type=float, default=30.0, help="longest wait for a snapshot, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (printed on stderr)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ct-new-user-"))
    try:
        sys.stdout.write(anyio.run(trial, args, work))
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
