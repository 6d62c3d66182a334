"""What a walk of the work tree asks of the recording policy (:class:`WalkPolicy`), and the policy seen from a
project subdirectory for walks rooted there (:class:`SubtreePolicy`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from code_trajectory.recording.ignore import RecordingPolicy

__all__ = ["SubtreePolicy", "WalkPolicy"]


class WalkPolicy(Protocol):
    """What a walk of the work tree asks of a policy (:class:`RecordingPolicy`, or :class:`SubtreePolicy` for a
    walk rooted in a subdirectory)."""

    def entry_excluded(self, parent_rel: str, name: str, is_dir: bool, *, tracked: bool = False,
                       listed: Collection[str] | None = None) -> bool:
        """True when the entry ``name`` of the directory ``parent_rel`` (relative to the walk's root) is skipped;
        ``tracked``: the caller knows git tracks the file; ``listed``: the names in the directory ``name``, just
        read (see :meth:`RecordingPolicy.entry_excluded`)."""
        ...

    def tracked_files_excluded(self, directories: Sequence[tuple[str, list[str]]]) -> dict[str, list[str]]:
        """For each ``(parent_rel, names)``, the names of tracked regular files of directory ``parent_rel`` that are
        skipped, by directory where some are (see :meth:`RecordingPolicy.tracked_files_excluded`)."""
        ...

    def waits_for_tracked(self, parent_rel: str, name: str) -> bool:
        """True when the verdict on the directory ``name`` of ``parent_rel`` would wait for the tracked set being
        read ahead (see :meth:`RecordingPolicy.waits_for_tracked`)."""
        ...


class SubtreePolicy:
    """The policy seen from the project subdirectory ``prefix``: for walks rooted there."""

    def __init__(self, policy: RecordingPolicy, prefix: str) -> None:
        self.policy = policy
        self.prefix = prefix

    def _full(self, parent_rel: str) -> str:
        """``parent_rel`` (relative to ``prefix``) relative to the project root."""
        return f"{self.prefix}/{parent_rel}" if parent_rel else self.prefix

    def entry_excluded(self, parent_rel: str, name: str, is_dir: bool, *, tracked: bool = False,
                       listed: Collection[str] | None = None) -> bool:
        """Like :meth:`RecordingPolicy.entry_excluded`, with ``parent_rel`` relative to ``prefix``."""
        return self.policy.entry_excluded(self._full(parent_rel), name, is_dir, tracked=tracked, listed=listed)

    def tracked_files_excluded(self, directories: Sequence[tuple[str, list[str]]]) -> dict[str, list[str]]:
        """Like :meth:`RecordingPolicy.tracked_files_excluded`, each ``parent_rel`` relative to ``prefix``."""
        cut = len(self.prefix) + 1
        found = self.policy.tracked_files_excluded([(self._full(parent_rel), names) for parent_rel, names in directories])
        return {parent[cut:] if parent != self.prefix else "": names for parent, names in found.items()}

    def waits_for_tracked(self, parent_rel: str, name: str) -> bool:
        """Like :meth:`RecordingPolicy.waits_for_tracked`, with ``parent_rel`` relative to ``prefix``."""
        return self.policy.waits_for_tracked(self._full(parent_rel), name)
