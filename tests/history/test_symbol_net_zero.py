"""A ``git stash`` and its ``git stash pop`` are one line in a symbol's history, as in its file's.

Before, the file's trajectory said the round trip in one line (``[STASH] …, then [STASH] …: back to where it was, no
net change``) while the symbol's listed two changes by git that undo each other (and the newest of them took the
only diff shown, so the agent's own edit was compacted to ``+1 -1, line 2``), each named by the time in its commit's
first line (``[STASH] 09:09:10 by git``) where the file's says what git did (``[STASH] WIP on main: …``). Both now fold such runs by the same
rule (:func:`code_trajectory.history.headings.file_spans`). A real project is recorded by the recorder the watcher
drives (``note_git_activity`` is what the watcher calls when git writes the reflog or the stash).
"""

from __future__ import annotations

from code_trajectory.history import service as history
from code_trajectory.recording.session import ProjectSession
from support import git, write


def record(session: ProjectSession, *, stash: bool = False) -> None:
    if stash:
        session.recorder.note_git_activity(stash=True)
    assert session.recorder.record_paths(["src/app.py"]) is not None


def net_zero(text: str) -> list[str]:
    """The part after the ids of every heading that says a run cancels out."""
    return [line.rsplit("` · ", 1)[1] for line in text.split("\n")
            if line.startswith("## ") and "no net change" in line]


def test_a_stash_and_its_pop_are_one_line_in_the_symbol_history_as_in_the_files(session: ProjectSession) -> None:
    root = session.root
    session.set_intent("Return two")
    write(root, "src/app.py", "def main():\n    return 2\n")
    record(session)
    git(root, "stash", "-q")
    record(session, stash=True)
    assert (root / "src/app.py").read_text() == "def main():\n    return 1\n"
    newest = history.symbol_trajectory(session, "src/app.py", "main", 10).split("\n## ")[-1].split("\n")[0]
    assert " · [STASH] WIP on main: " in newest and " by git" in newest, newest  # named as the file's history names it
    git(root, "stash", "pop", "-q")
    record(session, stash=True)

    file_text = history.file_trajectory(session, "src/app.py", 10)
    symbol = history.symbol_trajectory(session, "src/app.py", "main", 10)
    said = net_zero(file_text)
    assert len(said) == 1 and said[0].startswith("[STASH] ") and ", then [STASH] " in said[0], file_text
    assert net_zero(symbol) == said, symbol  # the same line, word for word
    headings = [line for line in symbol.split("\n") if line.startswith("## ")]
    assert len(headings) == 3 and symbol.count("[STASH]") == 2, symbol  # as first recorded, the edit, the round trip
    assert "Intent: Return two" in headings[1] and "-    return 1\n+    return 2" in symbol  # the edit keeps its diff
    versions = [dict(zip(symbol.data["cols"], row)) for row in symbol.data["versions"]]
    assert [v["what"] for v in versions][:2] == ["as first recorded", "modified"]
    folded = versions[2]
    assert folded["what"] == said[0] and len(folded["id"].split()) == 2  # every id of the run, as the heading
    assert all(f"`{i}`" in headings[2] for i in folded["id"].split())
    assert folded.get("diff") is None
