"""Install's own writes in a recorded project are recorded as set-up, never as the agent's work.

When ``install`` or ``uninstall`` changes a file inside a project that already has a shadow repository
(``.mcp.json``, ``.claude/settings.json``...), a recorder running there (``watch``, the MCP server) would
otherwise snapshot the change a moment later as ordinary work, carrying the agent's intent. Instead,
right after writing, :class:`SetupRecorder` (opened before the writes) snapshots exactly those paths itself with
``Trajectory-Origin: code-trajectory; tool=install <client>`` (or ``uninstall``; histories show "edited by
code-trajectory (install claude-code)") and no intent; the running recorder
then finds its tree already recorded and adds nothing. A project without a shadow repository is left
alone (no history is started for it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)


class SetupRecorder:
    """Records install's writes in ``root`` as set-up: open it *before* writing (opening a recorder is the slow
    part), write, then :meth:`record` at once, so that a running recorder's debounce has not elapsed yet.

    Args:
        root: the project (absolute, resolved); nothing is done when it has no shadow repository.
        what: ``install <client>`` or ``uninstall <client>`` (the snapshot's origin: ``code-trajectory; tool=<what>``).
        enabled: False for a dry run.
    """

    def __init__(self, root: Path, what: str, *, enabled: bool = True) -> None:
        from code_trajectory.project import has_shadow_repo

        self.root, self.what = root, what
        self.recorder = None
        self.note: str | None = None
        if not enabled or not has_shadow_repo(root):
            return
        try:
            from code_trajectory.core.config import TrajectorySettings
            from code_trajectory.recording.recorder import Recorder

            self.recorder = Recorder.open(root, TrajectorySettings.load(root))
        except Exception as exc:  # noqa: BLE001 - the set-up is written either way; labelling it is a courtesy
            self.note = _failed(exc)

    def record(self, paths: Iterable[Path]) -> str | None:
        """Snapshot ``paths`` (those inside the project; per-user files are skipped) as set-up, then close.

        Returns:
            None when done (or nothing to do); otherwise a one-line note saying why the set-up could not be
            recorded as such (the project's running recorder then records the change as a save).
        """
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return self.note
        try:
            rels = []
            for path in paths:
                try:
                    rels.append(Path(path).absolute().relative_to(self.root).as_posix())
                except ValueError:
                    continue
            if rels:
                recorder.record_paths(rels, origin=f"code-trajectory; tool={self.what}", with_intent=False)
        except Exception as exc:  # noqa: BLE001
            return _failed(exc)
        finally:
            recorder.close()
        return None


def _failed(exc: Exception) -> str:
    log.info("could not record the set-up change: %s", exc)
    return f"the change was not recorded as set-up ({exc}); the project's recorder records it as a save"


def record_setup(root: Path, paths: Iterable[Path], what: str) -> str | None:
    """Snapshot ``paths`` (those inside ``root``) as a set-up change (origin ``code-trajectory; tool=<what>``):
    :class:`SetupRecorder` opened and recorded at once (for writes already made).

    Returns:
        See :meth:`SetupRecorder.record`.
    """
    return SetupRecorder(root, what).record(paths)
