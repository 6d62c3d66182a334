"""A long-running recorder's full scans of a large project, run in a child process: the server keeps no peak.

A full scan holds every directory's listing and the scan's own structures at once, and a process that lives on keeps
the high-water mark of its resident memory (``VmHWM``) even after handing the pages back. In ``serve`` at 500,000
files in 25,000 directories the rescan after the import's watches were set took the server from 111 to 156 MiB
(issue 29: ``serve`` <= 150 MB, its peak included; ``bench/watch.py``, 2026-11-26). So once the stat cache is
:data:`CHILD_FROM_BYTES` or more, a recorder that runs for long (``serve``, ``watch``: :func:`attach`) scans in a
child: the child walks the work tree, writes the blobs and trees and the stat cache (each safe to write from another
process: objects are content-addressed, the stat cache's generation check keeps a concurrent writer's listings out)
and prints the tree; the parent commits it through its own commit path (kind, message, intent, git operation: all as
for a scan of its own), holding its recorder's lock meanwhile. A child that fails is logged and the scan is done in
process instead.

The cost is the child's start (the interpreter and the recording modules: 0.15-0.3 s of CPU), small beside a full scan
of that size (1.4-1.8 s at 500,000 files) and not paid by a snapshot of changed paths (the watcher's usual one).

Protocol, the child's stdout: one JSON object, ``{"tree": oid, "base": oid or null, "oversize": {path: bytes},
"files": n}`` or ``{"error": message}``; logs go to stderr. The child runs in a session of its own and exits when its
stdin pipe closes or the parent dies (:func:`code_trajectory.core.shutdown.die_with_parent`), as the import's does.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import StorageError
from code_trajectory.recording.fullscan import FullScan
from code_trajectory.recording.recorder import Recorder

log = logging.getLogger(__name__)

#: Size of the stat cache (``.trajectory/state/statcache.sqlite``) from which a long-running recorder's full scans
#: run in a child, bytes: about 95,000 files (layout 4, a directory's rows packed together: 22.2 MB after the
#: import of 100,000 files in 5,593 directories, ~220 bytes a file with the listings; layout 3 took ~270). Below, a
#: scan in process adds at most ~25 MiB for a moment (measured at 100,000 files: 86 -> 111 MiB), and the child's
#: start would cost more than the scan.
CHILD_FROM_BYTES = 20 << 20


def attach(recorder: Recorder) -> None:
    """Make ``recorder`` (a long-running one's) run its full scans in a child once its stat cache is
    :data:`CHILD_FROM_BYTES` or more (:attr:`~code_trajectory.recording.reconcile.ReconcileMixin.scan_elsewhere`);
    a child that fails is logged, and that scan runs in process."""

    def elsewhere() -> FullScan | None:
        try:
            if recorder.stat_cache.path.stat().st_size < CHILD_FROM_BYTES:
                return None
        except OSError:
            return None
        try:
            return scan_in_child(recorder.root, recorder.settings)
        except StorageError as exc:
            log.warning("%s; scanning in this process", exc)
            return None

    recorder.scan_elsewhere = elsewhere


def scan_in_child(root: Path, settings: TrajectorySettings) -> FullScan:
    """Run the full scan of the project at ``root`` in a child process (see the module docstring), with the
    recorder's own ``settings`` (not the config files read again: a config edited while the server runs would
    otherwise apply to its full scans and not to its watcher's snapshots).

    Returns:
        What :func:`~code_trajectory.recording.fullscan.full_scan` returned in the child (``imported`` None: a
        child never scans an initial import, which has its own, :mod:`.importer`).

    Raises:
        StorageError: the child could not be started, failed (its message) or said nothing readable.
    """
    command = [sys.executable, "-P", "-m", "code_trajectory.recording.scanchild", str(root), str(os.getpid()),
               json.dumps(dataclasses.asdict(settings))]
    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                start_new_session=True)
    except OSError as exc:
        raise StorageError(f"cannot start the scan process: {exc}") from exc
    try:
        assert proc.stdout is not None
        with proc.stdout:
            out = proc.stdout.read(1 << 24)  # a tree id and the oversize files: far less
        code = proc.wait()
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    try:
        found = json.loads(out.decode("utf-8").strip().splitlines()[-1])
        if code == 0 and isinstance(found, dict) and "tree" in found:
            oversize = {str(k): int(v) for k, v in found["oversize"].items()}
            return FullScan(str(found["tree"]), found["base"] if isinstance(found["base"], str) else None,
                            oversize, None, int(found["files"]))
        why = found.get("error") if isinstance(found, dict) else None
    except (ValueError, IndexError, AttributeError, TypeError, KeyError):
        why = None
    raise StorageError(f"the scan process failed: {why or f'exit status {code}'}")


def main(argv: list[str]) -> int:
    """``python -m code_trajectory.recording.scanchild ROOT PARENT_PID SETTINGS``: the child's side (see the
    module); SETTINGS: the parent's :class:`~code_trajectory.core.config.TrajectorySettings` as JSON."""
    from code_trajectory.core.logs import configure_logging
    from code_trajectory.core.shutdown import die_with_parent

    die_with_parent(int(argv[1]))
    gc.disable()  # a short-lived process: see recording.importer
    configure_logging()
    root = Path(argv[0])
    try:
        fields = json.loads(argv[2])
        settings = TrajectorySettings(**{**fields, "deny_patterns": tuple(fields["deny_patterns"])}).validated()
        recorder = Recorder.open(root, settings, create=False, attach=True)
        try:
            found = recorder.scan_here(None)
        finally:
            recorder.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which scans in process instead
        sys.stdout.write(json.dumps({"error": str(exc)}) + "\n")
        return 1
    sys.stdout.write(json.dumps({"tree": found.tree, "base": found.base, "oversize": found.oversize,
                                 "files": found.files}) + "\n")
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # everything is written: skip freeing the scan's objects one by one
