"""The notice of a project nothing records: read from the files the recorder leaves, whatever they hold."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support import server_command, subprocess_env


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [*server_command(), *args, "--project", str(project)]
    return subprocess.run(command, capture_output=True, text=True, env=subprocess_env(), timeout=120)


def test_a_naive_stop_time_is_read_as_utc(project: Path) -> None:
    """A stop time without a zone (a hand-edited file) still gives the notice, read as UTC (it was lost)."""
    assert _cli(project, "checkpoint").returncode == 0
    state = project / ".trajectory" / "state" / "recorder.json"
    state.write_text(json.dumps({"pid": 1, "started_at": "2026-01-01T09:00:00", "stopped_at": "2026-01-01T10:00:00"}))
    done = _cli(project, "session")
    assert done.returncode == 0, done.stderr
    assert "nothing is recording this project now since 2026-01-01 1" in done.stdout
    assert "Traceback" not in done.stderr
