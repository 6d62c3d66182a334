"""``code-trajectory status``: facts about a project's shadow repository."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from code_trajectory.core.config import TrajectorySettings
from code_trajectory.core.errors import DamagedHistoryError
from code_trajectory.core.text import format_size
from code_trajectory.git import health
from code_trajectory.git.shadow import ShadowRepo, branch_of_ref
from code_trajectory.project import nothing_recorded
from code_trajectory.recording import secretfiles


def directory_size(path: Path) -> int:
    """Total size of the files under ``path``, bytes (symlinks not followed)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def disk_usage(repo: ShadowRepo, cap_bytes: int, count_objects: str | None = None) -> dict[str, int | float]:
    """The shadow repository's disk use against its size cap, as the cap counts it.

    Args:
        repo: the shadow repository.
        cap_bytes: the size cap (``[trajectory] max_history_bytes``), bytes.
        count_objects: ``git count-objects -v``'s output when the caller read it (None: read here).

    Returns:
        ``{"bytes": objects on disk (loose, packs, garbage; git count-objects -v), "cap_bytes": the cap,
        "fraction": bytes / cap}``; past the cap, maintenance drops snapshots older than the retention window
        (:func:`code_trajectory.git.maintenance.enforce_size_cap`).

    Raises:
        GitError: ``git count-objects`` failed.
    """
    from code_trajectory.git.maintenance import repository_bytes

    used = repository_bytes(repo, count_objects)
    return {"bytes": used, "cap_bytes": cap_bytes, "fraction": used / cap_bytes if cap_bytes > 0 else 0.0}


def disk_line(usage: dict[str, int | float]) -> str:
    """``12.3 MiB of 2.0 GiB cap (1%)`` from :func:`disk_usage`."""
    return (f"{format_size(int(usage['bytes']))} of {format_size(int(usage['cap_bytes']))} cap "
            f"({usage['fraction']:.0%})")


def secrets_line(files: dict[str, str], shown: int = 10) -> str:
    """``- Secrets: 3 files skipped as secrets (never recorded): deploy_key (it holds a private key), .env, …``: the
    files kept out by their content first (their names do not say why), then those the deny list names, each sorted;
    ``shown`` of them named."""
    if not files:
        return "- Secrets: 0 files skipped as secrets"
    by_name = sorted(path for path, why in files.items() if why.startswith("secret deny list"))
    items = [f"{path} ({why})" for path, why in sorted(files.items()) if not why.startswith("secret deny list")]
    items += by_name
    more = f", and {len(items) - shown} more" if len(items) > shown else ""
    return (f"- Secrets: {len(files)} file{'s' if len(files) != 1 else ''} skipped as secrets (never recorded): "
            + ", ".join(items[:shown]) + more)


def project_status(project: Path, settings: TrajectorySettings | None = None) -> str:
    """Markdown facts about ``project`` (its root): shadow branches with snapshot counts, disk use against the
    size cap, last snapshot, the files skipped as secrets (as the last scan found them), last maintenance.

    Args:
        project: the project root.
        settings: the project's settings (the size cap); loaded from its config files when None.

    Raises:
        ProjectError: the project has no shadow repository yet.
        DamagedHistoryError: its history is damaged (left as it was; the message names the damage and what to do).
        ConfigError: the config files are invalid (when ``settings`` is None).
    """
    root = Path(project)
    repo = ShadowRepo(root)
    if not repo.exists():
        raise nothing_recorded(root)
    settings = settings if settings is not None else TrajectorySettings.load(root)
    try:
        problem = health.verify(repo)  # git skips a broken ref: the status would say "No snapshots yet"
        if problem is not None:
            raise DamagedHistoryError(health.damaged_message(repo, problem))
        count_objects = repo.git.text(["count-objects", "-v"])  # the disk line and the objects line
        usage = disk_usage(repo, settings.max_history_bytes, count_objects)
        lines = [f"# code-trajectory status of {root}", f"- Shadow repository: {repo.git_dir} "
                 f"({format_size(directory_size(repo.git_dir))})",
                 f"- Disk: {disk_line(usage)}; past the cap (`max_history_bytes`), maintenance drops snapshots older "
                 f"than {settings.retention_days:g} days"]
        from code_trajectory.recording.liveness import history_restarts

        for restart in history_restarts(repo.state_dir):
            lines.append(f"- **History restarted** {restart['at']}: {restart['notice']}")
        from code_trajectory.recording.watchlimit import status_line

        lines += filter(None, [status_line(repo.state_dir)])
        refs = repo.shadow_refs()
        for ref, oid in sorted(refs.items()):
            count = repo.git.text(["rev-list", "--count", oid])
            when = repo.git.text(["log", "-1", "--format=%ci %s", oid])
            lines.append(f"- Shadow branch `{branch_of_ref(ref)}`: {count} commit(s); last: {when}")
        if not refs:
            lines.append("- No snapshots yet.")
        lines.append(secrets_line(secretfiles.load(repo.state_dir)))
        lines.append(objects_line(count_objects))
        from code_trajectory.git.maintenance import last_report

        report = last_report(repo)
        lines.append(f"- Last maintenance: {report.finished_at} ({report.seconds:.1f} s; loose objects "
                     f"{report.loose_before} -> {report.loose_after})" if report else "- Last maintenance: never")
        return "\n".join(lines)
    finally:
        repo.close()


def objects_line(count_objects: str) -> str:
    """The status line of the shadow repository's objects from ``git count-objects -v``'s output (its sizes are KiB):
    ``- Objects: 7 loose (28.0 KiB), 1,204 in 2 pack(s) (1.3 MiB)``, and the garbage when there is some; git's own
    lines as they are when they are not numbers."""
    from code_trajectory.git.maintenance import count_objects_fields

    found = count_objects_fields(count_objects)
    needed = ("count", "size", "in-pack", "packs", "size-pack")
    if not all(key in found for key in needed):
        return "- Objects: " + ", ".join(line.replace(": ", "=") for line in count_objects.splitlines())
    text = (f"- Objects: {found['count']:,} loose ({format_size(found['size'] * 1024)}), {found['in-pack']:,} in "
            f"{found['packs']} pack(s) ({format_size(found['size-pack'] * 1024)})")
    if found.get("garbage") or found.get("size-garbage"):
        text += f", garbage {found.get('garbage', 0)} file(s) ({format_size(found.get('size-garbage', 0) * 1024)})"
    return text
