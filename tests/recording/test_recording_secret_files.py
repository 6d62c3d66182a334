"""Issue 21, part 7: the deny list matches the credential files the issue found recorded, by name and by content
(any file holding a private key block, an npm token), at no extra read; ``status`` says how many were skipped."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support import git, server_command, wait_hooks_done, write

PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
SECRET_FILES = {
    ".pgpass": "db.example.com:5432:app:alice:pgPASSWORD42\n",
    ".envrc": "export API_TOKEN=envrcSECRET42\n",
    "infra/terraform.tfstate": '{"resources": [{"password": "tfstateSECRET42"}]}\n',
    "kubeconfig": "users:\n- name: a\n  user:\n    token: kubeSECRET42\n",
    ".vault-token": "hvs.vaultSECRET42\n",
    ".netrc": "machine example.com login a password netrcSECRET42\n",
    ".npmrc": "//registry.npmjs.org/:_authToken=npmrcSECRET42\n",
    ".pypirc": "[pypi]\npassword = pypircSECRET42\n",
    # an editor's or a tool's copy of one
    ".env~": "API_KEY=envBACKUP42\n",
    "config/server.key.bak": "keyBACKUP42\n",
    "credentials.json.orig": '{"secret": "credsORIG42"}\n',
    # caught by content, whatever the name
    "config/service-account.json": json.dumps({"type": "service_account", "private_key_id": "saSECRET42",
                                               "private_key": PEM}),
    "deploy_key": PEM.replace("b3Blbn", "deployKEY42b3Blbn"),
    "tools/yarn-auth.txt": "//npm.example.com/:_authToken=yarnSECRET42\n",
    # the names a review found recorded: in another case, and tools' credential files
    ".ENV": "API_KEY=upperENV42\n",
    "certs/Server.KEY": "upperKEY42\n",
    "infra/prod.tfvars": 'db_password = "tfvarsSECRET42"\n',
    ".streamlit/secrets.toml": 'api = "streamlitSECRET42"\n',
    ".my.cnf": "[client]\npassword=mycnfSECRET42\n",
    ".s3cfg": "[default]\nsecret_key = s3cfgSECRET42\n",
    ".config/gh/hosts.yml": "github.com:\n  oauth_token: ghSECRET42\n",
    "gcloud/application_default_credentials.json": '{"refresh_token": "adcSECRET42"}\n',
}
MARKERS = ("pgPASSWORD42", "envrcSECRET42", "tfstateSECRET42", "kubeSECRET42", "vaultSECRET42", "netrcSECRET42",
           "npmrcSECRET42", "pypircSECRET42", "envBACKUP42", "keyBACKUP42", "credsORIG42", "saSECRET42", "deployKEY42", "yarnSECRET42",
           "upperENV42", "upperKEY42", "tfvarsSECRET42", "streamlitSECRET42", "mycnfSECRET42", "s3cfgSECRET42",
           "ghSECRET42", "adcSECRET42")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*server_command(), *args], capture_output=True, text=True, timeout=120)


def shadow_objects(project: Path) -> str:
    out = subprocess.run(["git", "--git-dir", str(project / ".trajectory"), "cat-file", "--batch-all-objects",
                          "--batch"], capture_output=True, check=True, timeout=60).stdout
    return out.decode("utf-8", "replace")


def test_credential_files_are_never_recorded_and_status_counts_them(project: Path) -> None:
    for rel, text in SECRET_FILES.items():
        write(project, rel, text)
    write(project, "src/keys.md", "How to make a key: run ssh-keygen; never paste the PRIVATE KEY here.\n")
    done = cli("checkpoint", "--project", str(project), "-m", "start")
    assert done.returncode == 0, done.stderr
    recorded = set(git(project, "--git-dir", str(project / ".trajectory"), "ls-tree", "-r", "--name-only",
                       "refs/heads/shadow/main").split())
    assert "src/app.py" in recorded and "src/keys.md" in recorded
    assert not recorded & set(SECRET_FILES)
    objects = shadow_objects(project)
    assert not [m for m in MARKERS if m in objects]
    status = cli("status", "--project", str(project))
    assert status.returncode == 0, status.stderr
    assert f"{len(SECRET_FILES)} files skipped as secrets" in status.stdout, status.stdout
    assert "(it holds a private key)" in status.stdout  # a file kept out by its content says why

    # a recorded file that comes to hold a key is dropped from the next snapshot, and counted
    write(project, "src/app.py", "KEY = '''\n" + PEM + "'''\n")
    assert cli("checkpoint", "--project", str(project), "-m", "pasted a key").returncode == 0
    tip = git(project, "--git-dir", str(project / ".trajectory"), "ls-tree", "-r", "--name-only",
              "refs/heads/shadow/main").split()
    assert "src/app.py" not in tip and "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in shadow_objects(project)
    assert f"{len(SECRET_FILES) + 1} files skipped as secrets" in cli("status", "--project", str(project)).stdout


def test_a_hook_snapshot_of_a_file_holding_a_key_leaves_it_out(project: Path) -> None:
    assert cli("checkpoint", "--project", str(project), "-m", "start").returncode == 0
    write(project, "src/app.py", PEM)
    payload = {"session_id": "s", "cwd": str(project), "tool_name": "Write",
               "tool_input": {"file_path": str(project / "src" / "app.py")}}
    done = subprocess.run([*server_command(), "hook", "edit", "--project", str(project)], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    wait_hooks_done(project)  # nothing records the project: the edit worker the hook started takes the snapshot
    tip = git(project, "--git-dir", str(project / ".trajectory"), "ls-tree", "-r", "--name-only",
              "refs/heads/shadow/main").split()
    assert "src/app.py" not in tip and "tests/test_app.py" in tip
    assert "1 file skipped as secrets (never recorded): src/app.py (it holds a private key)" in \
        cli("status", "--project", str(project)).stdout
    write(project, "src/app.py", "def main():\n    return 3\n")  # the key is gone: recorded again, not counted
    subprocess.run([*server_command(), "hook", "edit", "--project", str(project)], input=json.dumps(payload),
                   capture_output=True, text=True, timeout=120, check=True)
    wait_hooks_done(project)
    assert "0 files skipped as secrets" in cli("status", "--project", str(project)).stdout


def test_the_trajectory_of_a_file_kept_out_by_its_content_says_why(project: Path) -> None:
    """A file named like any other but holding a private key: get_file_trajectory said it "has not been snapshotted
    yet (saved less than the debounce ago?); call `checkpoint` to record it now", which never records it."""
    write(project, "deploy_key_copy.txt", PEM)
    assert cli("checkpoint", "--project", str(project), "-m", "start").returncode == 0
    trajectory = cli("file", "--project", str(project), "deploy_key_copy.txt")
    assert trajectory.returncode == 0, trajectory.stderr
    assert "It is not recorded: it holds a private key." in trajectory.stdout, trajectory.stdout
    assert "call `checkpoint`" not in trajectory.stdout
    compared = cli("compare", "--project", str(project), "start", "now", "--file", "deploy_key_copy.txt")
    assert "it is not recorded (it holds a private key)" in compared.stdout, compared.stdout
