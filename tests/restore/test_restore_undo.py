"""The undo a restore's answer suggests puts back only what the restore changed (a one-file restore's undo used to
be the whole project's, which also reverted the edits made since to other files), a restore that changes nothing
names no safety point, and a symbol's history goes on past a restore that brought it back. Real git in temp dirs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from code_trajectory.git.points import points
from code_trajectory.history import service as history
from code_trajectory.recording.session import ProjectSession
from code_trajectory.restore.result import UNDO_NAMED
from code_trajectory.restore.service import restore
from support import write


def undo_call(text: str) -> tuple[str, list[str] | None]:
    """The snapshot and the paths of the undo the answer suggests (the tool call's form)."""
    found = re.search(r'undo with restore\(snapshot="([0-9a-f]+)"(?:, paths=(\[[^\]]*\]))?\)', text)
    assert found, text
    return found[1], json.loads(found[2]) if found[2] else None


def test_a_one_file_restore_suggests_an_undo_of_that_file_only(session: ProjectSession) -> None:
    root = session.root
    write(root, "src/app.py", "v = 1\n")
    write(root, "notes.txt", "first\n")
    session.checkpoint("v1")
    write(root, "src/app.py", "v = 2\n")
    session.checkpoint("v2")
    one = restore(session, "v1", ["src/app.py"])
    snapshot, paths = undo_call(one.text)
    assert paths == ["src/app.py"] and "code-trajectory restore" in one.text and " src/app.py`" in one.text
    write(root, "notes.txt", "edited after the restore\n")  # the user goes on working elsewhere
    restore(session, snapshot, paths)
    assert (root / "src/app.py").read_text() == "v = 2\n"
    assert (root / "notes.txt").read_text() == "edited after the restore\n"  # left alone by the undo


def test_a_whole_project_restore_names_the_few_files_it_changed_in_its_undo(session: ProjectSession) -> None:
    root = session.root
    write(root, "a.py", "a = 1\n")
    session.checkpoint("start")
    write(root, "a.py", "a = 2\n")
    write(root, "b.py", "b = 1\n")  # created after "start": a whole-project restore removes it
    session.checkpoint("later")
    whole = restore(session, "start")
    snapshot, paths = undo_call(whole.text)
    assert sorted(paths or []) == ["a.py", "b.py"]
    restore(session, snapshot, paths)
    assert (root / "a.py").read_text() == "a = 2\n" and (root / "b.py").read_text() == "b = 1\n"

    for i in range(UNDO_NAMED + 1):
        write(root, f"many/m{i}.py", f"m = {i}\n")
    session.checkpoint("many")
    wide = restore(session, "start")
    _, paths = undo_call(wide.text)
    assert paths is None and "edits made after this restore are undone too" in wide.text


def test_a_restore_that_changes_nothing_names_no_point(session: ProjectSession) -> None:
    write(session.root, "a.py", "a = 1\n")
    session.checkpoint("only")
    before = len(points(session.recorder.repo))
    same = restore(session, "only")
    assert not same.written and not same.removed and "Nothing to change" in same.text
    assert "Safety snapshot" not in same.text and len(points(session.recorder.repo)) == before


def test_a_symbols_history_goes_on_past_a_restore_that_brought_it_back(session: ProjectSession) -> None:
    root = session.root
    write(root, "m.py", "def a():\n    return 1\n")
    session.checkpoint("v1")
    write(root, "m.py", "def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    session.checkpoint("v2")
    write(root, "m.py", "def a():\n    return 1\n\n\ndef b():\n    return 3\n")
    session.checkpoint("v3")
    back = restore(session, "v1")
    restore(session, back.safety_snapshot)  # the undo brings b back
    text = history.symbol_trajectory(session, "m.py", "b", 10)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    # the restore and its undo cancel out: one line, as in the file's history (headings.file_spans)
    assert [h.split(" · ")[2] for h in headings[:2]] == ["added", "modified"], text
    assert len(headings) == 3 and headings[2].endswith("back to where it was, no net change"), text
    assert headings[2].count("[RESTORE] from") == 2 and '(checkpoint "v1")' in headings[2], text
    assert "checkpoint: v2" in headings[0] and "checkpoint: v3" in headings[1]
    assert all("before restore" not in h for h in headings), text  # automatic names say no why
    file_text = history.file_trajectory(session, "m.py", 10)
    assert "back to where it was, no net change" in file_text  # the same rule


def test_a_dry_run_cut_to_its_budget_names_the_files_it_does_not_show(project: Path) -> None:
    from code_trajectory.core.config import TrajectorySettings

    for i in range(10):
        write(project, f"src/m{i}.py", "".join(f"VALUE_{j} = {j}  # first version of a long line\n" for j in range(12)))
    write(project, "docs/a_guide.md", "".join(f"Line {j} of the guide, first version.\n" for j in range(40)))
    (project / ".trajectory").mkdir(exist_ok=True)
    (project / ".trajectory" / "config.toml").write_text("[trajectory]\ntoken_budget = 500\n")
    s = ProjectSession(project, TrajectorySettings.load(project))
    s.start()
    try:
        s.checkpoint("start")
        for i in range(10):
            write(project, f"src/m{i}.py", "".join(f"VALUE_{j} = {j + 1}  # second version\n" for j in range(12)))
        write(project, "docs/a_guide.md", "".join(f"Line {j} of the guide, second version.\n" for j in range(40)))
        s.checkpoint("later")
        dry = restore(s, "start", ["src/*.py", "docs"], dry_run=True)
    finally:
        s.close()
    assert dry.text.index("--- src/m0.py") < dry.text.index("diff cut"), dry.text  # source code first
    cut = dry.text.split("diff cut to fit the answer; ")[1]
    count = int(cut.split(" file(s) in all, ")[1].split(" ")[0])
    listed = cut.split("(whole or in part): ")[1].split("; a dry run")[0].split(", ")
    assert cut.startswith("11 file(s) in all") and len(listed) == count, dry.text  # the count is the list's
    assert "`src/m9.py`" in listed and listed[-1] == "`docs/a_guide.md`", dry.text


def test_a_hostile_file_name_in_the_suggested_undo_is_quoted(session: ProjectSession) -> None:
    """File names are untrusted: the undo command the answer spells out quotes them for the shell (``shlex``) and
    the tool call's paths are JSON, so copying either runs nothing and names exactly that file."""
    import shlex

    name = "x; touch pwned $(id) 'q'.py"
    write(session.root, name, "a = 1\n")
    session.checkpoint("v1")
    write(session.root, name, "a = 2\n")
    session.checkpoint("v2")
    one = restore(session, "v1", [name])
    snapshot, paths = undo_call(one.text)
    assert paths == [name]
    command = re.search(r"`(code-trajectory restore [^`]+)`", one.text)
    assert command and shlex.split(command[1]) == ["code-trajectory", "restore", snapshot, name], one.text
    assert not (session.root / "pwned").exists()


def test_the_suggested_undo_of_a_file_named_like_an_option_undoes_that_file_only(session: ProjectSession) -> None:
    """A file named ``--force``: the undo command the answer spells put it after the snapshot as is, so the command
    line read ``restore SNAPSHOT --force``, a forced restore of the whole project, which undid later edits to other
    files and removed the files created since. Its operands now follow ``--``; run as printed, the command puts
    back that file alone."""
    import shlex

    from support import cli_stdout

    root = session.root
    write(root, "--force", "v1\n")
    write(root, "other.py", "o = 1\n")
    session.checkpoint("v1")
    write(root, "--force", "v2\n")
    session.checkpoint("v2")
    one = restore(session, "v1", ["--force"])
    command = re.search(r"`(code-trajectory restore [^`]+)`", one.text)
    assert command, one.text
    write(root, "other.py", "o = 2\n")  # the user goes on working
    write(root, "later.py", "new\n")
    session.checkpoint("later")
    cli_stdout(root, *shlex.split(command[1])[1:])
    assert (root / "--force").read_text() == "v2\n"
    assert (root / "other.py").read_text() == "o = 2\n" and (root / "later.py").is_file()
