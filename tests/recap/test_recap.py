"""Tests of code_trajectory.recap.store: storage, path encoding, dedupe, archive, corruption, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from code_trajectory.core.errors import InvalidArgumentError, ProjectError, RecapError
from code_trajectory.recap import location, render
from code_trajectory.recap import store as recap
from support import subprocess_env

NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789._-")


# --------------------------------------------------------------------------- path encoding


def _assert_valid_name(name: str) -> None:
    assert name.endswith(".json")
    assert len(name.encode()) <= 86
    assert set(name) <= NAME_CHARS, name


ODD_PATHS = [
    "/tmp/my project",
    "/tmp/my-project",
    "/tmp/My-Project",
    "/tmp/my_project",
    "/tmp/répertoire/日本語/проект",
    "/tmp/" + unicodedata.normalize("NFC", "café"),
    "/tmp/" + unicodedata.normalize("NFD", "café"),
    "/tmp/emoji 🚀/x",
    "/tmp/a%2Fb",
    "/tmp/a/b",
    "/tmp/a\\b",
    "/tmp/quote'\"<>|?*:",
    "/tmp/" + "/".join(["segment-" + "x" * 200] * 20),
    "/tmp/" + "é" * 250,
    "/",
]


def test_file_names_are_bounded_safe_and_distinct(ct_home: Path) -> None:
    names = [recap.recap_file_name(p) for p in ODD_PATHS]
    for name in names:
        _assert_valid_name(name)
    assert len(set(names)) == len(ODD_PATHS)
    # distinct even on a case-insensitive file system
    assert len({n.lower() for n in names}) == len(ODD_PATHS)


def test_my_project_and_my_dash_project_get_different_files(ct_home: Path) -> None:
    assert recap.recap_file_name("/tmp/my project") != recap.recap_file_name("/tmp/my-project")
    assert recap.recap_file_name("/tmp/my project").startswith("tmp-my-project-")  # readable slug


def test_equivalent_spellings_share_a_file(ct_home: Path, spaced_dir: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(spaced_dir)
    spellings = [spaced_dir, str(spaced_dir) + "/", spaced_dir / "sub" / "..", link]
    assert len({recap.recap_file_name(p) for p in spellings}) == 1


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00/"),
                        min_size=1, max_size=300), min_size=1, max_size=5, unique=True))
def test_file_names_property(ct_home: Path, components: list[str]) -> None:
    path = "/tmp/" + "/".join(components)
    name = recap.recap_file_name(path)
    _assert_valid_name(name)
    assert name == recap.recap_file_name(path)  # deterministic
    sibling = path + "x"
    assert recap.recap_file_name(sibling) != name


def _odd_project_dirs(base: Path) -> list[Path]:
    dirs = [
        base / "with space",
        base / "with-space",
        base / "unicodé 日本語 🚀",
        base / unicodedata.normalize("NFD", "café"),
        base / unicodedata.normalize("NFC", "café"),
        base / "quote'\"$`",
        base.joinpath(*[f"long-{i}-" + "y" * 200 for i in range(12)]),  # ~2.5 kB path
    ]
    if sys.platform.startswith("linux"):
        dirs.append(base / os.fsdecode(b"undecodable-\xff\xfe"))  # surrogate-escaped bytes
    return dirs


def test_paths_round_trip_through_storage(ct_home: Path, tmp_path: Path) -> None:
    dirs = _odd_project_dirs(tmp_path / "odd")
    files = set()
    for i, directory in enumerate(dirs):
        directory.mkdir(parents=True)
        recap.add_entry(directory, "insight", f"entry of project {i}")
        file = recap.recap_path(directory)
        _assert_valid_name(file.name)
        files.add(file)
        assert recap.project_path_of(file) == recap.normalize_project(directory)
        got = recap.get_recap(directory)
        assert [e["content"] for e in got["entries"]] == [f"entry of project {i}"]
        assert got["projectPath"] == recap.normalize_project(directory)
    assert len(files) == len(dirs)


def test_project_path_of_rejects_a_renamed_file(ct_home: Path, spaced_dir: Path) -> None:
    recap.set_goal(spaced_dir, "goal")
    file = recap.recap_path(spaced_dir)
    renamed = file.with_name("other-" + "0" * 32 + ".json")
    file.rename(renamed)
    with pytest.raises(RecapError, match="does not match its file name"):
        recap.project_path_of(renamed)


# --------------------------------------------------------------------------- basic operations


def _parse_utc(timestamp: str) -> datetime:
    assert timestamp.endswith("Z")
    moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    assert moment.utcoffset() == UTC.utcoffset(None)
    return moment


def test_empty_recap_reads_without_creating_anything(ct_home: Path, spaced_dir: Path) -> None:
    got = recap.get_recap(spaced_dir)
    assert got == {"goal": None, "entries": [], "filePath": str(recap.recap_path(spaced_dir)),
                   "projectPath": str(spaced_dir)}
    assert not ct_home.exists()


def test_set_goal_add_entry_get_recap(ct_home: Path, spaced_dir: Path) -> None:
    assert recap.set_goal(spaced_dir, "  Fix the login loop  ") == {"success": True, "archivedTo": None,
                                                                 "unchanged": False}
    added = [recap.add_entry(spaced_dir, kind, f"{kind} content") for kind in recap.ENTRY_TYPES]
    for answer in added:
        assert uuid.UUID(answer["id"]).version == 4
        _parse_utc(answer["timestamp"])
        assert answer["skipped"] is False
    got = recap.get_recap(spaced_dir)
    assert got["goal"] == "Fix the login loop"
    assert [(e["id"], e["type"], e["content"]) for e in got["entries"]] == [
        (a["id"], kind, f"{kind} content") for a, kind in zip(added, recap.ENTRY_TYPES, strict=True)]
    stored = json.loads(recap.recap_path(spaced_dir).read_text(encoding="utf-8"))
    assert stored["version"] == 1 and stored["projectPath"] == str(spaced_dir)
    _parse_utc(stored["updatedAt"])


def test_secrets_in_the_goal_and_entries_are_redacted_before_they_are_written(ct_home: Path,
                                                                               spaced_dir: Path) -> None:
    """The recap outlives the session and is shown in every session summary: a token a model put in the goal or an
    entry was kept in ``recaps/*.json`` and shown again, while intents are redacted before they are written."""
    token = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGh" * 3
    recap.set_goal(spaced_dir, f"Deploy with {token}")
    recap.add_entry(spaced_dir, "decision", "The staging DB password=hunter2hunter2 is rotated weekly")
    assert recap.add_entry(spaced_dir, "decision", "The staging DB password=other0other0 is rotated weekly")["skipped"]
    got = recap.get_recap(spaced_dir)
    assert got["goal"] == "Deploy with [redacted]"
    assert [e["content"] for e in got["entries"]] == ["The staging DB [redacted] is rotated weekly"]
    stored = recap.recap_path(spaced_dir).read_text(encoding="utf-8")
    assert token not in stored and "hunter2" not in stored


def test_the_recaps_directory_it_creates_is_private(ct_home: Path, spaced_dir: Path) -> None:
    old = os.umask(0o022)
    try:
        recap.set_goal(spaced_dir, "Fix the login loop")
    finally:
        os.umask(old)
    assert recap.recaps_dir().stat().st_mode & 0o777 == 0o700
    assert recap.recap_path(spaced_dir).stat().st_mode & 0o777 == 0o600


def test_entry_types_are_declared_once() -> None:
    assert recap.ENTRY_TYPES == ("decision", "insight", "risk", "assumption", "fix", "other")
    assert set(recap.ENTRY_TYPE_HELP) == set(recap.ENTRY_TYPES)


def test_duplicate_entries_are_skipped(ct_home: Path, spaced_dir: Path) -> None:
    first = recap.add_entry(spaced_dir, "decision", "Use soft reset to keep changes")
    again = recap.add_entry(spaced_dir, "Decision", "  use SOFT reset\n to keep   changes ")
    assert again == {"id": first["id"], "timestamp": first["timestamp"], "skipped": True}
    other_type = recap.add_entry(spaced_dir, "risk", "Use soft reset to keep changes")
    assert other_type["skipped"] is False
    assert len(recap.get_recap(spaced_dir)["entries"]) == 2


@pytest.mark.parametrize(("kind", "content", "message"), [
    ("opinion", "x", "unknown entry type 'opinion'; use one of: decision, insight"),
    ("decision", "   ", "content is empty"),
    ("decision", "x" * (recap.MAX_CONTENT_CHARS + 1), "the limit is 4000"),
    ("decision", 42, "content must be a string"),
])
def test_add_entry_rejects_bad_input(ct_home: Path, spaced_dir: Path, kind: str, content: object, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        recap.add_entry(spaced_dir, kind, content)  # type: ignore[arg-type]
    assert not recap.recap_path(spaced_dir).exists()


def test_set_goal_rejects_empty_goal(ct_home: Path, spaced_dir: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="goal is empty"):
        recap.set_goal(spaced_dir, "")


def test_writes_need_an_existing_project(ct_home: Path, tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="does not exist"):
        recap.add_entry(tmp_path / "missing", "decision", "x")


def test_no_temporary_files_are_left(ct_home: Path, spaced_dir: Path) -> None:
    for i in range(5):
        recap.add_entry(spaced_dir, "insight", f"insight {i}")
    recap.set_goal(spaced_dir, "a goal")
    recap.set_goal(spaced_dir, "another goal")
    leftovers = [p.name for p in (ct_home / "recaps").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_unwritable_storage_is_a_recap_error(ct_home: Path, spaced_dir: Path) -> None:
    ct_home.mkdir(parents=True)
    (ct_home / "recaps").write_text("not a directory")
    with pytest.raises(RecapError, match="cannot prepare recap storage"):
        recap.add_entry(spaced_dir, "decision", "x")


# --------------------------------------------------------------------------- goal and archive


def test_new_goal_archives_previous_recap(ct_home: Path, spaced_dir: Path) -> None:
    recap.set_goal(spaced_dir, "first goal")
    entry = recap.add_entry(spaced_dir, "decision", "first decision")
    answer = recap.set_goal(spaced_dir, "second goal")
    archived = Path(answer["archivedTo"])
    assert archived.parent == ct_home / "recaps" / "archived"
    assert archived.name.startswith(recap.recap_path(spaced_dir).stem + ".")
    old = json.loads(archived.read_text(encoding="utf-8"))
    assert old["goal"] == "first goal"
    assert [e["id"] for e in old["entries"]] == [entry["id"]]
    assert old["projectPath"] == str(spaced_dir)
    _parse_utc(old["archivedAt"])
    current = recap.get_recap(spaced_dir)
    assert current["goal"] == "second goal" and current["entries"] == []


def test_same_goal_again_changes_nothing(ct_home: Path, spaced_dir: Path) -> None:
    recap.set_goal(spaced_dir, "Fix the login loop")
    recap.add_entry(spaced_dir, "risk", "sessions may expire")
    assert recap.set_goal(spaced_dir, "fix the  login loop") == {"success": True, "archivedTo": None,
                                                              "unchanged": True}
    assert len(recap.get_recap(spaced_dir)["entries"]) == 1
    assert not (ct_home / "recaps" / "archived").exists()


def test_entries_without_goal_are_archived_by_a_goal(ct_home: Path, spaced_dir: Path) -> None:
    recap.add_entry(spaced_dir, "insight", "found before the goal")
    answer = recap.set_goal(spaced_dir, "goal")
    assert answer["archivedTo"] is not None
    assert recap.get_recap(spaced_dir)["entries"] == []


def test_archives_never_overwrite_each_other(ct_home: Path, spaced_dir: Path) -> None:
    archived = set()
    for i in range(5):
        archived.add(recap.set_goal(spaced_dir, f"goal {i}")["archivedTo"])
    archived.discard(None)
    assert len(archived) == 4
    assert len(list((ct_home / "recaps" / "archived").iterdir())) == 4


# --------------------------------------------------------------------------- corrupt and foreign files


CORRUPT_CONTENTS = [
    b"{not json",
    b"",
    b"\xff\xfe\x00garbage",
    b"[1, 2, 3]",
    b'{"projectPath": "/x", "entries": {"a": 1}}',
    b'{"projectPath": "/x", "entries": [{"id": 1}]}',
    b'{"projectPath": "/x", "goal": 3, "entries": []}',
    b'{"goal": "no project path", "entries": []}',
    b"[" * 100_000,
]


@pytest.mark.parametrize("content", CORRUPT_CONTENTS, ids=range(len(CORRUPT_CONTENTS)))
def test_corrupt_file_is_reported_by_reads_and_moved_aside_by_writes(ct_home: Path, spaced_dir: Path,
                                                                     content: bytes) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    file.write_bytes(content)

    got = recap.get_recap(spaced_dir)
    assert got["goal"] is None and got["entries"] == []
    assert "is corrupt" in got["warning"] and "left untouched" in got["warning"]
    assert file.read_bytes() == content  # a read changes nothing

    answer = recap.add_entry(spaced_dir, "fix", "recovered")
    assert "moved to" in answer["warning"]
    aside = [p for p in file.parent.iterdir() if p.name.startswith(file.name + ".corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == content  # never overwritten
    assert str(aside[0]) in answer["warning"]
    got = recap.get_recap(spaced_dir)
    assert "warning" not in got
    assert [e["content"] for e in got["entries"]] == ["recovered"]


def test_corrupt_file_before_set_goal(ct_home: Path, spaced_dir: Path) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    file.write_text("oops")
    answer = recap.set_goal(spaced_dir, "goal")
    assert answer["success"] is True and "moved to" in answer["warning"]
    assert answer["archivedTo"] is None
    assert recap.get_recap(spaced_dir)["goal"] == "goal"


def test_file_of_another_project_is_refused_and_kept(ct_home: Path, spaced_dir: Path) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    foreign = json.dumps({"version": 1, "projectPath": "/somewhere/else", "goal": "g", "entries": []})
    file.write_text(foreign)
    with pytest.raises(RecapError, match="belongs to project '/somewhere/else'"):
        recap.get_recap(spaced_dir)
    with pytest.raises(RecapError, match="belongs to project"):
        recap.add_entry(spaced_dir, "decision", "x")
    assert file.read_text() == foreign


def test_newer_format_is_refused_and_kept(ct_home: Path, spaced_dir: Path) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    newer = json.dumps({"version": 99, "projectPath": str(spaced_dir), "entries": []})
    file.write_text(newer)
    with pytest.raises(RecapError, match="newer than this"):
        recap.add_entry(spaced_dir, "decision", "x")
    assert file.read_text() == newer


# --------------------------------------------------------------------------- concurrency

_WRITER = """
import sys
from code_trajectory.recap import store as recap
project, tag = sys.argv[1], sys.argv[2]
for i in range(100):
    recap.add_entry(project, "insight", f"{tag} entry {i}")
"""


@pytest.mark.slow
def test_two_processes_adding_100_entries_each_end_with_200(ct_home: Path, spaced_dir: Path) -> None:
    env = subprocess_env(CODE_TRAJECTORY_HOME=str(ct_home), HOME=str(ct_home.parent / "userhome"))
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(spaced_dir), tag], env=env,
                                stderr=subprocess.PIPE) for tag in ("a", "b")]
    reads = 0
    while any(w.poll() is None for w in writers):  # concurrent readers never see a partial file
        got = recap.get_recap(spaced_dir)
        assert "warning" not in got
        reads += 1
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    entries = recap.get_recap(spaced_dir)["entries"]
    assert len(entries) == 200
    assert len({e["id"] for e in entries}) == 200
    for tag in ("a", "b"):  # each writer's entries keep their order
        mine = [int(e["content"].rsplit(" ", 1)[1]) for e in entries if e["content"].startswith(tag)]
        assert mine == list(range(100))
    assert reads > 0


# --------------------------------------------------------------------------- rendering and summary


def test_render_markdown_groups_entries_by_type(ct_home: Path, spaced_dir: Path) -> None:
    recap.set_goal(spaced_dir, "Ship recap")
    recap.add_entry(spaced_dir, "fix", "the lock path was wrong")
    recap.add_entry(spaced_dir, "decision", "JSON file per project")
    recap.add_entry(spaced_dir, "decision", "multi\nline")
    text = render.render_markdown(recap.get_recap(spaced_dir))
    assert "**Goal:** Ship recap" in text
    assert text.index("## Decisions (2)") < text.index("## Fixes (1)")
    assert "- multi\n  line" in text
    assert str(recap.recap_path(spaced_dir)) in text


def test_render_markdown_of_empty_recap(ct_home: Path, spaced_dir: Path) -> None:
    text = render.render_markdown(recap.get_recap(spaced_dir))
    assert "not set" in text and "No entries yet" in text


def test_recap_for_summary(ct_home: Path, spaced_dir: Path) -> None:
    assert render.recap_for_summary(spaced_dir) is None
    recap.set_goal(spaced_dir, "Fix the login loop")
    for i in range(8):
        recap.add_entry(spaced_dir, "decision", f"decision number {i}")
    recap.add_entry(spaced_dir, "fix", "long " * 200)
    text = render.recap_for_summary(spaced_dir, latest=5)
    assert text is not None
    assert "**Goal:** Fix the login loop" in text
    assert "(5 of 9" in text
    assert "decision number 3" not in text and "decision number 4" in text
    assert text.index("decision number 7") < text.index("**fix**")
    assert "…" in text and len(text) < 2000


def test_recap_for_summary_never_raises(ct_home: Path, spaced_dir: Path) -> None:
    file = recap.recap_path(spaced_dir)
    file.parent.mkdir(parents=True)
    file.write_text("{broken")
    text = render.recap_for_summary(spaced_dir)
    assert text is not None and "Recap unavailable" in text and "corrupt" in text
    file.write_text(json.dumps({"projectPath": "/else", "entries": []}))
    text = render.recap_for_summary(spaced_dir)
    assert text is not None and "belongs to project" in text


# --------------------------------------------------------------------------- project discovery


def test_find_project_root(ct_home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    assert location.find_project_root(deep) == repo
    recap.add_entry(repo / "src", "insight", "a recap for src itself")
    assert location.find_project_root(deep) == repo / "src"
    lone = tmp_path / "lone"
    lone.mkdir()
    assert location.find_project_root(lone) in (lone, *lone.parents)


def test_unusable_project_paths_are_clear_errors(ct_home: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="empty"):
        recap.get_recap("")
    with pytest.raises(InvalidArgumentError, match="invalid project path"):
        recap.add_entry("/tmp/a\0b", "decision", "x")


def test_a_held_lock_times_out_with_a_clear_error(ct_home: Path, spaced_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import filelock

    recap.add_entry(spaced_dir, "decision", "before the lock")
    monkeypatch.setattr(recap, "LOCK_TIMEOUT_SECONDS", 0.2)
    holder = filelock.FileLock(f"{recap.recap_path(spaced_dir)}.lock")
    with holder:
        with pytest.raises(RecapError, match="stayed locked by another process"):
            recap.add_entry(spaced_dir, "decision", "while locked")
        assert len(recap.get_recap(spaced_dir)["entries"]) == 1  # reads never wait for the lock
    recap.add_entry(spaced_dir, "decision", "after the lock")
    assert len(recap.get_recap(spaced_dir)["entries"]) == 2
