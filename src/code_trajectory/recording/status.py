"""``code-trajectory status``: facts about a project's shadow repository."""

from __future__ import annotations

import os
from pathlib import Path

from code_trajectory.core.errors import ProjectError
from code_trajectory.core.text import format_size
from code_trajectory.git.shadow import ShadowRepo, branch_of_ref


def directory_size(path: Path) -> int:
    """Total size of the files under ``path``, bytes (symlinks not followed)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def project_status(project: Path) -> str:
    """Markdown facts about ``project`` (its root): shadow branches with snapshot counts, disk size, last snapshot.

    Raises:
        ProjectError: the project has no shadow repository yet.
    """
    root = Path(project)
    repo = ShadowRepo(root)
    if not repo.exists():
        raise ProjectError(f"{root} has no shadow repository yet; run `code-trajectory watch {root}` or "
                           "`code-trajectory checkpoint`")
    try:
        lines = [f"# code-trajectory status of {root}", f"- Shadow repository: {repo.git_dir} "
                 f"({format_size(directory_size(repo.git_dir))})"]
        refs = repo.shadow_refs()
        for ref, oid in sorted(refs.items()):
            count = repo.git.text(["rev-list", "--count", oid])
            when = repo.git.text(["log", "-1", "--format=%ci %s", oid])
            lines.append(f"- Shadow branch `{branch_of_ref(ref)}`: {count} commit(s); last: {when}")
        if not refs:
            lines.append("- No snapshots yet.")
        objects = repo.git.text(["count-objects", "-v"])
        lines.append("- Objects: " + ", ".join(line.replace(": ", "=") for line in objects.splitlines()))
        from code_trajectory.git.maintenance import last_report

        report = last_report(repo)
        lines.append(f"- Last maintenance: {report.finished_at} ({report.seconds:.1f} s; loose objects "
                     f"{report.loose_before} -> {report.loose_after})" if report else "- Last maintenance: never")
        return "\n".join(lines)
    finally:
        repo.close()
