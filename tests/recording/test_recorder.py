"""The recorder on real git: snapshots, messages, branches, consolidation, isolation."""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import time
from datetime import UTC
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError, LockContentionError
from code_trajectory.git import messages
from code_trajectory.git.oversize import OVERSIZE_MARKER
from code_trajectory.git.shadow import shadow_ref
from code_trajectory.recording.consolidate import consolidate
from code_trajectory.recording.recorder import Recorder
from support import git, git_repo, shadow, write


def open_recorder(root: Path, **settings) -> Recorder:
    return Recorder.open(root, TrajectorySettings.load(root, **settings))


@pytest.fixture
def recorder(project: Path):
    """A :class:`Recorder` of ``project`` after its first full scan, closed after the test."""
    opened = open_recorder(project)
    opened.reconcile()
    yield opened
    opened.close()


def tree_files(root: Path, rev: str) -> dict[str, str]:
    out = shadow(root, "ls-tree", "-r", "-z", "--full-tree", rev)
    files = {}
    for record in out.split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            files[path] = meta.split()[2]
    return files


def blob(root: Path, rev: str, path: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    import subprocess

    return subprocess.run(["git", "--git-dir=.trajectory", "cat-file", "blob", f"{rev}:{path}"], cwd=root,
                          env=env, capture_output=True, check=True).stdout


def test_first_reconcile_records_the_work_tree_respecting_ignores(project: Path) -> None:
    write(project, "build/out.bin", "artefact")
    write(project, "node_modules/lib/index.js", "x")
    write(project, "debug.log", "noise")
    write(project, ".env", "API_KEY=hunter2")
    recorder = open_recorder(project)
    snap = recorder.reconcile()
    assert snap is not None and snap.ref == "refs/heads/shadow/main"
    files = tree_files(project, snap.ref)
    assert set(files) == {".gitignore", "src/app.py", "tests/test_app.py"}
    assert (project / ".gitignore").read_text() == "build/\nnode_modules/\n*.log\n"  # the tracked file is not edited
    recorder.close()


def test_unchanged_tree_makes_no_commit(project: Path) -> None:
    recorder = open_recorder(project)
    first = recorder.reconcile()
    assert first is not None
    assert recorder.reconcile() is None
    assert recorder.record_paths(["src/app.py"]) is None
    assert recorder.checkpoint("nothing new") is None
    assert shadow(project, "rev-list", "--count", first.ref).strip() == "1"
    recorder.close()


def test_snapshot_message_has_subject_and_trailers(project: Path, recorder: Recorder) -> None:
    recorder.intent.set("Fix login retry")
    write(project, "src/app.py", "def main():\n    return 2\n\n\ndef retry():\n    return 3\n")
    write(project, "src/new.py", "x = 1\n")
    snap = recorder.record_paths(["src/app.py", "src/new.py"])
    assert snap is not None
    subject = shadow(project, "log", "-1", "--format=%s", snap.ref).strip()
    assert subject.startswith("[AUTO-TRJ] ")
    assert " - Fix login retry - " in subject
    assert "M src/app.py (+5 -1)" in subject and "A src/new.py (+1)" in subject
    trailers = shadow(project, "log", "-1", "--format=%(trailers:key=Trajectory-Intent,valueonly)", snap.ref)
    assert trailers.strip() == "Fix login retry"
    branch = shadow(project, "log", "-1", "--format=%(trailers:key=Trajectory-Branch,valueonly)", snap.ref)
    assert branch.strip() == "main"
    stamp = shadow(project, "log", "-1", "--format=%(trailers:key=Trajectory-Timestamp,valueonly)", snap.ref)
    assert stamp.strip()[:4].isdigit() and "T" in stamp


def test_subject_without_intent_and_long_file_lists(project: Path, recorder: Recorder) -> None:
    names = [f"pkg/mod{i:02d}.py" for i in range(12)]
    for name in names:
        write(project, name, "pass\n")
    snap = recorder.record_paths(names)
    assert snap is not None
    parts = snap.subject.split(" - ")
    assert len(parts) == 2, snap.subject  # time and summary only: no intent part
    assert snap.subject.endswith("... and 7 more")


def test_deletes_renames_directories_and_symlinks(project: Path, recorder: Recorder) -> None:
    write(project, "lib/a/one.py", "1\n")
    write(project, "lib/a/b/two.py", "2\n")
    snap = recorder.record_paths(["lib"])  # a directory created with content: rescanned whole
    assert {"lib/a/one.py", "lib/a/b/two.py"} <= set(tree_files(project, snap.ref))
    (project / "lib").rename(project / "vendor")
    snap = recorder.record_paths(["lib", "vendor"])
    files = tree_files(project, snap.ref)
    assert "lib/a/one.py" not in files and "vendor/a/b/two.py" in files
    os.symlink("../src/app.py", project / "vendor" / "link.py")
    os.symlink("/etc/passwd", project / "vendor" / "escape")
    snap = recorder.record_paths(["vendor/link.py", "vendor/escape"])
    meta = shadow(project, "ls-tree", snap.ref, "vendor/link.py")
    assert meta.startswith("120000 blob")
    assert blob(project, snap.ref, "vendor/escape") == b"/etc/passwd"  # the target, never the content
    (project / "src" / "app.py").unlink()
    snap = recorder.record_paths(["src/app.py"])
    assert "src/app.py" not in tree_files(project, snap.ref)
    assert any(c.status == "D" and c.path == "src/app.py" for c in snap.changes)


def test_executable_bit_and_binary_and_odd_names(project: Path, recorder: Recorder) -> None:
    script = write(project, "run.sh", "#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    write(project, "logo.png", bytes(range(256)))
    odd = "dir with space/naïve\nnewline.txt"
    write(project, odd, "odd\n")
    raw_name = os.fsdecode(b"latin1-\xe9.txt")
    write(project, raw_name, "bytes\n")
    snap = recorder.record_paths(["run.sh", "logo.png", odd, raw_name])
    assert snap is not None
    assert shadow(project, "ls-tree", snap.ref, "run.sh").startswith("100755")
    assert any(c.path == "logo.png" and c.binary for c in snap.changes)
    assert blob(project, snap.ref, "dir with space/naïve\nnewline.txt") == b"odd\n"
    assert raw_name in tree_files(project, snap.ref) or any(c.path == raw_name for c in snap.changes)


def test_fifo_and_socket_are_skipped(project: Path) -> None:
    os.mkfifo(project / "pipe")
    recorder = open_recorder(project)
    snap = recorder.reconcile()
    assert "pipe" not in tree_files(project, snap.ref)
    assert recorder.record_paths(["pipe"]) is None
    recorder.close()


def test_oversize_files_are_noted_not_stored(project: Path) -> None:
    recorder = open_recorder(project, max_file_bytes=1000)
    recorder.reconcile()
    write(project, "data/big.bin", b"x" * 5000)
    snap = recorder.record_paths(["data/big.bin"])
    stored = blob(project, snap.ref, "data/big.bin")
    assert stored.startswith(OVERSIZE_MARKER) and b"size: 5000 bytes" in stored
    assert "not stored: 4.9 KiB" in snap.subject
    recorder.close()


def test_the_import_lists_every_file_added_and_notes_oversize_ones(project: Path) -> None:
    for i in range(messages.BODY_FILES + 5):
        write(project, f"pkg/m{i:03d}.py", f"v = {i}\n")
    write(project, "data/big.bin", b"x" * 5000)
    recorder = open_recorder(project, max_file_bytes=1000)
    snap = recorder.reconcile()
    files = tree_files(project, snap.ref)
    assert [c.path for c in snap.changes] == sorted(files) and {c.status for c in snap.changes} == {"A"}
    assert all(c.new_oid == files[c.path] for c in snap.changes)
    assert [c.path for c in snap.changes[:3]] == sorted(files)[:3] and snap.changes[-1].path == sorted(files)[-1]
    (big,) = [c for c in snap.changes if c.path == "data/big.bin"]
    assert big.note == "not stored: 4.9 KiB" and "A data/big.bin (not stored: 4.9 KiB)" in snap.subject
    body = shadow(project, "log", "-1", "--format=%b", snap.ref)
    assert f"... and {len(files) - messages.BODY_FILES} more" in body and "A pkg/m000.py" in body
    recorder.close()


def test_nested_repository_without_commits_is_recorded_as_files(project: Path) -> None:
    git_repo(project / "vendor" / "lib", {"code.py": "print('vendored')\n", ".gitignore": "*.tmp\n",
                                          "scratch.tmp": "ignored by the nested .gitignore\n"})
    recorder = open_recorder(project)
    snap = recorder.reconcile()
    files = tree_files(project, snap.ref)
    assert "vendor/lib/code.py" in files
    assert "vendor/lib/scratch.tmp" not in files
    assert not any(p.startswith("vendor/lib/.git/") for p in files)
    recorder.close()


def test_project_git_dir_is_never_written_but_for_one_exclude_line(project: Path) -> None:
    def digest() -> dict[str, str]:
        result = {}
        for dirpath, _dirs, files in os.walk(project / ".git"):
            for name in files:
                path = Path(dirpath) / name
                result[str(path.relative_to(project))] = hashlib.sha256(path.read_bytes()).hexdigest()
        return result

    git(project, "status")  # let git refresh its own index first, as a user's shell would
    before = digest()
    recorder = open_recorder(project)
    recorder.reconcile()
    for i in range(5):
        write(project, "src/app.py", f"def main():\n    return {i}\n")
        recorder.record_paths(["src/app.py"])
    recorder.checkpoint("cp")
    consolidate(recorder, "work")
    recorder.close()
    after = digest()
    exclude = project / ".git" / "info" / "exclude"
    assert {k: v for k, v in after.items() if k != ".git/info/exclude"} == \
        {k: v for k, v in before.items() if k != ".git/info/exclude"}
    assert exclude.read_text().splitlines()[-1] == "/.trajectory"  # the only write: see git.nested


def test_shadow_repository_is_invisible_to_the_projects_git_without_editing_tracked_files(project: Path) -> None:
    """Issue 18.1: the first run edited the tracked .gitignore; after ``git stash`` the edit was gone and
    ``git status`` listed ``.trajectory/``, so ``git add -A`` would have committed the shadow repository.
    Issue 22: the untracked ``info/exclude`` gains one line (the nested-repository marker needs it)."""
    exclude = project / ".git" / "info" / "exclude"
    exclude_before = exclude.read_text() if exclude.exists() else ""
    recorder = open_recorder(project)
    recorder.reconcile()
    write(project, "src/app.py", "def main():\n    return 2\n")
    recorder.record_paths(["src/app.py"])
    recorder.close()
    assert git(project, "status", "--porcelain") == " M src/app.py\n"  # no ` M .gitignore`, no `?? .trajectory/`
    git(project, "stash")
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    git(project, "add", "-A")
    assert git(project, "diff", "--cached", "--name-only") == ""
    git(project, "stash", "pop")
    assert (project / ".trajectory" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert exclude.read_text().startswith(exclude_before)  # kept as it was, one line added
    assert exclude.read_text().splitlines()[-1] == "/.trajectory"
    assert git(project, "check-ignore", ".trajectory/HEAD").strip() == ".trajectory/HEAD"


def test_shadow_directory_is_private_and_never_records_itself(project: Path) -> None:
    recorder = open_recorder(project)
    snap = recorder.reconcile()
    assert (project / ".trajectory").stat().st_mode & 0o777 == 0o700
    assert not any(p.startswith(".trajectory") for p in tree_files(project, snap.ref))
    assert recorder.record_paths([".trajectory/HEAD", ".trajectory/objects"]) is None
    recorder.close()


def test_branch_switch_detached_head_and_no_git(project: Path, plain_dir: Path) -> None:
    recorder = open_recorder(project)
    recorder.reconcile()
    git(project, "checkout", "-q", "-b", "feature")
    write(project, "src/feature.py", "FEATURE = True\n")
    snap = recorder.record_paths(["src/feature.py"])
    assert snap.ref == shadow_ref("feature")
    main_tip = shadow(project, "rev-parse", shadow_ref("main")).strip()
    assert shadow(project, "rev-parse", f"{snap.commit}^").strip() == main_tip  # continues from main's last state
    git(project, "checkout", "-q", "--detach")
    write(project, "src/detached.py", "x = 1\n")
    snap = recorder.record_paths(["src/detached.py"])
    assert snap.ref == "refs/heads/shadow/HEAD"
    recorder.close()
    plain = open_recorder(plain_dir)
    snap = plain.reconcile()
    assert snap.ref == "refs/heads/shadow/-no-git"
    plain.close()


def test_consolidate_squashes_trailing_snapshots(project: Path, recorder: Recorder) -> None:
    for i in range(4):
        write(project, "src/app.py", f"def main():\n    return {i + 10}\n")
        recorder.record_paths(["src/app.py"])
    ref = shadow_ref("main")
    tip_before = shadow(project, "rev-parse", ref).strip()
    result = consolidate(recorder, "Implemented login feature")
    assert result.squashed == 4  # the four edits; the start-up (import) snapshot is never squashed (issue 18.3)
    subject = shadow(project, "log", "-1", "--format=%s", ref).strip()
    assert subject.startswith("[CONSOLIDATE] ") and subject.endswith(" - Implemented login feature")
    assert shadow(project, "rev-parse", f"{ref}^{{tree}}") == shadow(project, "rev-parse", f"{tip_before}^{{tree}}")
    assert tip_before in shadow(project, "reflog", "--format=%H", ref)
    assert shadow(project, "cat-file", "-t", tip_before).strip() == "commit"
    again = consolidate(recorder, "again")
    assert again.commit is None and "is a consolidation" in again.message
    with pytest.raises(InvalidArgumentError):
        consolidate(recorder, "   ")
    write(project, "src/app.py", "def main():\n    return 99\n")
    recorder.record_paths(["src/app.py"])
    result = consolidate(recorder, "second piece")
    assert result.squashed == 1
    assert shadow(project, "rev-list", "--count", ref).strip() == "3"  # import, first and second consolidation


def test_consolidate_squashes_only_the_current_task(project: Path) -> None:
    """Issue 18.3: consolidate for a one-snapshot task squashed 9 snapshots across three earlier intents and the
    first scan. It squashes only the trailing snapshots of the current intent, stops at a checkpoint, and the
    answer lists what it squashed; the test runs of the last snapshot move to the consolidation."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.git.log import read_log
    from code_trajectory.recording.session import ProjectSession

    session = ProjectSession(project, TrajectorySettings.load(project))
    recorder = session.recorder
    recorder.reconcile()
    for n, intent in enumerate(["Parse the config", "Add a cache", "Fix the login"]):
        recorder.intent.set(intent)
        for i in range(3):
            write(project, f"src/m{n}.py", f"x = {i}\n")
            recorder.record_paths([f"src/m{n}.py"])
    assert "Named point \"before the fix\"" in session.checkpoint("before the fix")  # nothing changed: still named
    write(project, "src/fix.py", "fixed = True\n")
    recorder.record_paths(["src/fix.py"])
    answer = session.consolidate("Fixed the login")
    assert "Consolidated 1 snapshot(s)" in answer and "A src/fix.py" in answer
    records = read_log(recorder.repo, [shadow_ref("main")], first_parent=True)
    assert records[0].kind == "consolidate" and records[-1].kind == "import" and len(records) == 11
    from code_trajectory.git.points import points
    assert points(recorder.repo)[0].commit == records[1].oid  # the named snapshot and all before it are kept
    assert [r.intent for r in records[1:10]] == ["Fix the login"] * 3 + ["Add a cache"] * 3 + ["Parse the config"] * 3
    # without a checkpoint: only the current intent's trailing run
    recorder.intent.set("Tidy up")
    for i in range(2):
        write(project, "src/tidy.py", f"t = {i}\n")
        recorder.record_paths(["src/tidy.py"])
    answer = session.consolidate("Tidied up")
    assert "Consolidated 2 snapshot(s)" in answer and answer.count("src/tidy.py") == 2
    # the end of an agent's turn (Claude Code's Stop hook) names the last snapshot: the task is still consolidated
    recorder.intent.set("Rename the helper")
    for i in range(2):
        write(project, "src/helper.py", f"h = {i}\n")
        recorder.record_paths(["src/helper.py"])
        session.take_checkpoint(f"turn ended 10:0{i}:00: Rename the helper", name_only=True)
    answer = session.consolidate("Renamed the helper")
    assert "Consolidated 2 snapshot(s)" in answer, answer
    turns = [p for p in points(recorder.repo) if p.automatic == "turn"]
    assert len(turns) == 2 and all(recorder.repo.resolve(p.commit) for p in turns)  # still naming their snapshots
    session.close()


def test_ref_lock_contention_is_retried_then_written(project: Path, recorder: Recorder) -> None:
    lock = project / ".trajectory" / "refs" / "heads" / "shadow" / "main.lock"
    lock.write_text("held by someone else")
    threading.Timer(0.5, lock.unlink).start()
    write(project, "src/app.py", "def main():\n    return 42\n")
    snap = recorder.record_paths(["src/app.py"])
    assert snap is not None


def test_failed_snapshot_keeps_paths_pending(project: Path, recorder: Recorder) -> None:
    lock = project / ".trajectory" / "refs" / "heads" / "shadow" / "main.lock"
    holder = lock.open("w")  # a live lock: held open, as a running git holds it
    write(project, "src/app.py", "def main():\n    return 7\n")
    recorder.note_changes(["src/app.py"])
    with pytest.raises(LockContentionError):
        recorder.flush()
    assert recorder.has_pending()
    holder.close()
    lock.unlink()
    snap = recorder.flush()
    assert snap is not None and any(c.path == "src/app.py" for c in snap.changes)


def test_stat_cache_avoids_rehashing_and_detects_changes(project: Path) -> None:
    recorder = open_recorder(project)
    recorder.reconcile()
    recorder.close()
    time.sleep(0.01)
    write(project, "src/app.py", "def main():\n    return 'changed while down'\n")
    recorder = open_recorder(project)
    snap = recorder.reconcile()  # the start-up reconcile catches what changed while nothing ran
    assert snap is not None and [c.path for c in snap.changes] == ["src/app.py"]
    recorder.close()


def test_gitignore_change_triggers_full_rescan(project: Path, recorder: Recorder) -> None:
    write(project, "debug.log", "now wanted")
    write(project, ".gitignore", "build/\nnode_modules/\n")
    snap = recorder.record_paths([".gitignore"])
    assert "debug.log" in tree_files(project, snap.ref)


def test_messages_parse_trailers_roundtrip() -> None:
    from datetime import datetime

    text = messages.snapshot_message(when=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                                     intent="multi\nline   intent", branch="main", changes=[])
    assert "Trajectory-Intent: multi line intent" in text
    blob_ = "Trajectory-Kind: snapshot\x1dTrajectory-Intent: a: b"
    assert messages.parse_trailers(blob_) == {"Trajectory-Kind": "snapshot", "Trajectory-Intent": "a: b"}


def test_large_batches_go_into_one_pack_and_fsck_is_clean(project: Path) -> None:
    for i in range(700):
        write(project, f"gen/d{i % 30}/f{i}.txt", f"content {i}\n")
    recorder = open_recorder(project)
    snap = recorder.reconcile()
    files = tree_files(project, snap.ref)
    assert len([p for p in files if p.startswith("gen/")]) == 700
    assert blob(project, snap.ref, "gen/d7/f37.txt") == b"content 37\n"
    packs = list((project / ".trajectory" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    write(project, "gen/d1/f1.txt", "edited\n")
    recorder.record_paths(["gen/d1/f1.txt"])
    consolidate(recorder, "generated")
    recorder.close()
    fsck = subprocess.run(["git", "--git-dir=.trajectory", "fsck", "--strict", "--no-progress"], cwd=project,
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if not k.startswith("GIT_")})
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_reconcile_rereads_ignore_files_created_since_the_last_scan(project: Path, recorder: Recorder) -> None:
    write(project, "cache/.gitignore", "*\n")  # as pytest writes .pytest_cache/.gitignore
    write(project, "cache/data.bin", "cached")
    snap = recorder.checkpoint()
    assert snap is None or not any(c.path.startswith("cache/") for c in snap.changes)


def test_consolidate_says_which_kept_snapshot_of_the_task_ended_the_run(project: Path) -> None:
    """A day's replay: 3 edits of one task, a restore of one file (recorded with the task's intent), one edit more,
    then consolidate of the task. It squashed 1 snapshot and said only "Earlier snapshots ... are kept": the
    supervisor could not tell why the task's other snapshots were left. The answer names the restore that ended the
    run; a run ended by another intent says nothing more."""
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.recording.session import ProjectSession
    from code_trajectory.restore.service import restore

    session = ProjectSession(project, TrajectorySettings.load(project))
    recorder = session.recorder
    recorder.reconcile()
    recorder.intent.set("Tidy the helpers")
    for i in range(3):
        write(project, "src/tidy.py", f"t = {i}\n")
        recorder.record_paths(["src/tidy.py"])
    restore(session, "~2", ["src/tidy.py"])
    restored = recorder.repo.resolve(shadow_ref("main"))
    assert restored is not None
    write(project, "src/tidy.py", "t = 9\n")
    recorder.record_paths(["src/tidy.py"])
    answer = str(session.consolidate("Tidied the helpers"))
    assert "Consolidated 1 snapshot(s)" in answer, answer
    assert f"Stopped at `{restored[:12]}`, a restore of this task, which is never squashed" in answer, answer

    recorder.intent.set("Another task")
    write(project, "src/other.py", "o = 1\n")
    recorder.record_paths(["src/other.py"])
    other = str(session.consolidate("Did another task"))
    assert "Consolidated 1 snapshot(s)" in other and "Stopped at" not in other, other
    session.close()
