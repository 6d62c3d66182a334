"""A project that is a subdirectory of a git work tree: the .gitignore files above it and its index apply."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git.project import ProjectRepo
from code_trajectory.recording.recorder import Recorder
from code_trajectory.recording.worktree import scan
from support import git, git_repo, write
from support.gitdirs import all_git_dirs, assert_untouched_but_the_exclude_line, git_view, policy_for, shadow_files


def make_monorepo(tmp_path: Path, isolated_env: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    app = repo / "packages" / "app"
    app.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo, ".gitignore", "dist/\npackages/*/build/\n/packages/app/root-only.txt\n/top-only.txt\n")
    write(repo, "packages/.gitignore", "*.tmp\n!keep.tmp\n")
    write(repo, ".git/info/exclude", "/packages/app/local-notes.md\n")
    write(isolated_env, ".config/git/ignore", "*.swp\n")
    write(repo, "other/main.py", "not in the project")
    for rel in ["src/main.py", "dist/bundle.js", "src/dist/x.js", "build/out.o", "src/build/y.o", "root-only.txt",
                "src/root-only.txt", "top-only.txt", "a.tmp", "keep.tmp", "local-notes.md", "src/local-notes.md",
                "edit.swp", "build/pinned.cfg"]:
        write(app, rel, rel)
    git(repo, "add", "-A")
    git(repo, "add", "-f", "packages/app/build/pinned.cfg")
    git(repo, "commit", "-q", "-m", "monorepo")
    return repo, app


def test_gitignore_files_above_the_project_apply(tmp_path: Path, isolated_env: Path) -> None:
    repo, app = make_monorepo(tmp_path, isolated_env)
    project = ProjectRepo.discover(app)
    assert project.work_tree == repo.resolve() and project.prefix == "packages/app/"
    policy = policy_for(app)
    files = set(scan(app, policy).files)
    assert files == git_view(app)
    assert files == {"src/main.py", "src/build/y.o", "src/root-only.txt", "top-only.txt", "keep.tmp",
                     "src/local-notes.md", "build/pinned.cfg"}
    assert "dist/" in policy.explain("dist/bundle.js") and str(repo / ".gitignore") in policy.explain("dist", is_dir=True)
    assert "packages/*/build/" in policy.explain("build/out.o")
    assert "*.tmp" in policy.explain("a.tmp") and str(repo / "packages" / ".gitignore") in policy.explain("a.tmp")
    assert "info/exclude" in policy.explain("local-notes.md")
    assert "global excludes" in policy.explain("edit.swp")


def test_tracked_paths_come_from_the_enclosing_index(tmp_path: Path, isolated_env: Path) -> None:
    repo, app = make_monorepo(tmp_path, isolated_env)
    policy = policy_for(app)
    # paths are translated from the top of the work tree to the project; files outside it are not listed
    assert policy.tracked_count() == len(git(app, "ls-files", "-z").split("\0")) - 1
    assert policy.is_recorded("build/pinned.cfg") and policy.explain("build", is_dir=True) is None
    git(repo, "add", "-f", "packages/app/dist/bundle.js")
    assert policy.refresh_tracked() == ["dist/bundle.js"]
    assert set(scan(app, policy).files) == git_view(app)


def test_the_recorder_in_a_subdirectory_project_records_what_git_shows(tmp_path: Path, isolated_env: Path) -> None:
    repo, app = make_monorepo(tmp_path, isolated_env)
    gits = all_git_dirs(repo)
    recorder = Recorder.open(app, TrajectorySettings.load(app))
    try:
        snap = recorder.reconcile()
        assert shadow_files(app, snap.ref) == git_view(app)
    finally:
        recorder.close()
    assert_untouched_but_the_exclude_line(repo, gits, app.relative_to(repo).as_posix() + "/")


def test_the_project_root_is_recorded_even_when_a_rule_above_ignores_it(tmp_path: Path) -> None:
    """git would show nothing untracked in an ignored directory; recording that project would be useless."""
    repo = git_repo(tmp_path / "repo", {".gitignore": "node_modules/\n*.log\n"})
    app = repo / "node_modules" / "dep"
    write(app, "index.js", "module.exports = 1\n")
    write(app, "debug.log", "x")
    write(app, ".gitignore", "dist/\n")
    write(app, "dist/out.js", "x")
    assert git_view(app) == set()
    assert set(scan(app, policy_for(app)).files) == {"index.js", ".gitignore"}
    assert "*.log" in policy_for(app).explain("debug.log")


def test_a_repository_nested_in_the_work_tree_does_not_inherit_the_outer_rules(tmp_path: Path) -> None:
    """A project with its own .git inside another work tree: git stops at the repository boundary."""
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    git(outer, "init", "-q")
    write(outer, ".gitignore", "*.py\n")
    git(inner, "init", "-q")
    write(inner, "main.py", "x")
    project = ProjectRepo.discover(inner)
    assert project.work_tree == inner.resolve() and project.prefix == "" and project.enclosing_gitignores() == []
    assert set(scan(inner, policy_for(inner)).files) == git_view(inner) == {"main.py"}
