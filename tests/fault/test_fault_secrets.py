"""Secrets never reach the shadow repository, whatever the ignore files say.

A git project with no ``.gitignore`` is recorded by a watched session (debounce 0.3 s).
Every kind of file on the secret deny list — at the root and nested, plus the ``.aws/``,
``.ssh/``, ``.gnupg/`` and ``.docker/`` directories and a ``*.secret`` file denied only by
``deny_patterns`` in ``<CODE_TRAJECTORY_HOME>/config.toml`` — is written with a unique
marker, next to a control file. Phase 0 writes them before recording starts (the start-up
import sees them); phase 1 rewrites them while the watcher runs, then a ``checkpoint``
(full scan) runs. Phase 2 writes a ``.gitignore`` that tries to re-include
them (``!.env``, ``!*.pem``, ``!.aws/`` ...) and rewrites every secret with new markers;
again the watcher, then a checkpoint. Then:

(Nested ``.docker/config.json`` used to leak; fixed, with a regression test at the end.)

* no object of ``.trajectory`` (``cat-file --batch-all-objects --batch``: loose and packed)
  contains any secret marker, while the control markers are found (the search works);
* no file of ``.trajectory`` outside ``objects/`` contains one either;
* no commit of any shadow ref or reflog ever listed a secret path;
* ``get_file_trajectory`` explains that a secret is on the deny list (the config pattern too);
* ``.trajectory`` and its ``state/`` have mode 0700.
"""

from __future__ import annotations

import os
import stat
import time
import uuid
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.history import service as history_service
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.session import ProjectSession
from support import git_repo, write
from support.fault_report import all_objects, report, run_git

#: Paths on the built-in deny list (README "Secrets"), at the root and nested.
BUILTIN_SECRETS = [
    ".env", ".env.local", ".env.production", "key.pem", "server.key", "id_rsa", "id_rsa.pub", "id_dsa",
    "id_ecdsa", "id_ed25519", "id_ed25519.pub", ".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials",
    "credentials.json", "cert.p12", "a.pfx", "store.jks", "app.keystore", "vault.kdbx", "secrets.yml",
    "secrets.yaml", ".htpasswd", ".aws/credentials", ".aws/config", ".ssh/config", ".ssh/id_work",
    ".gnupg/x", ".gnupg/private-keys-v1.d/key.key", ".docker/config.json",
]
NESTED = ["sub/dir/", "src/app/", "deep/a/b/c/"]
#: Denied only by the user's config file.
CONFIG_SECRETS = ["notes.secret", "sub/dir/api.secret"]
REINCLUDE = """\
# tries to re-include secrets: the deny list must win
!.env
!.env.*
!**/.env
!*.pem
!*.key
!id_rsa*
!id_ed25519*
!.npmrc
!credentials.json
!.aws/
!.aws/credentials
!.ssh/
!.ssh/*
!.gnupg/
!*.secret
!**/*.secret
"""


#: Nested copies left out of the main test (none: nested `.docker/config.json` was a bug, now fixed and kept
#: as a regression test below).
KNOWN_BUG_NESTED: set[str] = set()


def secret_paths() -> list[str]:
    paths = list(BUILTIN_SECRETS)
    for prefix in NESTED:
        paths += [prefix + p for p in BUILTIN_SECRETS if p not in KNOWN_BUG_NESTED]
    return paths + CONFIG_SECRETS


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("the watcher did not snapshot in time")


def tip_has(root: Path, rel: str, text: str) -> bool:
    proc = run_git("--git-dir=.trajectory", "cat-file", "blob", f"refs/heads/shadow/main:{rel}", cwd=root,
                   check=False)
    return proc.returncode == 0 and text.encode() in proc.stdout


def test_secrets_never_reach_the_shadow_repository(tmp_path: Path, isolated_env: Path) -> None:
    home = Path(os.environ["CODE_TRAJECTORY_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[trajectory]\ndeny_patterns = ["*.secret"]\n', "utf-8")
    root = git_repo(tmp_path / "project", {"README.md": "no .gitignore here\n"}, branch="main", commit="initial")
    assert not (root / ".gitignore").exists()

    settings = TrajectorySettings.load(root, debounce_seconds=0.3)
    assert "*.secret" in settings.all_deny_patterns
    markers: dict[str, str] = {}  # marker -> path
    controls: list[str] = []
    paths = secret_paths()
    for rel in paths:  # phase 0: secrets already there when recording starts (the start-up import)
        marker = f"SECRET-0-{uuid.uuid4().hex}"
        markers[marker] = rel
        write(root, rel, f"token={marker}\n")
    controls.append(f"CONTROL-0-{uuid.uuid4().hex}")
    write(root, "visible0.txt", controls[0] + "\n")
    # a link with an innocent name to a secret: recorded as a link (its target string), never the content
    (root / "innocent-link").symlink_to(".env")
    session = ProjectSession(root, settings, watch=True)
    session.start()
    assert tip_has(root, "visible0.txt", controls[0])
    try:
        for phase in (1, 2):
            if phase == 2:
                write(root, ".gitignore", REINCLUDE)  # the project has none: a first one tries to re-include
            for rel in paths:
                marker = f"SECRET-{phase}-{uuid.uuid4().hex}"
                markers[marker] = rel
                write(root, rel, f"token={marker}\n")
            control = f"CONTROL-{phase}-{uuid.uuid4().hex}"
            controls.append(control)
            write(root, f"visible{phase}.txt", control + "\n")
            wait_for(lambda phase=phase, control=control: tip_has(root, f"visible{phase}.txt", control))
            time.sleep(1.0)  # let any straggling event of the burst be snapshotted too
            session.checkpoint(f"phase {phase}")
        for rel in ["sub/dir/.env", "notes.secret", ".aws/credentials"]:
            answer = history_service.file_trajectory(session, rel)
            assert "not recorded" in answer and "deny list" in answer, answer
        assert "`*.secret`" in history_service.file_trajectory(session, "sub/dir/api.secret")
    finally:
        session.close()

    raw = all_objects(root)
    leaked = sorted({path for marker, path in markers.items() if marker.encode() in raw})
    assert all(c.encode() in raw for c in controls), "the control markers must be found: the search is broken"
    leaked_files = []
    for dirpath, dirs, files in os.walk(root / ".trajectory"):
        if Path(dirpath) == root / ".trajectory":
            dirs.remove("objects")
        for name in files:
            data = (Path(dirpath) / name).read_bytes()
            leaked_files += [f"{name}: {markers[m]}" for m in markers if m.encode() in data]
    listed = run_git("--git-dir=.trajectory", "log", "--all", "--reflog", "--name-only", "--format=", "-z",
                     cwd=root).stdout.decode("utf-8", "surrogateescape").split("\0")
    secret_set = set(paths)
    listed_secrets = sorted({p.strip("\n") for p in listed} & secret_set)
    mode = stat.S_IMODE(os.stat(root / ".trajectory").st_mode)
    state_mode = stat.S_IMODE(os.stat(root / ".trajectory" / "state").st_mode)
    objects = len(run_git("--git-dir=.trajectory", "cat-file", "--batch-all-objects", "--batch-check",
                          cwd=root).stdout.splitlines())
    failures = len(leaked) + len(leaked_files) + len(listed_secrets) + (mode != 0o700) + (state_mode != 0o700)
    assert run_git("--git-dir=.trajectory", "cat-file", "blob", "refs/heads/shadow/main:innocent-link",
                   cwd=root).stdout == b".env"
    report("secrets", f"secrets: {len(markers)} secret files written ({len(paths)} paths x 3 phases, "
                      f"{len(CONFIG_SECRETS)} via config deny_patterns), {objects} objects searched, "
                      f"{failures} failures",
           secret_writes=len(markers), secret_paths=len(paths), objects_searched=objects, failures=failures,
           leaked=leaked, shadow_mode=oct(mode))
    assert not leaked, f"secret markers found in shadow objects: {leaked}"
    assert not leaked_files, f"secret markers found in .trajectory files: {leaked_files}"
    assert not listed_secrets, f"secret paths listed in shadow commits: {listed_secrets}"
    assert mode == 0o700, oct(mode)
    assert state_mode == 0o700, oct(state_mode)


def test_nested_docker_config_is_denied(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, "sub/dir/.docker/config.json", '{"auths": {"registry": {"auth": "NESTED-DOCKER-MARKER"}}}')
    write(root, ".docker/config.json", '{"auths": {"registry": {"auth": "ROOT-DOCKER-MARKER"}}}')
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        recorder.reconcile()
    finally:
        recorder.close()
    raw = all_objects(root)
    assert b"ROOT-DOCKER-MARKER" not in raw
    assert b"NESTED-DOCKER-MARKER" not in raw
