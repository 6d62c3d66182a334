"""The timeline's session index grows with the chain: built on top of the index of an older tip, it reads only the new
commits and says the same as an index read from scratch; a rewritten chain is read again."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.ui.data import History
from code_trajectory.ui.sessions import SessionIndex
from support.ui import build_history

REF = "refs/heads/shadow/main"
GAP = 3600.0


def _facts(index: SessionIndex, oids: list[str]) -> tuple:
    return len(index), [index.session(oid) for oid in oids], index.sessions


def test_an_index_extended_chunk_by_chunk_equals_one_read_from_scratch(project: Path) -> None:
    indexes: list[SessionIndex] = []

    def grown(done: int) -> None:  # after each fast-import run: 260, 520, 780 snapshots (a session gap every 250)
        with ShadowRepo(project) as repo:
            tip = repo.resolve(REF)
            indexes.append(SessionIndex(repo, tip, GAP, indexes[-1] if indexes else None))

    oids = build_history(project, 780, files=6, chunk=260, between=grown)
    assert [index.extended for index in indexes] == [False, True, True]
    with ShadowRepo(project) as repo:
        scratch = SessionIndex(repo, oids[-1], GAP)
    assert not scratch.extended
    assert _facts(indexes[-1], oids) == _facts(scratch, oids)
    assert len(scratch) == 780 and len(scratch.sessions) == 4
    assert scratch.session(oids[260]) == scratch.session(oids[499])  # a session across two fast-import runs
    assert scratch.session(oids[499]) != scratch.session(oids[500])


def test_a_rewritten_chain_is_read_again_and_the_page_counts_it(project: Path) -> None:
    oids = build_history(project, 600, files=6)
    with ShadowRepo(project) as repo:
        history = History(repo, GAP)
        first = history.index(oids[-1])
        repo.update_ref(REF, oids[400], oids[-1], "test: history rewritten")
        rewound = history.index(oids[400])
        assert not rewound.extended and len(rewound) == 401 and oids[500] not in rewound
        page = history.timeline("main")
        assert page.total == 401 and len(first) == 600


def test_the_server_warm_up_reads_the_sessions_before_the_first_page(project: Path) -> None:
    from code_trajectory.ui.security import cookie_name
    from support.ui import request, running_ui

    oids = build_history(project, 300, files=6)
    with running_ui(project) as ui:
        assert ui.server.page.warmed.wait(60)
        history = ui.server.page.history
        assert list(history._indexes) == [oids[-1]]  # built once, by the warm-up
        warm = history._indexes[oids[-1]]
        status, _, body = request(ui.port, "GET", "/", headers={"Cookie": f"{cookie_name(ui.port)}={ui.token}"})
        assert status == 200 and b"300 snapshots" in body
        assert history.index(oids[-1]) is warm
