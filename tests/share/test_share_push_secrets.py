"""A push sends no snapshot holding a token-format secret (real git, real recorder, a real bare remote)."""

from __future__ import annotations

import subprocess

import pytest

from code_trajectory.cli import main
from code_trajectory.core.errors import SecretInPushError
from code_trajectory.share import secret_scan
from code_trajectory.share.push import maybe_auto_push, push
from support import git, write_user_config
from support.share_env import record, remote_refs, shadow_git

ANTHROPIC = "sk-ant-api03-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789" * 2
AWS_PAIR = 'AWS_ACCESS_KEY_ID = "AKIAQ3EGRT7RJ5XKP2ZV"\nAWS_SECRET_ACCESS_KEY = "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"\n'
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _remote_blobs(remote) -> str:
    """Every blob of the bare remote, as one text."""
    oids = git(remote, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)").splitlines()
    return "".join(git(remote, "cat-file", "blob", line.split()[0]) for line in oids if line.endswith(" blob"))


def test_a_secret_added_then_removed_is_not_pushed_and_the_error_says_where(team, capsys) -> None:
    record(team.alice, [("src/app.py", f'API_KEY = "{ANTHROPIC}"\ndef main():\n    return 1\n'),
                        ("src/app.py", "def main():\n    return 2\n")])
    adding = shadow_git(team.alice, "rev-list", "-n1", "refs/heads/shadow/main~1").strip()
    refs_before = remote_refs(team.remote)

    with pytest.raises(SecretInPushError) as err:
        push(team.alice)
    message = str(err.value)
    assert "nothing was pushed" in message and "`src/app.py`" in message and adding[:12] in message
    assert "Anthropic or OpenAI key" in message and "--allow-secrets" in message
    assert ANTHROPIC not in message  # the error names the secret's kind, never the secret
    assert remote_refs(team.remote) == refs_before  # nothing written, no trajectory ref
    assert "sk-ant-" not in _remote_blobs(team.remote)

    dry = push(team.alice, dry_run=True)  # a dry run lists them and writes nothing
    assert [f.paths for f in dry.scan.findings] == [["src/app.py"]] and "Would be refused" in dry.text()
    assert remote_refs(team.remote) == refs_before

    assert main(["push", "--project", str(team.alice)]) == 2  # the CLI: one error, status 2
    assert "Anthropic or OpenAI key" in capsys.readouterr().err

    sent = push(team.alice, allow_secrets=True)  # the explicit flag sends it, and the report says so
    assert [r.status for r in sent.refs] == ["new"] and "Sent with --allow-secrets" in sent.text()
    assert "sk-ant-" in _remote_blobs(team.remote)


def test_auto_push_sends_nothing_holding_a_secret(team) -> None:
    record(team.alice, [("src/keys.py", AWS_PAIR), ("src/keys.py", "import os\n")])
    write_user_config("[share]\nauto_push = true\n")
    refs_before = remote_refs(team.remote)
    assert maybe_auto_push(team.alice) is None
    assert remote_refs(team.remote) == refs_before


def test_ordinary_code_with_secret_names_is_pushed(team) -> None:
    code = ("class Login:\n    def __init__(self, password, token):\n        self.password = password\n"
            "        self.api_key = token\n\nDSN = 'postgres://user:password@localhost/db'\n"
            "headers = {'Authorization': 'Bearer ' + token}\n")
    record(team.alice, [("src/login.py", code)])
    report = push(team.alice)
    assert [r.status for r in report.refs] == ["new"] and not report.scan.findings
    assert report.scan.blobs >= 2


def test_an_incremental_push_scans_only_what_the_remote_lacks(team) -> None:
    record(team.alice, [(f"src/m{i}.py", f"X = {i}\n") for i in range(10)])
    push(team.alice)
    record(team.alice, [("src/deploy.py", f'TOKEN = "{GITHUB}"\n')])
    dry = push(team.alice, dry_run=True)
    assert dry.scan.blobs <= 2  # the new file (and the data ref's JSON), not the ten pushed before
    assert [(f.paths, f.kind) for f in dry.scan.findings] == [(["src/deploy.py"], "GitHub token")]
    with pytest.raises(SecretInPushError, match="src/deploy.py"):
        push(team.alice)


def test_consolidated_is_offered_when_the_secret_came_after_the_last_consolidation(team) -> None:
    record(team.alice, [("src/app.py", "def main():\n    return 2\n")], consolidate_as="Return 2")
    record(team.alice, [("src/app.py", f'KEY = "{ANTHROPIC}"\n'), ("src/app.py", "def main():\n    return 3\n")])
    with pytest.raises(SecretInPushError, match="push --consolidated"):
        push(team.alice)
    report = push(team.alice, consolidated=True)  # what it offered works
    assert [r.status for r in report.refs] == ["new"] and "sk-ant-" not in _remote_blobs(team.remote)


def test_a_secret_across_two_chunks_of_a_blob_is_found(team, monkeypatch) -> None:
    monkeypatch.setattr(secret_scan, "CHUNK_BYTES", 4096)
    text = "# padding\n" * 409 + f"K = '{GITHUB}'\n" + "# more\n" * 2000
    assert text.index("ghp_") < 4096 < text.index("ghp_") + len(GITHUB)  # the token straddles the cut
    record(team.alice, [("src/big.py", text)])
    with pytest.raises(SecretInPushError, match="GitHub token"):
        push(team.alice)


def test_a_private_key_committed_under_an_ordinary_name_is_not_pushed(team) -> None:
    """The initial import takes committed files' blob ids from the project's index unread (reading them all would
    cost it what it saves at 500,000 files), so a key committed as ``notes.txt`` is in the history; the project's git
    holds it already, and push, which reads what it sends, refuses it."""
    pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gt\n"
           "-----END OPENSSH PRIVATE KEY-----\n")
    (team.alice / "notes.txt").write_text(pem)
    git(team.alice, "add", "notes.txt")
    git(team.alice, "commit", "-qm", "notes")
    record(team.alice, [("src/app.py", "def main():\n    return 3\n")])
    refs_before = remote_refs(team.remote)
    with pytest.raises(SecretInPushError) as err:
        push(team.alice)
    assert "`notes.txt`" in str(err.value) and "private key" in str(err.value)
    assert remote_refs(team.remote) == refs_before and "PRIVATE KEY" not in _remote_blobs(team.remote)


SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"


def _remote_objects(remote) -> bytes:
    """Every object of the bare remote (commits, trees, blobs), raw, as one byte string."""
    return subprocess.run(["git", f"--git-dir={remote}", "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, check=True).stdout


def test_a_token_in_a_file_name_is_not_pushed_and_the_error_does_not_repeat_it(team) -> None:
    """A path is in the snapshot's trees and in its message: neither goes, whatever the file holds."""
    record(team.alice, [(f"notes/{GITHUB}.txt", "hello\n")])
    refs_before = remote_refs(team.remote)
    with pytest.raises(SecretInPushError) as err:
        push(team.alice)
    message = str(err.value)
    assert "GitHub token" in message and "name" in message and "message of snapshot" in message
    assert GITHUB not in message  # the path holds the secret: it is named redacted
    assert remote_refs(team.remote) == refs_before and GITHUB.encode() not in _remote_objects(team.remote)
    assert "`notes/`" in push(team.alice, dry_run=True).text()  # the directory whose listing holds it


def test_a_pushed_file_renamed_to_a_token_is_not_pushed(team) -> None:
    """The blob is on the remote already: only the new tree and the snapshot's message carry the name."""
    record(team.alice, [("src/notes.txt", "hello\n")])
    push(team.alice)
    record(team.alice, [(f"{SLACK}.txt", "hello\n")])
    with pytest.raises(SecretInPushError, match="Slack token"):
        push(team.alice)
    assert SLACK.encode() not in _remote_objects(team.remote)


def test_a_branch_named_with_a_token_is_not_pushed(team) -> None:
    git(team.alice, "checkout", "-q", "-b", f"fix/{GITHUB}")
    record(team.alice, [("src/app.py", "def main():\n    return 5\n")])
    refs_before = remote_refs(team.remote)
    with pytest.raises(SecretInPushError) as err:
        push(team.alice)
    assert "ref name refs/trajectory/alice@example.com/fix/[redacted]" in str(err.value)
    assert GITHUB not in str(err.value) and "push --consolidated" not in str(err.value)
    assert remote_refs(team.remote) == refs_before and GITHUB.encode() not in _remote_objects(team.remote)
    push(team.alice, allow_secrets=True)  # the flag sends it
    assert GITHUB in remote_refs(team.remote)


def test_the_shared_data_holding_a_secret_is_not_called_a_snapshot(team) -> None:
    # the branch's name is in its data commit (points, intent, its message): that commit is no snapshot
    git(team.alice, "checkout", "-q", "-b", f"fix/{GITHUB}")
    record(team.alice, [("src/app.py", "def main():\n    return 5\n")])
    tip = shadow_git(team.alice, "rev-parse", f"refs/heads/shadow/fix/{GITHUB}").strip()
    dry = push(team.alice, dry_run=True)
    data = dry.data_sent[0].new
    assert dry.scan.data == {data}
    with pytest.raises(SecretInPushError) as err:
        push(team.alice)
    message = str(err.value)
    assert "snapshot(s) and the shared data of 1 branch(es) it would send" in message
    assert f"{tip[:12]}" in message
    assert f" and of the shared data (named points, intent, test runs) {data[:12]}: GitHub token" in message
    assert f"snapshot(s) {data[:12]}" not in message and f", {data[:12]}" not in message
    assert GITHUB not in message
