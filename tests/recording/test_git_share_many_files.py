"""A git operation that changes tens of thousands of files (a checkout in a large monorepo) is still told as git's.

Before, :func:`code_trajectory.recording.gitops.operation_paths` asked git about every changed path on one command
line: past ``ARG_MAX`` (2 MiB on Linux, about 30,000 paths) git did not start (``E2BIG``), the index read as empty, and
every file git had written was recorded as the agent's edit, with its intent (the conflicts git left, the same way);
cutting git's share out of a snapshot beside an agent edit failed the snapshot. Real git: a project whose index
holds a file, asked about it among 40,000 other changed paths.
"""

from __future__ import annotations

from pathlib import Path

from code_trajectory.git.messages import FileChange
from code_trajectory.git.project import ProjectRepo
from code_trajectory.recording.gitops import operation_paths, operation_tree
from code_trajectory.recording.session import ProjectSession
from support import git, write


def test_the_files_git_wrote_are_its_own_among_forty_thousand_changes(project: Path) -> None:
    oid = git(project, "rev-parse", ":src/app.py").strip()
    repo = ProjectRepo.discover(project)
    elsewhere = [FileChange("A", f"vendor/package-{i:05d}/a-rather-long-module-name/index.js", new_oid="1" * 40)
                 for i in range(40_000)]  # not in the index: the agent's (or not git's) new files
    changes = [FileChange("M", "src/app.py", new_oid=oid), *elsewhere]
    assert sum(len(c.path) + 12 for c in changes) > 2 * 1024 * 1024  # more than one command line holds
    assert operation_paths(repo, changes) == {"src/app.py"}
    blobs, unmerged = repo.index_stages(["src/app.py", *(c.path for c in elsewhere)])
    assert blobs == {"src/app.py": oid} and unmerged == {}


def test_gits_share_of_a_snapshot_is_cut_out_among_forty_thousand_paths(session: ProjectSession) -> None:
    """The git operation's share of a snapshot beside an agent edit (``operation_tree``) read the listed paths with
    one ``git ls-tree`` command line: past ``ARG_MAX`` the snapshot could not be written at all."""
    repo = session.recorder.repo
    before = repo.commit_tree_oid(session.recorder.latest_commit(session.branch))
    write(session.root, "src/app.py", "def main():\n    return 2\n")
    session.checkpoint("edited")
    after = repo.commit_tree_oid(session.recorder.latest_commit(session.branch))
    gone = {f"vendor/package-{i:05d}/a-rather-long-module-name/index.js" for i in range(40_000)}
    assert operation_tree(repo, before, after, {"src/app.py", *gone}) == after
