"""Issue 13: restore and compare. Real git, real files; every restore undone byte for byte."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError, ProjectError
from code_trajectory.git.points import points
from code_trajectory.history import service as history
from code_trajectory.project import confine
from code_trajectory.recording.session import ProjectSession
from code_trajectory.restore.service import restore
from support import git, mcp_client, server_command, subprocess_env, write

BINARY = bytes(range(256)) * 16


def state(root: Path) -> dict[str, tuple[str, str]]:
    """Every file, symlink and directory under ``root`` except .git and .trajectory: kind, mode and content hash."""
    found = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".trajectory")]
        for name in dirs + files:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", "")
            else:
                found[rel] = (oct(st.st_mode & 0o111), hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def git_dir_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for dirpath, _dirs, files in sorted(os.walk(root / ".git")):
        for name in sorted(files):
            path = Path(dirpath) / name
            digest.update(path.as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def build_history(s: ProjectSession) -> dict[str, tuple[str, str]]:
    """A named point "before refactor" with a binary, an executable script and a symlink; returns its state."""
    root = s.root
    write(root, "assets/logo.bin", BINARY)
    write(root, "bin/run.sh", "#!/bin/sh\necho run\n")
    (root / "bin" / "run.sh").chmod(0o755)
    (root / "latest").symlink_to("src/app.py")
    write(root, "src/util.py", "def helper():\n    return 1\n")
    s.checkpoint("before refactor")
    before = state(root)
    # the refactor: edits, a deletion, new files, a changed binary, the script no longer executable, a new link target
    write(root, "src/app.py", "def main():\n    return 'refactored'\n")
    (root / "src" / "util.py").unlink()
    write(root, "src/new_module.py", "NEW = True\n")
    write(root, "docs/guide/intro.md", "# Intro\n")
    write(root, "assets/logo.bin", BINARY[::-1])
    (root / "bin" / "run.sh").chmod(0o644)
    (root / "latest").unlink()
    (root / "latest").symlink_to("src/new_module.py")
    write(root, "build/out.o", "ignored artefact")  # ignored by .gitignore: never touched
    s.checkpoint("after refactor")
    return before


def test_restore_one_file_a_subset_and_the_whole_project_then_undo(session: ProjectSession) -> None:
    root = session.root
    before = build_history(session)
    after = state(root)
    git_before = git_dir_digest(root)
    ignored = (root / "build" / "out.o").read_bytes()

    one = restore(session, "before refactor", ["src/app.py"])
    assert one.written == ["src/app.py"] and not one.removed and one.safety_snapshot
    assert (root / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert state(root) == {**after, "src/app.py": before["src/app.py"]}
    restore(session, one.safety_snapshot)  # undo: exactly the state before the restore
    assert state(root) == after

    subset = restore(session, "before refactor", ["bin", "assets/*.bin", "latest"])
    assert sorted(subset.written) == ["assets/logo.bin", "bin/run.sh", "latest"]
    assert os.access(root / "bin" / "run.sh", os.X_OK) and os.readlink(root / "latest") == "src/app.py"
    assert (root / "assets" / "logo.bin").read_bytes() == BINARY
    restore(session, subset.safety_snapshot)
    assert state(root) == after

    whole = restore(session, "before refactor")
    assert "src/new_module.py" in whole.removed and "docs/guide/intro.md" in whole.removed
    expected = {k: v for k, v in before.items()}
    expected["build"], expected["build/out.o"] = after["build"], after["build/out.o"]  # ignored: untouched
    assert state(root) == expected
    assert (root / "build" / "out.o").read_bytes() == ignored
    assert not (root / "docs").exists()  # directories emptied by the restore are removed
    log = history.global_trajectory(session, 3)
    assert "[RESTORE]" in log and 'checkpoint "before refactor"' in log
    undo = restore(session, whole.safety_snapshot)
    assert state(root) == after and undo.commit
    assert git_dir_digest(root) == git_before  # the project's own git never written
    assert any(p.message.startswith("before restore of") for p in points(session.recorder.repo))


def test_dry_run_writes_nothing_and_shows_the_diff(session: ProjectSession) -> None:
    build_history(session)
    now = state(session.root)
    commits = session.recorder.repo.git.text(["rev-list", "--all", "--count"])
    dry = restore(session, "before refactor", dry_run=True)
    assert dry.dry_run and dry.safety_snapshot is None and dry.commit is None
    assert "+    return 1" in dry.diff and "Would write" in dry.text and "Would remove" in dry.text
    assert state(session.root) == now
    assert session.recorder.repo.git.text(["rev-list", "--all", "--count"]) == commits


def test_references_by_position_id_time_and_bad_input_write_nothing(session: ProjectSession, tmp_path: Path) -> None:
    build_history(session)
    root = session.root
    now = state(root)
    tip = session.recorder.latest_commit(session.branch)
    assert restore(session, "~0", dry_run=True).source == tip
    assert restore(session, tip[:7], dry_run=True).source == tip
    parent = session.recorder.repo.resolve(f"{tip}~1")
    for ref, expected in ((f"{tip[:7]}~0", tip), (f"{tip[:7]}~1", parent), (f"{tip[:7]}^", parent),
                          (f"{tip[:7]}~", parent)):  # as git counts back from an id
        assert restore(session, ref, dry_run=True).source == expected, ref
    assert restore(session, "2099-01-01T00:00", dry_run=True).source == tip  # the last at or before a time
    first = session.recorder.repo.git.text(["rev-list", "--max-parents=0", tip])
    assert "start of recording" in history.global_trajectory(session, 10)  # as the log heads it, it is named
    for name in ("start of recording", "Start of Recording"):
        assert restore(session, name, dry_run=True).source == first
    cases = [("no such point", InvalidArgumentError, "Nearest checkpoints: .*\"before refactor\""),
             ("~999", InvalidArgumentError, "only"),
             (f"{tip[:7]}~999", InvalidArgumentError, "fewer than 999 snapshot"),
             ("1999-01-01", InvalidArgumentError, "no snapshot of this branch at or before")]
    for ref, error, message in cases:
        with pytest.raises(error, match=message):
            restore(session, ref)
    for paths, error in ((["../outside.txt"], PathOutsideProjectError), (["/etc/passwd"], PathOutsideProjectError),
                         (["nothing/here.py"], InvalidArgumentError), (["../*"], InvalidArgumentError)):
        with pytest.raises(error):
            restore(session, "before refactor", paths)
    assert state(root) == now


def test_refused_during_a_merge_unless_forced(session: ProjectSession) -> None:
    build_history(session)
    (session.recorder.project.git_dir / "MERGE_HEAD").write_text("0" * 40 + "\n")
    with pytest.raises(ProjectError, match="middle of a merge"):
        restore(session, "before refactor", ["src/app.py"])
    assert restore(session, "before refactor", ["src/app.py"], force=True).written == ["src/app.py"]


def test_a_save_during_the_restore_is_not_lost(project: Path) -> None:
    s = ProjectSession(project, TrajectorySettings.load(project, debounce_seconds=0.3), watch=True)
    s.start()
    try:
        build_history(s)
        target = project / "src" / "app.py"
        original_write = s.recorder.record_paths
        calls = []

        def safety_then_user_saves(*args, **kwargs):  # the user saves right after the safety snapshot
            result = original_write(*args, **kwargs)
            calls.append(kwargs.get("note"))
            if len(calls) == 1:
                assert "safety snapshot" in calls[0]
                target.write_text("def main():\n    return 'typed during the restore'\n")
            return result

        s.recorder.record_paths = safety_then_user_saves
        done = restore(s, "before refactor", ["src/app.py"])
        assert done.saved_first == ["src/app.py"]
        repo = s.recorder.repo
        kept = repo.git.text(["log", "--all", "--format=%H", "-S", "typed during the restore"])
        assert kept, "the save made during the restore is in the history"
        time.sleep(1.0)  # the watcher saw the restore's writes: no burst of ordinary snapshots follows
        subjects = repo.git.text(["log", "-3", "--format=%s", "refs/heads/shadow/main"]).splitlines()
        assert subjects[0].startswith("[RESTORE]")
    finally:
        s.close()


def test_a_snapshot_named_by_its_id_is_named_once(session: ProjectSession) -> None:
    """The restore's answer, its commit's subject, its named point and compare's heading said an id given as such
    twice (`abc123456789` (commit abc123456789)); how another reference named it is still said."""
    build_history(session)
    repo = session.recorder.repo
    first = repo.git.text(["rev-list", "--max-parents=0", session.recorder.latest_commit(session.branch)])
    for text in (restore(session, first[:8], ["src/app.py"], dry_run=True).text.splitlines()[0],
                 history.compare(session, first[:8], "~0").splitlines()[0]):
        assert f"`{first[:12]}`" in text and "(commit " not in text, text
    assert '(checkpoint "before refactor")' in history.compare(session, "before refactor", "~0").splitlines()[0]
    done = restore(session, first[:8], ["src/app.py"])
    subject = repo.git.text(["log", "-1", "--format=%s", done.commit])
    assert f"from {first[:12]} - " in subject and "(commit " not in subject, subject
    assert any(p.message == f"before restore of {first[:12]}" for p in points(repo)), points(repo)


def test_compare_two_snapshots_and_now(session: ProjectSession) -> None:
    build_history(session)
    text = history.compare(session, "before refactor", "after refactor")
    assert "M `src/app.py`" in text and "modified main" in text and "D `src/util.py`" in text
    assert "+    return 'refactored'" in text
    write(session.root, "src/app.py", "def main():\n    return 'unsaved work'\n")
    now = history.compare(session, "after refactor", filepath="src/app.py")
    assert "the work tree now" in now and "+    return 'unsaved work'" in now
    assert now.data["files"][0][1] == "src/app.py"


@pytest.mark.anyio
async def test_restore_and_compare_through_the_sdk_client(project: Path) -> None:
    async with mcp_client(project) as client:
        await client.call_tool("checkpoint", {"message": "good"})
        write(project, "src/app.py", "def main():\n    return 'bad'\n")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["restore"].annotations.destructive_hint is True
        assert tools["restore"].annotations.idempotent_hint is False
        assert tools["compare"].annotations.read_only_hint is True
        diff = await client.call_tool("compare", {"from_snapshot": "good"})
        assert "+    return 'bad'" in diff.content[0].text
        done = await client.call_tool("restore", {"snapshot": "good", "paths": ["src/app.py"]})
        assert not done.is_error and done.structured_content["written"] == ["src/app.py"]
        assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"
        undo = await client.call_tool("restore", {"snapshot": done.structured_content["safety_snapshot"]})
        assert not undo.is_error and (project / "src" / "app.py").read_text().endswith("'bad'\n")
        bad = await client.call_tool("restore", {"snapshot": "good", "paths": ["../../etc/passwd"]})
        assert bad.is_error and "outside the project" in bad.content[0].text
    assert git(project, "status", "--porcelain") == " M src/app.py\n"


def test_a_reference_the_shell_expanded_says_to_quote_it(session: ProjectSession) -> None:
    """An unquoted ``~0`` reaches the command as the working directory (bash's tilde expansion): the error says so."""
    write(session.root, "a.py", "a = 1\n")
    session.checkpoint("only")
    with pytest.raises(InvalidArgumentError, match="quote it: '~3'"):
        restore(session, str(session.root))
    with pytest.raises(InvalidArgumentError, match="use '~0' to '~1'"):
        restore(session, "~5")


def test_start_of_recording_is_not_a_snapshot_whose_file_name_spells_the_import_trailer(
        session: ProjectSession) -> None:
    """A file renamed (unchanged) to ``z\\nTrajectory-Kind: import`` puts that line, alone, in its snapshot's body
    (``R src/app.py -> z`` then the name's second line): 'start of recording' (a grep for the line) resolved to that
    snapshot, and a restore of it put back the project as it was after the rename, not as recording began. Names are
    now escaped in messages too (``z\\x0aTrajectory-Kind: import``); the resolver reads the trailer alone either way."""
    root = session.root
    first = session.recorder.repo.git.text(["rev-list", "--max-parents=0", session.recorder.latest_commit(
        session.branch)])
    (root / "src" / "app.py").rename(root / "z\nTrajectory-Kind: import")
    session.checkpoint("renamed")
    tip = session.recorder.latest_commit(session.branch)
    body = session.recorder.repo.git.text(["log", "-1", "--format=%b", tip])
    assert "\nTrajectory-Kind: import\n" not in body and "z\\x0aTrajectory-Kind: import" in body  # the name escaped
    assert restore(session, "start of recording", dry_run=True).source == first


def test_cli_paths_typed_in_a_subdirectory_are_read_from_it(project: Path) -> None:
    """In `sub/`, `restore X ./a.py` wrote the root's `a.py`, another file than the one named (and `file ../a.py` was
    "outside the project"): the CLI reads a relative path from the current directory, as git does; the MCP tools
    still take paths relative to the project root."""
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*server_command(), *args], cwd=project / "sub", env=subprocess_env(),
                              capture_output=True, text=True, timeout=120)

    write(project, "a.py", "root = 1\n")
    write(project, "sub/a.py", "sub = 1\n")
    assert cli("checkpoint", "-m", "both").returncode == 0
    write(project, "a.py", "root = 2\n")
    write(project, "sub/a.py", "sub = 2\n")
    assert cli("checkpoint", "-m", "changed").returncode == 0
    dry = cli("restore", "--dry-run", "both", "./a.py")
    assert dry.returncode == 0 and "`sub/a.py`" in dry.stdout and "`a.py`" not in dry.stdout.replace("sub/a.py", ""), \
        dry.stdout
    assert "+root = 2" in cli("file", "../a.py").stdout
    assert "+sub = 2" in cli("file", "a.py").stdout
    assert cli("restore", "both", "a.py").returncode == 0
    assert (project / "sub" / "a.py").read_text() == "sub = 1\n" and (project / "a.py").read_text() == "root = 2\n"
    outside = cli("file", "../../x.py")
    assert outside.returncode == 2 and "outside the project" in outside.stderr, outside.stderr


def test_a_file_whose_name_starts_with_a_colon_is_restored_by_name(session: ProjectSession) -> None:
    """`restore X ':!odd.py'` failed with git's "pathspec magic not supported" and `restore X ':x.py'` said the file
    was not recorded (git read the name as pathspec magic: `:x.py` is `x.py` to git); the names are literal now."""
    root = session.root
    for name in (":!odd.py", ":x.py", "x.py", ":(exclude)b.py"):
        write(root, name, f"{name} 1\n")
    session.checkpoint("first")
    for name in (":!odd.py", ":x.py", "x.py", ":(exclude)b.py"):
        write(root, name, f"{name} 2\n")
    session.checkpoint("second")
    done = restore(session, "first", [":!odd.py", ":x.py", ":(exclude)b.py"])
    assert sorted(done.written) == [":!odd.py", ":(exclude)b.py", ":x.py"]
    assert (root / ":!odd.py").read_text() == ":!odd.py 1\n" and (root / ":x.py").read_text() == ":x.py 1\n"
    assert (root / ":(exclude)b.py").read_text() == ":(exclude)b.py 1\n"
    assert (root / "x.py").read_text() == "x.py 2\n"  # not named: left as it is


def test_a_restore_naming_many_files_looks_each_up_instead_of_comparing_it_with_every_file(project: Path) -> None:
    """`restore` with 20,000 named files ran for minutes (each name compared with every recorded path, twice: 10,000
    names took 81 s, 20,000 ran past the client's timeout); each name is looked up in the sorted paths now. Counted
    as comparisons, not timed."""
    from code_trajectory.restore.service import select

    class Counted(str):
        calls = 0

        def startswith(self, *args, **kwargs):  # type: ignore[override]
            Counted.calls += 1
            return super().startswith(*args, **kwargs)

        def __eq__(self, other: object) -> bool:
            Counted.calls += 1
            return super().__eq__(other)

        __hash__ = str.__hash__

    names = [f"many/f{i:05d}.py" for i in range(2000)]
    candidates = {Counted(name) for name in names} | {Counted("many/sub/x.py")}
    assert select(names + ["many/sub"], candidates) == set(candidates)
    assert Counted.calls < 20 * len(candidates)  # one compare per name found, not one per name and path (4 million)
    with pytest.raises(InvalidArgumentError, match="names no file recorded"):
        select(["many/f0.py"], candidates)
    assert select(["many/f0.py", "many/sub"], candidates, strict=False) == {"many/sub/x.py"}


def test_a_restore_confines_each_named_path_once(session: ProjectSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """`confine` resolves symlinks: a restore naming 20,000 files through `serve` took 26 s, most of it confining
    each name three times (the scope, the unsafe-name check, the selection); once per name now, and the names are
    still checked (one leaving the project is refused before anything is written)."""
    from code_trajectory.restore import service

    root = session.root
    names = [f"pkg/m{i}.py" for i in range(30)]
    for name in names:
        write(root, name, "v1\n")
    session.checkpoint("first")
    for name in names:
        write(root, name, "v2\n")
    session.checkpoint("second")
    calls: list[str] = []

    def counted(at: Path, path: str) -> str:
        calls.append(path)
        return confine(at, path)

    monkeypatch.setattr(service, "confine", counted)
    done = restore(session, "first", [*names, "./pkg/../pkg/m0.py"])
    assert sorted(done.written) == sorted(names)
    assert sorted(calls) == sorted([*names, "./pkg/../pkg/m0.py"])
    assert all((root / name).read_text() == "v1\n" for name in names)
    with pytest.raises(PathOutsideProjectError):
        restore(session, "first", [names[0], "../outside.py"])
    assert (root / names[0]).read_text() == "v1\n"


def test_a_restore_naming_a_missing_file_says_the_closest_recorded_ones() -> None:
    """As ``file`` does for a mistyped path (the supervisor's finding: a restore's error was a dead end)."""
    from code_trajectory.restore.service import select

    candidates = {"src/click/utils.py", "src/click/core.py", "tests/test_utils.py"}
    with pytest.raises(InvalidArgumentError, match=r"names no file recorded.*did you mean `src/click/utils.py`"):
        select(["src/click/util.py"], candidates)
    with pytest.raises(InvalidArgumentError) as raised:
        select(["nothing/like/it.txt"], candidates)
    assert "did you mean" not in str(raised.value)


def test_a_replaced_file_keeps_its_own_read_and_write_bits(session: ProjectSession) -> None:
    """A private file (0600: a key, a local config) came back 0644, readable by every user of the machine, after a
    restore and its undo: the restored file was created anew with git's bits (0666 less the umask). A file replaced
    keeps its own read and write bits, with the execute bits the snapshot records; a set-user-ID bit is not
    carried over to the new content; a file created by the restore still gets git's bits."""
    root = session.root
    for rel, text in (("private.cfg", "v1\n"), ("tool.sh", "echo 1\n"), ("shared.txt", "a\n")):
        write(root, rel, text)
    (root / "private.cfg").chmod(0o600)
    (root / "tool.sh").chmod(0o755)
    (root / "shared.txt").chmod(0o664)
    session.checkpoint("one")
    first = "one"
    write(root, "private.cfg", "v2\n")
    write(root, "tool.sh", "echo 2\n")
    write(root, "shared.txt", "b\n")
    (root / "tool.sh").chmod(0o4700)
    session.checkpoint("two")
    done = restore(session, first)
    assert (root / "private.cfg").read_text() == "v1\n" and (root / "tool.sh").read_text() == "echo 1\n"
    modes = {rel: stat.S_IMODE(os.lstat(root / rel).st_mode) for rel in ("private.cfg", "tool.sh", "shared.txt")}
    assert modes == {"private.cfg": 0o600, "tool.sh": 0o700, "shared.txt": 0o664}, {k: oct(v) for k, v in modes.items()}
    restore(session, done.safety_snapshot)
    assert stat.S_IMODE(os.lstat(root / "private.cfg").st_mode) == 0o600
    (root / "private.cfg").unlink()
    restore(session, first, ["private.cfg"])
    assert stat.S_IMODE(os.lstat(root / "private.cfg").st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_dry_runs_diff_headers_show_names_escaped(session: ProjectSession) -> None:
    """Each file's ``--- NAME`` line of a dry run's diff carried the name raw: a right-to-left override turned
    ``evil\\u202etxt.py`` into what reads as ``evilyp.txt``, a zero-width space hid; it is shown as every other
    line of the answer shows names (``display_path``)."""
    names = {"evil\u202etxt.py": "evil\\u202etxt.py", "zw\u200b.py": "zw\\u200b.py"}
    dry = _dry_run_of_one_line_edits(session, names)
    for name, shown in names.items():
        assert f"--- {shown}\n" in dry.text and name not in dry.text, dry.text


def test_a_dry_run_shows_the_diff_of_names_git_quotes(session: ProjectSession) -> None:
    """A name git writes in double quotes in ``diff --git`` (a tab, a control character, a byte that is not UTF-8)
    or one holding `` b/`` was read wrongly from the header and its diff was left out of the dry run, though the
    answer said the file would be written."""
    names = {"t\tb.py": "t\\x09b.py", "esc\x1b[2J.py": "esc\\x1b[2J.py", os.fsdecode(b"bad\xff.py"): "bad\\xff.py",
             'q"uote.py': 'q"uote.py', "x b/y.py": "x b/y.py"}
    dry = _dry_run_of_one_line_edits(session, names)
    for shown in names.values():
        assert f"--- {shown}\n@@ -1 +1 @@\n-x = 2\n+x = 1" in dry.text, dry.text


def _dry_run_of_one_line_edits(session: ProjectSession, names: dict[str, str]):
    """Each of ``names`` written ``x = 1`` (checkpoint "one"), then ``x = 2`` ("two"); the dry run back to "one"."""
    for text, point in (("x = 1\n", "one"), ("x = 2\n", "two")):
        for name in names:
            write(session.root, name, text)
        session.checkpoint(point)
    return restore(session, "one", dry_run=True)
