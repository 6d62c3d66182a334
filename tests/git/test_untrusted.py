"""Everything inside ``.trajectory/`` is untrusted (issue 21): no program named by the shadow repository's
config, by the project's or the shadow's attributes ever runs, through the CLI and the in-memory MCP client.

Each attack points git at a script that would create a marker file (``tests/support/hostile.py``); every test asserts
that no marker appears and that the commands still answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.git.gitcmd import Git
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.shadow_config import SHADOW_REPO_CONFIG
from code_trajectory.git.untrusted import vet
from support import git, mcp_client, write
from support.hostile import commit_history_into_project, fired, make_programs, poison_shadow

pytestmark = pytest.mark.anyio


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m code_trajectory ARGS`` as a user runs it (no GIT_* variables), never failing the test itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def recorded(project: Path) -> Path:
    """``project`` with two checkpoints recorded through the CLI (the second changes ``src/app.py``)."""
    ok(cli("checkpoint", "-m", "first", cwd=project))
    write(project, "src/app.py", "def main():\n    return 2\n")
    ok(cli("checkpoint", "-m", "second", cwd=project))
    return project


def config_pairs(git_dir: Path) -> list[tuple[str, str]]:
    out = git(git_dir, "config", "--file", str(git_dir / "config"), "--list", "--no-includes")
    return [tuple(line.split("=", 1)) for line in out.splitlines()]  # type: ignore[misc]


def test_every_shadow_call_gets_the_forced_overrides(tmp_path: Path) -> None:
    shadow = Git(tmp_path / ".trajectory", tmp_path, isolated=True)
    diff = shadow.argv(["diff-tree", "-p", "HEAD"])
    assert diff[1] == "--no-pager"
    assert diff[diff.index("diff-tree") + 1:diff.index("diff-tree") + 3] == ["--no-ext-diff", "--no-textconv"]
    for forced in ("log.showSignature=false", "core.pager=cat", "protocol.allow=never", "protocol.ext.allow=never",
                   f"gpg.program={os.devnull}", f"core.attributesFile={os.devnull}", "core.fsmonitor=false"):
        assert forced in diff
    fetch = shadow.argv(["-c", "fetch.fsckObjects=true", "fetch", "--stdin", "/some/url"])
    assert "protocol.allow=never" not in fetch and "protocol.ext.allow=never" in fetch  # a pull may use a transport
    assert "--no-textconv" not in fetch
    env = shadow.env
    keys = [env[f"GIT_CONFIG_KEY_{n}"] for n in range(int(env["GIT_CONFIG_COUNT"]))]
    assert keys[:3] == ["credential.helper", "core.askPass", "core.sshCommand"]
    assert env["GIT_ATTR_NOSYSTEM"] == "1" and env["GIT_PAGER"] == "cat" and env["GIT_EDITOR"] == "true"
    project = Git(tmp_path / ".git", None, isolated=False).argv(["ls-files"])
    assert project[1] == "--no-pager" and "core.fsmonitor=false" in project


def test_config_is_reduced_to_our_keys_and_the_removal_reported_once(project: Path, tmp_path: Path) -> None:
    with ShadowRepo(project) as repo:
        repo.ensure()
    bin_dir, markers = make_programs(tmp_path / "attack")
    git_dir = project / ".trajectory"
    git(git_dir, "config", "--file", "config", "diff.x.textconv", str(bin_dir / "textconv"))
    git(git_dir, "config", "--file", "config", "core.fsmonitor", str(bin_dir / "fsmonitor"))  # ours, wrong value
    git(git_dir, "config", "--file", "config", "--add", "gc.auto", "0")  # a duplicate of ours: dropped silently
    git(git_dir, "config", "--file", "config", "include.path", str(tmp_path / "elsewhere.cfg"))
    git(git_dir, "config", "--file", "config", "extensions.partialClone", "origin")
    git(git_dir, "config", "--file", "config", "remote.origin.url", "ext::sh -c touch% /tmp/pwned")
    removed = vet(git_dir)
    assert sorted(removed) == ["core.fsmonitor", "diff.x.textconv", "extensions.partialclone", "include.path",
                               "remote.origin.url"]
    pairs = dict(config_pairs(git_dir))
    for key, value in SHADOW_REPO_CONFIG:  # every key of the table survives, with the table's value
        assert pairs[key.lower()] == value
    assert set(pairs) - {k.lower() for k, _ in SHADOW_REPO_CONFIG} <= {"core.repositoryformatversion",
                                                                        "core.filemode"}
    assert len(config_pairs(git_dir)) == len(pairs)  # no duplicate left
    assert vet(git_dir) == []  # reported once: the next open finds nothing to remove
    assert fired(markers) == []


@pytest.mark.slow
def test_cli_commands_run_no_program_of_a_hostile_shadow(project: Path, tmp_path: Path) -> None:
    recorded(project)
    markers = poison_shadow(project, tmp_path / "attack")
    first = cli("log", cwd=project)
    assert "checkpoint: second" in ok(first)
    assert "config held settings code-trajectory does not write" in first.stderr
    assert "diff.x.textconv" in first.stderr and "gpg.program" in first.stderr and "include.path" in first.stderr
    poison_shadow(project, tmp_path / "again")  # written in place again: reduced again, nothing runs
    for args in (["log", "--limit", "5"], ["search", "return"], ["search", "--regex", "return [0-9]"],
                 ["file", "src/app.py"], ["symbol", "src/app.py", "main"], ["compare", "~1"], ["session"],
                 ["status"], ["since-green"], ["restore", "--dry-run", "~1", "src/app.py"]):
        ok(cli(*args, cwd=project))
    assert "return 2" in ok(cli("file", "src/app.py", cwd=project))
    second = cli("log", cwd=project)
    assert "config held settings" not in second.stderr  # reported once
    assert fired(markers) == [] and fired(tmp_path / "again" / "markers") == []


async def test_forced_overrides_hold_without_the_reducer(project: Path, tmp_path: Path) -> None:
    """The config is poisoned *after* the server opened (and vetted) the shadow repository: only the overrides
    every git process gets stand between the attack and git."""
    recorded(project)
    async with mcp_client(project) as client:
        markers = poison_shadow(project, tmp_path / "attack")
        with open(project / ".trajectory" / "info" / "attributes", "a") as attrs:
            attrs.write("*.py diff=python\n")  # the built-in driver name, given a textconv by the poisoned config
        answers = {}
        for name, args in (("get_file_trajectory", {"filepath": "src/app.py"}),
                           ("get_symbol_trajectory", {"filepath": "src/app.py", "symbol": "main"}),
                           ("search_trajectory", {"query": "return"}),
                           ("search_trajectory", {"query": "return [12]", "regex": True}),
                           ("get_global_trajectory", {}), ("compare", {"from_snapshot": "~1"}),
                           ("get_session_summary", {}), ("restore", {"snapshot": "~1", "dry_run": True}),
                           ("checkpoint", {"message": "after the attack"})):
            result = await client.call_tool(name, args)
            body = "\n".join(block.text for block in result.content)
            assert not result.is_error, f"{name}: {body}"
            answers[name] = body
        assert "return 2" in answers["get_file_trajectory"] and "return 1" in answers["search_trajectory"]
    assert fired(markers) == []


@pytest.mark.slow
def test_cloned_trajectory_is_refused_with_one_line(tmp_path: Path) -> None:
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    git(attacker, "init", "-q", "-b", "main")
    write(attacker, "src/app.py", "def main():\n    return 1\n")
    ok(cli("checkpoint", "-m", "bait", cwd=attacker))
    markers = poison_shadow(attacker, tmp_path / "attack")
    commit_history_into_project(attacker)
    victim = tmp_path / "victim"
    git(tmp_path, "clone", "-q", str(attacker), str(victim))
    assert (victim / ".trajectory" / "HEAD").is_file()
    for args in (["log"], ["search", "return"], ["file", "src/app.py"], ["session"], ["status"],
                 ["checkpoint", "-m", "x"], ["ui", "--no-browser", "--port", "0"]):
        proc = cli(*args, cwd=victim)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("code-trajectory: error: "), proc.stderr
        assert "tracked by the project's git" in lines[0] and "mv " in lines[0] and "creates a new one" in lines[0]
    assert fired(markers) == []
    assert "return 1" not in git(victim, "status", "--porcelain")  # nothing of the project changed
    git(victim, "rm", "-r", "-q", "--cached", ".trajectory")  # the line's advice, followed
    (victim / ".trajectory").rename(victim / ".trajectory.corrupt-untrusted")
    ok(cli("checkpoint", "-m", "mine", cwd=victim))
    assert 'checkpoint: mine' in ok(cli("log", cwd=victim))
    assert fired(markers) == []


def test_an_incomplete_cloned_trajectory_is_refused_before_it_is_repaired(tmp_path: Path) -> None:
    """A clone holding a tracked ``.trajectory`` with only ``HEAD`` and ``config`` (no objects: incomplete): the
    command that records repaired it in place (``git init`` over it rewrote the tracked config) and only then refused
    it. It is now refused first; nothing of the project changes."""
    victim = tmp_path / "victim"
    victim.mkdir()
    git(victim, "init", "-q", "-b", "main")
    write(victim, "app.py", "x = 1\n")
    write(victim, ".trajectory/HEAD", "ref: refs/heads/shadow/main\n")
    write(victim, ".trajectory/config", "[core]\n\tfsmonitor = touch pwned\n")
    git(victim, "add", "-A")
    git(victim, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "a history that came with the clone")
    proc = cli("checkpoint", "-m", "x", cwd=victim)
    assert proc.returncode == 2 and "tracked by the project's git" in proc.stderr, proc.stdout + proc.stderr
    assert git(victim, "status", "--porcelain") == "" and not (victim / ".trajectory" / "objects").exists()


def test_files_a_pull_plants_in_an_existing_trajectory_are_refused(tmp_path: Path) -> None:
    """The victim's ``.trajectory`` exists and was vetted; a pull brings ``.trajectory/config.toml`` (the secret deny
    list turned off) without touching the shadow's ``config``: the next opening asks git again and refuses."""
    victim = tmp_path / "victim"
    victim.mkdir()
    git(victim, "init", "-q", "-b", "main")
    write(victim, "app.py", "x = 1\n")
    git(victim, "add", "app.py")
    git(victim, "commit", "-qm", "app")
    ok(cli("checkpoint", "-m", "mine", cwd=victim))
    ok(cli("log", cwd=victim))  # vetted, stamped
    attacker = tmp_path / "attacker"
    git(tmp_path, "clone", "-q", str(victim), str(attacker))
    write(attacker, ".trajectory/config.toml", "[trajectory]\nuse_default_deny_patterns = false\n")
    git(attacker, "add", "-f", ".trajectory/config.toml")
    git(attacker, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "a teammate's commit")
    git(victim, "pull", "-q", "--no-rebase", str(attacker), "main")
    assert (victim / ".trajectory" / "config.toml").is_file() and (victim / ".trajectory" / "HEAD").is_file()
    write(victim, ".env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    proc = cli("checkpoint", "-m", "after the pull", cwd=victim)
    assert proc.returncode == 2 and "tracked by the project's git" in proc.stderr, proc.stdout + proc.stderr
    objects = subprocess.run(["git", "--git-dir", str(victim / ".trajectory"), "cat-file", "--batch-all-objects",
                              "--batch"], capture_output=True).stdout
    assert b"wJalrXUtnFEMI" not in objects


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a directory to another user "
                    "needs root (chown)")
def test_another_users_trajectory_is_refused(project: Path, tmp_path: Path) -> None:
    recorded(project)
    markers = poison_shadow(project, tmp_path / "attack")
    os.chown(project / ".trajectory", 4242, 4242)
    proc = cli("log", cwd=project)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "belongs to another user (uid 4242" in proc.stderr, proc.stderr
    assert fired(markers) == []


def test_linked_git_directory_is_refused(project: Path, tmp_path: Path) -> None:
    recorded(project)
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    (project / ".trajectory" / "commondir").write_text(str(elsewhere) + "\n")
    proc = cli("log", cwd=project)
    assert proc.returncode == 2 and "linked git directory" in proc.stderr and "Traceback" not in proc.stderr


def test_a_key_added_to_the_table_later_is_kept_whatever_its_shape(project: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """"Our keys" are the table's: a key with a subsection and a value that needs quoting survives the rewrite."""
    from code_trajectory.git import untrusted

    with ShadowRepo(project) as repo:
        repo.ensure()
    extra = (("trajectory.Odd Sub.someKey", 'a "quoted" \\ value\twith tab'), ("core.bare", "false"))
    monkeypatch.setattr(untrusted, "SHADOW_REPO_CONFIG", SHADOW_REPO_CONFIG + extra)
    git_dir = project / ".trajectory"
    git(git_dir, "config", "--file", "config", "diff.x.textconv", "/bin/false")
    assert vet(git_dir) == ["diff.x.textconv"]
    pairs = dict(config_pairs(git_dir))
    assert pairs["trajectory.Odd Sub.somekey"] == 'a "quoted" \\ value\twith tab'
    assert "diff.x.textconv" not in pairs and pairs["core.bare"] == "false"
    assert vet(git_dir) == []


def test_a_promisor_remote_in_the_config_never_reaches_out(project: Path, tmp_path: Path) -> None:
    """A shadow config turned into a partial clone (written in place after the open, so only the overrides
    stand): reading a missing object would make git fetch it lazily through an ``ext::`` command."""
    recorded(project)
    marker = tmp_path / "fetched"
    with ShadowRepo(project) as repo:
        git_dir = project / ".trajectory"
        for key, value in (("core.repositoryFormatVersion", "1"), ("extensions.partialClone", "origin"),
                           ("remote.origin.promisor", "true"), ("protocol.ext.allow", "always"),
                           ("remote.origin.url", f"ext::sh -c touch% {marker}")):
            git(git_dir, "config", "--file", "config", key, value)
        assert repo.read_object("1234567890" * 4) is None
        assert repo.resolve("refs/heads/shadow/main") is not None
    assert not marker.exists()
    plain = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", "1234567890" * 4],
                           capture_output=True)
    assert plain.returncode != 0 and marker.exists()  # the attack is real without the overrides


def test_the_project_index_stamp_reads_a_gitfile_bounded_and_never_waits(tmp_path: Path) -> None:
    """The vetting stamp finds the project's index as git does (a ``.git`` directory, or a ``gitdir:`` file of a
    linked worktree), without running git; a ``.git`` that is a FIFO answers "?" (check every time), not a hang."""
    from code_trajectory.git.vet_stamp import index_stamp

    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    write(main, "a.py", "x = 1\n")
    git(main, "add", "a.py")
    assert index_stamp(main / "sub" / "dir").startswith(f"{main / '.git' / 'index'} ")  # found upwards
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {main / '.git'}\n")
    assert index_stamp(linked).startswith(f"{main / '.git' / 'index'} ")
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / ".git")
    assert index_stamp(fifo) == "?"


def unpacked(project: Path, tmp_path: Path) -> Path:
    """A copy of the recorded ``project`` elsewhere, as a tarball unpacks it (new inodes: no valid stamp)."""
    import shutil

    copy = tmp_path / "unpacked"
    shutil.copytree(recorded(project), copy, symlinks=True)
    return copy


@pytest.mark.parametrize("planted", ["logs/HEAD", "refs/heads/shadow", "objects", "state"])
def test_a_link_in_a_shipped_trajectory_is_refused_before_anything_is_written_where_it_leads(
        project: Path, tmp_path: Path, planted: str) -> None:
    """git writes through a link (a reflog line appended to the file ``logs/HEAD`` leads to, a ref or an object
    created in the directory a linked ``refs/heads/shadow`` or ``objects`` leads to) and the opening clears stale
    ``tmp_*`` files under ``objects/``: a link in a ``.trajectory`` that came in a tarball must reach none of them."""
    import shutil

    copy = unpacked(project, tmp_path)
    inside = copy / ".trajectory" / planted
    outside = tmp_path / "outside"
    if inside.is_dir():
        shutil.copytree(inside, outside)
        shutil.rmtree(inside)
    else:
        shutil.copy2(inside, outside)
        inside.unlink()
    if planted == "objects":
        (outside / "tmp_notes.txt").write_text("the user's own file\n")
        os.utime(outside / "tmp_notes.txt", (0, 0))  # older than any stale-file age
    inside.symlink_to(outside)
    before = {p: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()} if outside.is_dir() else \
        {outside: outside.read_bytes()}
    write(copy, "src/app.py", "def main():\n    return 3\n")
    for args in (["log"], ["checkpoint", "-m", "after unpacking"]):
        proc = cli(*args, cwd=copy)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and f"{inside} is a symlink" in proc.stderr, proc.stderr
    after = {p: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()} if outside.is_dir() else \
        {outside: outside.read_bytes()}
    assert after == before


@pytest.mark.parametrize("planted", ["state/config-checked", ".gitignore", "refs/heads/shadow/main", "loose"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_endless_file_in_a_shipped_trajectory_is_refused_at_once(project: Path, tmp_path: Path,
                                                                           planted: str, kind: str) -> None:
    """Files the opening reads itself (the stamp, ``.gitignore``) and files git reads (a ref, a loose object): a FIFO
    made every command wait, a link to ``/dev/zero`` read until memory ran out."""
    copy = unpacked(project, tmp_path)
    git_dir = copy / ".trajectory"
    if planted == "loose":
        planted = str(next((git_dir / "objects").glob("[0-9a-f][0-9a-f]/*")).relative_to(git_dir))
    target = git_dir / planted
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    proc = cli("log", cwd=copy)
    assert proc.returncode == 2 and str(target) in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_trajectory_link_to_another_repository_leaves_it_as_it_was(tmp_path: Path) -> None:
    """A project unpacked with ``.trajectory -> ../mine/.git``: the opening rewrote that repository's config (its
    remote and identity gone) and replaced its ``info/exclude`` with ``*``; a link to a directory holding other
    files had ``git init`` run in it. Both are refused; a link to an empty directory still gets a new history."""
    mine = tmp_path / "mine"
    mine.mkdir()
    git(mine, "init", "-q", "-b", "main")
    git(mine, "remote", "add", "origin", "https://example.com/me/mine.git")
    (mine / ".git" / "info").mkdir(exist_ok=True)
    (mine / ".git" / "info" / "exclude").write_text("secret-notes/\n")
    files = {p: p.read_bytes() for p in sorted((mine / ".git").rglob("*")) if p.is_file()}
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    shipped = tmp_path / "shipped"
    write(shipped, "app.py", "x = 1\n")
    for target in (Path("../mine/.git"), Path("../other")):
        link = shipped / ".trajectory"
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target)
        for args in (["log"], ["checkpoint", "-m", "x"]):
            proc = cli(*args, cwd=shipped)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
            if args != ["log"] or target.name == ".git":  # a log of a directory with no repository: nothing recorded
                assert "is not a history code-trajectory made" in proc.stderr, proc.stderr
    assert {p: p.read_bytes() for p in sorted((mine / ".git").rglob("*")) if p.is_file()} == files
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
    empty = tmp_path / "disk"
    empty.mkdir()
    (shipped / ".trajectory").unlink()
    (shipped / ".trajectory").symlink_to(empty)
    ok(cli("checkpoint", "-m", "mine", cwd=shipped))
    assert "checkpoint: mine" in ok(cli("log", cwd=shipped))


def test_a_shipped_trajectory_borrowing_objects_is_refused(project: Path, tmp_path: Path) -> None:
    """``objects/info/alternates`` naming a directory the project ships (``../../evil``): git read the pack index
    there, a FIFO, and every command waited; code-trajectory never writes an alternate."""
    copy = unpacked(project, tmp_path)
    pack = copy / "evil" / "pack"
    pack.mkdir(parents=True)
    os.mkfifo(pack / f"pack-{'1' * 40}.idx")
    (pack / f"pack-{'1' * 40}.pack").write_bytes(b"")
    (copy / ".trajectory" / "objects" / "info").mkdir(exist_ok=True)
    (copy / ".trajectory" / "objects" / "info" / "alternates").write_text("../../evil\n")
    proc = cli("log", cwd=copy)
    assert proc.returncode == 2 and "borrows objects from elsewhere" in proc.stderr, proc.stderr
