"""Which remote, what goes, what is verified: upstream remotes, secrets, damaged objects, several remotes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from code_trajectory.core.errors import GitError
from code_trajectory.share.pull import pull
from code_trajectory.share.push import push
from code_trajectory.share.transport import resolve_remote
from support import git, write
from support.share_env import ALICE, BOB, record, remote_refs, shadow_git


def has_object(repo: Path, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, capture_output=True).returncode == 0


def test_secrets_never_recorded_never_pushed(team) -> None:
    secret = "API_KEY=hunter2-do-not-share\n"
    write(team.alice, ".env", secret)
    write(team.alice, "deploy/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    record(team.alice, [("src/app.py", "v = 1\n"), (".env", secret + "MORE=1\n")])
    push(team.alice)
    ref = f"refs/trajectory/{ALICE}/main"
    paths = git(team.remote, "log", "--format=", "--name-only", ref).split()
    assert "src/app.py" in paths and ".env" not in paths and "deploy/id_ed25519" not in paths
    for content in (secret, secret + "MORE=1\n"):
        oid = subprocess.run(["git", "hash-object", "--stdin"], input=content, text=True, capture_output=True,
                             check=True).stdout.strip()
        assert not has_object(team.remote, oid)


def test_default_remote_is_the_upstream_of_the_current_branch(team, tmp_path: Path) -> None:
    other = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    git(team.alice, "remote", "add", "team", str(other))
    assert resolve_remote(team.alice).name == "origin"
    git(team.alice, "config", "branch.main.remote", "team")
    assert resolve_remote(team.alice).name == "team"
    record(team.alice, [("src/app.py", "v = 1\n")])
    report = push(team.alice)
    assert report.target.name == "team" and f"refs/trajectory/{ALICE}/main" in remote_refs(other)
    assert "refs/trajectory" not in remote_refs(team.remote)
    (team.alice / ".trajectory" / "config.toml").write_text('[share]\nremote = "origin"\n')
    assert push(team.alice).target.name == "origin"  # [share] remote wins over the upstream
    assert push(team.alice, remote="team").noop  # and --remote over both


def test_relative_remote_path_is_resolved_against_the_project(team) -> None:
    git(team.alice, "remote", "set-url", "origin", "../remote.git")
    assert resolve_remote(team.alice).url == str(team.remote)


def test_objects_failing_verification_are_not_fetched_and_block_nobody(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    push(team.alice)
    empty_tree = git(team.remote, "hash-object", "-t", "tree", "-w", "/dev/null").strip()
    bad = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"], cwd=team.remote,
                         input=f"tree {empty_tree}\nauthor nobody\ncommitter nobody\n\nbroken\n", text=True,
                         capture_output=True, check=True).stdout.strip()
    git(team.remote, "update-ref", "refs/trajectory/mallory@example.com/main", bad)
    record(team.bob, [])
    before = shadow_git(team.bob, "for-each-ref", "refs/heads/")
    report = pull(team.bob)
    assert report.new == [f"refs/remotes-trajectory/{ALICE}/main"]
    assert [name for name, _ in report.rejected] == ["refs/trajectory/mallory@example.com/main"]
    assert "fetch failed" in report.rejected[0][1] and "fsck error" in report.rejected[0][1]
    assert not has_object(team.bob / ".trajectory", bad)
    assert shadow_git(team.bob, "for-each-ref", "refs/heads/") == before
    # alone, the damaged trajectory is an error that says what happened
    git(team.remote, "update-ref", "-d", f"refs/trajectory/{ALICE}/main")
    with pytest.raises(GitError, match="ask its author to push again") as err:
        pull(team.bob)
    assert "missingEmail" in err.value.stderr and "fsck error" in str(err.value)
    assert shadow_git(team.bob, "for-each-ref", "refs/heads/") == before


def test_pull_from_two_remotes_prunes_only_what_each_one_deleted(team, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(team.remote), str(mirror))
    record(team.alice, [("src/app.py", "v = 1\n")])
    push(team.alice)  # to origin
    git(team.bob, "remote", "add", "mirror", str(mirror))
    git(team.alice, "remote", "add", "mirror", str(mirror))
    git(team.alice, "checkout", "-q", "-b", "side")
    record(team.alice, [("src/side.py", "s = 1\n")])
    (team.alice / ".trajectory" / "config.toml").write_text('[share]\nauthor_id = "alice-ci"\n')
    push(team.alice, remote="mirror")
    record(team.bob, [])
    assert pull(team.bob).new == [f"refs/remotes-trajectory/{ALICE}/main"]
    from_mirror = pull(team.bob, remote="mirror")
    assert sorted(from_mirror.new) == ["refs/remotes-trajectory/alice-ci/main", "refs/remotes-trajectory/alice-ci/side"]
    assert from_mirror.pruned == []  # origin's source stays
    again = pull(team.bob)
    assert again.pruned == [] and again.unchanged == [f"refs/remotes-trajectory/{ALICE}/main"]
    git(mirror, "update-ref", "-d", "refs/trajectory/alice-ci/side")
    assert pull(team.bob, remote="mirror").pruned == ["refs/remotes-trajectory/alice-ci/side"]
    refs = shadow_git(team.bob, "for-each-ref", "--format=%(refname)", "refs/remotes-trajectory/").split()
    assert refs == ["refs/remotes-trajectory/alice-ci/main", f"refs/remotes-trajectory/{ALICE}/main"]
    assert BOB not in " ".join(refs)


def test_push_uses_the_push_url_and_pull_the_fetch_url(team, tmp_path: Path) -> None:
    mirror = tmp_path / "push-here.git"
    git(tmp_path, "init", "-q", "--bare", str(mirror))
    git(team.alice, "config", "remote.origin.pushurl", str(mirror))
    record(team.alice, [("src/app.py", "v = 1\n")])
    report = push(team.alice)
    assert report.target.url == str(mirror) and f"refs/trajectory/{ALICE}/main" in remote_refs(mirror)
    assert "refs/trajectory" not in remote_refs(team.remote)
    git(team.alice, "config", "--unset", "remote.origin.pushurl")
    push(team.alice)
    git(team.bob, "config", "remote.origin.pushurl", str(tmp_path / "nowhere.git"))
    record(team.bob, [])
    assert pull(team.bob).new == [f"refs/remotes-trajectory/{ALICE}/main"]  # fetched from remote.origin.url
