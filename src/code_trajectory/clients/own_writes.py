"""Install's own writes in a recorded project are recorded as set-up, never as the agent's work.

When ``install`` or ``uninstall`` changes a file inside a project that already has a shadow repository
(``.mcp.json``, ``.claude/settings.json``...), a recorder running there (``watch``, the MCP server) would
otherwise snapshot the change a moment later as ordinary work, carrying the agent's intent. Instead,
right after writing, :func:`record_setup` snapshots exactly those paths itself with
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


def record_setup(root: Path, paths: Iterable[Path], what: str) -> str | None:
    """Snapshot ``paths`` (those inside ``root``) as a set-up change (origin ``code-trajectory; tool=<what>``).

    Args:
        root: the project (absolute, resolved).
        paths: the files install wrote or deleted; paths outside ``root`` (per-user files) are skipped.
        what: ``install <client>`` or ``uninstall <client>``.

    Returns:
        None when done (or nothing to do); otherwise a one-line note saying why the set-up could not be
        recorded as such (install itself succeeded; the running recorder then records the change).
    """
    from code_trajectory.project import has_shadow_repo

    if not has_shadow_repo(root):
        return None
    rels = []
    for path in paths:
        try:
            rels.append(Path(path).absolute().relative_to(root).as_posix())
        except ValueError:
            continue
    if not rels:
        return None
    try:
        from code_trajectory.core.config import TrajectorySettings
        from code_trajectory.recording.recorder import Recorder

        recorder = Recorder.open(root, TrajectorySettings.load(root))
        try:
            recorder.record_paths(rels, origin=f"code-trajectory; tool={what}", with_intent=False)
        finally:
            recorder.close()
    except Exception as exc:  # noqa: BLE001 - the set-up is written; labelling it is a courtesy
        log.info("could not record the set-up change: %s", exc)
        return f"the change was not recorded as set-up ({exc}); the project's recorder records it as a save"
    return None
