"""The network call: the user's credentials and ssh settings apply; hooks, signing and second URL rewrites don't.

The user's config is the isolated test HOME's ``~/.gitconfig`` (the conftest points HOME at a temp dir), read by
code-trajectory as a user's git would read it. Transports are real: a fake ``ssh`` that runs ``git receive-pack``
locally, and a small HTTP server running ``git http-backend`` behind basic authentication.
"""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from code_trajectory.core.errors import GitError
from code_trajectory.git.gitcmd import TRANSPORT_RESETS
from code_trajectory.git.project import ProjectRepo
from code_trajectory.share.pull import pull
from code_trajectory.share.push import push
from code_trajectory.share.transport import network_env, resolve_remote, transport_config
from support import git
from support.share_env import ALICE, record, remote_refs


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


def user_config(text: str) -> Path:
    """Write the user's global git config (``~/.gitconfig`` of the isolated HOME)."""
    path = Path(os.environ["HOME"]) / ".gitconfig"
    path.write_text(text)
    return path


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def users_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as the user runs it: with their global config (unlike ``support.git``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_global_hooks_signing_and_tag_following_do_not_apply(team, tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "pre-push-ran"
    script(hooks / "pre-push", f"echo ran >> '{marker}'\nexit 0\n")
    user_config(f"[core]\n\thooksPath = {hooks}\n[push]\n\tgpgSign = true\n\tfollowTags = true\n"
                "[commit]\n\tgpgSign = true\n")
    # the user's own push runs the hook and insists on signing (which this remote cannot take)
    scratch = tmp_path / "scratch.git"
    git(tmp_path, "init", "-q", "--bare", str(scratch))
    mine = users_git(team.alice, "push", str(scratch), "HEAD:refs/heads/x")
    assert marker.exists() and mine.returncode != 0
    marker.unlink()

    record(team.alice, [("src/app.py", "v = 1\n")])
    tags_before = remote_refs(team.remote, "refs/tags")
    report = push(team.alice)
    assert report.refs[0].status == "new"
    assert not marker.exists()  # no pre-push hook ran
    assert remote_refs(team.remote, "refs/tags") == tags_before


def test_url_rewritten_once_and_named_in_the_report(team, tmp_path: Path) -> None:
    evil = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(evil))
    # team: -> the real remote; a second rule would send the real remote's URL elsewhere if applied again
    user_config(f'[url "{team.remote}"]\n\tinsteadOf = team:\n[url "{evil}"]\n\tinsteadOf = {team.remote}\n')
    git(team.alice, "remote", "set-url", "origin", "team:")
    # the user's own `git push origin` goes to the real remote: one rewrite, the longest match
    assert users_git(team.alice, "remote", "get-url", "--push", "origin").stdout.strip() == str(team.remote)
    record(team.alice, [("src/app.py", "v = 1\n")])
    target = resolve_remote(team.alice)
    assert target.url == str(team.remote) and target.configured_url == "team:"
    report = push(team.alice)
    assert f"({team.remote}, rewritten from team: by your url.*.insteadOf)" in report.text()
    assert git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip()
    assert remote_refs(evil) == ""


def test_ssh_command_from_the_users_config_carries_the_push(team, tmp_path: Path) -> None:
    log = tmp_path / "ssh.log"
    fake_ssh = script(tmp_path / "fake-ssh", f'echo "$@" >> "{log}"\nshift\nexec sh -c "git ${{1#git-}}"\n')
    user_config(f"[core]\n\tsshCommand = {fake_ssh}\n[ssh]\n\tvariant = simple\n")
    git(team.alice, "remote", "set-url", "origin", f"ssh://git.example.invalid{team.remote}")
    git(team.bob, "remote", "set-url", "origin", f"ssh://git.example.invalid{team.remote}")
    record(team.alice, [("src/app.py", "v = 1\n")])
    push(team.alice)
    assert "git-receive-pack" in log.read_text() and "git.example.invalid" in log.read_text()
    assert git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip()
    record(team.bob, [])
    assert pull(team.bob).new == [f"refs/remotes-trajectory/{ALICE}/main"]
    assert "git-upload-pack" in log.read_text()


class _GitHttp(BaseHTTPRequestHandler):
    """``git http-backend`` behind basic authentication (user alice, password s3cret)."""

    root: Path
    seen_auth: list[str] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _serve(self) -> None:
        expected = "Basic " + base64.b64encode(b"alice:s3cret").decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.seen_auth.append(self.path)
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_PROJECT_ROOT=str(self.root), GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path, QUERY_STRING=query,
                   REQUEST_METHOD=self.command, CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(len(body)), REMOTE_USER="alice", REMOTE_ADDR="127.0.0.1",
                   HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                   GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _serve
    do_POST = _serve


@contextlib.contextmanager
def git_http_server(remote: Path) -> Iterator[tuple[str, type[_GitHttp]]]:
    """``git http-backend`` serving ``remote``'s directory on loopback, asking for Basic authentication: yields the
    repository's URL and the handler class (its ``seen_auth`` lists the paths of the authenticated requests)."""
    handler = type("Handler", (_GitHttp,), {"root": remote.parent, "seen_auth": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{remote.name}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_credential_helper_from_the_users_config_authenticates_over_http(team, tmp_path: Path) -> None:
    calls = tmp_path / "helper.log"
    helper = script(tmp_path / "helper", f'echo "$1" >> "{calls}"\n'
                                         'if [ "$1" = get ]; then echo username=alice; echo password=s3cret; fi\n')
    user_config(f"[credential]\n\thelper = {helper}\n")
    with git_http_server(team.remote) as (url, handler):
        git(team.alice, "remote", "set-url", "origin", url)
        record(team.alice, [("src/app.py", "v = 1\n")])
        report = push(team.alice)
        assert report.refs[0].status == "new"
        assert "get" in calls.read_text().split()
        assert handler.seen_auth  # the authenticated requests reached git http-backend
        assert git(team.remote, "rev-parse", f"refs/trajectory/{ALICE}/main").strip()


def test_a_password_in_the_remotes_url_is_never_printed_nor_stored(team, tmp_path: Path) -> None:
    """``https://user:token@host/repo.git`` is a common remote (CI, a pasted token): git itself never prints the
    user information, but push and pull put the URL as it was in their reports, their errors, ``status`` and
    ``.trajectory/state/share.json``. They now show it as git does; the network call still authenticates with it."""
    from code_trajectory.share.service import share_status_lines

    with git_http_server(team.remote) as (shown, handler):
        git(team.alice, "remote", "set-url", "origin", shown.replace("//", "//alice:s3cret@"))
        record(team.alice, [("src/app.py", "v = 1\n")])
        report = push(team.alice)
        assert report.refs[0].status == "new" and handler.seen_auth  # authenticated by the URL's password
        git(team.bob, "remote", "set-url", "origin", shown.replace("//", "//alice:s3cret@"))
        pulled = pull(team.bob)
        texts = [report.text(), pulled.text(), *share_status_lines(team.alice),
                 (team.alice / ".trajectory" / "state" / "share.json").read_text(),
                 (team.bob / ".trajectory" / "state" / "share.json").read_text()]
        assert all("s3cret" not in text for text in texts), texts
        assert f"({shown})" in report.text() and f"({shown})" in pulled.text()
        git(team.alice, "remote", "set-url", "origin", "http://alice:s3cret@127.0.0.1:9/nowhere.git")
        with pytest.raises(GitError) as failed:
            push(team.alice)
        assert "s3cret" not in str(failed.value) and "(http://127.0.0.1:9/nowhere.git)" in str(failed.value)


def test_transport_config_takes_credentials_and_transport_keys_only(team) -> None:
    user_config("[credential]\n\thelper = store\n[url \"https://mirror.invalid/\"]\n\tinsteadOf = https://x/\n"
                "[core]\n\thooksPath = /tmp/hooks\n\tsshCommand = ssh -i key\n[user]\n\tsigningKey = ABC\n")
    git(team.alice, "config", "http.https://example.com/.extraHeader", "AUTHORIZATION: basic dG9rZW4=")
    git(team.alice, "config", "--add", "credential.helper", "")
    git(team.alice, "config", "--add", "credential.helper", "cache")
    picked = transport_config(ProjectRepo.discover(team.alice))
    system = len(system_transport_keys())  # the machine's /etc/gitconfig may hold a helper too: it comes first
    keys = [k.lower() for k, _ in picked][system:]
    assert keys == ["credential.helper", "core.sshcommand", "http.https://example.com/.extraheader",
                    "credential.helper", "credential.helper"]
    assert [v for k, v in picked[system:] if k == "credential.helper"] == ["store", "", "cache"]  # "" resets
    env = network_env(resolve_remote(team.alice))
    resets = len(TRANSPORT_RESETS) + 1  # gitcmd's resets and core.sshCommand come first: the user's follow
    assert [env[f"GIT_CONFIG_KEY_{n}"] for n in range(resets)] == [k for k, _ in TRANSPORT_RESETS] + [
        "core.sshCommand"]
    assert env["GIT_CONFIG_COUNT"] == str(resets + system + 5) and env["GIT_TERMINAL_PROMPT"] == "0"
    assert env[f"GIT_CONFIG_VALUE_{resets + system + 2}"] == "AUTHORIZATION: basic dG9rZW4="
    assert not any("insteadof" in v.lower() or "hookspath" in v.lower() for v in env.values())


def system_transport_keys() -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out = subprocess.run(["git", "config", "--system", "--list", "--name-only"], env=env, capture_output=True,
                         text=True).stdout.split()
    return [k for k in out if k.lower().startswith(("credential.", "http.")) or k.lower() in
            ("core.sshcommand", "core.askpass", "core.gitproxy", "ssh.variant", "protocol.version")]
