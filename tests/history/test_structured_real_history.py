"""The structured content of a symbol's, a file's and a search's answer on a realistic history holds every version
the text shows, within the text's size (the rule of :mod:`code_trajectory.core.answer`), without the last resort's
``<list>_left_out``. A replay of real histories found a Go method's symbol history (a long checkpoint name and an
intent on every snapshot, as a replayed commit's ``<sha> <subject>``) 3 to 145 characters over its text: each
version's keys (``id``, ``t``, ``what``, ``checkpoint``, ``intent``...) and full time outweighed its heading, and the
oldest version was left out for a client that hands the model only the structured content (Claude Code, VS Code).
Real git in temp dirs, a recorder through the ``session`` fixture."""

from __future__ import annotations

import re
from pathlib import Path

from code_trajectory.core.answer import Answer, compact, room, size, structured
from code_trajectory.history import service
from code_trajectory.recording.handoff import edit_origin
from support import write

#: Versions recorded: more than a dozen, as the replay's histories had.
VERSIONS = 14
SERVER_GO = """package server

type Server struct {
\tretries int
}

// Handle serves one request.
func (s *Server) Handle(path string) error {
\ts.retries = 0
\treturn nil
}
"""
SNAPSHOT_ID = re.compile(r"`([0-9a-f]{12})`")


def recorded(session, project: Path, *, hooks: bool = False) -> None:
    """``VERSIONS`` snapshots of ``server.go``, each changing ``Server.Handle``, each with its own intent and a long
    checkpoint name (a replayed commit's id and subject); with ``hooks``, each an agent's edit recorded by its hook
    (``Trajectory-Origin``: Claude Code, Edit) instead, without a name, as in a Claude Code session."""
    body = SERVER_GO
    for step in range(VERSIONS):
        body = body.replace("\treturn nil\n", f"\tif path == \"/v{step}\" {{\n\t\ts.retries = {step}\n\t}}\n"
                                              "\treturn nil\n")
        write(project, "server.go", body)
        session.set_intent(f"Make the server retry failed requests to /v{step} with backoff, step {step} of the work")
        if hooks:
            session.recorder.record_paths(["server.go"], origin=edit_origin("claude-code", "Edit", "s1"))
        else:
            session.checkpoint(f"{step:07x}a server: handle /v{step} by retrying {step} times before giving up")


def assert_whole_within_text(answer: Answer) -> None:
    text = str(answer)
    data = structured(text, answer.data)
    assert data is not None
    assert size(data) <= room(text), (size(data), len(text))
    assert not [key for key in data if key.endswith("_left_out")], data
    ids = SNAPSHOT_ID.findall(text)
    assert len(set(ids)) >= VERSIONS - 1 and all(i in compact(data) for i in ids), (ids, data)


def test_a_symbols_versions_all_fit_in_its_structured_content(session, project: Path) -> None:
    recorded(session, project)
    answer = service.symbol_trajectory(session, "server.go", "Server.Handle", depth=VERSIONS + 5)
    assert answer.count("· checkpoint: ") == VERSIONS and answer.count(" · Intent: ") == VERSIONS, answer
    assert_whole_within_text(answer)
    data = answer.data  # rows under column names: the heading's parts, as shown
    rows = [dict(zip(data["cols"], row)) for row in data["versions"]]
    assert len(rows) == VERSIONS and rows[-1]["why"].startswith(f"checkpoint: {VERSIONS - 1:07x}a server: handle")
    assert rows[-1]["diff"] in answer and rows[1]["what"] == "modified" and rows[1]["lines"] == "+3, lines 13-15"


def test_a_files_versions_all_fit_in_its_structured_content(session, project: Path) -> None:
    recorded(session, project)
    answer = service.file_trajectory(session, "server.go", depth=VERSIONS)
    assert answer.count("· checkpoint: ") == VERSIONS, answer
    assert_whole_within_text(answer)


def test_a_files_versions_edited_through_hooks_all_fit_in_its_structured_content(session, project: Path) -> None:
    """Each version's origin was an object (``{"client": "claude-code", "tool": "Edit"}``, 16 characters more than
    its heading's ``edited by Claude Code (Edit)``): a Claude Code session's edits, an intent each, went over."""
    recorded(session, project, hooks=True)
    answer = service.file_trajectory(session, "server.go", depth=VERSIONS)
    assert answer.count(" · edited by Claude Code (Edit)") == VERSIONS, answer
    assert_whole_within_text(answer)
    assert {v.get("origin") for v in answer.data["versions"]} == {"Claude Code (Edit)"}


def test_a_searchs_hits_all_fit_in_its_structured_content(session, project: Path) -> None:
    recorded(session, project)
    answer = service.search_trajectory(session, "retries", limit=VERSIONS)
    assert answer.count("\n## ") == VERSIONS, answer
    assert_whole_within_text(answer)


def test_a_symbol_history_over_its_text_leaves_out_its_oldest_rows_not_its_newest() -> None:
    """Never measured on a real history, but the size rule's last resort cuts a list's last entries, and a symbol's
    rows run oldest first: the builder itself leaves out the oldest, counted, the day handed on."""
    from code_trajectory.history.render_symbol import symbol_data

    ids = [f"{n:012x}" for n in range(1, 7)]
    rows: list[dict[str, str | None]] = [{"t": "2026-11-27 09:00:0" + ids[0][-1] if n == 0 else "09:00:0" + str(n),
                                          "id": oid, "what": "modified", "why": "checkpoint: " + "x" * 60}
                                         for n, oid in enumerate(ids)]
    text = "\n".join(f"## `{oid}` · modified" for oid in ids) + "\n\n" + "lines " * 60  # rows outgrow it
    data = symbol_data(text, "server.go", "main", "Server.Handle", rows)
    kept = data["versions"]
    assert size(data) <= room(text) and data["versions_left_out"] == len(ids) - len(kept) > 0, data
    assert kept[-1][1] == ids[-1] and kept[0][0].startswith("2026-11-27 "), kept  # the newest kept; the day said
