"""Issue 18.4: checkouts, stashes, resets and merges of the project's git are recorded as git operations.

Before, returning to ``main`` after committing on a feature branch was recorded as the agent's edit
(``[AUTO-TRJ] … - <agent's intent> - M calc.py (+0 -4)``). Now the watcher reads the project's reflog and
records ``[CHECKOUT] feature → main`` with no intent.
"""

from __future__ import annotations

from pathlib import Path

from code_trajectory.git import log
from code_trajectory.git.shadow import ShadowRepo
from support import git, shadow_count, wait_for, watching, write

CALC = "def add(a, b):\n    return a + b\n"
CALC_MORE = CALC + "\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def newest(root: Path, branch: str = "main") -> log.CommitRecord:
    with ShadowRepo(root) as repo:
        return log.read_log(repo, [f"refs/heads/shadow/{branch}"], limit=1)[0]


def settled(root: Path, ref: str, previous: int) -> int:
    """Wait until ``ref`` has a new commit, then return its count."""
    return wait_for(lambda: shadow_count(root, ref) > previous and shadow_count(root, ref))


def test_branch_switch_stash_reset_and_merge_are_git_operations_not_the_agents_edits(project: Path) -> None:
    write(project, "calc.py", CALC)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "calc")
    with watching(project) as session:
        session.set_intent("Add subtraction and multiplication")
        main = "refs/heads/shadow/main"
        feature = "refs/heads/shadow/feature"
        n = shadow_count(project, main)
        write(project, "calc.py", CALC_MORE)  # the agent's edit, on main
        n = settled(project, main, n)
        git(project, "checkout", "-q", "-b", "feature")  # git changes no file: nothing is recorded for it
        write(project, "calc.py", CALC_MORE + "\n# more\n")  # an edit right after: the agent's, on feature
        settled(project, feature, 0)
        edit = newest(project, "feature")
        assert edit.intent == "Add subtraction and multiplication" and not edit.is_git_operation
        git(project, "commit", "-q", "-am", "sub and mul")
        git(project, "checkout", "-q", "main")  # git puts calc.py back: that is not the agent's work
        settled(project, main, n)
        back = newest(project, "main")
        assert back.is_git_operation and back.git_operation == "checkout"
        assert back.subject.startswith("[CHECKOUT] ") and "feature → main" in back.subject
        assert back.intent is None and "Add subtraction" not in back.subject
        assert [c.path for c in back.changes] == ["calc.py"]

        n = shadow_count(project, main)
        write(project, "calc.py", CALC + "# scratch\n")
        n = settled(project, main, n)
        git(project, "stash")
        n = settled(project, main, n)
        stashed = newest(project)
        assert stashed.is_git_operation and stashed.git_operation == "stash" and stashed.intent is None
        assert stashed.subject.startswith("[STASH] ")
        git(project, "stash", "pop")
        n = settled(project, main, n)
        assert newest(project).subject.startswith("[STASH] ")

        git(project, "checkout", "-q", "--", "calc.py")  # discard: no reflog entry, an edit like any other
        n = settled(project, main, n)
        git(project, "merge", "-q", "--ff-only", "feature")
        n = settled(project, main, n)
        merged = newest(project)
        assert merged.git_operation == "merge" and merged.subject.startswith("[MERGE] ")
        git(project, "reset", "-q", "--hard", "HEAD~1")
        settled(project, main, n)
        reset = newest(project)
        assert reset.git_operation == "reset" and reset.subject.startswith("[RESET] ") and reset.intent is None
        # an ordinary edit afterwards is the agent's again
        n = shadow_count(project, main)
        write(project, "calc.py", CALC + "\n\ndef div(a, b):\n    return a / b\n")
        settled(project, main, n)
        assert newest(project).intent == "Add subtraction and multiplication"
        assert not newest(project).is_git_operation
