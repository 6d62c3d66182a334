"""Answers a real history's replay found wrong (itsdangerous, 40 commits, the CLI as a subprocess): a file whose
newest versions cancel out (a restore and its undo) at a small depth, a pure rename's diff said to be left out, a
rename's old path said deleted, a session whose branches changed the same file, a history begun by ``checkpoint``
rather than an import, and a search that reached its limit. Real git in temp dirs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.history import last_session
from support import cli_stdout, git, mcp_client, server_command, subprocess_env, write


def test_a_files_newest_versions_that_cancel_out_at_a_small_depth(project: Path) -> None:
    write(project, "m.py", "def a():\n    return 1\n")
    cli_stdout(project, "checkpoint")
    write(project, "m.py", "def a():\n    return 2\n")
    cli_stdout(project, "checkpoint")
    out = cli_stdout(project, "restore", "~1", "m.py")
    safety = re.search(r'restore\(snapshot="([0-9a-f]+)"', out)
    assert safety, out
    cli_stdout(project, "restore", safety[1], "m.py")
    assert "Revert" in cli_stdout(project, "file", "m.py", "--depth", "1")  # the undo alone
    for depth in ("2", "3"):  # depth 2 raised IndexError: both versions shown were one group
        text = cli_stdout(project, "file", "m.py", "--depth", depth)
        assert "back to where it was" in text, text
    from code_trajectory.core.answer import structured
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession

    session = ProjectSession(project, TrajectorySettings.load(project))
    session.start()
    try:
        for depth in (2, 3):  # the structured content says the pair as the text does: one entry, no net change
            answer = service.file_trajectory(session, "m.py", depth)
            data = structured(answer, answer.data)
            assert data is not None and "versions_left_out" not in data, data
            pair = data["versions"][-1]
            assert (pair["n"], pair["to"]) == (3, 4) and "no net change" in pair["msg"] and len(pair["ids"]) == 25
            assert len(data["versions"]) == depth - 1
    finally:
        session.close()


def test_a_rename_is_said_on_both_paths_without_a_left_out_diff(project: Path) -> None:
    write(project, "LICENSE.rst", "Copyright 2011\n")
    cli_stdout(project, "checkpoint")
    (project / "LICENSE.rst").rename(project / "LICENSE.txt")
    cli_stdout(project, "checkpoint")
    new = cli_stdout(project, "file", "LICENSE.txt")
    assert "renamed from `LICENSE.rst`" in new and "left out" not in new, new
    old = cli_stdout(project, "file", "LICENSE.rst")
    assert "The file was renamed to `LICENSE.txt`" in old and "not recorded since" not in old, old


def test_a_sessions_net_change_names_each_branchs_own_symbols(project: Path) -> None:
    write(project, "m.py", "def a():\n    return 1\n")
    write(project, "other.py", "x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    cli_stdout(project, "checkpoint", "-m", "base")
    git(project, "checkout", "-qb", "feat")
    write(project, "m.py", "def a():\n    return 1\n\n\ndef b():\n    return 3\n")
    cli_stdout(project, "checkpoint")
    git(project, "commit", "-qam", "b")
    git(project, "checkout", "-q", "main")
    write(project, "other.py", "x = 2\n")
    cli_stdout(project, "checkpoint")
    summary = cli_stdout(project, "session")
    main = summary.split("### On `main`")[1].split("###")[0]
    feat = summary.split("### On `feat`")[1]
    assert "added b" not in main and "m.py" not in main.split("Net change")[1], summary
    assert "M `m.py` (+4): added b" in feat, summary


def test_a_history_begun_by_a_checkpoint_starts_from_it(project: Path) -> None:
    """No import (the project's first recording was a ``checkpoint``): its first snapshot is the baseline, so the
    session's net change is what changed since, not every file added."""
    write(project, "m.py", "def a():\n    return 1\n")
    write(project, "other.py", "x = 1\n")
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "m.py", "def a():\n    return 2\n")
    cli_stdout(project, "checkpoint")
    summary = cli_stdout(project, "session")
    net = summary.split("Net change")[1]
    assert "M `m.py` (+1 -1): modified a" in net and "other.py" not in net and "A `" not in net, summary


def test_the_log_counts_a_large_first_checkpoint_as_the_baseline(project: Path) -> None:
    """A history begun by a ``checkpoint`` of a project of many files: its first snapshot holds them as they were,
    counted, not listed as added one by one (as an import's heading counts them)."""
    for n in range(12):
        write(project, f"pkg/m{n}.py", f"def f{n}():\n    return {n}\n")
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "pkg/m0.py", "def f0():\n    return 100\n")
    cli_stdout(project, "checkpoint")
    log = cli_stdout(project, "log")
    first = log.split("checkpoint: start", 1)[1].split("\n## ", 1)[0]
    assert "files as they were when recording began (the first snapshot; not listed)" in first, log
    assert "A pkg/" not in log and "M pkg/m0.py (+1 -1): modified f0" in log


def test_a_search_that_reaches_its_limit_says_older_ones_match_too(project: Path) -> None:
    write(project, "m.py", "x = 0\n")
    cli_stdout(project, "checkpoint")
    for i in range(5):
        write(project, "m.py", "x = 0\n" + "".join(f"# tok{j}\n" for j in range(i + 1)))
        cli_stdout(project, "checkpoint")
    limited = cli_stdout(project, "search", "tok", "--limit", "2")
    assert "the newest 2 snapshot(s) that added or removed it; older ones did too" in limited, limited
    whole = cli_stdout(project, "search", "tok", "--limit", "5")
    assert whole.splitlines()[0].endswith("5 snapshots added or removed it, newest first"), whole


def test_the_summary_says_saves_wait_only_when_saves_were_seen(session) -> None:
    """The rescan a watcher's start asks for (to cover its walk) is no saved change: the summary said "Changes saved
    since the last snapshot are waiting for the debounce" right after a server started on an unchanged tree."""

    write(session.root, "a.py", "a = 1\n")
    session.checkpoint("start")
    session.recorder.note_changes((), rescan=True)
    assert session.recorder.has_pending(wait=False) and not session.recorder.has_pending(wait=False, rescan=False)
    assert "waiting for the debounce" not in last_session.session_summary(session)
    write(session.root, "a.py", "a = 2\n")
    session.recorder.note_changes(["a.py"])
    assert "waiting for the debounce" in last_session.session_summary(session)


def test_a_stash_between_two_cli_checkpoints_is_gits_not_the_users_edit(project: Path) -> None:
    """No watcher, no server: only ``checkpoint`` records. The stash and its pop were recorded as the user's edits
    (with the intent); the reflogs now tell them, as a start-up scan's catch-up does."""
    write(project, "m.py", "def a():\n    return 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    cli_stdout(project, "checkpoint")
    cli_stdout(project, "intent", "my edit")
    write(project, "m.py", "def a():\n    return 1\n# wip\n")
    cli_stdout(project, "checkpoint")
    git(project, "stash", "-q")
    cli_stdout(project, "checkpoint")
    git(project, "stash", "pop", "-q")
    cli_stdout(project, "checkpoint", "-m", "after the pop")
    log = cli_stdout(project, "log")
    assert "[STASH] while not recording: WIP on main" in log and "pop or drop" in log, log
    assert log.count("Intent: my edit") == 1, log  # the edit itself, not git's stash or pop


def test_the_summarys_structured_intents_are_the_newest_as_the_text_lists_them(session) -> None:
    """A session of 14 intents: the text lists the newest 12 after "2 earlier"; the structured content held the
    oldest 12 (a client that passes only structured content to the model got the start of the session)."""

    for n in range(14):
        session.set_intent(f"step {n}")
        write(session.root, "m.py", f"x = {n}\n")
        assert session.recorder.record_paths(["m.py"]) is not None
    summary = last_session.session_summary(session)
    assert "2 earlier, then " in str(summary)
    work = summary.data["last"]["branches"][0]
    assert [row[0] for row in work["intents"]] == [f"step {n}" for n in range(2, 14)]
    assert work["earlier_intents"] == 2


def test_a_file_renamed_and_edited_in_one_snapshot_shows_its_edit(project: Path) -> None:
    """``mv SECURITY.md docs/`` and a line appended, one snapshot: the file history said "renamed from" with no
    counts and no diff (the log and compare had the +2)."""
    write(project, "SECURITY.md", "".join(f"line {n} of the policy\n" for n in range(30)))
    cli_stdout(project, "checkpoint", "-m", "base")
    (project / "SECURITY.md").unlink()
    write(project, "docs/SECURITY.md", "".join(f"line {n} of the policy\n" for n in range(30)) + "\nSee also X\n")
    cli_stdout(project, "checkpoint", "-m", "move and edit")
    history = cli_stdout(project, "file", "docs/SECURITY.md", "--depth", "1")
    assert "renamed from `SECURITY.md` (+2)" in history and "+See also X" in history, history


def test_the_summarys_structured_content_keeps_every_named_point_beside_one_snapshot_intents(session) -> None:
    """A replay of 43 commits, one intent and one snapshot each, with 3 checkpoints: each intent's two equal times
    (the text's "(06:23–06:23)") made the structured content longer than the text, and the size rule's last resort
    left out the two oldest named points, the user's checkpoints a model given only the fields never saw."""
    from code_trajectory.core import answer

    for n in range(14):
        session.set_intent(f"replay {n}: Merge pull request #{300 + n} from GrahamCampbell/a-branch-name")
        write(session.root, "m.py", f"x = {n}\n")
        assert session.recorder.record_paths(["m.py"]) is not None
        if n in (3, 8, 13):
            session.checkpoint(f"point {n}")
    summary = last_session.session_summary(session)
    fields = answer.structured(str(summary), summary.data)
    assert fields is not None
    assert [p["name"] for p in fields["named_points"]] == ["point 3", "point 8", "point 13"], fields
    assert "named_points_left_out" not in fields
    rows = fields["last"]["branches"][0]["intents"]
    assert all(len(row) == 2 for row in rows), rows  # one time: the intent had one snapshot
    intents = next(line for line in str(summary).splitlines() if line.startswith("- Intents"))
    assert "–" not in intents and f'"{rows[-1][0]}" ({rows[-1][1]})' in intents, intents  # and so does the text


@pytest.mark.anyio
async def test_a_restore_says_its_intent_once_and_the_summarys_fields_list_it(project: Path) -> None:
    """A restore made under an intent: its heading said the intent twice (``Intent: X · restore: [RESTORE] X - from
    …``), the summary's restores line repeated it with the time, and the summary's fields had no restores."""
    intent = "Add cookie option partitioned to DEFAULT_OPTIONS and document class Persisted"
    write(project, "src/app.py", "def main():\n    return 1\n")
    cli_stdout(project, "checkpoint", "-m", "base")
    write(project, "src/app.py", "def main():\n    return 2\n")
    cli_stdout(project, "checkpoint", "-m", "edited")
    cli_stdout(project, "intent", intent)
    cli_stdout(project, "restore", "base", "src/app.py")
    for answer in (cli_stdout(project, "file", "src/app.py"), cli_stdout(project, "log")):
        heading = answer.split("\n## ")[-1].splitlines()[0]
        assert heading.count(intent) == 1 and 'restore: [RESTORE] from ' in heading, heading
    summary = cli_stdout(project, "session")
    line = next(x for x in summary.splitlines() if x.startswith("- Restores: "))
    assert intent not in line and '[RESTORE] from ' in line and 'M src/app.py (+1 -1)' in line, line
    async with mcp_client(project) as client:
        fields = (await client.call_tool("get_session_summary", {})).structured_content
    restores = fields["last"]["branches"][0]["restores"]
    assert [row[1] for row in restores] == [line.removeprefix("- Restores: ").split(" ", 1)[1]], restores
    # the last snapshot is the restore: the final state does not say where from again (a new user's session did)
    assert summary.count("[RESTORE] from ") == 1, summary
    final = next(x for x in summary.splitlines() if x.startswith("Final state: "))
    assert final.endswith(f"Intent: {intent} · the restore listed above"), final
    assert fields["final"]["msg"] == f"[RESTORE] {intent}" and fields["last"]["to"] == restores[0][0], fields


def test_a_file_recorded_on_another_branch_only_is_said_to_be_there(project: Path) -> None:
    """A trait written on a feature branch, asked about from ``main``: "No snapshot on this shadow branch has
    recorded this path. No such file exists", then five unrelated "similar names"."""
    cli_stdout(project, "checkpoint", "-m", "on main")
    git(project, "switch", "-q", "-c", "experiment")
    write(project, "src/LoggingTrait.php", "<?php\n\ntrait LoggingTrait\n{\n    public function log($m) { echo $m; }\n}\n")
    cli_stdout(project, "checkpoint", "-m", "a trait")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "trait")
    git(project, "switch", "-q", "main")
    answer = cli_stdout(project, "file", "src/LoggingTrait.php")
    assert "It is recorded on branch `experiment`: get_file_trajectory(filepath=\"src/LoggingTrait.php\", " \
           "branch=\"experiment\")" in answer and "similar names" not in answer, answer
    proc = subprocess.run([*server_command(), "symbol", "src/LoggingTrait.php", "LoggingTrait::log", "--project",
                           str(project)], capture_output=True, text=True, timeout=60, env=subprocess_env())
    assert proc.returncode == 2 and "it is recorded on branch 'experiment': pass branch=\"experiment\"" in proc.stderr
    assert "LoggingTrait::log" in cli_stdout(project, "symbol", "src/LoggingTrait.php", "LoggingTrait::log",
                                             "--branch", "experiment")


def test_the_first_recorded_versions_symbols_are_not_in_the_structured_content(project: Path) -> None:
    """click's ``utils.py`` (688 lines, 35 symbols) recorded by the start-up import, then one edit: the text says
    "35 symbol(s), not shown" for the first version, but its structured entry listed every name, which made the
    content larger than the text, so the version was left out (``versions_left_out``): a client that hands the model
    only the structured content (Claude Code) never showed it the snapshot the file started from."""
    from code_trajectory.core.answer import room, size, structured
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession

    body = "".join(f"def function_number_{n}(argument_one, argument_two):\n    return argument_one + {n}\n\n\n"
                   for n in range(35))
    write(project, "src/many.py", body)
    session = ProjectSession(project, TrajectorySettings.load(project))
    session.start()  # its start-up import records the file as it is
    try:
        write(project, "src/many.py", body.replace("+ 7\n", "+ 8\n"))
        assert session.recorder.record_paths(["src/many.py"]) is not None
        answer = service.file_trajectory(session, "src/many.py", 5)
        text = str(answer)
        assert "35 symbol(s), not shown" in text and "function_number_0" not in text, text
        data = structured(text, answer.data)
        assert data is not None and "versions_left_out" not in data and size(data) <= room(text), data
        assert [v["n"] for v in data["versions"]] == [1, 2] and "symbols" not in data["versions"][0], data
        assert data["versions"][1]["symbols"] == "modified function_number_7"
    finally:
        session.close()


def test_a_changed_module_constant_is_named_in_the_log_and_the_files_history(project: Path) -> None:
    # httpx's replay: `__version__ = "0.21.0"` -> `"0.21.1"` was "code outside symbols" in the log, `__all__` growing
    # "imports, code outside symbols", USER_AGENT moved out of a module "top-level code changed": the name is what a
    # model can search for or ask about
    write(project, "pkg/__init__.py", '__version__ = "0.21.0"\n__all__ = ["get"]\n\nUSER_AGENT = "x"\n\n\n'
                                      'def get():\n    return 1\n')
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "pkg/__init__.py", 'import sys\n\n__version__ = "0.21.1"\n__all__ = ["get", "post"]\n\n\n'
                                      'def get():\n    return 1\n')
    cli_stdout(project, "checkpoint", "-m", "v2")
    log = cli_stdout(project, "log", "--limit", "1")
    said = "constants `__version__`, `__all__` changed; constant `USER_AGENT` removed; imports changed"
    assert f"M pkg/__init__.py (+3 -3): {said}" in log, log
    assert "outside symbols" not in log
    assert f"- Symbols: {said}" in cli_stdout(project, "file", "pkg/__init__.py")


def test_paging_back_from_another_branchs_snapshot_is_refused(project: Path) -> None:
    """``log --before X`` with X recorded on another shadow branch showed that branch's snapshots under the title of
    the current one (``shadow branch `main` ... before X``: feat's own snapshot among main's)."""
    write(project, "a.py", "x = 1\n")
    cli_stdout(project, "checkpoint", "-m", "on main")
    git(project, "checkout", "-qb", "feat")
    write(project, "b.py", "y = 1\n")
    cli_stdout(project, "checkpoint", "-m", "feat one")
    write(project, "b.py", "y = 2\n")
    cli_stdout(project, "checkpoint", "-m", "feat two")
    git(project, "checkout", "-q", "main")
    proc = subprocess.run([sys.executable, "-m", "code_trajectory", "log", "--before", "feat two"], cwd=project,
                          env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "feat one" not in proc.stdout, proc.stdout
    assert "is no snapshot of the shadow branch `main`" in proc.stderr, proc.stderr
    assert "on main" in cli_stdout(project, "log", "--before", "feat two", "--branch", "feat")


def test_a_test_commands_checkpoint_repeated_in_the_next_heading_is_shortened(project: Path) -> None:
    """Replaying pallets/click, each `code-trajectory test` named its snapshot `before test run: <the whole
    command>` and every heading repeated it (115 characters, beside the run's own line): a repeat is shortened as a
    repeated intent is, in the file's history and the project's log; the first heading keeps it whole."""
    command = [sys.executable, "-c", "import sys; sys.exit(0) # stands for the whole test suite of the project"]
    note = "before test run: " + shlex.join(command)
    for value in (1, 2, 3):
        write(project, "m.py", f"def a():\n    return {value}\n")
        cli_stdout(project, "test", "--", *command)
    for text in (cli_stdout(project, "file", "m.py"), cli_stdout(project, "log")):
        headings = [line for line in text.splitlines() if "before test run" in line]
        assert len(headings) == 3, text
        assert note in headings[0] and all(note not in h and "before test run: " in h for h in headings[1:]), text
        assert all(len(h) < len(headings[0]) - 40 for h in headings[1:]), text


def test_the_summary_says_a_checkpoint_name_given_several_times_once_with_its_count(project: Path) -> None:
    """The session summary listed `before test run: <the whole command>` once per run (up to 12 times, 130
    characters each, found replaying pallets/click): a name given several times is said once, with its count; and
    it listed a checkpoint's name twice, among the checkpoints and the named points."""
    command = [sys.executable, "-c", "import sys; sys.exit(0) # stands for the whole test suite of the project"]
    note = "before test run: " + shlex.join(command)
    for value in (1, 2, 3):
        write(project, "m.py", f"def a():\n    return {value}\n")
        cli_stdout(project, "test", "--", *command)
    write(project, "m.py", "def a():\n    return 4\n")
    cli_stdout(project, "checkpoint", "-m", "release")
    summary = cli_stdout(project, "session").splitlines()
    line = next(x for x in summary if x.startswith("- Checkpoints: "))
    assert line.count(note) == 1 and re.search(re.escape(f'"{note}" ×3 (') + r"\d\d:\d\d–\d\d:\d\d\)", line), line
    # a name the named points' line says (with its snapshot) is not said again among the checkpoints
    assert "release" not in line and '"release"' in next(x for x in summary if x.startswith("Named points: "))
