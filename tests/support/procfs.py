"""What Linux's ``/proc`` tells about a server this process started: its pid, its inotify watches.

Imported as ``support.procfs`` by the watch-limit tests and by ``bench/watch.py``.
"""

from __future__ import annotations

import os
from pathlib import Path


def serve_pid(project: Path) -> int | None:
    """The ``serve`` process of ``project`` started by this process (a child whose command line names ``serve`` and
    the project), or None."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"serve" in cmd and str(project).encode() in cmd and ppid == me:
            return int(entry)
    return None


def watched_inodes(pid: int) -> set[int]:
    """The inode of every inotify watch process ``pid`` holds (``/proc/<pid>/fdinfo``)."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            text = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("inotify wd:"):
                fields = dict(part.split(":", 1) for part in line.split()[1:] if ":" in part)
                found.add(int(fields["ino"], 16))
    return found
