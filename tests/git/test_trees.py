"""Tree editing: the edited tree equals the tree git itself writes for the same files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.git.tree_format import MODE_FILE, TreeEntry
from code_trajectory.git.trees import apply_changes


def git_tree_of(repo: ShadowRepo, files: dict[str, str]) -> str:
    """Tree id git computes for ``{path: blob}`` through a throwaway index."""
    index = repo.git_dir / "throwaway-index"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_INDEX_FILE=str(index), GIT_DIR=str(repo.git_dir))
    subprocess.run(["git", "read-tree", "--empty"], env=env, check=True)
    info = "".join(f"100644 {oid}\t{path}\n" for path, oid in files.items())
    subprocess.run(["git", "update-index", "--index-info"], input=info.encode(), env=env, check=True)
    out = subprocess.run(["git", "write-tree"], env=env, check=True, capture_output=True).stdout.decode().strip()
    index.unlink()
    return out


SEGMENT = st.sampled_from(["a", "b", "c", "d.py", "e"])
PATH = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.lists(st.tuples(PATH, st.booleans()), min_size=1, max_size=6), min_size=1, max_size=5))
def test_edits_match_git_write_tree(tmp_path_factory, steps) -> None:
    root = tmp_path_factory.mktemp("trees")
    repo = ShadowRepo(root)
    repo.ensure()
    try:
        content = {}
        tree = None
        for n, step in enumerate(steps):
            changes: dict[str, TreeEntry | None] = {}

            def put(key: str, value: TreeEntry | None, changes: dict[str, TreeEntry | None] = changes) -> None:
                changes.pop(key, None)  # re-insert at the end: changes apply in order
                changes[key] = value

            for path, delete in step:
                if delete:
                    put(path, None)
                    for existing in list(content):
                        if existing == path or existing.startswith(path + "/"):
                            del content[existing]
                else:
                    # adding a file replaces any file that is its parent dir and any dir at its place
                    for existing in list(content):
                        if existing.startswith(path + "/") or path.startswith(existing + "/"):
                            del content[existing]
                            put(existing, None)
                    oid = repo.hash_bytes(f"{path} {n}".encode())
                    content[path] = oid
                    put(path, TreeEntry(MODE_FILE, oid))
            tree = apply_changes(repo, tree, changes)
            assert tree == git_tree_of(repo, content)
    finally:
        repo.close()


def test_deleting_a_directory_then_adding_under_it_starts_fresh(tmp_path: Path) -> None:
    repo = ShadowRepo(tmp_path)
    repo.ensure()
    a, b = repo.hash_bytes(b"a"), repo.hash_bytes(b"b")
    tree = apply_changes(repo, None, {"d/old.txt": TreeEntry(MODE_FILE, a), "d/keep/x": TreeEntry(MODE_FILE, a)})
    tree = apply_changes(repo, tree, {"d": None, "d/new.txt": TreeEntry(MODE_FILE, b)})
    assert tree == git_tree_of(repo, {"d/new.txt": b})
    assert apply_changes(repo, tree, {"d": None}) == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    repo.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.sets(PATH, min_size=1, max_size=12))
def test_an_import_tree_built_from_nothing_matches_git_write_tree(tmp_path_factory, paths) -> None:
    """With no base and no deletion (an initial import), the tree is built directory by directory."""
    files = sorted(p for p in paths if not any(other.startswith(p + "/") for other in paths))  # files, not dirs
    root = tmp_path_factory.mktemp("import")
    repo = ShadowRepo(root)
    repo.ensure()
    try:
        content = {path: repo.hash_bytes(path.encode()) for path in reversed(files)}  # any order
        with repo.batch():
            tree = apply_changes(repo, None, {path: TreeEntry(MODE_FILE, oid) for path, oid in content.items()})
        assert tree == git_tree_of(repo, content)
        fsck = subprocess.run(["git", f"--git-dir={repo.git_dir}", "fsck", "--strict", "--no-dangling"],
                              capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr
    finally:
        repo.close()


def test_list_files_of_more_paths_than_one_command_line_holds(session) -> None:
    """`restore` naming many files listed them all on one `git ls-tree` command line: past ARG_MAX git did not start
    ("Argument list too long", a tool error instead of the restore); the paths go in batches."""
    from code_trajectory.git.trees import list_files

    repo = session.recorder.repo
    tree = repo.commit_tree_oid(session.recorder.latest_commit(session.branch))
    many = [f"src/{'n' * 100}{i}.py" for i in range(25_000)]  # 3 MB of arguments
    found = list_files(repo, tree, ["src/app.py", *many, "tests/test_app.py"])
    assert sorted(found) == ["src/app.py", "tests/test_app.py"]


def test_list_files_of_many_paths_lists_the_tree_once_instead_of_matching_each_file_with_each_path(
        session, monkeypatch) -> None:
    """`restore` naming 20,000 files gave them to `git ls-tree` as pathspecs, which git matches with every file: 4.6 s
    a call, three calls a restore; past MAX_PATHSPECS the whole tree is listed (0.05 s) and filtered here, with the
    same answer (names read literally, a directory naming what is under it)."""
    from code_trajectory.git import trees
    from support import write

    names = [f"many/f{i}.py" for i in range(200)] + [":x.py", "[ab].py", "deep/sub/leaf.py", "deeper/a.py"]
    for name in names:
        write(session.root, name, name)
    write(session.root, "a.py", "not named: [ab].py is read literally")
    session.checkpoint("many")
    repo = session.recorder.repo
    tree = repo.commit_tree_oid(session.recorder.latest_commit(session.branch))
    asked = [*names[:150], ":x.py", "[ab].py", "deep", "src/app.py", "missing.py"]
    given: list[int] = []
    out = repo.git.out

    def counted(args: list[str], *rest, **kw):
        given.append(len(args[args.index("--") + 1:]) if "--" in args else 0)
        return out(args, *rest, **kw)

    monkeypatch.setattr(repo.git, "out", counted)
    found = trees.list_files(repo, tree, asked)
    expected = {*names[:150], ":x.py", "[ab].py", "deep/sub/leaf.py", "src/app.py"}
    assert set(found) == expected
    assert max(given) <= 64  # trees.MAX_PATHSPECS
    few = trees.list_files(repo, tree, [":x.py", "[ab].py", "deep"])  # few paths: pathspecs, the same answer
    assert few == {p: found[p] for p in (":x.py", "[ab].py", "deep/sub/leaf.py")}
