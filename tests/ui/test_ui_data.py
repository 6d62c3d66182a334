"""The page's queries (code_trajectory.ui.data): timeline pages, sessions, filters, live updates, snapshots, files."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.git import messages
from code_trajectory.git.messages import FileChange
from code_trajectory.git.shadow import ShadowRepo, shadow_ref
from code_trajectory.recording.consolidate import consolidate
from code_trajectory.recording.recorder import Recorder
from code_trajectory.ui import data
from code_trajectory.ui.app import Page, State
from code_trajectory.ui.data import Filters, History, HistoryChangedError, NotFoundError
from code_trajectory.ui.security import cookie_name
from support import git
from support.ui import DEMO_V2, DEMO_V3, build_history, record_demo, record_edit, request, running_ui

HOUR = 3600.0


@pytest.fixture
def demo(project: Path) -> tuple[Path, dict[str, str]]:
    """The ``project`` fixture with the demo history recorded (see ``support.ui.record_demo``)."""
    return project, record_demo(project)


def open_history(root: Path) -> History:
    return History(ShadowRepo(root), TrajectorySettings.load(root).session_gap_seconds)


def test_timeline_rows_newest_first_with_kinds_counts_and_verdicts(demo) -> None:
    root, commits = demo
    history = open_history(root)
    try:
        page = history.timeline("main")
    finally:
        history.repo.close()
    assert [r.oid for r in page.rows] == [commits[k] for k in ("checkpoint", "tests", "v2", "v1", "import")]
    assert page.tip == commits["checkpoint"] and page.total == 5 and page.session_count == 1
    assert page.next_cursor is None and not page.scanned_out
    top, tests, v2, v1, imported = page.rows
    assert top.kind == "checkpoint" and top.message == "salted signatures" and top.record.intent == "Test the signer"
    assert top.test is not None and top.test.green and "3 passed" in top.test.text
    assert tests.test is not None and not tests.test.green and "1 failed" in tests.test.text
    assert v1.record.intent == "Sign session tokens" and v1.added == 12 and v1.deleted == 0
    assert [c.path for c in v1.files] == ["src/signing.py"] and v1.more_files == 0
    assert imported.kind == "import" and imported.message is None
    assert top.session is not None and top.session.count == 5  # one header, before the newest row
    assert all(r.session is None for r in page.rows[1:])
    assert page.notes is not None


def test_sessions_split_at_the_gap_and_pages_continue(project: Path) -> None:
    """600 snapshots with a 3 h gap every 250: three sessions; pages of 100 neither overlap nor repeat headers."""
    oids = build_history(project, 600)
    history = open_history(project)
    try:
        seen: list[str] = []
        heads = []
        cursor = prev = None
        while True:
            page = history.timeline("main", cursor=cursor, prev=prev, limit=100)
            seen += [r.oid for r in page.rows]
            heads += [(r.oid, r.session) for r in page.rows if r.session]
            if page.next_cursor is None:
                break
            cursor, prev = page.next_cursor, page.rows[-1].oid
        assert page.total == 600 and page.session_count == 3
    finally:
        history.repo.close()
    assert seen == list(reversed(oids))
    assert [s.count for _, s in heads] == [100, 250, 250]  # the newest 100 (500..599), then 250, 250
    assert [oid for oid, _ in heads] == [oids[599], oids[499], oids[249]]
    assert all(s.oldest <= s.newest for _, s in heads)


def test_filters_by_path_and_text(demo) -> None:
    root, commits = demo
    history = open_history(root)
    try:
        by_path = history.timeline("main", Filters(path="SIGNING.py"))
        by_text = history.timeline("main", Filters(text="salted"))
        by_intent = history.timeline("main", Filters(text="sign session"))
        both = history.timeline("main", Filters(path="tests/", text="signer"))
        none = history.timeline("main", Filters(text="no such words"))
    finally:
        history.repo.close()
    assert [r.oid for r in by_path.rows] == [commits[k] for k in ("checkpoint", "tests", "v2", "v1")]
    assert [r.oid for r in by_text.rows] == [commits["checkpoint"]]
    assert [r.oid for r in by_intent.rows] == [commits["v2"], commits["v1"]]
    assert [r.oid for r in both.rows] == [commits["tests"]]
    assert none.rows == [] and none.next_cursor is None


def test_a_filter_scans_a_bounded_number_of_snapshots(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_history(project, 300)
    monkeypatch.setattr(data, "MAX_SCAN", 120)
    monkeypatch.setattr(data, "SCAN_CHUNK", 50)
    history = open_history(project)
    try:
        first = history.timeline("main", Filters(text="no such words"))
        assert first.rows == [] and first.scanned_out and first.next_cursor is not None
        second = history.timeline("main", Filters(text="no such words"), cursor=first.next_cursor)
        third = history.timeline("main", Filters(text="no such words"), cursor=second.next_cursor)
    finally:
        history.repo.close()
    assert second.scanned_out and third.next_cursor is None and not third.scanned_out


def test_live_update_brings_new_rows_and_says_whether_the_session_continues(demo) -> None:
    root, commits = demo
    new = record_edit(root, "src/extra.py", "X = 1\n", intent="Add extra")
    history = open_history(root)
    try:
        same = history.updates("main", commits["checkpoint"], None, top=commits["checkpoint"])
        nothing = history.updates("main", new, same.notes)
        filtered = history.updates("main", commits["checkpoint"], same.notes, Filters(path="signing"))
    finally:
        history.repo.close()
    assert same.tip == new and [r.oid for r in same.rows] == [new] and same.same_session and not same.reload
    assert same.rows[0].session is not None and same.rows[0].session.count == 6
    assert (same.total, same.session_count) == (6, 1) and nothing.total is None
    assert same.marks is not None and same.marks[commits["checkpoint"]].green  # the notes were unknown
    assert nothing.rows == [] and not nothing.reload and nothing.marks is None
    assert filtered.tip == new and filtered.rows == []


def test_a_rewritten_history_asks_for_a_reload(demo) -> None:
    root, commits = demo
    # consolidate squashes the current task's trailing snapshots (never the named checkpoint before them)
    first = record_edit(root, "src/signing.py", DEMO_V3 + "# tidied\n", intent="Signed tokens")
    second = record_edit(root, "src/signing.py", DEMO_V3 + "# tidied twice\n")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        result = consolidate(recorder, "Signed tokens")
    finally:
        recorder.close()
    assert result.squashed_commits == [second, first]
    history = open_history(root)
    try:
        update = history.updates("main", second, None)
        page = history.timeline("main")
        with pytest.raises(HistoryChangedError):
            history.timeline("main", cursor=first)
    finally:
        history.repo.close()
    assert update.reload and update.tip == result.commit
    assert page.rows[0].kind == "consolidate" and page.rows[0].message == f"squashed {result.squashed} snapshots"
    assert page.rows[0].record.intent == "Signed tokens"



def test_a_consolidation_of_one_snapshot_says_one_snapshot(demo) -> None:
    """The row of a task consolidated from one snapshot said ``squashed 1 snapshots``."""
    root, _ = demo
    record_edit(root, "src/signing.py", DEMO_V3 + "# tidied\n", intent="Tidy")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        assert consolidate(recorder, "Tidied").squashed == 1
    finally:
        recorder.close()
    history = open_history(root)
    try:
        row = history.timeline("main").rows[0]
    finally:
        history.repo.close()
    assert row.kind == "consolidate" and row.message == "squashed 1 snapshot", row.message

def test_restores_are_marked(demo) -> None:
    """A commit whose ``Trajectory-Kind`` is ``restore`` (what the restore service writes) gets its own kind."""
    root, commits = demo
    with ShadowRepo(root) as repo:
        tree = repo.commit_tree_oid(commits["v1"])
        when = datetime.now(UTC)
        message = messages.snapshot_message(when=when, intent=None, branch="main",
                                            changes=[FileChange("M", "src/signing.py")], kind="restore")
        message = message.replace(messages.SNAPSHOT_PREFIX, "[RESTORE]", 1)
        commit = repo.commit_tree(tree, [commits["checkpoint"]], message, when=(int(when.timestamp()), "+0000"))
        repo.update_ref(shadow_ref("main"), commit, commits["checkpoint"], "test restore")
    history = open_history(root)
    try:
        row = history.timeline("main").rows[0]
    finally:
        history.repo.close()
    assert row.kind == "restore" and row.message.startswith("[RESTORE]")



def test_a_restore_row_says_where_it_came_from_not_its_time_intent_and_files_again(demo) -> None:
    """A real restore made under an intent: its row showed the whole first line, ``[RESTORE] 00:10:40 - <intent> -
    from <id> (checkpoint "...") - M <file> (+1 -3)``, whose time, intent and files the row shows already, so the
    list's one-line ellipsis cut off where it came from. It says the label the CLI's headings say."""
    from code_trajectory.restore.service import restore

    root, commits = demo
    record_edit(root, "src/signing.py", DEMO_V3 + "# broken\n", intent="Tidy the signer")
    answer = restore(root, "~1", ["src/signing.py"])
    assert "Written (1)" in str(answer), answer
    history = open_history(root)
    try:
        row = history.timeline("main").rows[0]
    finally:
        history.repo.close()
    assert row.kind == "restore" and row.record.intent == "Tidy the signer"
    assert row.message == f"[RESTORE] from {commits['checkpoint'][:12]} (~1)", row.message

def test_snapshot_has_symbols_diff_and_runs(demo) -> None:
    root, commits = demo
    history = open_history(root)
    try:
        snap = history.snapshot(commits["checkpoint"], "main")
        first = history.snapshot(commits["v1"], "main")
    finally:
        history.repo.close()
    assert [f.change.path for f in snap.files] == ["src/signing.py"]
    entry = snap.files[0]
    assert entry.symbols == "modified Signer.sign"
    assert entry.diff is not None and entry.diff.hunks and entry.diff.hunks[0].heading.startswith("class Signer")
    assert [r.outcome for r in snap.runs] == ["passed"] and snap.row.test.green
    assert first.files[0].symbols.startswith("added Signer")


def test_import_of_many_files_loads_diffs_lazily(project: Path) -> None:
    oids = build_history(project, 2, files=30)
    history = open_history(project)
    try:
        snap = history.snapshot(oids[0], "main")
        one, _ = history.file_diff(oids[0], snap.files[0].change.path)
    finally:
        history.repo.close()
    assert len(snap.files) == 30 and all(f.diff is None and f.symbols is None for f in snap.files)
    assert [line.kind for line in one.hunks[0].lines] == ["add"] * 3


def test_file_view_follows_renames(demo) -> None:
    root, commits = demo
    (root / "src" / "signing.py").rename(root / "src" / "signer.py")
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        renamed = recorder.record_paths(["src/signing.py", "src/signer.py"]).commit
    finally:
        recorder.close()
    history = open_history(root)
    try:
        view = history.file("main", "src/signer.py")
    finally:
        history.repo.close()
    assert [v.version.record.oid for v in view.versions] == [renamed, commits["checkpoint"], commits["v2"],
                                                               commits["v1"]]
    assert view.versions[0].change.status == "R" and view.versions[0].change.old_path == "src/signing.py"
    assert view.versions[1].version.path == "src/signing.py" and view.versions[1].symbols == "modified Signer.sign"
    assert view.versions[1].diff is not None and view.total == 4
    assert (root / "src" / "signer.py").read_text() == DEMO_V3


def test_unknown_things_are_clear_errors(demo) -> None:
    root, commits = demo
    history = open_history(root)
    try:
        with pytest.raises(NotFoundError, match="not a snapshot id"):
            history.snapshot("HEAD", "main")
        with pytest.raises(NotFoundError, match="not in the shadow history"):
            history.snapshot("0" * 40, "main")
        with pytest.raises(NotFoundError, match="did not change"):
            history.file_diff(commits["v1"], "src/app.py")
        with pytest.raises(NotFoundError, match="no snapshot"):
            history.file("main", "nope.txt")
        with pytest.raises(HistoryChangedError):
            history.timeline("main", cursor="f" * 40)
        for expression in ("main~1", "main^", "main@{1}", "main:src", "a..b", "main "):
            assert history.tip(expression) is None and history.timeline(expression).rows == []
        assert history.tip("main") == commits["checkpoint"]
        empty = history.timeline("never-recorded")
        assert empty.rows == [] and empty.tip is None and empty.total == 0
        assert history.branches() == ["main"]
    finally:
        history.repo.close()


def test_file_view_marks_reverts(demo) -> None:
    """Writing back an earlier content is a revert: the version says which time it matches."""
    root, commits = demo
    back = record_edit(root, "src/signing.py", DEMO_V2)
    history = open_history(root)
    try:
        view = history.file("main", "src/signing.py")
    finally:
        history.repo.close()
    assert view.versions[0].version.record.oid == back
    assert view.versions[0].reverts_to == view.versions[2].version.record.time  # the v2 version
    assert all(v.reverts_to is None for v in view.versions[1:])


def test_branches_and_the_default_branch_follows_the_project(demo) -> None:
    """A new branch's chain starts with the snapshots of the branch it came from: they are labelled as such."""
    root, commits = demo
    git(root, "checkout", "-q", "-b", "feature")
    on_feature = record_edit(root, "src/feature.py", "FEATURE = 1\n", intent="Start the feature")
    history = open_history(root)
    try:
        assert history.branches() == ["feature", "main"]
        rows = history.timeline("feature").rows
    finally:
        history.repo.close()
    assert rows[0].oid == on_feature and rows[0].foreign_branch is None
    assert rows[1].oid == commits["checkpoint"] and rows[1].foreign_branch == "main"
    page = Page(root, ShadowRepo(root), HOUR, "csrf")
    try:
        assert page.current_branch() == "feature"
        git(root, "checkout", "-q", "main")
        assert page.current_branch() == "main"
        git(root, "checkout", "-q", "-b", "never-recorded")
        assert page.current_branch() == "feature"  # no snapshot there yet: the branch recorded last
    finally:
        page.close()


def test_a_deleted_file_offers_to_bring_it_back(demo) -> None:
    """In a snapshot that deleted a file, its restore button restores it from the snapshot before."""
    root, commits = demo
    (root / "tests" / "test_signing.py").unlink()
    recorder = Recorder.open(root, TrajectorySettings.load(root))
    try:
        deleted = recorder.record_paths(["tests/test_signing.py"]).commit
    finally:
        recorder.close()
    page = Page(root, ShadowRepo(root), HOUR, "csrf")
    try:
        snap = page.history.snapshot(deleted, "main")
        html = page.fragment("snapshot.html", snap=snap, state=State("main", Filters(), "unified"))
    finally:
        page.close()
    assert snap.files[0].change.status == "D"
    assert f'data-snapshot="{commits["checkpoint"]}"' in html and "Bring back…" in html
    assert "tests/test_signing.py as it was before this deletion" in html


def test_a_snapshot_of_very_many_files_lists_a_bounded_number(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot of 40,000 files was a 33 MB pane (5.5 s to build, 21 s for Chromium to show it); the one the page
    opens first when it is the newest. At most ``MAX_FILES`` are listed, the path filter's first, and a line says
    how many more there are."""
    monkeypatch.setattr(data, "MAX_FILES", 10)
    oids = build_history(project, 2, files=30)
    with running_ui(project) as ui:
        cookie = {"Cookie": f"{cookie_name(ui.port)}={ui.token}"}
        status, _, body = request(ui.port, "GET", f"/fragment/snapshot/{oids[0]}", headers=cookie)
        assert status == 200
        html = body.decode()
        assert html.count('<details class="file"') == 10 and html.count("<tr>") == 10
        assert "30 files changed" in html and "20 more files not listed" in html
        assert "module_029.py" not in html
        status, _, body = request(ui.port, "GET", f"/fragment/snapshot/{oids[0]}?path=module_029", headers=cookie)
        html = body.decode()
        assert status == 200 and html.count('<details class="file"') == 10
        assert html.index("src/pkg4/module_029.py") < html.index("src/pkg0/module_000.py")
