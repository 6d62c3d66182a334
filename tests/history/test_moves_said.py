"""A function moved to another file is said moved, once each side, where the answers list the files of a change set:
``compare``, the session summary's net change and the global log (a new user's session on google/uuid said
``util.go: removed xtob`` and ``uuid.go: added xtob`` where the symbol history said "moved from util.go"). Real git
in temp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.history import change_lines, last_session
from code_trajectory.history import service as history
from code_trajectory.recording.session import ProjectSession
from support import write
from support.ui import record_edit

XTOB = "// xtob converts hex characters into a byte.\nfunc xtob(x1, x2 byte) byte {\n\treturn x1<<4 | x2\n}\n"
UTIL = "package uuid\n\nfunc keep() int {\n\treturn 0\n}\n"
UUID = "package uuid\n\ntype UUID [16]byte\n"


def file_line(text: str, path: str) -> str:
    return next(line for line in text.splitlines() if f"`{path}`" in line or f" {path} (" in line)


def symbols_column(rows: list, path: str) -> str:
    return next(row[4] for row in rows if row[1] == path)


def test_a_function_moved_in_one_snapshot_is_said_moved_in_compare_and_the_log(session: ProjectSession) -> None:
    root = session.root
    write(root, "util.go", UTIL + "\n" + XTOB)
    write(root, "uuid.go", UUID)
    session.checkpoint("before")
    write(root, "util.go", UTIL)
    write(root, "uuid.go", UUID + "\n" + XTOB)
    session.checkpoint("moved")
    answer = history.compare(session, "before", "moved")
    assert file_line(answer, "util.go").endswith(": moved xtob to uuid.go"), answer
    assert file_line(answer, "uuid.go").endswith(": xtob moved from util.go"), answer
    assert "removed xtob" not in answer and "added xtob" not in answer and "doc comment" not in answer, answer
    rows = answer.data["files"]  # type: ignore[attr-defined]
    assert symbols_column(rows, "util.go") == "moved xtob to uuid.go"
    assert symbols_column(rows, "uuid.go") == "xtob moved from util.go"
    log = history.global_trajectory(session, limit=1)
    assert "M util.go (-5): moved xtob to uuid.go" in log and "M uuid.go (+5): xtob moved from util.go" in log, log


def test_a_class_moved_with_its_methods_is_one_move_and_a_lone_twin_body_is_not(session: ProjectSession) -> None:
    root = session.root
    cls = "class Pager:\n    def wait(self):\n        return 1\n\n    def go(self):\n        return 2\n"
    write(root, "a.py", "def keep():\n    return 0\n\n\n" + cls + "\n\ndef old_name():\n    return 42\n")
    write(root, "c.py", "X = 1\n")
    session.checkpoint("before")
    write(root, "a.py", "def keep():\n    return 0\n")
    write(root, "b.py", cls)
    write(root, "c.py", "X = 1\n\n\ndef new_name():\n    return 42\n\n\ndef other_name():\n    return 42\n")
    session.checkpoint("after")
    answer = history.compare(session, "before", "after")
    assert file_line(answer, "a.py").endswith(": removed old_name; moved Pager to b.py"), answer
    assert file_line(answer, "b.py").endswith(": Pager moved from a.py"), answer
    # two added functions with old_name's body under other names: which one it became is not known, none is said moved
    assert file_line(answer, "c.py").endswith(": added new_name, other_name"), answer


def test_the_net_change_of_a_session_whose_move_took_two_snapshots_says_it_moved(project: Path) -> None:
    record_edit(project, "util.go", UTIL + "\n" + XTOB)
    record_edit(project, "uuid.go", UUID)
    record_edit(project, "util.go", UTIL, intent="Move xtob from util.go to uuid.go")
    record_edit(project, "uuid.go", UUID + "\n" + XTOB, intent="Move xtob from util.go to uuid.go")
    from code_trajectory.core.config import TrajectorySettings

    session = ProjectSession(project, TrajectorySettings.load(project))
    try:
        answer = last_session.session_summary(session)
        log = history.global_trajectory(session, limit=2)
    finally:
        session.close()
    assert "  - M `util.go` (-5): moved xtob to uuid.go\n  - A `uuid.go` (+8): added UUID; xtob moved from util.go" \
        in answer, answer  # uuid.go is new in the session
    rows = answer.data["last"]["branches"][0]["net"]  # type: ignore[attr-defined]
    assert symbols_column(rows, "util.go") == "moved xtob to uuid.go"
    assert symbols_column(rows, "uuid.go") == "added UUID; xtob moved from util.go"
    # the log pairs the two halves too: nearby snapshots of one intent
    assert "M util.go (-5): moved xtob to uuid.go" in log and "M uuid.go (+5): xtob moved from util.go" in log, log


def test_halves_of_different_intents_and_change_sets_past_the_cap_are_no_move(project: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    record_edit(project, "util.go", UTIL + "\n" + XTOB)
    record_edit(project, "util.go", UTIL, intent="drop xtob")
    record_edit(project, "uuid.go", UUID + "\n" + XTOB, intent="add a twin")
    from code_trajectory.core.config import TrajectorySettings

    session = ProjectSession(project, TrajectorySettings.load(project))
    try:
        log = history.global_trajectory(session, limit=2)
        assert "M util.go (-5): removed xtob" in log and "A uuid.go (+8): added UUID, xtob" in log, log
        monkeypatch.setattr(change_lines, "MAX_MOVE_FILES", 1)  # the net change holds two files
        answer = last_session.session_summary(session)
    finally:
        session.close()
    assert "  - M `util.go` (-5): removed xtob\n  - A `uuid.go` (+8): added UUID, xtob" in answer, answer
