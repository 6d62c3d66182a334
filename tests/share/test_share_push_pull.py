"""Push and pull through a real bare remote shared by two users (real git, real recorder, no mocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.core.errors import GitError, InvalidArgumentError
from code_trajectory.git.log import read_log
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.share.pull import pull
from code_trajectory.share.push import push
from code_trajectory.share.service import list_sources, resolve_source, share_status_lines
from code_trajectory.share.state import load_state
from support import git, write
from support.share_env import ALICE, BOB, git_dir_fingerprint, record, remote_refs, shadow_git, shadow_tip


def test_alice_pushes_bob_pulls_and_reads_her_history(team) -> None:
    record(team.alice, [("src/app.py", "def main():\n    return 2\n"), ("src/util.py", "X = 1\n")],
           intent="Make main return 2")
    heads_before = remote_refs(team.remote, "refs/heads", "refs/tags")
    assert "refs/tags/v1" in heads_before

    alice_git = git_dir_fingerprint(team.alice)
    report = push(team.alice)
    assert git_dir_fingerprint(team.alice) == alice_git  # nothing written under the project's .git
    assert [r.status for r in report.refs] == ["new"]
    assert report.refs[0].remote_ref == f"refs/trajectory/{ALICE}/main"
    assert report.objects > 0 and report.bytes > 0
    assert f"refs/trajectory/{ALICE}/main" in report.text()
    # only refs/trajectory/<author>/ was written; refs/heads and refs/tags are byte-identical
    assert remote_refs(team.remote, "refs/heads", "refs/tags") == heads_before
    everything = remote_refs(team.remote).splitlines()
    assert [line.split()[2] for line in everything if "refs/trajectory/" in line] == [f"refs/trajectory/{ALICE}/main"]
    assert git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip() == shadow_tip(team.alice)

    record(team.bob, [("src/bob.py", "B = 1\n")])
    bob_shadow_before = shadow_git(team.bob, "for-each-ref", "refs/heads/")
    bob_git = git_dir_fingerprint(team.bob)
    pulled = pull(team.bob)
    assert git_dir_fingerprint(team.bob) == bob_git
    assert pulled.new == [f"refs/remotes-trajectory/{ALICE}/main"] and not pulled.rejected
    assert "pruned" not in pulled.text()
    # our own shadow branches untouched; nothing else written but the pulled ref
    assert shadow_git(team.bob, "for-each-ref", "refs/heads/") == bob_shadow_before
    refs = shadow_git(team.bob, "for-each-ref", "--format=%(refname)").split()
    assert [r for r in refs if not r.startswith(("refs/heads/shadow/", "refs/notes/"))] == \
        [f"refs/remotes-trajectory-data/{ALICE}/main", f"refs/remotes-trajectory/{ALICE}/main"]  # and its data
    assert not (team.bob / ".trajectory" / "FETCH_HEAD").exists()

    with ShadowRepo(team.bob) as repo:
        ref = resolve_source(repo, f"{ALICE}/main")
        assert ref == f"refs/remotes-trajectory/{ALICE}/main"
        assert resolve_source(repo, "Alice@Example.COM/main") == ref  # the author part is sanitized as on push
        assert resolve_source(repo, "main") == "refs/heads/shadow/main"  # ours
        assert resolve_source(repo, f"{BOB}/main") == "refs/heads/shadow/main"  # ours, by our author id
        log = read_log(repo, [ref])
        assert log[0].oid == shadow_tip(team.alice)
        assert "Make main return 2" in {r.intent for r in log}
        assert any(c.path == "src/util.py" for r in log for c in r.changes)
        sources = {s.name: s for s in list_sources(repo)}
        assert sources["main"].ours and not sources[f"{ALICE}/main"].ours
        assert sources[f"{ALICE}/main"].intent == "Make main return 2"
        assert sources[f"{ALICE}/main"].pulled_from == "origin"
        with pytest.raises(InvalidArgumentError) as err:
            resolve_source(repo, "carol@example.com/main")
        assert f"{ALICE}/main" in str(err.value) and "main" in str(err.value)
        with pytest.raises(InvalidArgumentError):
            resolve_source(repo, "main~1")  # a revision expression is not a source
        with pytest.raises(InvalidArgumentError):
            resolve_source(repo, "  ")


def test_pushing_twice_is_a_noop(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    push(team.alice)
    remote_before = remote_refs(team.remote)
    again = push(team.alice)
    assert again.noop and [r.status for r in again.refs] == ["up to date"]
    assert again.text().startswith("Nothing to push")
    assert remote_refs(team.remote) == remote_before


def test_dry_run_writes_nothing_and_lists_refs_and_size(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    before = remote_refs(team.remote)
    report = push(team.alice, dry_run=True)
    assert report.dry_run and report.refs[0].status == "new" and report.refs[0].commits >= 2
    assert report.objects > 0 and report.bytes > 0
    text = report.text()
    assert "Dry run, nothing was written" in text and f"refs/trajectory/{ALICE}/main" in text and "object(s)" in text
    assert remote_refs(team.remote) == before
    assert load_state(team.alice / ".trajectory" / "state")["pushed"] == {}
    # the real push then sends what the dry run announced
    real = push(team.alice)
    assert (real.objects, real.bytes) == (report.objects, report.bytes)


def test_consolidated_stops_at_the_last_consolidation(team) -> None:
    record(team.alice, [("src/a.py", "a = 1\n"), ("src/b.py", "b = 1\n")], consolidate_as="Add a and b")
    with ShadowRepo(team.alice) as repo:
        consolidation = shadow_tip(team.alice)
        assert read_log(repo, [consolidation], limit=1)[0].is_consolidation
    record(team.alice, [("src/secret_wip.py", "keystroke = 1\n"), ("src/a.py", "a = 2\n")])
    tip = shadow_tip(team.alice)
    assert tip != consolidation

    report = push(team.alice, consolidated=True)
    assert report.refs[0].new == consolidation
    remote_tip = git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip()
    assert remote_tip == consolidation
    # the snapshots after the consolidation did not go: not their commits, not their blobs
    assert subprocess_ok(team.remote, "cat-file", "-e", tip) is False
    wip_blob = shadow_git(team.alice, "rev-parse", f"{tip}:src/secret_wip.py").strip()
    assert subprocess_ok(team.remote, "cat-file", "-e", wip_blob) is False
    # the full push then moves the ref forward to the tip
    full = push(team.alice)
    assert full.refs[0].status == "fast-forward"
    assert git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip() == tip
    # going back to consolidated-only rewrites our own ref: allowed (it is our history)
    back = push(team.alice, consolidated=True)
    assert back.refs[0].status == "rewrite"


def test_consolidated_without_any_consolidation_shares_nothing(team) -> None:
    record(team.alice, [("src/a.py", "a = 1\n")])
    report = push(team.alice, consolidated=True)
    assert report.refs == [] and "no [CONSOLIDATE] commit yet" in report.text()
    assert "refs/trajectory" not in remote_refs(team.remote)


def subprocess_ok(cwd: Path, *args: str) -> bool:
    import subprocess

    return subprocess.run(["git", *args], cwd=cwd, capture_output=True).returncode == 0


def test_refused_push_gives_a_clear_error_and_loses_nothing(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    hook = team.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'refs outside refs/heads are not allowed here' >&2\nexit 1\n")
    hook.chmod(0o755)
    before_remote = remote_refs(team.remote)
    before_local = shadow_git(team.alice, "for-each-ref")
    with pytest.raises(GitError) as err:
        push(team.alice)
    message = str(err.value)
    assert "pre-receive hook declined" in message and "Nothing was lost" in message
    assert "refs outside refs/heads are not allowed here" in message
    assert remote_refs(team.remote) == before_remote
    assert shadow_git(team.alice, "for-each-ref") == before_local
    assert load_state(team.alice / ".trajectory" / "state")["pushed"] == {}
    hook.unlink()
    assert push(team.alice).refs[0].status == "new"  # nothing was lost: the next push goes through


def test_foreign_history_under_our_refs_is_not_overwritten(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    # another machine with the same email pushed its own history under refs/trajectory/alice.../main
    other = team.remote.parent / "other"
    git(team.remote.parent, "clone", "-q", str(team.remote), str(other))
    write(other, "x.txt", "other machine\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "other")
    git(other, "push", "-q", "origin", f"HEAD:refs/trajectory/{ALICE}/main")
    foreign = git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip()
    with pytest.raises(GitError) as err:
        push(team.alice)
    assert "author_id" in str(err.value) and "never had" in str(err.value)
    assert git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip() == foreign
    # a distinct author id solves it
    (team.alice / ".trajectory" / "config.toml").write_text('[share]\nauthor_id = "Alice Laptop"\n')
    report = push(team.alice)
    assert report.refs[0].remote_ref == "refs/trajectory/alice-laptop/main"


def test_pull_prunes_sources_deleted_on_the_remote_and_keeps_our_branches(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    git(team.alice, "checkout", "-q", "-b", "feature/x")
    record(team.alice, [("src/feature.py", "f = 1\n")])
    pushed = push(team.alice)
    assert sorted(r.branch for r in pushed.refs) == ["feature/x", "main"]
    record(team.bob, [])
    first = pull(team.bob)
    assert sorted(first.new) == [f"refs/remotes-trajectory/{ALICE}/feature/x", f"refs/remotes-trajectory/{ALICE}/main"]
    second = pull(team.bob)
    assert second.new == [] and len(second.unchanged) == 2 and not second.pruned
    git(team.remote, "update-ref", "-d", f"refs/trajectory/{ALICE}/feature/x")
    third = pull(team.bob)
    assert third.pruned == [f"refs/remotes-trajectory/{ALICE}/feature/x"]
    assert "pruned (deleted on the remote)" in third.text()
    assert shadow_git(team.bob, "rev-parse", "--verify", "-q", f"refs/remotes-trajectory/{ALICE}/feature/x",
                      check=False) == ""
    assert shadow_tip(team.bob)  # our own branch is still there


def test_pull_updates_after_the_author_consolidates(team) -> None:
    record(team.alice, [("src/a.py", "a = 1\n"), ("src/a.py", "a = 2\n")])
    push(team.alice)
    record(team.bob, [])
    pull(team.bob)
    record(team.alice, [("src/a.py", "a = 3\n")], consolidate_as="Settle a")  # rewrites history (squash)
    push(team.alice)
    report = pull(team.bob)
    assert report.updated == [f"refs/remotes-trajectory/{ALICE}/main"]
    assert shadow_git(team.bob, "rev-parse", f"refs/remotes-trajectory/{ALICE}/main").strip() == \
        shadow_tip(team.alice)


def test_bob_does_not_pull_his_own_pushes(team) -> None:
    record(team.bob, [("src/b.py", "b = 1\n")])
    push(team.bob)
    report = pull(team.bob)
    assert report.own == 1 and report.new == []
    assert "refs/remotes-trajectory" not in shadow_git(team.bob, "for-each-ref")


MALICIOUS = [
    "refs/trajectory/x@example.com/HEAD",
    "refs/trajectory/refs/heads/main",
    "refs/trajectory/heads/main",
    "refs/trajectory/x@example.com/refs/heads/main",
    "refs/trajectory/x@example.com/%2e%2e/%2e%2e/heads/main",
    "refs/trajectory/x@example.com/\uff0e\uff0e/heads/main",  # fullwidth dots: NFKC gives '..'
    "refs/trajectory/x@example.com/a\uff0fb",  # fullwidth solidus: NFKC gives '/'
    "refs/trajectory/x@example.com/evil\u202egnp",  # right-to-left override
    "refs/trajectory/X@Example.com/main",  # author id not in canonical form
    "refs/trajectory/loner",
    "refs/trajectory/x@example.com/" + "/".join(["a" * 199] * 10),  # a 2,000-character name
]


def test_malicious_ref_names_from_the_remote_are_rejected(team) -> None:
    record(team.alice, [("src/app.py", "v = 1\n")])
    push(team.alice)
    tip = git(team.remote, "rev-parse", "main").strip()
    for name in MALICIOUS:
        git(team.remote, "update-ref", name, tip)
    blob = git(team.remote, "rev-parse", "main:src/app.py").strip()
    git(team.remote, "update-ref", "refs/trajectory/y@example.com/blob", blob)  # not a commit
    record(team.bob, [])
    before = shadow_git(team.bob, "for-each-ref", "refs/heads/")

    report = pull(team.bob)
    assert report.new == [f"refs/remotes-trajectory/{ALICE}/main"]
    rejected = "\n".join(f"{name} {reason}" for name, reason in report.rejected)
    assert len(report.rejected) == len(MALICIOUS) + 1, rejected
    assert "not a commit" in rejected
    assert report.text().count("WARNING: skipped unsafe ref") == len(MALICIOUS) + 1
    assert "\u202e" not in report.text()  # printed escaped
    assert shadow_git(team.bob, "for-each-ref", "refs/heads/") == before
    local = shadow_git(team.bob, "for-each-ref", "--format=%(refname)").split()
    assert [r for r in local if r.startswith("refs/remotes-trajectory/")] == [f"refs/remotes-trajectory/{ALICE}/main"]
    assert [r for r in local if r.startswith("refs/remotes-trajectory-data/")] == \
        [f"refs/remotes-trajectory-data/{ALICE}/main"]  # only beside a source that passed
    assert all(r.startswith(("refs/heads/shadow/", "refs/remotes-trajectory/", "refs/remotes-trajectory-data/",
                             "refs/notes/")) for r in local)


def test_status_lines_show_what_is_shared_where(team) -> None:
    assert share_status_lines(team.alice) == []  # nothing recorded: nothing to say, nothing created
    assert not (team.alice / ".trajectory").exists()
    record(team.alice, [("src/app.py", "v = 1\n")])
    lines = share_status_lines(team.alice)
    assert len(lines) == 1 and "nothing pushed yet" in lines[0] and "auto_push off" in lines[0]
    push(team.alice)
    lines = share_status_lines(team.alice)
    assert lines[0].startswith(f"- Shared to `origin` ({team.remote}) as `{ALICE}`: last push ")
    assert lines[1].startswith(f"  - refs/trajectory/{ALICE}/main: at {shadow_tip(team.alice)[:12]}")
    assert lines[1].endswith("up to date with the local tip")
    record(team.alice, [("src/app.py", "v = 2\n")])
    assert share_status_lines(team.alice)[1].endswith("local `main` is 1 commit(s) ahead")
    record(team.bob, [])
    pull(team.bob)
    assert any(line.startswith("- Pulled from `origin` at ") and f"`{ALICE}/main`" in line
               for line in share_status_lines(team.bob))


def test_errors_say_what_to_do(team, tmp_path: Path) -> None:
    from code_trajectory.core.errors import ProjectError

    with pytest.raises(ProjectError, match="nothing is recorded"):
        push(team.alice)
    record(team.alice, [])
    with pytest.raises(InvalidArgumentError, match="no git remote named 'upstream'.*origin"):
        push(team.alice, remote="upstream")
    with pytest.raises(InvalidArgumentError, match="not a remote name"):
        push(team.alice, remote="--upload-pack=evil")
    git(team.alice, "config", "--unset", "user.email")
    with pytest.raises(InvalidArgumentError, match="user.email"):
        push(team.alice)
    plain = tmp_path / "plain"
    plain.mkdir()
    record(plain, [("a.txt", "a\n")])
    with pytest.raises(InvalidArgumentError, match="not a git repository"):
        push(plain)


@pytest.mark.parametrize("entry", ["str", 5, ["a"], None])
def test_a_planted_share_state_of_the_wrong_shape_is_read_as_nothing_shared(team, entry) -> None:
    """share.json is untrusted (it comes with a copied .trajectory): an entry of a remote that is no object made
    push and push --dry-run fail with AttributeError ('str' object has no attribute 'get'), and pulled refs that
    are a list of mixed values made status fail with TypeError; such entries are read as nothing shared."""
    import json

    record(team.alice, [("src/app.py", "v = 1\n")])
    state = team.alice / ".trajectory" / "state"
    (state / "share.json").write_text(json.dumps({"pushed": {"origin": entry},
                                                  "pulled": {"origin": {"refs": [1, "a"]}, "x": entry}}))
    lines = share_status_lines(team.alice)
    assert "nothing pushed yet" in lines[0] and any(line.startswith("- Pulled from `origin`") for line in lines)
    assert push(team.alice, dry_run=True).refs[0].status == "new"
    assert push(team.alice).refs[0].status == "new"
    assert load_state(state)["pushed"]["origin"]["refs"]
    repo = ShadowRepo(team.alice)
    try:
        assert [s.name for s in list_sources(repo)] == ["main"]
    finally:
        repo.close()
