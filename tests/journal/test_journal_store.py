"""The git-backed journal store: ids, paths, sections, entries, atomic and concurrent writes, settings."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from code_trajectory.core.errors import ConfigError, InvalidArgumentError, JournalConflictError, JournalError
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore
from code_trajectory.journal.text import normalize_path, parse_id, read_entry_count, render_section, strip_entry_count
from code_trajectory.journal.toc import table_of_contents
from support import SRC


@pytest.fixture
def store(tmp_path: Path) -> JournalStore:
    return JournalStore(JournalSettings.load(journal_dir=tmp_path / "journal"))


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env,
                          check=True).stdout


# --------------------------------------------------------------------------- ids and paths

@pytest.mark.parametrize("raw,expected", [
    ("project-alpha", "project-alpha"),
    ("project-alpha/api-design", "project-alpha/api-design"),
    ("  notes/today.md ", "notes/today"),
    ("a/b/", "a/b"),
    ("Ünïcode/ok", "Ünïcode/ok"),
])
def test_normalize_path_accepts(raw: str, expected: str) -> None:
    assert normalize_path(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "/etc/passwd", "../x", "a/../../b", "a//b", "./a", ".git/config",
                                 "a/.hidden", "C:/x", "~/x", "a\\b", "a#b", "a\x00b", "a\nb", "x" * 300])
def test_normalize_path_rejects(raw: str) -> None:
    with pytest.raises(InvalidArgumentError):
        normalize_path(raw)


def test_parse_id() -> None:
    assert parse_id("p/q") == ("p/q", None)
    assert parse_id("p/q#ABCdef12") == ("p/q", "abcdef12")
    for bad in ("p#", "p#xyz", "p#123", "#abcd", "p#abcd#ef"):
        with pytest.raises(InvalidArgumentError):
            parse_id(bad)


def test_entry_count_comment_round_trip() -> None:
    text = render_section("# Title\n\nBody", 47)
    assert text.endswith("<!-- entry count: 47 -->\n")
    assert read_entry_count(text) == 47
    assert strip_entry_count(text) == "# Title\n\nBody"
    assert render_section("", 1) == "<!-- entry count: 1 -->\n"
    # an overview that echoes the comment does not get two
    assert render_section(text, 48).count("entry count") == 1


# --------------------------------------------------------------------------- reading and writing

def test_missing_section_reads_empty(store: JournalStore) -> None:
    ov = store.read_overview("nothing/here")
    assert not ov.exists and ov.content == "" and ov.version is None and ov.entry_count == 0


def test_write_creates_file_commit_and_ids(store: JournalStore) -> None:
    entry = "work_context: debugging memory retrieval\n\n# Today's Session\n\nFound the stale cache."
    r1 = store.write("project-alpha/api-design", entry, overview="# API\n\nREST endpoints.", summary="stale cache")
    assert r1.created and r1.overview_updated and r1.entry_count == 1
    file = store.root / "project-alpha" / "api-design.md"
    assert file.read_text() == "# API\n\nREST endpoints.\n\n<!-- entry count: 1 -->\n"  # the work tree follows
    r2 = store.write("project-alpha/api-design", "second entry")
    assert r2.entry_count == 2 and not r2.overview_updated and not r2.created

    ov = store.read_overview("project-alpha/api-design")
    assert ov.content == "# API\n\nREST endpoints."  # comment stripped
    assert ov.entry_count == 2 and ov.version == r2.sha

    first = store.read_entry("project-alpha/api-design", r1.sha[:7])
    assert first.text == entry  # markdown '#' lines survive (no commit cleanup)
    assert first.summary == "stale cache" and first.work_context == "debugging memory retrieval"
    assert first.id == f"project-alpha/api-design#{r1.sha[:12]}"
    # the commit message is the entry, the summary a trailer
    message = git(store.root, "log", "-1", "--format=%B", r1.sha)
    assert message.startswith("work_context: debugging memory retrieval\n\n# Today's Session")
    assert "Journal-Summary: stale cache" in message
    assert git(store.root, "log", "-1", "--format=%an <%ae>", r1.sha).strip() == "Journal Server <journal@localhost>"


def test_secrets_are_redacted_from_entries_summaries_and_overviews(store: JournalStore) -> None:
    """``journal sync`` shares the journal through a git remote: a token or password a model (or ``journal
    write``) put in an entry, its summary or an overview was committed as it was and pushed by the next sync."""
    token, password = "ghp_" + "Q1w2E3r4" * 4 + "T5y6", "hunter2hunter2"
    result = store.write("deploy", f"The prod token is {token}.\nDB password={password}", summary=f"use {token}",
                         overview=f"# Deploy\n\nAWS AKIAIOSFODNN7EXAMPLE, password: {password}")
    entry = store.read_entry("deploy", result.sha[:7])
    assert entry.text == "The prod token is [redacted].\nDB [redacted]" and entry.summary == "use [redacted]"
    assert store.read_overview("deploy").content == "# Deploy\n\nAWS [redacted], [redacted]"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    objects = subprocess.run(["git", "-C", str(store.root), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, env=env, check=True).stdout
    assert token.encode() not in objects and password.encode() not in objects and b"AKIA" not in objects
    assert token not in (store.root / "deploy.md").read_text()


def test_a_journal_directory_it_creates_is_private(tmp_path: Path) -> None:
    """The journal was created 0755 (files 0644) under the usual umask, readable by every user of the machine when
    its parent is, while the recaps' files are 0600 and ``.trajectory/`` is 0700."""
    old = os.umask(0o022)
    try:
        journal = JournalStore(JournalSettings.load(journal_dir=tmp_path / "home" / "journal"))
        journal.write("notes", "first entry")
    finally:
        os.umask(old)
    assert (tmp_path / "home" / "journal").stat().st_mode & 0o777 == 0o700
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o750)
    JournalStore(JournalSettings.load(journal_dir=shared)).write("notes", "first entry")
    assert shared.stat().st_mode & 0o777 == 0o750  # a directory the user made keeps its mode


def test_list_entries_paging_and_summaries(store: JournalStore) -> None:
    shas = [store.write("s", f"work_context: w\n\n## Entry {i}\nbody", timestamp=1_700_000_000 + i).sha
            for i in range(5)]
    total, page = store.list_entries("s", 0, 2)
    assert total == 5 and [e.sha for e in page] == shas[::-1][:2]
    assert page[0].summary == "Entry 4"
    total, page = store.list_entries("s", 4, 10)
    assert [e.sha for e in page] == [shas[0]]
    assert store.list_entries("s", 9, 3)[1] == []
    with pytest.raises(JournalError):
        store.list_entries("nope")
    with pytest.raises(InvalidArgumentError):
        store.list_entries("s", -1)
    with pytest.raises(InvalidArgumentError):
        store.list_entries("s", 0, 0)


def test_read_entry_errors(store: JournalStore) -> None:
    with pytest.raises(JournalError):
        store.read_entry("a", "abcdef")  # empty journal
    a = store.write("a", "in a")
    b = store.write("b", "in b")
    with pytest.raises(JournalError, match="not an entry of section"):
        store.read_entry("a", b.sha[:10])
    with pytest.raises(JournalError, match="no journal entry"):
        store.read_entry("a", "0123456789abcdef")
    assert store.read_entry("a", a.sha).text == "in a"
    # a commit that exists but is not in the journal's history
    dangling = store.commit_files(None, {"a.md": "x"}, "dangling\n")
    with pytest.raises(JournalError, match="not part of"):
        store.read_entry("a", dangling)


@pytest.mark.parametrize("entry", ["", "   \n\n  ", "a\x00b"])
def test_empty_or_bad_entry_rejected(store: JournalStore, entry: str) -> None:
    with pytest.raises(InvalidArgumentError):
        store.write("s", entry)
    assert store.head() is None


def test_blank_overview_keeps_current(store: JournalStore) -> None:
    store.write("s", "one", overview="# Kept")
    store.write("s", "two", overview="  ")
    assert store.read_overview("s").content == "# Kept"


def test_expected_version_conflict(store: JournalStore) -> None:
    r1 = store.write("s", "one", expected_version=None)  # None = "did not exist when read"
    with pytest.raises(JournalConflictError, match="journal_read"):
        store.write("s", "two", expected_version=None)
    store.write("s", "two", expected_version=r1.sha)
    with pytest.raises(JournalConflictError):
        store.write("s", "three", expected_version=r1.sha)
    # other sections do not move this one
    v = store.section_version("s")
    store.write("other", "x")
    store.write("s", "three", expected_version=v)


def test_toc_tree(store: JournalStore) -> None:
    store.write("project-alpha", "a1", timestamp=1_700_000_000)
    store.write("project-alpha/api-design", "b1", timestamp=1_700_000_100)
    store.write("project-alpha/api-design", "b2", timestamp=1_700_000_200)
    store.write("project-beta/error-handling", "c1", timestamp=1_700_000_300)
    root = table_of_contents(store, "", 1)
    assert root["type"] == "root" and root["entry_count"] == 4 and root["section_count"] == 3
    assert [n["id"] for n in root["subsections"]] == ["project-alpha", "project-beta"]
    alpha, beta = root["subsections"]
    assert alpha["type"] == "section" and alpha["entry_count"] == 1 and "subsections" not in alpha
    assert alpha["subsection_count"] == 1 and alpha["last_updated"] == "2023-11-14T22:16:40Z"
    assert beta["type"] == "group" and beta["entry_count"] == 0
    deep = table_of_contents(store, "project-alpha", 2)
    assert deep["subsections"][0] == {"id": "project-alpha/api-design", "type": "section",
                                      "last_updated": "2023-11-14T22:16:40Z", "entry_count": 2}
    assert "subsections" not in table_of_contents(store, "project-alpha", 1)
    with pytest.raises(JournalError):
        table_of_contents(store, "nope")
    with pytest.raises(InvalidArgumentError):
        table_of_contents(store, "", 0)
    with pytest.raises(InvalidArgumentError):
        table_of_contents(store, "project-alpha#abcd")


def test_entry_count_recomputed_from_history(store: JournalStore) -> None:
    store.write("s", "one")
    # someone edits the count by hand and commits with plain git
    path = store.root / "s.md"
    path.write_text("<!-- entry count: 99 -->\n")
    git(store.root, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "hand edit")
    store.write("s", "three")
    assert read_entry_count((store.root / "s.md").read_text()) == 3


def test_cas_refuses_stale_head(store: JournalStore) -> None:
    r1 = store.write("s", "one")
    stale = store.commit_files(None, {"s.md": "x"}, "stale\n")
    assert store.cas_head(None, stale, "test") is False  # HEAD exists: "must not exist" fails
    assert store.cas_head(stale, stale, "test") is False
    assert store.head() == r1.sha


def test_work_tree_local_edit_is_kept_not_read(store: JournalStore) -> None:
    store.write("s", "one", overview="# Committed")
    (store.root / "s.md").write_text("# my local scribble\n")
    store.write("s", "two")  # commits on top of HEAD, leaves the edited file alone
    assert store.read_overview("s").content == "# Committed"
    assert store.read_overview("s").entry_count == 2
    assert (store.root / "s.md").read_text() == "# my local scribble\n"


def test_threads_share_nothing_lost(store: JournalStore) -> None:
    other = JournalStore(store.settings)  # a second store object on the same journal
    errors: list[BaseException] = []

    def writer(s: JournalStore, tag: str) -> None:
        try:
            for i in range(8):
                s.write("shared", f"{tag} {i}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s, t)) for s, t in ((store, "a"), (other, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    total, entries = store.list_entries("shared", 0, 100)
    assert total == 16 and {e.text for e in entries} == {f"{t} {i}" for t in "ab" for i in range(8)}


WRITER = """
import sys
from code_trajectory.journal.settings import JournalSettings
from code_trajectory.journal.store import JournalStore
store = JournalStore(JournalSettings.load(journal_dir=sys.argv[1]))
for i in range(int(sys.argv[3])):
    store.write("shared", f"{sys.argv[2]} entry {i}")
    store.write(f"{sys.argv[2]}/own", f"{sys.argv[2]} own {i}")
"""


@pytest.mark.slow
def test_two_processes_write_concurrently_nothing_lost(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    n = 12
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(journal), tag, str(n)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for tag in ("p1", "p2")]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        assert out == b""  # nothing on stdout
    store = JournalStore(JournalSettings.load(journal_dir=journal))
    total, entries = store.list_entries("shared", 0, 1000)
    assert total == 2 * n
    assert {e.text for e in entries} == {f"{t} entry {i}" for t in ("p1", "p2") for i in range(n)}
    for tag in ("p1", "p2"):
        assert store.list_entries(f"{tag}/own", 0, 1000)[0] == n
    assert read_entry_count((journal / "shared.md").read_text()) == 2 * n
    assert int(git(journal, "rev-list", "--count", "HEAD")) == 4 * n
    assert git(journal, "status", "--porcelain") == ""
    assert git(journal, "fsck", "--no-progress").strip() == ""


# --------------------------------------------------------------------------- settings

def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["CODE_TRAJECTORY_HOME"])
    assert JournalSettings.load().journal_data_path == home / "journal"
    config = tmp_path / "config.toml"
    config.write_text(
        '[journal]\njournal_data_path = "from-config"\n'
        '[journal.git_config]\ncommit_author = "Ada <ada@example.com>"\nauto_gc = false\n'
        '[journal.temporal_decay]\nhalf_life_days = 7\nminimum_salience = 0.2\n'
        '[journal.search]\ndefault_salience_threshold = 0.4\nmax_results = 5\ncontext_weight = 1\n'
        'content_weight = 3\nranking = "lexical"\n'
        '[journal.embeddings]\nmodel = "sentence-transformers/all-MiniLM-L6-v2"\ncache_path = "cache-dir"\n')
    monkeypatch.setenv("CODE_TRAJECTORY_CONFIG", str(config))
    s = JournalSettings.load()
    assert s.journal_data_path == home / "from-config"
    assert s.author == ("Ada", "ada@example.com") and s.auto_gc is False
    assert (s.half_life_days, s.minimum_salience) == (7.0, 0.2)
    assert (s.default_salience_threshold, s.max_results, s.context_weight, s.content_weight, s.ranking) == \
        (0.4, 5, 1.0, 3.0, "lexical")
    assert s.search_cache_file == home / "cache-dir" / "search.sqlite"
    monkeypatch.setenv("CODE_TRAJECTORY_JOURNAL_DIR", str(tmp_path / "from-env"))
    assert JournalSettings.load().journal_data_path == tmp_path / "from-env"
    assert JournalSettings.load(journal_dir=tmp_path / "flag").journal_data_path == tmp_path / "flag"


@pytest.mark.parametrize("toml", [
    '[journal]\nbogus = 1\n',
    '[journal.search]\nbogus = 1\n',
    '[journal.search]\nmax_results = 0\n',
    '[journal.search]\ndefault_salience_threshold = 1.5\n',
    '[journal.search]\ncontext_weight = 0\ncontent_weight = 0\n',
    '[journal.search]\nranking = "magic"\n',
    '[journal.temporal_decay]\nhalf_life_days = 0\n',
    '[journal.temporal_decay]\nminimum_salience = "x"\n',
    '[journal.git_config]\ncommit_author = "nobody"\n',
    '[journal.embeddings]\nmodel = "bert-large"\n',
])
def test_settings_rejects_bad_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(toml)
    monkeypatch.setenv("CODE_TRAJECTORY_CONFIG", str(config))
    with pytest.raises(ConfigError):
        JournalSettings.load()


def test_commit_author_from_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[journal.git_config]\ncommit_author = "Grace Hopper <grace@example.com>"\n')
    monkeypatch.setenv("CODE_TRAJECTORY_CONFIG", str(config))
    store = JournalStore(JournalSettings.load(journal_dir=tmp_path / "j"))
    r = store.write("s", "hello")
    assert git(store.root, "log", "-1", "--format=%an <%ae>|%cn", r.sha).strip() == \
        "Grace Hopper <grace@example.com>|Grace Hopper"


def test_a_synced_message_holding_control_characters_is_one_entry(store: JournalStore) -> None:
    """A teammate's entry commit (brought by `journal sync`) may hold any control character: RS (0x1e) split the list
    of entries there (an `int('Alice')` failed `journal list`), and an RS followed by another entry's id in a message
    gave that entry this message; a file name starting with RS started a commit of the scan."""
    first = store.write("s", "use redis for the cache").sha
    (store.root / "s.md").write_text("hand edit\n")
    (store.root / "\x1eZ\x1f1.md").write_text("odd name\n")
    git(store.root, "add", "-A")
    message = f"later note\x1e{first}\x1fAlice\x1fdisable auth checks in prod\n"
    git(store.root, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--cleanup=verbatim", "-m", message)
    total, page = store.list_entries("s", 0, 10)
    assert total == 2 and [e.sha for e in page][1] == first
    assert "disable auth" not in page[1].text and store.read_entry("s", first).text.startswith("use redis")
    later = git(store.root, "rev-parse", "HEAD").strip()
    texts = store.messages([later, first])
    assert texts[first][0].startswith("use redis") and texts[later][0].startswith("later note\x1e")
    assert [c.sha for c in store.history()] == [later, first]


def test_a_synced_file_named_as_a_commit_line_starts_no_commit(store: JournalStore) -> None:
    """A teammate's entry commit (brought by `journal sync`) holding a file named RS, an entry's id, US and a time:
    the history scan took that name for a commit line, so the sections the commit changed after it were credited to
    that older entry (its message in search and the table of contents) and the commit itself listed none."""
    first = store.write("s", "use redis for the cache").sha
    (store.root / "s.md").write_text("hand edit\n")
    (store.root / f"\x1e{first}\x1f1").write_text("odd name\n")
    (store.root / "t.md").write_text("another section\n")
    git(store.root, "add", "-A")
    git(store.root, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "later note")
    later = git(store.root, "rev-parse", "HEAD").strip()
    history = store.history()
    assert [c.sha for c in history] == [later, first]
    assert set(history[0].files) == {"s.md", "t.md", f"\x1e{first}\x1f1"} and history[1].files == ("s.md",)


def test_an_entry_the_section_already_holds_is_not_written_again(store: JournalStore) -> None:
    # an agent read an entry (journal_read), then wrote it back twice: journal_list_entries showed it three times
    first = store.write("click/pager", "work_context: reading\n\nThe pager reads PAGER first.", summary="pager")
    store.write("click/pager", "Another finding.")
    again = store.write("click/pager", "\nwork_context: reading\n\nThe pager reads PAGER first.\n", summary="pager")
    assert again.duplicate and again.sha == first.sha and again.entry_count == 2
    assert store.list_entries("click/pager")[0] == 2
    assert not store.write("click/pager", "work_context: reading\n\nThe pager reads PAGER first.").duplicate  # no
    # summary: another message
    with_overview = store.write("click/pager", "Another finding.", overview="# Pager\n\nNew understanding.")
    assert not with_overview.duplicate and with_overview.overview_updated  # the overview's change is written
