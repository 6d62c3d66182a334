"""Issue 21, part 4: a secret given to set_trajectory_intent or checkpoint (through the MCP SDK client) is redacted
before anything is written: the stored intent, the commit messages, the checkpoint tag and what ``push`` sends hold
none of it (checked in the objects of the shadow repository and of the remote, with git itself)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support import git, mcp_client, server_command, write

SECRETS = {
    "github": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX3NlY3JldA",
    "password": "hunter2xyz",
    "aws": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}


def every_object_text(git_dir: Path) -> str:
    """Every object of the repository at ``git_dir`` (commits, tags, trees, blobs), as git prints them."""
    out = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch-all-objects", "--batch"],
                         capture_output=True, check=True, timeout=60).stdout
    return out.decode("utf-8", "replace")


@pytest.mark.anyio
async def test_secrets_in_intent_and_checkpoint_never_reach_the_shadow_repo_or_the_remote(tmp_path: Path,
                                                                                          project: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    git(project, "config", "user.email", "alice@example.com")
    async with mcp_client(project) as client:
        result = await client.call_tool("set_trajectory_intent", {
            "intent": f"Ship auth with Authorization: Bearer {SECRETS['bearer']} and password is {SECRETS['password']}"})
        assert not result.is_error
        write(project, "src/app.py", "def main():\n    return 2\n")
        result = await client.call_tool("checkpoint", {
            "message": f"before deploy with {SECRETS['github']} / AKIAIOSFODNN7EXAMPLE {SECRETS['aws']}"})
        assert not result.is_error, result.content[0].text
        shown = result.content[0].text
    assert not any(s in shown for s in SECRETS.values())
    stored = json.loads((project / ".trajectory" / "state" / "intent.json").read_text())["intent"]
    assert stored.startswith("Ship auth with [redacted]") and not any(s in stored for s in SECRETS.values())
    shadow = project / ".trajectory"
    history = git(project, "--git-dir", str(shadow), "log", "--all", "--format=%B")
    tags = git(project, "--git-dir", str(shadow), "for-each-ref", "--format=%(contents)", "refs/tags")
    assert "[redacted]" in history and "[redacted]" in tags
    for text in (history, tags, every_object_text(shadow)):
        for name, secret in SECRETS.items():
            assert secret not in text, name
    proc = subprocess.run([*server_command(), "push", "--project", str(project)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert git(project, "--git-dir", str(remote), "for-each-ref", "--format=%(refname)", "refs/trajectory")
    pushed = every_object_text(remote)
    assert "[redacted]" in pushed
    for name, secret in SECRETS.items():
        assert secret not in pushed, name
