"""A long-running git process (``cat-file --batch-check``) that ended is started again on the next request, and the
ended one's pipes are closed then: none is left to the garbage collector (a ``ResourceWarning`` in whichever test
collects it)."""

from __future__ import annotations

from pathlib import Path

from code_trajectory.git.gitcmd import BatchProcess, Git, read_line
from support import git


def test_an_ended_batch_process_is_restarted_with_its_pipes_closed(project: Path) -> None:
    head = git(project, "rev-parse", "HEAD").strip()
    batch = BatchProcess(Git(project / ".git", isolated=False), ["cat-file", "--batch-check"], "cat-file")
    try:
        size = git(project, "cat-file", "-s", head).strip()
        assert batch.request(f"{head}\n".encode(), read_line).decode() == f"{head} commit {size}"
        ended = batch._proc
        assert ended is not None and ended.stdin is not None and ended.stdout is not None
        ended.kill()
        ended.wait(10)
        assert batch.request(f"{head}\n".encode(), read_line).startswith(head.encode())  # a new process answers
        assert batch._proc is not ended
        assert ended.stdin.closed and ended.stdout.closed
    finally:
        batch.close()
