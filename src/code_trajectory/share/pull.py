"""``code-trajectory pull``: others' trajectories fetched from the project's remote, as read-only refs.

Every ``refs/trajectory/<author-id>/<branch>`` the remote advertises is checked
(:func:`code_trajectory.share.names.parse_remote_ref`, then ``git check-ref-format`` on the local
name); a name that fails is skipped with a warning, never written. The ones that pass are fetched
with one explicit refspec each, ``+refs/trajectory/<a>/<b>:refs/remotes-trajectory/<a>/<b>``, fed
on stdin (``git fetch --stdin``), so the fetch can write nothing but those refs: never our own
shadow branches (``refs/heads/shadow/*``), no tags, no ``FETCH_HEAD``. Objects are verified as they
arrive (``fetch.fsckObjects``/``transfer.fsckObjects``), and a ref that does not name a commit is
dropped. Our own author id's refs are not fetched (they are our shadow branches already).

Beside each fetched source, its data (``refs/trajectory-data/<a>/<b>``: named points, intent, test runs; see
:mod:`code_trajectory.share.data`, which checks it when it is read) is fetched into
``refs/remotes-trajectory-data/<a>/<b>``, its name derived from the checked source name; data without its source,
or not a commit, is deleted. A project with no shadow repository yet gets one first, created as recording creates
it (:func:`code_trajectory.recording.opening.open_shadow_repository`): a teammate's history can be read first.

A fetched source or data ref that reaches a new commit larger than code-trajectory ever writes
(:data:`MAX_PULLED_COMMIT_BYTES`, from the headers: nothing is read) is not taken: it is put back where it was (or
removed, when new) and reported; the other sources are taken. A 200 MB message pushed by hand made every later
``list-trajectories`` take 8.5 s and 200 MB.

Sources deleted on the remote since the last pull from it are pruned locally (and the report says
so); a source pulled from another remote is left alone. Pulled histories are rewritten freely by
their authors (consolidation), so each fetch is forced.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from code_trajectory.core.errors import GitError, TrajectoryError
from code_trajectory.git.gitcmd import chunked
from code_trajectory.git.messages import MAX_MESSAGE_BYTES
from code_trajectory.git.object_sizes import new_object_sizes
from code_trajectory.git.shadow import ShadowRepo
from code_trajectory.project import has_shadow_repo
from code_trajectory.recording.opening import open_shadow_repository
from code_trajectory.share import state as share_state
from code_trajectory.share.data import (
    DATA_PULL_PREFIX,
    DATA_PUSH_PREFIX,
    data_pulled_ref,
    data_push_ref,
    source_ref_of_data,
)
from code_trajectory.share.names import (
    PULL_PREFIX,
    PUSH_PREFIX,
    UnsafeRefError,
    check_ref_format,
    display,
    parse_remote_ref,
    pulled_ref,
    split_pulled_ref,
)
from code_trajectory.share.settings import ShareSettings
from code_trajectory.share.transport import (
    FETCH_CONFIG,
    RemoteTarget,
    author_id,
    ls_remote,
    resolve_remote,
    run_network,
)

log = logging.getLogger(__name__)

#: Most sources taken from one remote; more are skipped with a warning.
MAX_SOURCES = 1000
#: Largest pulled commit taken, bytes: the largest message code-trajectory writes and the commit's headers.
MAX_PULLED_COMMIT_BYTES = MAX_MESSAGE_BYTES + 64 * 1024


@dataclass
class PullReport:
    """What a pull did (see :meth:`text`).

    Attributes:
        target: the remote.
        new, updated, unchanged: local refs (``refs/remotes-trajectory/...``) created, moved, left as they were.
        pruned: local refs deleted because their source is gone from the remote.
        rejected: ``(remote ref as printable text, reason)`` for names skipped as unsafe.
        own: refs of our own author id, not fetched.
        created: the shadow repository was created by this pull (nothing of ours was recorded before).
    """

    target: RemoteTarget
    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    own: int = 0
    created: bool = False

    def text(self) -> str:
        """The report as markdown."""
        total = len(self.new) + len(self.updated) + len(self.unchanged)
        lines = [f"Pulled {total} trajectory source(s) from {self.target.describe()} into "
                 f"{PULL_PREFIX}* (read-only; your own shadow branches were not touched):"]
        for label, refs in (("new", self.new), ("updated", self.updated), ("unchanged", self.unchanged)):
            lines += [f"- {label}: `{ref[len(PULL_PREFIX):]}`" for ref in refs]
        lines += [f"- pruned (deleted on the remote): `{ref[len(PULL_PREFIX):]}`" for ref in self.pruned]
        if self.own:
            lines.append(f"- {self.own} source(s) of your own author id skipped (they are your shadow branches)")
        for name, reason in self.rejected:
            lines.append(f"- WARNING: skipped unsafe ref {name}: {reason}")
        if self.created:
            lines.append("- Nothing of yours is recorded yet: .trajectory/ was created to hold what was pulled "
                         "(hidden from the project's git); recording starts with `code-trajectory watch` or an MCP "
                         "client.")
        if total == 0 and not self.pruned:
            lines.append(f"- Nobody has pushed a trajectory to this remote yet ({PUSH_PREFIX}* is empty).")
        else:
            lines.append("List them with `code-trajectory list-trajectories`.")
        return "\n".join(lines)


def select_sources(advertised: dict[str, str], own: str | None,
                   report: PullReport) -> dict[str, str]:
    """``{local ref: remote ref}`` for the advertised trajectories that are safe to fetch; the rest go to ``report``."""
    chosen: dict[str, str] = {}
    for name in sorted(advertised):
        if not name.startswith(PUSH_PREFIX):
            continue
        try:
            author, branch = parse_remote_ref(name)
        except UnsafeRefError as exc:
            report.rejected.append((display(name), str(exc)))
            continue
        if author == own:
            report.own += 1
            continue
        local = pulled_ref(author, branch)
        if not local.startswith(PULL_PREFIX) or not check_ref_format(local) or not check_ref_format(name):
            report.rejected.append((display(name), "git refuses the name (git check-ref-format)"))
            continue
        if len(chosen) >= MAX_SOURCES:
            report.rejected.append((display(name), f"more than {MAX_SOURCES} sources on the remote"))
            continue
        chosen[local] = name
    for name, reason in report.rejected:
        log.warning("pull: skipped unsafe ref %s from %s: %s", name, report.target.name, reason)
    return chosen


def pulled_refs(repo: ShadowRepo) -> dict[str, tuple[str, str]]:
    """``{ref: (object id, object type)}`` for every ref under ``refs/remotes-trajectory/``."""
    out = repo.git.out(["for-each-ref", "--format=%(objectname) %(objecttype) %(refname)", PULL_PREFIX])
    refs = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        oid, kind, ref = line.split(" ", 2)
        refs[ref] = (oid, kind)
    return refs


def select_data(advertised: dict[str, str], chosen: dict[str, str]) -> dict[str, str]:
    """``{local data ref: remote data ref}`` for the chosen sources whose data the remote advertises (see
    :mod:`code_trajectory.share.data`); the names are derived from the sources' checked names, never taken as sent."""
    beside = {}
    for local in chosen:
        author, branch = split_pulled_ref(local)
        remote_ref = data_push_ref(author, branch)
        if remote_ref in advertised:
            beside[data_pulled_ref(author, branch)] = remote_ref
    return beside


def _prune_data(repo: ShadowRepo, sources: set[str], refreshed: set[str], fetched: set[str]) -> None:
    """Delete the pulled data refs whose source is gone (not in ``sources``), whose source was pulled again
    (``refreshed``) without data (not in ``fetched``), or that name no commit."""
    listing = repo.git.out(["for-each-ref", "--format=%(objectname) %(objecttype) %(refname)", DATA_PULL_PREFIX])
    stale = {}
    for line in listing.decode("utf-8", "surrogateescape").splitlines():
        oid, kind, ref = line.split(" ", 2)
        source = source_ref_of_data(ref)
        if source not in sources or (source in refreshed and ref not in fetched) or kind != "commit":
            stale[ref] = oid
    _delete_refs(repo, stale)


def _delete_refs(repo: ShadowRepo, refs: dict[str, str]) -> None:
    """Delete ``{ref: expected object id}`` in one transaction; only refs under the pulled namespaces."""
    lines = []
    for ref, oid in sorted(refs.items()):
        assert ref.startswith((PULL_PREFIX, DATA_PULL_PREFIX)), ref
        lines.append(f"delete {ref} {oid}\n")
    if lines:
        repo.git.run(["update-ref", "--stdin"], input="".join(lines).encode("utf-8", "surrogateescape"))


def pull(root: Path, *, remote: str | None = None, interactive: bool = False,
         settings: ShareSettings | None = None) -> PullReport:
    """Fetch others' ``refs/trajectory/*`` from the project's remote into ``refs/remotes-trajectory/*``.

    Args:
        root: the project root.
        remote: the remote's name (default: see :func:`~code_trajectory.share.transport.resolve_remote`).
        interactive: git may prompt for a password on the terminal.
        settings: sharing settings (read from the config files when None).

    Returns:
        The report (new, updated, unchanged, pruned, rejected sources).

    Raises:
        ProjectError: the project may not be recorded (the home directory, inside another recorded project...;
            see :func:`code_trajectory.project.check_recordable`). A project recorded nowhere yet gets its shadow
            repository here, created as recording creates it, so a teammate's history can be read first.
        InvalidArgumentError: not a git project, or no such remote.
        GitError: the remote cannot be reached, or the fetch failed (e.g. an object failed verification);
            our own shadow branches are never changed.
    """
    root = Path(root)
    settings = settings or ShareSettings.load(root)
    target = resolve_remote(root, remote, settings, push=False)  # before anything is created: a git project
    created = not has_shadow_repo(root)
    repo, notices = open_shadow_repository(root, create=True)  # as recording opens it: a pull may come first
    for notice in notices:
        log.warning("%s", notice)
    with repo:
        try:
            own = author_id(root, settings)
        except TrajectoryError:  # without an author id nothing of ours can be on the remote
            own = None
        report = PullReport(target, created=created)
        with share_state.share_lock(repo.state_dir):
            advertised = ls_remote(repo.git, target, interactive=interactive,
                                   patterns=(PUSH_PREFIX + "*", DATA_PUSH_PREFIX + "*"))
            chosen = select_sources(advertised, own, report)
            beside = select_data(advertised, chosen)
            data = share_state.load_state(repo.state_dir)
            others = {ref for name, entry in data["pulled"].items() if name != target.name and isinstance(entry, dict)
                      for ref in (entry.get("refs") or {})}
            before = pulled_refs(repo)
            tips_before = _commit_tips(repo)
            stale = {ref: oid for ref, (oid, _kind) in before.items() if ref not in chosen and ref not in others}
            _delete_refs(repo, stale)  # first, so a source renamed from a/x to a/x/y does not clash
            report.pruned = sorted(stale)
            wanted = {**chosen, **beside}
            failed = _fetch(repo, target, wanted, interactive) if chosen else {}
            put_back = _put_back_oversized(repo, tips_before, set(wanted) - set(failed))
            failed.update(put_back)
            for ref, reason in failed.items():
                report.rejected.append((display(wanted[ref]), reason))
                log.warning("pull: skipped %s from %s: %s", wanted[ref], target.name, reason)
            after = pulled_refs(repo)
            _prune_data(repo, set(after), set(chosen), {ref for ref in beside if ref not in failed})
            bad = {ref: oid for ref, (oid, kind) in after.items() if ref in chosen and kind != "commit"}
            _delete_refs(repo, bad)
            for ref in sorted(chosen):
                if ref in bad:
                    report.rejected.append((display(chosen[ref]), f"names a {after[ref][1]}, not a commit"))
                elif ref not in after or ref in failed:
                    continue
                elif ref not in before:
                    report.new.append(ref)
                elif before[ref][0] != after[ref][0]:
                    report.updated.append(ref)
                else:
                    report.unchanged.append(ref)
            fetched = report.new + report.updated + report.unchanged
            fetched += [ref for ref in chosen if ref in put_back and ref in after]  # put back: as pulled before
            data["pulled"][target.name] = {"url": target.shown_url, "time": share_state.now_iso(),
                                           "refs": {ref: after[ref][0] for ref in fetched}}
            share_state.save_state(repo.state_dir, data)
    return report


def _commit_tips(repo: ShadowRepo) -> dict[str, str]:
    """``{ref: commit id}`` of the pulled sources and data (refs naming another object are left out)."""
    out = repo.git.out(["for-each-ref", "--format=%(objectname) %(objecttype) %(refname)", PULL_PREFIX,
                        DATA_PULL_PREFIX])
    tips = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        oid, kind, ref = line.split(" ", 2)
        if kind == "commit":
            tips[ref] = oid
    return tips


def _put_back_oversized(repo: ShadowRepo, before: dict[str, str], fetched: set[str]) -> dict[str, str]:
    """Put back where it was (remove, when new) each ``fetched`` ref that reaches a new commit larger than
    :data:`MAX_PULLED_COMMIT_BYTES`; returns ``{ref: reason}`` for them. Sizes come from the headers (nothing is
    read); the commits already pulled (every tip in ``before``) are not looked at again."""
    now = _commit_tips(repo)
    moved = {ref: oid for ref, oid in now.items() if ref in fetched and before.get(ref) != oid}
    sizes = new_object_sizes(repo.git, sorted(set(moved.values())), sorted(set(before.values())), commits_only=True)
    big = {oid: size for oid, kind, size in sizes if kind == "commit" and size > MAX_PULLED_COMMIT_BYTES}
    if not big:
        return {}
    holding: set[str] = set()
    for part in chunked(sorted(big), 500):
        args = ["for-each-ref", "--format=%(refname)"] + [f"--contains={oid}" for oid in part]
        out = repo.git.out([*args, PULL_PREFIX, DATA_PULL_PREFIX])
        holding.update(ref for ref in out.decode("utf-8", "surrogateescape").splitlines() if ref in moved)
    largest = max(big, key=lambda oid: big[oid])
    reason = (f"holds a commit ({largest[:12]}) of {big[largest]:,} bytes, more than code-trajectory ever writes "
              f"({MAX_PULLED_COMMIT_BYTES:,}; written by hand): not taken, as pulled before; ask its author to "
              "push again")
    lines = [f"update {ref} {before[ref]} {moved[ref]}\n" if ref in before else f"delete {ref} {moved[ref]}\n"
             for ref in sorted(holding)]
    if lines:
        repo.git.run(["update-ref", "--stdin"], input="".join(lines).encode("utf-8", "surrogateescape"))
    for ref in sorted(holding):
        log.warning("pull: %s %s", ref, reason)
    return dict.fromkeys(holding, reason)


def _fetch_some(repo: ShadowRepo, target: RemoteTarget, refs: dict[str, str], interactive: bool) -> str | None:
    """One ``git fetch`` of ``{local ref: remote ref}``; git's error text when it failed, else None."""
    refspecs = "".join(f"+{remote_ref}:{local}\n" for local, remote_ref in sorted(refs.items()))
    args = ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--no-prune",
            "--stdin", target.url]
    proc = run_network(repo.git, target, FETCH_CONFIG, args, interactive=interactive,
                       input=refspecs.encode("utf-8", "surrogateescape"))
    return None if proc.returncode == 0 else proc.stderr.decode("utf-8", "replace").strip() or "git fetch failed"


def _fetch(repo: ShadowRepo, target: RemoteTarget, chosen: dict[str, str], interactive: bool) -> dict[str, str]:
    """Fetch every chosen ref; returns ``{local ref: reason}`` for the ones skipped.

    All refs go in one fetch; when it fails (an object failed verification, a ref vanished), each
    ref is fetched alone, so one damaged or malicious trajectory does not block the others.

    Raises:
        GitError: no ref could be fetched (the remote is unreachable, or everything failed verification).
    """
    error = _fetch_some(repo, target, chosen, interactive)
    if error is None:
        return {}
    failed: dict[str, str] = {}
    if len(chosen) > 1:
        for local, remote_ref in sorted(chosen.items()):
            alone = _fetch_some(repo, target, {local: remote_ref}, interactive)
            if alone is not None:
                failed[local] = "fetch failed: " + " ".join(alone.split())[:300]
    if len(chosen) == 1 or len(failed) == len(chosen):
        raise GitError(f"fetching trajectories from {target.describe()} failed: {error[:800]}. Your shadow branches "
                       "are unchanged; if an object failed verification (fsck), the remote holds a damaged or "
                       "malicious trajectory: ask its author to push again", args_=("fetch",), stderr=error)
    return failed
