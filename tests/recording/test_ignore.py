"""The in-process recording policy agrees with git's own view of ignored files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from code_trajectory.core.config import DEFAULT_DENY_PATTERNS
from code_trajectory.recording.worktree import scan
from support import git, git_repo, write
from support.gitdirs import git_view, policy_for


def test_nested_gitignores_negation_info_exclude_and_global_excludes(tmp_path: Path, isolated_env: Path) -> None:
    root = git_repo(tmp_path / "p", {
        ".gitignore": "*.log\n!keep.log\nbuild/\n/root-only.txt\ndocs/**/generated\n",
        "pkg/.gitignore": "*.tmp\n!important.tmp\nlocal/\n",
        "pkg/sub/.gitignore": "!*.log\n",
        ".git/info/exclude": "secret-notes.md\n",
    })
    write(isolated_env, ".config/git/ignore", "*.swp\n")
    for rel in ["a.log", "keep.log", "build/x.o", "pkg/build/y.o", "root-only.txt", "pkg/root-only.txt",
                "docs/a/generated/g.html", "docs/a/real.md", "pkg/x.tmp", "pkg/important.tmp", "pkg/local/z.py",
                "pkg/sub/trace.log", "pkg/sub/ok.py", "secret-notes.md", "file.swp", "src/main.py",
                "pkg/sub/deeper/more.log"]:
        write(root, rel, rel)
    expected = git_view(root)
    found = set(scan(root, policy_for(root)).files)
    assert found == expected
    # the watcher's per-path check agrees with the scanner
    policy = policy_for(root)
    for rel in ["a.log", "keep.log", "build/x.o", "pkg/x.tmp", "pkg/important.tmp", "pkg/sub/trace.log",
                "secret-notes.md", "file.swp", "src/main.py"]:
        assert policy.is_recorded(rel) == (rel in expected), rel


def test_explain_names_the_rule(project: Path) -> None:
    write(project, "build/out.o", "x")
    policy = policy_for(project, DEFAULT_DENY_PATTERNS)
    assert "build/" in policy.explain("build/out.o")
    assert ".gitignore" in policy.explain("build/out.o")
    assert "secret deny list" in policy.explain(".env")
    assert "secret deny list" in policy.explain("config/prod.pem")
    assert "secret deny list" in policy.explain("home/.ssh/id_ed25519")
    assert policy.explain(".trajectory", is_dir=True) is not None
    assert policy.explain("src/app.py") is None


def test_deny_list_wins_over_negation(project: Path) -> None:
    write(project, ".gitignore", "!.env\n!*.pem\n")
    write(project, ".env", "TOKEN=abc")
    write(project, "certs/server.pem", "-----BEGIN")
    write(project, ".aws/credentials", "[default]")
    files = set(scan(project, policy_for(project, DEFAULT_DENY_PATTERNS)).files)
    assert not files & {".env", "certs/server.pem", ".aws/credentials"}


NAMES = st.sampled_from(["a", "b", "c.log", "d.tmp", "keep.log", "build", "x.py"])
PATTERNS = st.sampled_from(["*", "!*.f", "a/**", "**/*.f", "!a/", "*.log", "!keep.log", "build/", "/a", "b/", "*.tmp", "!d.tmp", "c.log", "a/*.py",
                            "**/b", "x.py", "!x.py"])
#: Patterns for files above the project root (``top/.gitignore``, ``top/sub/.gitignore``, info/exclude and
#: the global excludes file, all but the one in ``sub`` relative to the top): none can match the project
#: directory ``sub/proj`` itself or ``sub`` (the project root is always entered, a documented difference).
OUTER_PATTERNS = st.sampled_from(["*.log", "!keep.log", "sub/proj/b/", "proj/a/*.py", "/sub/proj/c.log", "**/build",
                                  "build/", "!x.py", "*.tmp", "sub/**/d.tmp", "/x.py", "a/", "!a/", "**/b/*.f",
                                  "/proj/x.py.f", "proj/build/", "*.f", "!*.f", "!b/", "x.py.f", "/a"])


def policy_view(project: Path) -> set[str]:
    return set(scan(project, policy_for(project)).files)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.lists(st.lists(NAMES, min_size=1, max_size=3), min_size=1, max_size=12, unique_by=tuple),
       root_rules=st.lists(PATTERNS, max_size=5), sub_rules=st.lists(PATTERNS, max_size=4),
       tracked=st.sets(st.integers(0, 11), max_size=8), subdir=st.booleans(),
       top_rules=st.lists(OUTER_PATTERNS, max_size=4), mid_rules=st.lists(OUTER_PATTERNS, max_size=3),
       info_rules=st.lists(OUTER_PATTERNS, max_size=2), global_rules=st.lists(OUTER_PATTERNS, max_size=2))
def test_policy_matches_git_on_generated_trees(tmp_path_factory, isolated_env, paths, root_rules, sub_rules, tracked,
                                               subdir, top_rules, mid_rules, info_rules, global_rules) -> None:
    """The scan takes exactly what `git ls-files --cached --others --exclude-standard` lists in the project:
    nested .gitignore files with negations, ignored files and directories force-added to the index, a
    project that is a subdirectory of the work tree under .gitignore files of its own, info/exclude and
    the global excludes file. The per-path check used by the watcher agrees with the scan."""
    top = tmp_path_factory.mktemp("gen")
    git(top, "init", "-q")
    project = top / "sub" / "proj" if subdir else top
    created: list[str] = []
    for parts in paths:
        rel = "/".join(parts) + ".f"
        if any(rel.startswith(c + "/") or c.startswith(rel + "/") for c in created):
            continue
        write(project, rel, "x")
        created.append(rel)
    write(project, ".gitignore", "\n".join(root_rules) + "\n")
    if (project / "a").is_dir():
        write(project, "a/.gitignore", "\n".join(sub_rules) + "\n")
    if subdir:
        write(top, ".gitignore", "\n".join(top_rules) + "\n")
        write(top, "sub/.gitignore", "\n".join(r.replace("sub/", "") for r in mid_rules) + "\n")
        write(top, "outside.f", "not in the project")
    write(top, ".git/info/exclude", "\n".join(info_rules) + "\n")
    write(isolated_env, ".config/git/ignore", "\n".join(global_rules) + "\n")
    chosen = [created[i] for i in sorted(tracked) if i < len(created)]
    if chosen:
        git(project, "add", "-f", "--", *chosen)
    expected = git_view(project)
    assert set(chosen) <= expected
    ignored_tracked = [p for p in git(project, "ls-files", "-z", "--cached", "--ignored", "--exclude-standard").split("\0") if p]
    untracked_ignored = set(created) - expected
    event(f"tracked but ignored: {'yes' if ignored_tracked else 'no'}; "
          f"{'in a subdirectory of the work tree' if subdir else 'at the top'}; "
          f"ignored untracked files: {'yes' if untracked_ignored else 'no'}")
    policy = policy_for(project)
    assert set(scan(project, policy).files) == expected
    for rel in created:
        assert policy.is_recorded(rel) == (rel in expected), rel
    policy_dirs = {rel.rpartition("/")[0] for rel in expected if "/" in rel}
    for rel in policy_dirs:
        assert policy.is_recorded(rel, is_dir=True), rel


def test_symlinked_directories_are_not_followed(project: Path) -> None:
    os.symlink(project / "src", project / "src-link")
    os.symlink(project / "loop", project / "loop")  # a loop
    files = scan(project, policy_for(project)).files
    assert files["src-link"].mode == "120000" and files["loop"].mode == "120000"
    assert not any(p.startswith("src-link/") for p in files)


@pytest.mark.parametrize("deny", [(), ("build-secrets/**/[ab]*.cfg",)])  # the second: no name screen, one by one
def test_tracked_files_judged_together_agree_with_the_one_by_one_check(tmp_path: Path, deny: tuple[str, ...]) -> None:
    """``tracked_files_excluded`` (an import's check of all directories' tracked files at once) gives, name for name,
    what ``entry_excluded(..., tracked=True)`` gives: our own exclusions only, a name holding a newline included, in
    whichever directory of the call it is (first, last, beside an empty one)."""
    names = ["main.py", ".env", ".env.local", "id_rsa", "server.pem", ".ct-0123456789", ".ct-0123456789ab.tmp",
             ".trajectory", ".git", "notes.txt", "a\n.env", ".en\nv", "config.json", "credentials.json", "kubeconfig"]
    root = git_repo(tmp_path / "p", {"src/keep.py": "x\n", ".docker/config.json": "{}\n"})
    policy = policy_for(root, DEFAULT_DENY_PATTERNS + deny)
    parents = ("src", ".docker", "")
    expected = {parent: [n for n in names if policy.entry_excluded(parent, n, False, tracked=True)] for parent in parents}
    assert all(expected.values())
    assert policy.tracked_files_excluded([(parent, names) for parent in parents]) == expected
    assert policy.tracked_files_excluded([(parent, [n for n in names if n not in expected[parent]])
                                          for parent in parents]) == {}
    plain = [f"m{i}.py" for i in range(5)]
    for at in range(3):  # one directory of three holds the names to skip; the others plain or empty
        directories = [(parent, names if i == at else plain if i % 2 else []) for i, parent in enumerate(parents)]
        assert policy.tracked_files_excluded(directories) == {parents[at]: expected[parents[at]]}
    assert policy.tracked_files_excluded([("src", ["a\n.env", ".env"])]) == {"src": [".env"]}  # newline: one by one
