"""Sharing a journal: a local bare repository and two clones syncing through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError, JournalError
from code_trajectory.journal.commands import main as cli
from code_trajectory.journal.repository import MAX_SECTION_BYTES
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.sync import MAX_COMMIT_BYTES, sync_journal
from code_trajectory.journal.text import read_entry_count
from support import subprocess_env


def git(*args: str, cwd: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=True).stdout


@pytest.fixture
def journal_team(tmp_path: Path) -> tuple[Path, JournalStore, JournalStore]:
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote))
    alice = JournalStore(JournalSettings.load(journal_dir=tmp_path / "alice", commit_author="Alice <alice@x>"))
    bob = JournalStore(JournalSettings.load(journal_dir=tmp_path / "bob", commit_author="Bob <bob@x>"))
    return remote, alice, bob


def texts(store: JournalStore, path: str) -> list[str]:
    return [e.text for e in store.list_entries(path, 0, 1000)[1]]


def test_publish_then_clone_by_sync(journal_team) -> None:
    remote, alice, bob = journal_team
    alice.write("proj", "work_context: setup\n\nfirst", overview="# Project")
    report = sync_journal(alice, remote=str(remote))
    assert report.action == "published" and report.pushed
    report = sync_journal(bob, remote=str(remote))  # bob's journal did not exist: created and filled
    assert report.action == "fast-forward" and report.received == 1 and not report.pushed
    assert bob.read_overview("proj").content == "# Project"
    assert (bob.root / "proj.md").exists()  # the work tree is checked out
    assert sync_journal(bob).action == "up-to-date"  # the remote is remembered


def test_concurrent_entries_merge_without_conflict(journal_team) -> None:
    remote, alice, bob = journal_team
    alice.write("proj", "a0", overview="# Project")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    alice.write("proj", "a1")
    alice.write("proj/sub", "a-sub")
    bob.write("proj", "b1")
    bob.write("proj", "b2")
    bob.write("other", "b-other")
    assert sync_journal(alice).pushed
    report = sync_journal(bob)
    assert report.action == "rebased" and report.replayed == 3 and report.pushed and report.conflicts == []
    sync_journal(alice)
    for store in (alice, bob):
        assert sorted(texts(store, "proj")) == ["a0", "a1", "b1", "b2"]
        assert texts(store, "proj/sub") == ["a-sub"] and texts(store, "other") == ["b-other"]
        assert store.read_overview("proj").content == "# Project"
        assert read_entry_count((store.root / "proj.md").read_text()) == 4
        assert git("status", "--porcelain", cwd=store.root) == ""
    assert alice.head() == bob.head() == git("--git-dir", str(remote), "rev-parse", "main").strip()
    # authorship and entry dates survive the replay
    authors = git("log", "--format=%an", "--", "proj.md", cwd=alice.root).split()
    assert authors.count("Bob") == 2 and authors.count("Alice") == 2


def test_overview_change_on_one_side_is_kept(journal_team) -> None:
    remote, alice, bob = journal_team
    alice.write("proj", "a0", overview="# v1")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    alice.write("proj", "a1")  # entry only
    bob.write("proj", "b1", overview="# v2 by bob")
    sync_journal(alice)
    report = sync_journal(bob)
    assert report.conflicts == []
    sync_journal(alice)
    assert alice.read_overview("proj").content == "# v2 by bob"


def test_overview_conflict_reported_and_resolved(journal_team) -> None:
    remote, alice, bob = journal_team
    alice.write("proj", "a0", overview="# v1")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    alice.write("proj", "work_context: api design\n\nalice rethinks", overview="# Alice's view")
    bob.write("proj", "work_context: api design\n\nbob rethinks", overview="# Bob's view")
    sync_journal(alice)
    report = sync_journal(bob)
    assert report.pushed and len(report.conflicts) == 1
    conflict = report.conflicts[0]
    assert conflict["section"] == "proj" and conflict["remote_version"] == "# Alice's view"
    assert conflict["local_version"] == "# Bob's view" and conflict["work_context"] == "api design"
    # no entry lost; the remote overview kept; bob's overview pending
    assert sorted(texts(bob, "proj")) == ["a0", "work_context: api design\n\nalice rethinks",
                                          "work_context: api design\n\nbob rethinks"]
    ov = bob.read_overview("proj")
    assert ov.content == "# Alice's view"
    assert ov.pending_conflict["local_version"] == "# Bob's view"
    # writing the merged overview resolves it
    bob.write("proj", "merged the two views", overview="# Alice's and Bob's view")
    assert bob.read_overview("proj").pending_conflict is None
    sync_journal(bob)
    sync_journal(alice)
    assert alice.read_overview("proj").content == "# Alice's and Bob's view"


def test_push_race_is_retried(journal_team, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, alice, bob = journal_team
    alice.write("proj", "a0")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    bob.write("proj", "b1")
    alice.write("proj", "a1")
    import code_trajectory.journal.sync as sync_mod

    real_push = sync_mod._push
    calls = []

    def racing_push(net, head, branch):
        if not calls:  # alice pushes just before bob's first push
            calls.append(1)
            sync_journal(alice)
        return real_push(net, head, branch)

    monkeypatch.setattr(sync_mod, "_push", racing_push)
    report = sync_journal(bob)
    assert report.pushed
    monkeypatch.undo()
    sync_journal(alice)
    assert sorted(texts(alice, "proj")) == ["a0", "a1", "b1"]


def test_sync_errors(journal_team, tmp_path: Path) -> None:
    remote, alice, _bob = journal_team
    with pytest.raises(JournalError, match="no remote"):
        sync_journal(alice)
    with pytest.raises(InvalidArgumentError):
        sync_journal(alice, remote="--upload-pack=evil")
    with pytest.raises(JournalError, match="fetch"):
        sync_journal(alice, remote=str(tmp_path / "does-not-exist.git"))
    with pytest.raises(InvalidArgumentError):
        sync_journal(alice, remote=str(remote), branch="../x")


def test_cli_sync_two_clones(journal_team, capsys: pytest.CaptureFixture[str]) -> None:
    remote, alice, bob = journal_team
    assert cli(["write", "proj", "--journal-dir", str(alice.root), "-m", "from the cli",
                "--overview", "# CLI"]) == 0
    assert cli(["--journal-dir", str(alice.root), "sync", "--remote", str(remote)]) == 0
    assert cli(["sync", "--journal-dir", str(bob.root), "--remote", str(remote), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"action": "fast-forward"' in out
    assert cli(["--journal-dir", str(alice.root), "write", "proj", "-m", "a", "--overview", "# A"]) == 0
    assert cli(["--journal-dir", str(bob.root), "write", "proj", "-m", "b", "--overview", "# B"]) == 0
    assert cli(["--journal-dir", str(alice.root), "sync"]) == 0
    assert cli(["--journal-dir", str(bob.root), "sync"]) == 1  # a conflict to resolve
    assert "Overview conflict in section 'proj'" in capsys.readouterr().out


def test_a_section_path_holding_a_secret_is_refused_and_never_synced(journal_team) -> None:
    """Entries and overviews are redacted; a section's path is a file name of the shared journal: it is refused."""
    remote, alice, _bob = journal_team
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for path in (f"creds/{token}", "aws/AKIAQ3EGRT7RJ5XKP2ZV"):
        with pytest.raises(InvalidArgumentError, match="holds a secret") as err:
            alice.write(path, "work_context: setup\n\nnotes")
        assert token not in str(err.value) and "AKIAQ3EGRT7RJ5XKP2ZV" not in str(err.value)
    alice.write("creds/rotation", "work_context: setup\n\nnotes")
    sync_journal(alice, remote=str(remote))
    objects = subprocess.run(["git", f"--git-dir={remote}", "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    assert b"rotation" in objects and token.encode() not in objects and b"AKIAQ3EGRT7RJ5XKP2ZV" not in objects


def hostile_commit(remote: Path, tmp_path: Path, message: str, files: dict[str, bytes]) -> None:
    """Push a commit made by hand (not by code-trajectory) to the journal's ``remote``: a teammate's, or anyone's
    who can push there."""
    work = tmp_path / "hostile"
    git("clone", "-q", "-b", "main", str(remote), str(work))
    for rel, data in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_bytes(data)
    git("add", "-A", cwd=work)
    (tmp_path / "message").write_text(message)
    git("-c", "user.name=m", "-c", "user.email=m@x", "commit", "-q", "--cleanup=verbatim", "-F",
        str(tmp_path / "message"), cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)


def test_the_cli_shows_a_synced_entrys_control_characters(journal_team, tmp_path: Path) -> None:
    """A journal synced from a remote holds messages nobody cleaned: ``journal list``/``search`` print them with
    ESC shown as ␛, as every other command does (they printed an ``ESC ] 52`` that writes the clipboard)."""
    remote, alice, bob = journal_team
    alice.write("proj", "work_context: setup\n\nfirst", overview="# Project")
    sync_journal(alice, remote=str(remote))
    hostile_commit(remote, tmp_path, "work_context: setup\n\nevil \x1b]52;c;cHduZWQ=\x07 \x1b[2J entry",
                   {"proj.md": b"# Project\n\nmore\n"})
    sync_journal(bob, remote=str(remote))
    for args in (["list", "proj"], ["search", "setup", "evil entry", "--threshold", "0"], ["read", "proj"]):
        done = subprocess.run([sys.executable, "-m", "code_trajectory", "journal", "--journal-dir", str(bob.root),
                               *args], env=subprocess_env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not any(ch in done.stdout + done.stderr for ch in "\x1b\x07"), args
        if args[0] != "read":
            assert "evil \u241b]52" in done.stdout, args


def test_a_huge_section_file_from_the_remote_is_not_read(journal_team, tmp_path: Path) -> None:
    """A section file pushed by hand can be any size (300 MB of one letter is 1.5 MB in a pack: ``journal read``
    took 900 MB of memory): one over what an overview can be is refused by its size, unread, in one line."""
    remote, alice, bob = journal_team
    alice.write("proj", "work_context: setup\n\nfirst", overview="# Project")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    hostile_commit(remote, tmp_path, "work_context: setup\n\nbig", {"proj.md": b"x" * (MAX_SECTION_BYTES + 1)})
    # taken as a sync took it before it checked sizes (a sync refuses it now: see the next test)
    git("fetch", "-q", str(remote), "main", cwd=bob.root)
    git("update-ref", "HEAD", "FETCH_HEAD", cwd=bob.root)
    with pytest.raises(JournalError, match=f"proj.md at [0-9a-f]{{12}} is {MAX_SECTION_BYTES + 1:,} bytes"):
        bob.read_overview("proj")
    assert cli(["--journal-dir", str(bob.root), "read", "proj"]) == 2
    assert bob.read_overview("missing").exists is False and bob.list_entries("proj", 0, 5)[1]


@pytest.mark.parametrize("what", ["message", "file"])
def test_a_sync_refuses_a_remote_holding_a_commit_or_file_larger_than_ever_written(journal_team, tmp_path: Path,
                                                                                  what: str) -> None:
    """A 200 MB message pushed by hand (2 MB packed) took ``journal search`` past 10 GB of memory: a sync checks
    the sizes of what it fetched (headers only) and takes nothing from such a remote, in one line."""
    remote, alice, bob = journal_team
    alice.write("proj", "work_context: setup\n\nfirst", overview="# Project")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    head = bob.head()
    if what == "message":
        hostile_commit(remote, tmp_path, "work_context: x\n\n" + "y" * (MAX_COMMIT_BYTES + 1),
                       {"proj.md": b"# Project\n\nmore\n"})
    else:
        hostile_commit(remote, tmp_path, "work_context: x\n\nbig", {"other.md": b"x" * (MAX_SECTION_BYTES + 1)})
    with pytest.raises(JournalError, match="the journal's remote holds a (commit|blob) .* bytes, more than "
                                           "code-trajectory ever writes .*nothing was taken from it"):
        sync_journal(bob)
    assert cli(["--journal-dir", str(bob.root), "sync"]) == 2
    assert bob.head() == head and len(texts(bob, "proj")) == 1


def test_a_sync_refuses_more_new_text_than_its_total_bound(journal_team, monkeypatch) -> None:
    """300 messages of 800 KB, each within MAX_COMMIT_BYTES, took the first ``journal search`` 96 s and 1.15 GB: a
    sync sums the sizes of the new commits (headers only) and takes nothing past MAX_SYNC_BYTES, in one line."""
    from code_trajectory.journal import sync

    remote, alice, bob = journal_team
    alice.write("proj", "work_context: setup\n\nfirst", overview="# Project")
    sync_journal(alice, remote=str(remote))
    sync_journal(bob, remote=str(remote))
    head = bob.head()
    for n in range(5):
        alice.write("proj", f"work_context: setup\n\nentry {n} " + "y" * 2000)
    sync_journal(alice)
    monkeypatch.setattr(sync, "MAX_SYNC_BYTES", 5 * 2000)
    with pytest.raises(JournalError, match=r"holds 5 new commits of [0-9,]+ bytes in all, more than one sync takes "
                                           r"\(10,000.*nothing was taken from it"):
        sync_journal(bob)
    assert cli(["--journal-dir", str(bob.root), "sync"]) == 2
    assert bob.head() == head and len(texts(bob, "proj")) == 1
    monkeypatch.setattr(sync, "MAX_SYNC_BYTES", 6 * 2400)
    assert sync_journal(bob).received == 5 and len(texts(bob, "proj")) == 6
