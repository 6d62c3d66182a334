"""A file whose name reads as git pathspec magic (``:!calc.py``, ``:/top.py`` is ``top.py`` in a directory ``:``,
``:calc.py``) is a file like any other: git commands that name recorded files take them literally.

Before, a git operation that changed such a file while the agent edited another one in the same window failed to be
recorded at all (``git ls-tree ... :!calc.py``: "pathspec magic not supported"), and ``compare`` showed no diff for
``:/top.py`` (git read it as ``top.py`` at the top). Real git, real projects in temp dirs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from code_trajectory.git import log
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.recording.session import ProjectSession
from support import git, subprocess_env, write

MAGIC = (":!calc.py", ":/top.py", ":calc.py")


def test_a_git_operation_on_magic_names_beside_an_agent_edit_is_split_as_usual(project: Path,
                                                                                 session: ProjectSession) -> None:
    for name in MAGIC:
        write(project, name, "v = 1\n")
    write(project, "calc.py", "v = 'plain'\n")
    write(project, "top.py", "v = 'plain'\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "magic names")
    git(project, "checkout", "-qb", "feature")
    for name in MAGIC:
        write(project, name, "v = 2\n")
    git(project, "commit", "-qam", "change them")
    git(project, "checkout", "-q", "main")
    session.recorder.note_git_activity()
    session.recorder.reconcile()
    git(project, "merge", "-q", "--ff-only", "feature")  # git's writes...
    session.set_intent("Agent edit")
    write(project, "src/app.py", "def main():\n    return 2\n")  # ...and the agent's, in one window
    session.recorder.note_git_activity()
    assert session.recorder.reconcile() is not None
    with ShadowRepo(project) as repo:
        edit, merge = log.read_log(repo, ["refs/heads/shadow/main"], limit=2)
    assert merge.is_git_operation and merge.git_operation == "merge" and merge.intent is None
    assert sorted(c.path for c in merge.changes) == sorted(MAGIC)
    assert [c.path for c in edit.changes] == ["src/app.py"] and edit.intent == "Agent edit"


def test_compare_shows_the_diff_of_a_file_named_like_pathspec_magic(project: Path) -> None:
    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "code_trajectory", *args], cwd=project, env=subprocess_env(),
                              capture_output=True, text=True, timeout=120, input="")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return done.stdout

    write(project, "top.py", "v = 'the top one'\n")
    write(project, ":/top.py", "v = 1\n")
    cli("checkpoint", "-m", "before")
    write(project, ":/top.py", "v = 2\n")
    cli("checkpoint", "-m", "after")
    out = cli("compare", "before", "after")
    assert "-v = 1" in out and "+v = 2" in out, out
