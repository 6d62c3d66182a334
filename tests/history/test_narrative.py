"""The narratives: file trajectory (renames, reverts, deletions), global trajectory, sessions, budget."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import InvalidArgumentError, PathOutsideProjectError
from code_trajectory.git.log import CommitRecord, sessions
from code_trajectory.history import last_session, narrative
from code_trajectory.history import service as history_service
from code_trajectory.recording.session import ProjectSession
from support import write


def edit(session: ProjectSession, rel: str, text: str) -> None:
    write(session.root, rel, text)
    assert session.recorder.record_paths([rel]) is not None


PY_V1 = "class Greeter:\n    def hello(self):\n        return 'hi'\n\n    def bye(self):\n        return 'bye'\n"
PY_V2 = PY_V1.replace("return 'bye'", "return 'goodbye'")


def test_file_trajectory_orders_labels_and_detects_reverts(session: ProjectSession) -> None:
    session.set_intent("Polish greetings")
    edit(session, "src/greet.py", PY_V1)
    edit(session, "src/greet.py", PY_V2)
    edit(session, "src/greet.py", PY_V1)  # back to the first state
    text = history_service.file_trajectory(session, "src/greet.py", depth=5)
    assert text.index("## 1.") < text.index("## 2.") < text.index("## 3.")
    assert "Intent: Polish greetings" in text
    assert text.count("**[Revert Detected]** (Matches state from") == 1
    assert text.rindex("Revert Detected") > text.index("## 3.")
    assert "def bye(self):" in text  # the hunk is labelled with the enclosing function
    assert "```diff" in text


def test_revert_detection_spans_more_than_depth(session: ProjectSession) -> None:
    edit(session, "a.txt", "state A\n")
    for i in range(4):
        edit(session, "a.txt", f"state {i}\n")
    edit(session, "a.txt", "state A\n")
    text = history_service.file_trajectory(session, "a.txt", depth=1)
    assert "the last 1 of 6" in text
    assert "**[Revert Detected]**" in text


def test_renames_are_followed_and_deletions_explained(session: ProjectSession) -> None:
    edit(session, "old_name.py", "x = 1\ny = 2\nz = 3\n")
    (session.root / "old_name.py").rename(session.root / "new_name.py")
    assert session.recorder.record_paths(["old_name.py", "new_name.py"]) is not None
    text = history_service.file_trajectory(session, "new_name.py")
    assert "renamed from `old_name.py`" in text
    assert "added" in text  # the version before the rename is shown too
    (session.root / "new_name.py").unlink()
    session.recorder.record_paths(["new_name.py"])
    text = history_service.file_trajectory(session, "new_name.py")
    assert "was deleted at" in text and "deleted" in text


def test_a_file_moved_in_two_steps_keeps_its_history(session: ProjectSession) -> None:
    """An agent moves a file with a Write of the new one, then ``rm`` of the old one, in snapshots of their own: the
    new file's history began "added" (the MediatR replay's Unit.cs, copied in #686 and deleted in #687)."""
    body = "def area(width, height):\n    return width * height\n"
    edit(session, "shapes.py", body)
    edit(session, "shapes.py", body + "\n\ndef perimeter(width, height):\n    return 2 * (width + height)\n")
    moved = (session.root / "shapes.py").read_text()
    edit(session, "geometry/shapes.py", moved)
    (session.root / "shapes.py").unlink()
    assert session.recorder.record_paths(["shapes.py"]) is not None
    text = str(history_service.file_trajectory(session, "geometry/shapes.py", depth=10))
    assert "renamed from `shapes.py`" in text and text.count("\n## ") == 3, text  # added, changed, moved
    edit(session, "tiny_a.py", "x = 1\n")  # short contents alike by chance are not one file
    edit(session, "tiny_b.py", "x = 1\n")
    (session.root / "tiny_a.py").unlink()
    assert session.recorder.record_paths(["tiny_a.py"]) is not None
    assert "renamed from" not in str(history_service.file_trajectory(session, "tiny_b.py"))
    # a blob a shared trajectory did not bring: no move to tell, no error
    import dataclasses

    from code_trajectory.git.file_versions import file_history, moved_in_two_steps

    repo = session.recorder.repo
    first = file_history(repo, "refs/heads/shadow/main", "tiny_b.py")[-1]
    missing = dataclasses.replace(first, change=dataclasses.replace(first.change, new_oid="1" * 40))
    assert moved_in_two_steps(repo, "refs/heads/shadow/main", missing) is None


def test_never_recorded_paths_get_clear_answers(session: ProjectSession) -> None:
    write(session.root, "build/out.o", "artefact")
    text = history_service.file_trajectory(session, "build/out.o")
    assert "not recorded" in text and "build/" in text
    text = history_service.file_trajectory(session, "src/ap.py")
    assert "No such file" in text and "`src/app.py`" in text  # a suggestion of the close name
    write(session.root, "src/unsaved.py", "x")
    assert "checkpoint" in history_service.file_trajectory(session, "src/unsaved.py")


def test_bad_paths_and_ranges_are_refused(session: ProjectSession, tmp_path: Path) -> None:
    for bad in ["../../etc/passwd", "/etc/passwd", str(tmp_path / "elsewhere.py")]:
        with pytest.raises(PathOutsideProjectError):
            history_service.file_trajectory(session, bad)
    (session.root / "escape").symlink_to("/etc")
    with pytest.raises(PathOutsideProjectError):
        history_service.file_trajectory(session, "escape/passwd")
    for bad_path in ["", "a\0b", "."]:
        with pytest.raises(InvalidArgumentError):
            history_service.file_trajectory(session, bad_path)
    for depth in [0, -1, 10**9, True]:
        with pytest.raises(InvalidArgumentError):
            history_service.file_trajectory(session, "src/app.py", depth)
    with pytest.raises(InvalidArgumentError):
        history_service.global_trajectory(session, 0)
    with pytest.raises(InvalidArgumentError):
        session.set_intent("  \n ")
    assert history_service.file_trajectory(session, str(session.root / "src" / "app.py"))  # absolute inside: fine


def test_global_trajectory_lists_files_with_counts_and_since_consolidate(session: ProjectSession) -> None:
    edit(session, "src/app.py", "def main():\n    return 2\n")
    session.consolidate("First feature")
    edit(session, "src/app.py", "def main():\n    return 3\n")
    edit(session, "src/other.py", "VALUE = 1\n")
    text = history_service.global_trajectory(session, limit=20)
    assert text.index("[CONSOLIDATE]") < text.index("src/other.py")
    assert "M src/app.py (+1 -1)" in text
    since = history_service.global_trajectory(session, since_consolidate=True)
    assert "[CONSOLIDATE]" not in since and "since the last consolidation" in since
    assert since.count("\n## ") == 2
    limited = history_service.global_trajectory(session, limit=1)
    assert limited.count("\n## ") == 1 and "; older ones: `before=" in limited


def test_answers_fit_the_token_budget(project: Path) -> None:
    s = ProjectSession(project, TrajectorySettings.load(project, token_budget=1000))
    s.start()
    try:
        big = "".join(f"line {i} = {i * 7}\n" for i in range(3000))
        edit(s, "big.py", big)
        edit(s, "big.py", big.replace("= 7", "= 8").replace("line 2", "LINE 2"))
        text = history_service.file_trajectory(s, "big.py", depth=5)
        assert narrative.estimate_tokens(text) <= 1000
        assert "diff cut:" in text and "git --git-dir=.trajectory show" in text
        for i in range(60):
            edit(s, f"src/a/rather/long/package/path/module_{i}.py", "x\n" * (i + 1))
        text = history_service.global_trajectory(s, limit=70)
        assert narrative.estimate_tokens(text) <= 1000
        assert "older snapshot(s) not shown" in text
        # the answer names the call that shows what it left out, and paging back reaches the first snapshot
        # (before, it said "call with a smaller limit or since_consolidate", and neither showed them)
        seen: list[str] = []
        page = str(text)
        for _ in range(20):
            seen += re.findall(r"^## .*? · ([0-9a-f]{12}) · ", page, re.M)
            more = re.search(r'`before="([0-9a-f]{12})"`', page)
            if more is None:
                break
            page = str(history_service.global_trajectory(s, limit=70, before=more.group(1)))
            assert narrative.estimate_tokens(page) <= 1000 and f"before `{more.group(1)}`" in page
        assert len(seen) == len(set(seen)) == 63  # the start, big.py twice, 60 modules: each once
        first = s.recorder.repo.git.text(["rev-list", "--max-parents=0", "refs/heads/shadow/main"]).strip()
        assert first[:12] in seen
        assert "No snapshots before" in str(history_service.global_trajectory(s, before=first))
        with pytest.raises(InvalidArgumentError, match="not both"):
            history_service.global_trajectory(s, before=first, since_consolidate=True)
        with pytest.raises(InvalidArgumentError, match="give a snapshot"):
            history_service.global_trajectory(s, before="")
    finally:
        s.close()


def test_session_summary_reports_gaps_intents_and_files(session: ProjectSession) -> None:
    session.set_intent("Refactor app")
    edit(session, "src/app.py", "def main():\n    return 5\n")
    edit(session, "src/app.py", "def main():\n    return 6\n")
    text = last_session.session_summary(session, recap="## Recap\n- goal: ship it")
    assert "current session continues" in text
    assert "Refactor app" in text and "`src/app.py` (2 snapshot(s)" in text
    assert "## Recap" in text
    assert "Net change on `main` over the session" in text  # per branch (issue 18.4)


def test_sessions_split_at_gaps() -> None:
    base = datetime(2026, 1, 1, 12, tzinfo=UTC)
    times = [base, base - timedelta(minutes=30), base - timedelta(hours=2), base - timedelta(hours=2, minutes=5)]
    records = [CommitRecord(str(i), [], t, "[AUTO-TRJ]", {}) for i, t in enumerate(times)]
    split = sessions(records, 3600)
    assert [len(s) for s in split] == [2, 2]


def test_new_session_after_the_gap(project: Path) -> None:
    s = ProjectSession(project, TrajectorySettings.load(project, session_gap_seconds=1, debounce_seconds=0.5))
    s.start()
    try:
        import time

        time.sleep(2.2)
        assert "a new session starts now" in last_session.session_summary(s)
    finally:
        s.close()


def test_cut_diff_keeps_whole_lines_and_says_what_is_left() -> None:
    diff = "@@ -1 +1 @@ def f():\n" + "".join(f"+line {i}\n" for i in range(100))
    cut = narrative.cut_diff(diff, 200, "see more")
    assert len(cut) < 400 and "more line(s)" in cut and cut.endswith("see more]")


def test_hunk_labels_name_the_definition_of_the_first_change() -> None:
    diff = ("@@ -2,4 +2,4 @@ def f():\n     return 1\n \n def g():\n-    return 3\n+    return 2\n"
            "@@ -20,3 +20,3 @@ class Greeter:\n     x = 1\n-    y = 2\n+    y = 3\n")
    assert narrative.hunk_labels(diff) == ["def g():", "class Greeter:"]


def test_git_missing_or_old_is_reported(monkeypatch) -> None:
    from code_trajectory.core.errors import GitUnavailableError
    from code_trajectory.git import gitcmd

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(gitcmd, "_version_cache", None)
    with pytest.raises(GitUnavailableError, match="git was not found on PATH"):
        gitcmd.check_git_version()


def test_a_rename_to_a_name_that_looks_the_same_shows_what_changed(session: ProjectSession) -> None:
    """A file renamed to a name differing only by a no-break space read ``a b.py`` → ``a b.py``: the two names are
    shown with their invisible characters escaped, in the log, the comparison, the file's history and the message."""
    edit(session, "a b.py", "x = 1\ny = 2\nz = 3\n")
    (session.root / "a b.py").rename(session.root / "a\u00a0b.py")
    assert session.recorder.record_paths(["a b.py", "a\u00a0b.py"]) is not None
    log = str(history_service.global_trajectory(session))
    assert "R a b.py → a\\u00a0b.py" in log, log
    assert "`a b.py` → `a\\u00a0b.py`" in str(history_service.compare(session, "~1", "~0")), log
    assert "renamed from `a b.py`" in str(history_service.file_trajectory(session, "a\u00a0b.py"))
    message = subprocess.run(["git", "--git-dir", str(session.recorder.repo.git_dir), "log", "-1", "--format=%B",
                              "refs/heads/shadow/main"], capture_output=True, text=True, check=True).stdout
    assert "R a b.py -> a\\u00a0b.py" in message, message
    (session.root / "a\u00a0b.py").rename(session.root / "a\u2009b.py")  # a thin space: the old name escaped
    assert session.recorder.record_paths(["a\u00a0b.py", "a\u2009b.py"]) is not None
    assert "renamed from `a\\u00a0b.py`" in str(history_service.file_trajectory(session, "a\u2009b.py"))
