"""``code-trajectory status``'s objects line: git's ``count-objects -v`` said with units, real git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from code_trajectory.recording.status import objects_line
from support import subprocess_env, write


def test_the_objects_line_says_counts_and_sizes_with_units() -> None:
    out = "count: 7\nsize: 28\nin-pack: 1204\npacks: 2\nsize-pack: 1331\nprune-packable: 0\ngarbage: 0\nsize-garbage: 0"
    assert objects_line(out) == "- Objects: 7 loose (28.0 KiB), 1,204 in 2 pack(s) (1.3 MiB)"
    assert objects_line(out.replace("garbage: 0", "garbage: 3", 1).replace("size-garbage: 0", "size-garbage: 5")) == (
        "- Objects: 7 loose (28.0 KiB), 1,204 in 2 pack(s) (1.3 MiB), garbage 3 file(s) (5.0 KiB)")
    assert objects_line("count: seven") == "- Objects: count=seven"  # not numbers: git's lines as they are


def test_the_cli_status_says_the_objects_with_units(project: Path) -> None:
    write(project, "src/app.py", "def main():\n    return 5\n")
    env = subprocess_env()
    assert subprocess.run([sys.executable, "-m", "code_trajectory", "checkpoint", "-m", "one"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120).returncode == 0
    done = subprocess.run([sys.executable, "-m", "code_trajectory", "status"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    line = next(line for line in done.stdout.splitlines() if line.startswith("- Objects:"))
    assert " loose (" in line and " pack(s) (" in line and "size-pack=" not in line, line


def test_status_reads_count_objects_once(project: Path, monkeypatch) -> None:
    """The disk line and the objects line each ran ``git count-objects -v``: one run gives both."""
    from code_trajectory.git.gitcmd import Git
    from code_trajectory.recording.status import project_status

    env = subprocess_env()
    assert subprocess.run([sys.executable, "-m", "code_trajectory", "checkpoint", "-m", "one"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120).returncode == 0
    commands: list[list[str]] = []
    real = Git.run

    def counted(self, args, **kwargs):
        commands.append(list(args))
        return real(self, args, **kwargs)

    monkeypatch.setattr(Git, "run", counted)
    text = project_status(project)
    assert "- Disk: " in text and "- Objects: " in text and " loose (" in text, text
    assert [c for c in commands if "count-objects" in c] == [["count-objects", "-v"]], commands
