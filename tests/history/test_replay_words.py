"""Answers this round's replays found wanting in their words (pallets/click, 60 commits: a net change of 80 files
said "... and 60 more" without naming where). Real git in temp dirs."""

from __future__ import annotations

from code_trajectory.core.answer import structured
from code_trajectory.core.dirgroups import ELSEWHERE, TOP_LEVEL, Group, group_by_directory
from code_trajectory.git.log import describe_files
from code_trajectory.git.messages import FileChange
from code_trajectory.history import last_session
from code_trajectory.recording.session import ProjectSession
from support import write

#: The net change of click's last 60 commits, by directory: 80 files, 20 of them listed.
CLICK_NET = ([f"src/click/{name}.py" for name in ("__init__", "_compat", "_termui_impl", "_textwrap", "_utils",
                                                  "_winconsole", "core", "decorators", "exceptions", "formatting",
                                                  "parser", "shell_completion", "termui", "testing", "types",
                                                  "utils")]
             + ["docs/conf.py"] + [f"tests/test_{i:02}.py" for i in range(17)]
             + [f"tests/test_utils/test_{i:02}.py" for i in range(14)] + ["tests/typing/a.py", "tests/typing/b.py"]
             + [f"docs/page_{i:02}.rst" for i in range(19)] + [f".github/workflows/w{i}.yaml" for i in range(6)]
             + ["CHANGES.rst", "pyproject.toml", "README.md", ".gitignore", "examples/colors/README"])


def test_the_rest_of_a_long_net_change_is_said_by_directory(session: ProjectSession) -> None:
    assert len(CLICK_NET) == 80
    for rel in CLICK_NET:
        write(session.root, rel, f"# {rel}\n")
    assert session.recorder.record_paths(CLICK_NET) is not None
    answer = last_session.session_summary(session)
    line = next(x for x in str(answer).splitlines() if "... and" in x)
    assert line == ("  - ... and 60 more: top level (4), `.github/workflows/` (6), `docs/` (19), "
                    "`examples/colors/README`, `tests/*` (14), `tests/test_utils/` (14), `tests/typing/` (2)"), line
    fields = structured(answer, answer.data)
    assert fields is not None
    branch = fields["last"]["branches"][0]
    assert branch["net_files"] == 80 and len(branch["net"]) == 20, branch
    assert sum(count for _, count in branch["net_more"]) == 56 and ["docs/", 19] in branch["net_more"], branch
    assert branch["net_more_top_level"] == 4 and "net_more_elsewhere" not in branch, branch


def test_groups_are_the_deepest_directories_and_at_most_the_limit() -> None:
    assert group_by_directory([]) == []
    assert group_by_directory(["a/b/c.py", "a/b/d.py"]) == [Group("a/b/", 2)]
    assert group_by_directory(["src/x/a.py", "src/x/b.py", "tests/t.py", "tests/u/v.py"]) == [
        Group("src/x/", 2), Group("tests/t.py", 1), Group("tests/u/v.py", 1)]
    many = group_by_directory([f"d{i}/f{j}.py" for i in range(12) for j in range(i + 1)], max_groups=4)
    assert many == [Group("d10/", 11), Group("d11/", 12), Group("d9/", 10), Group("", 45, ELSEWHERE)]
    assert group_by_directory([f"pkg/d{i}/f.py" for i in range(5)] + ["pkg/d0/g.py"], max_groups=3) == [
        Group("pkg/d0/", 2), Group("pkg/d1/f.py", 1), Group("pkg/", 3, ELSEWHERE)]
    assert group_by_directory(["a.py", "b.py", "elsewhere", "d/e.py"]) == [
        Group("", 3, TOP_LEVEL), Group("d/e.py", 1)]


def test_the_groups_that_are_no_path_are_said_unquoted() -> None:
    """``(top level)`` and ``elsewhere`` were quoted as paths are: a file named ``elsewhere`` read as the rest."""
    changes = [FileChange("A", path) for path in ["elsewhere", "docs/a.md", "docs/b.md"]]
    assert describe_files(changes, limit=0, rest_by_directory=True) == [
        "  - ... and 3 more: `docs/` (2), `elsewhere`"]
    changes = [FileChange("A", f"d{i}/f{j}.py") for i in range(12) for j in range(i + 1)] + [
        FileChange("A", "a.py"), FileChange("A", "b.py")]
    assert describe_files(changes, limit=0, rest_by_directory=True) == [
        "  - ... and 80 more: `d10/` (11), `d11/` (12), `d5/` (6), `d6/` (7), `d7/` (8), `d8/` (9), `d9/` (10), "
        "elsewhere (17)"]
    changes = [FileChange("A", f"pkg/d{i}/f{j}.py") for i in range(12) for j in range(2)]
    line = describe_files(changes, limit=0, rest_by_directory=True)[0]
    assert line.endswith(", `pkg/d6/` (2), elsewhere in `pkg/` (10)"), line


def test_a_file_named_elsewhere_in_the_rest_of_a_net_change_is_a_path(session: ProjectSession) -> None:
    names = [f"src/m{i:02}.py" for i in range(20)] + ["elsewhere", "docs/a.md", "docs/b.md"]
    for rel in names:
        write(session.root, rel, f"# {rel}\n")
    assert session.recorder.record_paths(names) is not None
    answer = last_session.session_summary(session)
    line = next(x for x in str(answer).splitlines() if "... and" in x)
    assert line == "  - ... and 3 more: `docs/` (2), `elsewhere`", line
    fields = structured(answer, answer.data)
    assert fields is not None
    branch = fields["last"]["branches"][0]
    assert branch["net_more"] == [["docs/", 2], ["elsewhere", 1]], branch
    assert "net_more_elsewhere" not in branch and "net_more_top_level" not in branch, branch


def test_the_session_s_consolidations_are_their_names_oldest_first(session: ProjectSession) -> None:
    """A day's replay (pallets/click): ``- Consolidations: 2026-11-28 00:10:45 [CONSOLIDATE] 2026-11-28 00:10:45 -
    Tidy ...``, the date and time twice, the newest first beside restores and intents listed oldest first."""
    for n, task in enumerate(["Parse the config", "Add a cache"]):
        session.recorder.intent.set(task)
        write(session.root, f"src/m{n}.py", f"x = {n}\n")
        assert session.recorder.record_paths([f"src/m{n}.py"]) is not None
        assert "Consolidated 1 snapshot(s)" in str(session.consolidate(f"Done: {task}"))
    answer = str(last_session.session_summary(session))
    line = next(x for x in answer.splitlines() if x.startswith("- Consolidations: "))
    first, second = line.removeprefix("- Consolidations: ").split("; ")
    assert first.endswith(" Done: Parse the config") and second.endswith(" Done: Add a cache"), line
    assert "[CONSOLIDATE]" not in line and len(first) == len("00:00 Done: Parse the config"), line


def test_a_task_consolidated_as_done_stays_in_the_session_s_intents_and_files(session: ProjectSession) -> None:
    """Five edits of ``a.py``, consolidated as the README advises when a piece of work is done, then one edit of
    ``b.py``: the summary said "1 edit snapshot(s)", the intents "Touch b" only and the files most changed ``b.py``
    only, as if the session had done nothing to ``a.py`` (the squashed snapshots are gone from the history; the
    consolidation, left out as no edit, was their only record)."""
    session.recorder.intent.set("Rework a")
    for i in range(5):
        write(session.root, "a.py", "".join(f"x{j} = {i}\n" for j in range(10)))
        assert session.recorder.record_paths(["a.py"]) is not None
    assert "Consolidated 5 snapshot(s)" in str(session.consolidate("Reworked a"))
    session.recorder.intent.set("Touch b")
    write(session.root, "b.py", "y = 1\n")
    assert session.recorder.record_paths(["b.py"]) is not None
    lines = str(last_session.session_summary(session)).splitlines()
    assert "### On `main`: 2 edit snapshot(s)" in lines, lines
    assert '- Intents, in order: "Reworked a" (' in "\n".join(lines) and '"Touch b"' in "\n".join(lines), lines
    files = next(x for x in lines if x.startswith("- Files most changed: "))
    assert "`a.py` (1 snapshot(s), +10" in files and "`b.py`" in files, files
