"""A long-running recorder's full scans of a large project run in a child process (issue 29: ``serve`` keeps no
peak of memory), and are committed by the recorder itself, as a scan of its own would be."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from code_trajectory.recording import reconcile, scanchild
from support import recorded, watching, write


@pytest.fixture
def scans(monkeypatch) -> dict[str, int]:
    """Every project's stat cache counts as large; the full scans counted by where they ran (``here``, ``child``)."""
    monkeypatch.setattr(scanchild, "CHILD_FROM_BYTES", 1)
    counted = {"here": 0, "child": 0}
    in_process, in_child = reconcile.full_scan, scanchild.scan_in_child

    def here(*args, **kwargs):
        counted["here"] += 1
        return in_process(*args, **kwargs)

    def child(root: Path, settings):
        counted["child"] += 1
        return in_child(root, settings)

    monkeypatch.setattr(reconcile, "full_scan", here)
    monkeypatch.setattr(scanchild, "scan_in_child", child)
    return counted


def test_a_checkpoint_that_scans_runs_the_scan_in_a_child_and_commits_it_here(project: Path, scans) -> None:
    with watching(project, debounce=30) as session:  # no snapshot of the watcher's own between the steps
        assert session.wait_started(30) and scans == {"here": 1, "child": 0}  # the first import: in process
        write(project, "src/app.py", "def main():\n    return 2\n")
        write(project, "src/new.py", "NEW = 1\n")
        (project / "tests/test_app.py").unlink()
        snap = session.recorder.checkpoint("scanned by a child")
        assert scans == {"here": 1, "child": 1}
        assert snap is not None and snap.kind == "checkpoint" and "scanned by a child" in snap.subject
        assert {(c.path, c.status) for c in snap.changes} == {
            ("src/app.py", "M"), ("src/new.py", "A"), ("tests/test_app.py", "D")}
        assert recorded(project, snap.ref, "src/new.py") == "NEW = 1"
        assert session.recorder.checkpoint("again") is None  # the child's stat cache and tree: nothing changed
        assert scans == {"here": 1, "child": 2}


def test_a_scan_child_that_fails_leaves_the_scan_to_this_process(project: Path, scans, monkeypatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    with watching(project, debounce=30) as session:  # no snapshot of the watcher's own between the steps
        assert session.wait_started(30)
        monkeypatch.setattr(scanchild.sys, "executable", "/bin/false")  # the child exits at once, saying nothing
        write(project, "src/app.py", "def main():\n    return 3\n")
        with caplog.at_level(logging.WARNING, logger="code_trajectory.recording.scanchild"):
            snap = session.recorder.checkpoint()
        assert scans == {"here": 2, "child": 1}
        assert snap is not None and recorded(project, snap.ref, "src/app.py") == "def main():\n    return 3"
        assert "the scan process failed" in caplog.text and "scanning in this process" in caplog.text


def test_a_scan_child_opens_the_shadow_repository_without_the_start_up_steps(project: Path, scans) -> None:
    """The child runs under a live recorder: it must not clear leftovers nor move a repository its health check
    dislikes aside (``Recorder.open(attach=True)``); a scan still records."""
    with watching(project, debounce=30) as session:
        assert session.wait_started(30)
        git_dir = project / ".trajectory"
        broken = git_dir / "refs" / "heads" / "shadow" / "zz-broken"
        broken.write_text("not an object id\n")  # what the start-up health check calls damaged
        write(project, "src/app.py", "def main():\n    return 4\n")
        snap = session.recorder.checkpoint("scanned beside a broken ref")
        assert scans["child"] == 1 and snap is not None
        assert broken.read_text() == "not an object id\n"  # not moved aside under the running recorder
        assert not [p for p in project.iterdir() if p.name.startswith(".trajectory") and p.name != ".trajectory"]
        broken.unlink()
        assert recorded(project, snap.ref, "src/app.py") == "def main():\n    return 4"


def test_a_scan_child_records_with_the_recorders_own_settings(project: Path, scans) -> None:
    """A config edited while the server runs does not apply to the child's scans alone: the child is given the
    recorder's settings, so its full scans and the watcher's snapshots keep one rule set until the next start."""
    with watching(project, debounce=30) as session:
        assert session.wait_started(30)
        (project / ".trajectory" / "config.toml").write_text('[trajectory]\ndeny_patterns = ["*.keep"]\n')
        write(project, "src/notes.keep", "kept by the running recorder's rules\n")
        snap = session.recorder.checkpoint("a new file")
        assert scans["child"] == 1 and snap is not None
        assert recorded(project, snap.ref, "src/notes.keep") == "kept by the running recorder's rules"
